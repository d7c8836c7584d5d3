import type { ChangeFeed } from './change-feed.js';
import type { ApiArgs, ApiFunctionName, DbCaller, Rpc } from './rpc.js';

/**
 * The api functions whose answers depend only on tables that notify sparkpath_content
 * (20261122160000_content_change_notify.sql, 20261123000000_session_vouching.sql) and on
 * nothing about the caller: pgTAP 05 checks that anon, a learner and an admin get the same
 * answer. Adding one here means adding triggers for every table it reads, and it to that test.
 */
export const CACHEABLE_CALLS: ReadonlySet<ApiFunctionName> = new Set<ApiFunctionName>([
  'get_metadata', // app.difficulty_levels, app.journey_statuses, app.learning_verbs
  'list_difficulty_levels', // app.difficulty_levels
  'resolve_snapshot', // app.snapshots
  'get_current_snapshot', // app.snapshots, app.snapshot_rollups (content rows never change)
]);

/**
 * The api functions whose answers depend only on the caller's claims and on their session and
 * user rows, which notify sparkpath_sessions (20261123000000_session_vouching.sql). They are
 * kept per token, with its vouch, and go when it goes.
 */
export const PER_SESSION_CALLS: ReadonlySet<ApiFunctionName> = new Set<ApiFunctionName>([
  'get_session', // app.users, app.sessions (the caller's rows) and the claims
]);

/** What every shared answer is fetched as: the answers do not depend on the caller. */
const ANONYMOUS_CALLER: DbCaller = { role: 'anon', claims: null };

export interface CachedRpcOptions {
  /** Distinct argument sets kept; the oldest goes first (resolve_snapshot takes a snapshot id). */
  maxEntries?: number;
  /**
   * The database's session check, asked ahead of time (private.request_live_for): for how many
   * seconds it will keep passing these claims (Infinity when they bind no session), or null
   * when it refuses them now. Without it, callers with a token always go to the database.
   */
  sessionCheck?: (claims: string) => Promise<number | null>;
  /** Longest time a passed check is trusted without asking again, whatever the feed says. */
  maxVouchMs?: number;
  /** Distinct tokens vouched for at once; the oldest goes first. */
  maxVouches?: number;
  now?: () => number;
}

export type CachedRpc<R extends Rpc> = R & { forgetSessions(): void };

/**
 * Answers the cacheable calls from memory while the change feed vouches for it, so the
 * cheapest reads cost no database round trip.
 *
 * - Everything kept belongs to one feed epoch; a notification, or the feed losing its
 *   connection, starts a new one and nothing older is served. While the feed is down
 *   (Postgres unreachable) every call goes to the database, which answers 503 as before.
 * - A caller with a token is served from memory only while its session is vouched for: the
 *   database's own session check passed it less than `maxVouchMs` ago (5 s) and inside the
 *   session's lifetime, and no notice about its session arrived since. A logout through this
 *   process (forgetSessions) or anywhere else (NOTIFY sparkpath_sessions) ends the vouch; a
 *   caller that is not vouched for goes to the database, which refuses it as before.
 * - The per-session calls (GET /auth/session) are kept per token while it is vouched for, and
 *   dropped with the vouch: after at most `maxVouchMs`, or on a notice about the session or
 *   its user's profile.
 * - Concurrent misses share one database call; failures are never kept.
 */
