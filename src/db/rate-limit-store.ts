import type postgres from 'postgres';
import type { RateLimitStore } from '../http/rate-limit.js';

/**
 * Rate-limit counters in PostgreSQL (RATE_LIMIT_STORE=postgres), shared by every API instance
 * on the same database: one upsert on an unlogged table per limited request
 * (private.hit_rate_limit). Costs a round trip, so the in-memory store stays the default; a
 * Redis store implementing the same interface is the choice for high request rates.
 */
export function createPostgresRateLimitStore(sql: postgres.Sql): RateLimitStore & { purge(): Promise<number> } {
  return {
    async hit(key, windowMs) {
      const [row] = await sql<{ hit: { count: number; reset_at: number } }[]>`select private.hit_rate_limit(${key}, ${windowMs}) as hit`;
      return { count: row.hit.count, resetAt: Number(row.hit.reset_at) };
    },
    async purge() {
      const [row] = await sql<{ purged: number }[]>`select private.purge_rate_limits() as purged`;
      return row.purged;
    },
  };
}
