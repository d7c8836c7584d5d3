import type { ChangeFeed } from './change-feed.js';
import type { ApiArgs, ApiFunctionName, DbCaller, Rpc } from './rpc.js';

/**
 * The api functions whose answers depend only on tables that notify sparkpath_content
 * (20261122160000_content_change_notify.sql) and on nothing about the caller. Adding one here
 * means adding triggers for every table it reads.
 */
export const CACHEABLE_CALLS: ReadonlySet<ApiFunctionName> = new Set<ApiFunctionName>([
  'get_metadata', // app.difficulty_levels, app.journey_statuses, app.learning_verbs
  'list_difficulty_levels', // app.difficulty_levels
  'resolve_snapshot', // app.snapshots
]);

export interface CachedRpcOptions {
  /** Distinct argument sets kept; the oldest goes first (resolve_snapshot takes a snapshot id). */
  maxEntries?: number;
}

/**
 * Answers the cacheable calls of anonymous callers from memory while the change feed vouches
 * for it, so the cheapest public reads cost no database round trip.
 *
 * - Only anonymous callers: a caller with a token is always checked in the database
 *   (private.check_request ends revoked sessions), so their calls always go there.
 * - Everything kept belongs to one feed epoch; a notification, or the feed losing its
 *   connection, starts a new one and nothing older is served. While the feed is down
 *   (Postgres unreachable) every call goes to the database, which answers 503 as before.
 * - Concurrent misses share one database call; failures are never kept.
 */
export function cachePublicCalls<R extends Rpc>(rpc: R, feed: ChangeFeed, options: CachedRpcOptions = {}): R {
  const maxEntries = options.maxEntries ?? 256;
  let keptEpoch: number | null = null;
  const kept = new Map<string, Promise<string>>();

  const call = <F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string> => {
    const epoch = feed.epoch();
    if (epoch === null || caller.role !== 'anon' || caller.claims !== null || !CACHEABLE_CALLS.has(fn)) return rpc.call(fn, args, caller);
    if (keptEpoch !== epoch) {
      kept.clear();
      keptEpoch = epoch;
    }
    const key = `${fn} ${JSON.stringify(args)}`;
    const hit = kept.get(key);
    if (hit) return hit;
    const answer = rpc.call(fn, args, caller);
    if (kept.size >= maxEntries) kept.delete(kept.keys().next().value!);
    kept.set(key, answer);
    // An answer that lands after a change is harmless: the next call sees the new epoch and
    // clears the map before it looks.
    answer.catch(() => {
      if (kept.get(key) === answer) kept.delete(key);
    });
    return answer;
  };

  // Everything else (ping, close, the adapter's pool) stays the wrapped adapter's own.
  return Object.assign(Object.create(rpc) as R, { call });
}
