import postgres from 'postgres';
import { isConnectionError } from './errors.js';
import type { DatabasePool } from './pool.js';

/**
 * Where a read goes when the API has a read replica (DATABASE_READ_URL), and how a learner
 * still reads their own writes. Which calls are reads is decided by the adapter from the api
 * function's volatility (postgres-rpc.ts); this module decides replica or primary.
 *
 * - A read goes to the replica first. The primary answers it instead when the replica cannot
 *   answer for sure: it is unreachable (its pool's circuit is open: the answer is immediate),
 *   it cancelled the statement for a conflict with recovery (40001), or it answered "no such
 *   session" (PT401) or "not found" (PT404), which on a replica may only be its lag: a session
 *   created by a sign-in a moment ago, a journey just started, a snapshot just promoted. So a
 *   refusal always has the primary's word, whichever instance served the write.
 * - Read your own writes: after a caller's write this instance keeps the write's transaction id
 *   (a fence) for FENCE_TTL_MS; that caller's reads ask the replica to answer only if it has
 *   replayed those transactions (`pg_visible_in_snapshot`), which it checks before running
 *   anything, and go to the primary when it has not. The measurements and the alternatives
 *   (a fixed window on the primary, waiting on the replica): docs/architecture.md, "Read
 *   replicas"; `npx tsx bench/replica-lag.ts` measures them again.
 *
 * The fences are per instance and soft: losing them (a restart) costs at most the replica's
 * lag of freshness, never a wrong answer about who may see what.
 */
export interface ReadRouting {
  /** Runs a read: on the replica when one is configured and can answer, else on the primary. */
  read<T>(subject: string | undefined, statement: (db: postgres.Sql, fence: string | undefined) => Promise<T[]>): Promise<T[]>;
  /** Notes a caller's committed write (`xid`: its transaction id, null when it wrote nothing). */
  wrote(subject: string | undefined, xid: string | null | undefined): void;
}

/** How long a caller's reads are fenced after a write; longer than any replica lag worth serving. */
export const FENCE_TTL_MS = 5 * 60_000;
/** Callers fenced at once, at most (the oldest go first): bounds the memory whatever the load. */
export const MAX_FENCED_CALLERS = 50_000;
/** Transaction ids kept per caller: concurrent writes of one caller may commit in any order. */
const MAX_FENCES_PER_CALLER = 8;

/** SQLSTATEs after which the primary answers a read the replica could not answer for sure. */
const ASK_THE_PRIMARY = new Set(['40001', 'PT401', 'PT404']);

export function createReadRouting(primary: DatabasePool, replica: DatabasePool | undefined, now: () => number = Date.now): ReadRouting {
  const fences = new Map<string, { xids: string[]; expiresAt: number }>();

  function fenceOf(subject: string | undefined): string | undefined {
    const entry = subject === undefined ? undefined : fences.get(subject);
    if (!entry) return undefined;
    if (entry.expiresAt <= now()) {
      fences.delete(subject!);
      return undefined;
    }
    return `{${entry.xids.join(',')}}`;
  }

  return {
    async read(subject, statement) {
      if (!replica) return primary.run((db) => statement(db, undefined));
      const fence = fenceOf(subject);
      try {
        const rows = await replica.run((db) => statement(db, fence));
        // A fenced statement answers no row when the replica has not replayed the fence yet.
        if (rows.length > 0 || fence === undefined) return rows;
      } catch (error) {
        if (!askThePrimary(error)) throw error;
      }
      return primary.run((db) => statement(db, undefined));
    },
    wrote(subject, xid) {
      if (!replica || subject === undefined || !xid) return;
      const xids = [...(fences.get(subject)?.xids ?? []), xid].slice(-MAX_FENCES_PER_CALLER);
      fences.delete(subject); // re-inserted last: Maps iterate oldest first
      fences.set(subject, { xids, expiresAt: now() + FENCE_TTL_MS });
      for (const key of fences.keys()) {
        if (fences.size <= MAX_FENCED_CALLERS) break;
        fences.delete(key);
      }
    },
  };
}

function askThePrimary(error: unknown): boolean {
  if (isConnectionError(error)) return true;
  return error instanceof postgres.PostgresError && ASK_THE_PRIMARY.has(error.code);
}

/**
 * The fenced form of a read statement: it runs only when the replica's snapshot sees every
 * transaction of the fence (`$fence`: a text array of xid8), and answers no row otherwise. The
 * condition has no column references, so PostgreSQL checks it once, before the call runs.
 */
export function fenced(select: string, fenceParameter: number): string {
  return `${select} where (select pg_catalog.bool_and(pg_catalog.pg_visible_in_snapshot(x, pg_catalog.pg_current_snapshot()))
    from pg_catalog.unnest($${fenceParameter}::text::xid8[]) as x)`;
}