export function cachePublicCalls<R extends Rpc>(rpc: R, feed: ChangeFeed, options: CachedRpcOptions = {}): CachedRpc<R> {
  const maxEntries = options.maxEntries ?? 256;
  const maxVouchMs = options.maxVouchMs ?? 5000;
  const maxVouches = options.maxVouches ?? 4096;
  const now = options.now ?? (() => performance.now());
  const { sessionCheck } = options;

  let keptEpoch: number | null = null;
  const kept = new Map<string, Promise<string>>();
  // By the verified claims text: which session they name, until when they pass, and the
  // per-session answers kept for them.
  const vouches = new Map<string, Vouch>();
  const checking = new Map<string, Promise<boolean>>();
  let sessionNotices = 0;

  /** A session changed (or, without an id, any may have): stop vouching for it. */
  function forgetSessions(sessionId?: string) {
    sessionNotices++;
    checking.clear(); // a check already under way may have read the session before the change
    if (sessionId === undefined || sessionId === '*') vouches.clear();
    else for (const [claims, vouch] of vouches) if (vouch.sessionId === sessionId) vouches.delete(claims);
  }
  feed.onSessionChange(forgetSessions);

  function startEpoch(epoch: number) {
    if (keptEpoch === epoch) return;
    // Session notices may have been missed while the feed was away: vouches go with the answers.
    kept.clear();
    vouches.clear();
    keptEpoch = epoch;
  }

  function remembered(fn: ApiFunctionName, args: unknown): Promise<string> {
    const key = `${fn} ${JSON.stringify(args)}`;
    const hit = kept.get(key);
    if (hit) return hit;
    const answer = rpc.call(fn, args as never, ANONYMOUS_CALLER);
    if (kept.size >= maxEntries) kept.delete(kept.keys().next().value!);
    kept.set(key, answer);
    // An answer that lands after a change is harmless: the next call sees the new epoch and
    // clears the map before it looks.
    answer.catch(() => {
      if (kept.get(key) === answer) kept.delete(key);
    });
    return answer;
  }

  async function check(claims: string, epoch: number, ask: (claims: string) => Promise<number | null>): Promise<boolean> {
    const noticesBefore = sessionNotices;
    const askedAt = now();
    let seconds: number | null;
    try {
      seconds = await ask(claims);
    } catch {
      return false; // the call itself goes to the database and reports what is wrong
    }
    if (seconds === null || !(seconds > 0)) return false;
    // Kept only if nothing about sessions was heard while asking: the answer may predate it.
    if (sessionNotices === noticesBefore && feed.epoch() === epoch) {
      if (vouches.size >= maxVouches) vouches.delete(vouches.keys().next().value!);
      vouches.set(claims, { sessionId: sessionIdOf(claims), until: askedAt + Math.min(seconds * 1000, maxVouchMs), answers: new Map() });
    }
    return true;
  }

  function vouchedFor(claims: string, epoch: number, ask: (claims: string) => Promise<number | null>): Promise<boolean> {
    const vouch = vouches.get(claims);
    if (vouch && now() < vouch.until) return Promise.resolve(true);
    let pending = checking.get(claims);
    if (!pending) {
      const started = check(claims, epoch, ask).finally(() => {
        if (checking.get(claims) === started) checking.delete(claims);
      });
      checking.set(claims, (pending = started));
    }
    return pending;
  }

  /**
   * A per-session answer, fetched as the caller and kept with its vouch. A notice about the
   * session drops the vouch and everything kept with it, even an answer still on its way.
   */
  function rememberedFor(claims: string, fn: ApiFunctionName, args: unknown, caller: DbCaller): Promise<string> {
    const vouch = vouches.get(claims);
    if (!vouch) return rpc.call(fn, args as never, caller); // passed, but not kept (a notice overtook it)
    const key = `${fn} ${JSON.stringify(args)}`;
    const hit = vouch.answers.get(key);
    if (hit) return hit;
    const answer = rpc.call(fn, args as never, caller);
    vouch.answers.set(key, answer);
    answer.catch(() => {
      if (vouch.answers.get(key) === answer) vouch.answers.delete(key);
    });
    return answer;
  }

  const call = <F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string> => {
    const epoch = feed.epoch();
    const shared = CACHEABLE_CALLS.has(fn);
    if (epoch === null || !(shared || PER_SESSION_CALLS.has(fn))) return rpc.call(fn, args, caller);
    startEpoch(epoch);
    const { claims } = caller;
    if (claims === null) return shared && caller.role === 'anon' ? remembered(fn, args) : rpc.call(fn, args, caller);
    if (!sessionCheck) return rpc.call(fn, args, caller);
    return vouchedFor(claims, epoch, sessionCheck).then((vouched) => {
      if (!vouched) return rpc.call(fn, args, caller);
      return shared ? remembered(fn, args) : rememberedFor(claims, fn, args, caller);
    });
  };

  // Everything else (ping, close, the adapter's pool) stays the wrapped adapter's own.
  return Object.assign(Object.create(rpc) as R, { call, forgetSessions: () => forgetSessions() });
}

interface Vouch {
  sessionId: string | null;
  until: number;
  answers: Map<string, Promise<string>>;
}

function sessionIdOf(claims: string): string | null {
  const sessionId = (JSON.parse(claims) as { session_id?: unknown }).session_id;
  return typeof sessionId === 'string' ? sessionId : null;
}
