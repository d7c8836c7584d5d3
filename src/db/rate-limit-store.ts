import type { DatabasePool } from './pool.js';

/** A caller's count in its current fixed window, and when that window ends (epoch ms). */
export interface RateLimitCount {
  count: number;
  resetAt: number;
}

/**
 * Where request counts live. The in-memory store (default, src/http/rate-limit.ts) is per
 * process; several API instances share budgets through a shared store: the Postgres one below,
 * or e.g. Redis INCR+EXPIRE implementing the same two operations.
 */
export interface RateLimitStore {
  /** The count of `key` in its current window of `windowMs`, without counting a request. */
  peek(key: string, windowMs: number): Promise<RateLimitCount> | RateLimitCount;
  /** Counts one request for `key` in the fixed window of `windowMs`; returns the new count. */
  hit(key: string, windowMs: number): Promise<RateLimitCount> | RateLimitCount;
}

/**
 * Rate-limit counters in PostgreSQL (RATE_LIMIT_STORE=postgres), shared by every API instance
 * on the same database: an upsert on an unlogged table per counted request
 * (private.hit_rate_limit), a read before a signed-in caller's request (private.peek_rate_limit).
 * Costs round trips, so the in-memory store stays the default; a Redis store implementing the
 * same interface is the choice for high request rates.
 */
export function createPostgresRateLimitStore(pool: DatabasePool): RateLimitStore & { purge(): Promise<number> } {
  const count = async (fn: 'hit_rate_limit' | 'peek_rate_limit', key: string, windowMs: number) => {
    const [row] = await pool.run((sql) =>
      fn === 'hit_rate_limit'
        ? sql<{ result: { count: number; reset_at: number } }[]>`select private.hit_rate_limit(${key}, ${windowMs}) as result`
        : sql<{ result: { count: number; reset_at: number } }[]>`select private.peek_rate_limit(${key}, ${windowMs}) as result`,
    );
    return { count: row.result.count, resetAt: Number(row.result.reset_at) };
  };
  return {
    peek: (key, windowMs) => count('peek_rate_limit', key, windowMs),
    hit: (key, windowMs) => count('hit_rate_limit', key, windowMs),
    async purge() {
      const [row] = await pool.run((sql) => sql<{ purged: number }[]>`select private.purge_rate_limits() as purged`);
      return row.purged;
    },
  };
}
