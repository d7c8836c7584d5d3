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
 * The api functions whose answers depend on snapshot content (sparkpath_content) and on the
 * caller: its claims, its session and profile rows (sparkpath_sessions, the session id) and its
 * enrollments and learning events (sparkpath_sessions 'user:<id>',
 * 20261123000100_user_progress_notify.sql). They are kept per token, with its vouch, and go
 * when it goes.
 */
export const PER_CALLER_CALLS: ReadonlySet<ApiFunctionName> = new Set<ApiFunctionName>([
  'get_session', // app.users, app.sessions
  'list_user_journeys', // app.enrollments, app.learning_events, content
  'get_user_journey', // app.enrollments, app.learning_events, content
  'get_learning_path', // app.learning_events (mastered), content
]);

/** The calls that write a caller's own progress: what this process keeps for that user goes at once. */
export const CALLER_WRITES: ReadonlySet<ApiFunctionName> = new Set<ApiFunctionName>(['record_learning_event', 'enroll_in_trail']);

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
  /** Characters of per-caller answers kept in all; past it the oldest tokens' answers go first. */
  maxCallerChars?: number;
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
 * - The per-caller calls (the session, journeys, learning path) are kept per token while it is
 *   vouched for, and dropped with the vouch: after at most `maxVouchMs`, or on a notice about
 *   the session, its user's profile or progress. A write of the caller's progress through this
 *   process drops them before it is answered, so the caller reads its own writes.
 * - Concurrent misses share one database call; failures are never kept.
 */
export function cachePublicCalls<R extends Rpc>(rpc: R, feed: ChangeFeed, options: CachedRpcOptions = {}): CachedRpc<R> {
  const maxEntries = options.maxEntries ?? 256;
  const maxVouchMs = options.maxVouchMs ?? 5000;
  const maxVouches = options.maxVouches ?? 4096;
  const maxCallerChars = options.maxCallerChars ?? 8 * 1024 * 1024;
  const now = options.now ?? (() => performance.now());
  const { sessionCheck } = options;

  let keptEpoch: number | null = null;
  const kept = new Map<string, Promise<string>>();
  // By the verified claims text: which session they name, until when they pass, and the
  // per-session answers kept for them.
  const vouches = new Map<string, Vouch>();
  const checking = new Map<string, Promise<boolean>>();
  let sessionNotices = 0;
  let callerChars = 0; // of the per-caller answers that have arrived

  function drop(claims: string, vouch: Vouch) {
    vouches.delete(claims);
    callerChars -= vouch.chars;
  }

  /**
   * A notice: a session id, 'user:<id>' (that user's progress or profile changed) or '*' (any
   * may have). Whatever was vouched for or kept for it goes.
   */
  function forgetSessions(notice = '*') {
    sessionNotices++;
    checking.clear(); // a check already under way may have read the session before the change
    const userId = notice.startsWith('user:') ? notice.slice(5) : undefined;
    for (const [claims, vouch] of vouches) {
      if (notice === '*' || (userId === undefined ? vouch.sessionId === notice : vouch.userId === userId)) drop(claims, vouch);
    }
  }
  feed.onSessionChange(forgetSessions);

  function startEpoch(epoch: number) {
    if (keptEpoch === epoch) return;
    // Session notices may have been missed while the feed was away: vouches go with the answers.
    kept.clear();
    vouches.clear();
    callerChars = 0;
    keptEpoch = epoch;
  }

  function remembered(fn: ApiFunctionName, args: unknown): Promise<string> {
    const key = callKey(fn, args);
    if (!kept.has(key) && kept.size >= maxEntries) kept.delete(kept.keys().next().value!);
    // An answer that lands after a change is harmless: the next call sees the new epoch and
    // clears the map before it looks.
    return keepOnce(kept, key, () => rpc.call(fn, args as never, ANONYMOUS_CALLER));
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
      const stale = vouches.get(claims);
      if (stale) drop(claims, stale);
      if (vouches.size >= maxVouches) {
        const [oldest, vouch] = vouches.entries().next().value!;
        drop(oldest, vouch);
      }
      const { session_id: sessionId, sub: userId } = JSON.parse(claims) as { session_id?: unknown; sub?: unknown };
      vouches.set(claims, {
        sessionId: typeof sessionId === 'string' ? sessionId : null,
        userId: typeof userId === 'string' ? userId : null,
        until: askedAt + Math.min(seconds * 1000, maxVouchMs),
        answers: new Map(),
        chars: 0,
      });
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
   * A per-caller answer, fetched as the caller and kept with its vouch. A notice about the
   * caller drops the vouch and everything kept with it, even an answer still on its way.
   */
  function rememberedFor(claims: string, fn: ApiFunctionName, args: unknown, caller: DbCaller): Promise<string> {
    const vouch = vouches.get(claims);
    if (!vouch) return rpc.call(fn, args as never, caller); // passed, but not kept (a notice overtook it)
    const key = callKey(fn, args);
    const count = (answer: Promise<string>, body: string) => {
      if (vouches.get(claims) !== vouch || vouch.answers.get(key) !== answer) return; // dropped meanwhile
      vouch.chars += body.length;
      callerChars += body.length;
      keepWithinBudget(claims);
    };
    const fetch = () => rpc.call(fn, args as never, caller);
    return keepOnce(vouch.answers, key, fetch, (answer) => void answer.then((body) => count(answer, body), () => undefined));
  }

  /** Past the budget, the answers of the tokens vouched for longest ago go first (not `newest`'s). */
  function keepWithinBudget(newest: string) {
    for (const [claims, vouch] of vouches) {
      if (callerChars <= maxCallerChars) return;
      if (claims === newest || vouch.chars === 0) continue;
      vouch.answers.clear();
      callerChars -= vouch.chars;
      vouch.chars = 0;
    }
  }

  /** After a write of the caller's own progress: nothing kept for that user may be served. */
  function afterCallerWrite(caller: DbCaller) {
    const userId = caller.claims === null ? undefined : (JSON.parse(caller.claims) as { sub?: unknown }).sub;
    forgetSessions(typeof userId === 'string' ? `user:${userId}` : '*');
  }

  const call = <F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string> => {
    if (CALLER_WRITES.has(fn)) {
      // Whether it succeeded or not (it may have committed before failing).
      const written = rpc.call(fn, args, caller);
      written.then(() => afterCallerWrite(caller), () => afterCallerWrite(caller));
      return written;
    }
    const epoch = feed.epoch();
    const shared = CACHEABLE_CALLS.has(fn);
    if (epoch === null || !(shared || PER_CALLER_CALLS.has(fn))) return rpc.call(fn, args, caller);
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

const callKey = (fn: ApiFunctionName, args: unknown) => `${fn} ${JSON.stringify(args)}`;

/**
 * The answer kept under `key`, else `fetch`'s, kept from now on (`fetched` hears of it):
 * concurrent misses share one call, and a failure is never kept.
 */
function keepOnce(
  answers: Map<string, Promise<string>>,
  key: string,
  fetch: () => Promise<string>,
  fetched?: (answer: Promise<string>) => void,
): Promise<string> {
  const hit = answers.get(key);
  if (hit) return hit;
  const answer = fetch();
  answers.set(key, answer);
  answer.catch(() => {
    if (answers.get(key) === answer) answers.delete(key);
  });
  fetched?.(answer);
  return answer;
}

interface Vouch {
  sessionId: string | null;
  userId: string | null;
  until: number;
  /** Per-caller answers, and the characters of those that have arrived. */
  answers: Map<string, Promise<string>>;
  chars: number;
}
