import { describe, expect, it } from 'vitest';
import { cachePublicCalls } from '../../src/db/cached-rpc.js';
import type { ChangeFeed } from '../../src/db/change-feed.js';
import type { DbCaller, Rpc } from '../../src/db/rpc.js';

const ANON: DbCaller = { role: 'anon', claims: null };

/** An rpc that counts calls and answers `fn#n`, or fails / waits when told to. */
function countingRpc() {
  const calls: string[] = [];
  const callers: DbCaller[] = [];
  let pending: (() => void) | undefined;
  let failNext = false;
  let holdNext = false;
  const rpc = {
    sql: 'the pool',
    async call(fn: string, args: unknown, caller: DbCaller) {
      calls.push(`${fn} ${JSON.stringify(args)}`);
      callers.push(caller);
      if (failNext) {
        failNext = false;
        throw Object.assign(new Error('down'), { code: '08001' });
      }
      if (holdNext) {
        holdNext = false;
        await new Promise<void>((resolve) => (pending = resolve));
      }
      return `${fn}#${calls.length}`;
    },
    ping: async () => undefined,
    close: async () => undefined,
  };
  return {
    rpc: rpc as unknown as Rpc & { sql: string },
    calls,
    callers,
    failNext: () => (failNext = true),
    holdNext: () => (holdNext = true),
    release: () => pending?.(),
  };
}

function manualFeed(): ChangeFeed & { set(epoch: number | null): void; notify(sessionId: string): void } {
  let current: number | null = 1;
  const listeners: ((sessionId: string) => void)[] = [];
  return {
    epoch: () => current,
    set: (e) => (current = e),
    onSessionChange: (listener) => void listeners.push(listener),
    notify: (sessionId) => listeners.forEach((listener) => listener(sessionId)),
    close: async () => undefined,
  };
}

describe('cachePublicCalls', () => {
  it('answers a repeated anonymous call from memory, per argument set', async () => {
    const db = countingRpc();
    const rpc = cachePublicCalls(db.rpc, manualFeed());
    expect(await rpc.call('get_metadata', {}, ANON)).toBe('get_metadata#1');
    expect(await rpc.call('get_metadata', {}, ANON)).toBe('get_metadata#1');
    expect(await rpc.call('resolve_snapshot', {}, ANON)).toBe('resolve_snapshot#2');
    expect(await rpc.call('resolve_snapshot', { snapshot_id: 'a' }, ANON)).toBe('resolve_snapshot#3');
    expect(await rpc.call('resolve_snapshot', { snapshot_id: undefined }, ANON)).toBe('resolve_snapshot#2');
    expect(db.calls).toHaveLength(3);
  });

  it('without a session check, sends callers with a token to the database; other functions and every call while the feed is down too', async () => {
    const db = countingRpc();
    const feed = manualFeed();
    const rpc = cachePublicCalls(db.rpc, feed);
    const user: DbCaller = { role: 'authenticated', claims: '{"sub":"u"}' };
    const anonWithClaims: DbCaller = { role: 'anon', claims: '{"role":"anon","session_id":"s"}' };
    for (let i = 0; i < 2; i++) {
      await rpc.call('get_metadata', {}, user);
      await rpc.call('get_metadata', {}, anonWithClaims);
      await rpc.call('list_domains', { page: 1, per_page: 20 }, ANON);
    }
    expect(db.calls).toHaveLength(6);
    feed.set(null);
    await rpc.call('get_metadata', {}, ANON);
    await rpc.call('get_metadata', {}, ANON);
    expect(db.calls).toHaveLength(8);
  });

  it('drops everything kept when the epoch changes, and never keeps an answer that started before the change', async () => {
    const db = countingRpc();
    const feed = manualFeed();
    const rpc = cachePublicCalls(db.rpc, feed);
    await rpc.call('get_metadata', {}, ANON);
    feed.set(2);
    expect(await rpc.call('get_metadata', {}, ANON)).toBe('get_metadata#2');

    db.holdNext();
    const slow = rpc.call('list_difficulty_levels', {}, ANON);
    await Promise.resolve();
    feed.set(3); // a notification arrives while the call is in flight
    db.release();
    expect(await slow).toBe('list_difficulty_levels#3');
    expect(await rpc.call('list_difficulty_levels', {}, ANON)).toBe('list_difficulty_levels#4');
    expect(await rpc.call('list_difficulty_levels', {}, ANON)).toBe('list_difficulty_levels#4');
  });

  it('shares one database call between concurrent misses and keeps no failure', async () => {
    const db = countingRpc();
    const rpc = cachePublicCalls(db.rpc, manualFeed());
    db.holdNext();
    const both = Promise.all([rpc.call('get_metadata', {}, ANON), rpc.call('get_metadata', {}, ANON)]);
    await Promise.resolve();
    db.release();
    expect(await both).toEqual(['get_metadata#1', 'get_metadata#1']);

    db.failNext();
    await expect(rpc.call('list_difficulty_levels', {}, ANON)).rejects.toThrow('down');
    expect(await rpc.call('list_difficulty_levels', {}, ANON)).toBe('list_difficulty_levels#3');
  });

  it('keeps at most maxEntries argument sets, dropping the oldest', async () => {
    const db = countingRpc();
    const rpc = cachePublicCalls(db.rpc, manualFeed(), { maxEntries: 2 });
    for (const id of ['a', 'b', 'c']) await rpc.call('resolve_snapshot', { snapshot_id: id }, ANON);
    await rpc.call('resolve_snapshot', { snapshot_id: 'c' }, ANON);
    await rpc.call('resolve_snapshot', { snapshot_id: 'b' }, ANON);
    expect(db.calls).toHaveLength(3);
    await rpc.call('resolve_snapshot', { snapshot_id: 'a' }, ANON);
    expect(db.calls).toHaveLength(4);
  });

  it('leaves the rest of the adapter as it is', () => {
    const db = countingRpc();
    const rpc = cachePublicCalls(db.rpc, manualFeed());
    expect(rpc.sql).toBe('the pool');
    expect(rpc.ping).toBe(db.rpc.ping);
  });
});

const claimsOf = (sessionId: string, sub = 'u1') => JSON.stringify({ sub, role: 'authenticated', session_id: sessionId });
const USER_A: DbCaller = { role: 'authenticated', claims: claimsOf('s-a') };
const USER_B: DbCaller = { role: 'authenticated', claims: claimsOf('s-b', 'u2') };

/** The database's session check, answering `seconds` (null: refused) and counting questions. */
function sessionOracle() {
  const asked: string[] = [];
  const answers = new Map<string, number | null>();
  let held: Promise<void> | undefined;
  let release: () => void = () => undefined;
  let failNext = false;
  return {
    asked,
    answer: (caller: DbCaller, seconds: number | null) => answers.set(caller.claims!, seconds),
    holdNext: () => (held = new Promise<void>((resolve) => (release = resolve))),
    release: () => release(),
    failNext: () => (failNext = true),
    async check(claims: string): Promise<number | null> {
      asked.push(claims);
      const wait = held;
      held = undefined;
      if (wait) await wait;
      if (failNext) {
        failNext = false;
        throw Object.assign(new Error('down'), { code: '08001' });
      }
      return answers.has(claims) ? answers.get(claims)! : 3600;
    },
  };
}

function vouchingSetup(options: { maxVouchMs?: number; maxVouches?: number; maxCallerChars?: number } = {}) {
  const db = countingRpc();
  const feed = manualFeed();
  const oracle = sessionOracle();
  const clock = { now: 0 };
  const rpc = cachePublicCalls(db.rpc, feed, { sessionCheck: (claims) => oracle.check(claims), now: () => clock.now, ...options });
  return { db, feed, oracle, clock, rpc };
}

describe('cachePublicCalls with session vouching', () => {
  it('serves a caller whose session the database vouched for from memory, fetched as anon', async () => {
    const { db, oracle, rpc } = vouchingSetup();
    expect(await rpc.call('get_current_snapshot', {}, USER_A)).toBe('get_current_snapshot#1');
    expect(await rpc.call('get_current_snapshot', {}, USER_A)).toBe('get_current_snapshot#1');
    expect(await rpc.call('get_current_snapshot', {}, ANON)).toBe('get_current_snapshot#1');
    expect(await rpc.call('get_metadata', {}, USER_B)).toBe('get_metadata#2');
    expect(db.callers).toEqual([ANON, ANON]);
    expect(oracle.asked).toEqual([USER_A.claims, USER_B.claims]);
  });

  it('sends a caller the check refuses to the database as itself, every time', async () => {
    const { db, oracle, rpc } = vouchingSetup();
    oracle.answer(USER_A, null);
    await rpc.call('get_metadata', {}, USER_A);
    await rpc.call('get_metadata', {}, USER_A);
    expect(db.callers).toEqual([USER_A, USER_A]);
    expect(oracle.asked).toHaveLength(2);
  });

  it('asks again after maxVouchMs, or sooner when the session ends by time first', async () => {
    const { oracle, clock, rpc } = vouchingSetup({ maxVouchMs: 5000 });
    oracle.answer(USER_B, 1.5);
    await rpc.call('get_metadata', {}, USER_A);
    await rpc.call('get_metadata', {}, USER_B);
    clock.now = 1499;
    await rpc.call('get_metadata', {}, USER_A);
    await rpc.call('get_metadata', {}, USER_B);
    expect(oracle.asked).toHaveLength(2);
    clock.now = 1500;
    await rpc.call('get_metadata', {}, USER_B);
    expect(oracle.asked).toEqual([USER_A.claims, USER_B.claims, USER_B.claims]);
    clock.now = 4999;
    await rpc.call('get_metadata', {}, USER_A);
    expect(oracle.asked).toHaveLength(3);
    clock.now = 5000;
    await rpc.call('get_metadata', {}, USER_A);
    expect(oracle.asked).toEqual([USER_A.claims, USER_B.claims, USER_B.claims, USER_A.claims]);
  });

  it('a notice about a session ends its vouch, and only its own; * and forgetSessions end all', async () => {
    const { feed, oracle, rpc } = vouchingSetup();
    const vouchBoth = async () => {
      await rpc.call('get_metadata', {}, USER_A);
      await rpc.call('get_metadata', {}, USER_B);
    };
    await vouchBoth();
    feed.notify('s-a');
    await vouchBoth();
    expect(oracle.asked).toEqual([USER_A.claims, USER_B.claims, USER_A.claims]);
    feed.notify('*');
    await vouchBoth();
    expect(oracle.asked).toHaveLength(5);
    rpc.forgetSessions();
    await vouchBoth();
    expect(oracle.asked).toHaveLength(7);
  });

  it('serves but does not keep a check that a notice overtook; later callers do not join it', async () => {
    const { oracle, rpc } = vouchingSetup();
    oracle.holdNext();
    const first = rpc.call('get_metadata', {}, USER_A);
    await Promise.resolve();
    rpc.forgetSessions(); // e.g. a logout committed while the check was reading the session
    const second = rpc.call('get_metadata', {}, USER_A);
    oracle.release();
    expect(await first).toBe('get_metadata#1');
    expect(await second).toBe('get_metadata#1');
    expect(oracle.asked).toHaveLength(2); // the second asked for itself
    await rpc.call('get_metadata', {}, USER_A);
    expect(oracle.asked).toHaveLength(2); // the second, asked after the notice, was kept
  });

  it('does not keep the answer of a check that a notice about its session overtook', async () => {
    const { feed, oracle, rpc } = vouchingSetup();
    oracle.holdNext();
    const first = rpc.call('get_metadata', {}, USER_A);
    await Promise.resolve();
    feed.notify('s-a');
    oracle.release();
    expect(await first).toBe('get_metadata#1'); // its check passed before the change
    await rpc.call('get_metadata', {}, USER_A);
    expect(oracle.asked).toHaveLength(2);
  });

  it('shares one check between concurrent calls with the same token', async () => {
    const { oracle, rpc } = vouchingSetup();
    oracle.holdNext();
    const both = Promise.all([rpc.call('get_metadata', {}, USER_A), rpc.call('list_difficulty_levels', {}, USER_A)]);
    await Promise.resolve();
    oracle.release();
    expect(await both).toEqual(['get_metadata#1', 'list_difficulty_levels#2']);
    expect(oracle.asked).toHaveLength(1);
  });

  it('a check that fails sends the call to the database as the caller', async () => {
    const { db, oracle, rpc } = vouchingSetup();
    oracle.failNext();
    expect(await rpc.call('get_metadata', {}, USER_A)).toBe('get_metadata#1');
    expect(db.callers).toEqual([USER_A]);
  });

  it('vouches go with the epoch, and nothing is vouched for while the feed is down', async () => {
    const { db, feed, oracle, rpc } = vouchingSetup();
    await rpc.call('get_metadata', {}, USER_A);
    feed.set(2); // e.g. the feed reconnected: session notices may have been missed
    await rpc.call('get_metadata', {}, USER_A);
    expect(oracle.asked).toHaveLength(2);
    feed.set(null);
    await rpc.call('get_metadata', {}, USER_A);
    expect(oracle.asked).toHaveLength(2);
    expect(db.callers.at(-1)).toEqual(USER_A);
  });

  it('never vouches for calls outside the cacheable set', async () => {
    const { db, oracle, rpc } = vouchingSetup();
    await rpc.call('list_snapshots', { page: 1, per_page: 20 }, USER_A);
    expect(oracle.asked).toHaveLength(0);
    expect(db.callers).toEqual([USER_A]);
  });

  it('keeps at most maxVouches tokens, dropping the oldest', async () => {
    const { oracle, rpc } = vouchingSetup({ maxVouches: 1 });
    await rpc.call('get_metadata', {}, USER_A);
    await rpc.call('get_metadata', {}, USER_B);
    await rpc.call('get_metadata', {}, USER_B);
    await rpc.call('get_metadata', {}, USER_A);
    expect(oracle.asked).toEqual([USER_A.claims, USER_B.claims, USER_A.claims]);
  });
});

describe('cachePublicCalls: per-caller answers (session, journeys, learning path)', () => {
  it('keeps the answer per token, fetched as the caller, while the token is vouched for', async () => {
    const { db, rpc } = vouchingSetup();
    expect(await rpc.call('get_session', {}, USER_A)).toBe('get_session#1');
    expect(await rpc.call('get_session', {}, USER_A)).toBe('get_session#1');
    expect(await rpc.call('get_session', {}, USER_B)).toBe('get_session#2');
    expect(db.callers).toEqual([USER_A, USER_B]);
  });

  it('drops it with the vouch: a notice about the session, or maxVouchMs later', async () => {
    const { feed, clock, rpc } = vouchingSetup({ maxVouchMs: 5000 });
    await rpc.call('get_session', {}, USER_A);
    await rpc.call('get_session', {}, USER_B);
    feed.notify('s-a'); // e.g. the user's profile changed, or the session ended
    expect(await rpc.call('get_session', {}, USER_A)).toBe('get_session#3');
    expect(await rpc.call('get_session', {}, USER_B)).toBe('get_session#2');
    clock.now = 5000;
    expect(await rpc.call('get_session', {}, USER_B)).toBe('get_session#4');
  });

  it('an answer still on its way when the notice arrives is not served afterwards', async () => {
    const { db, feed, rpc } = vouchingSetup();
    await rpc.call('get_metadata', {}, USER_A); // vouched
    db.holdNext();
    const slow = rpc.call('get_session', {}, USER_A);
    await Promise.resolve();
    feed.notify('s-a');
    db.release();
    expect(await slow).toBe('get_session#2');
    expect(await rpc.call('get_session', {}, USER_A)).toBe('get_session#3');
  });

  it('keeps no failure, and nothing for a caller the check refuses or without a session check', async () => {
    const { db, oracle, rpc } = vouchingSetup();
    db.failNext();
    await expect(rpc.call('get_session', {}, USER_A)).rejects.toThrow('down');
    expect(await rpc.call('get_session', {}, USER_A)).toBe('get_session#2');
    oracle.answer(USER_B, null);
    await rpc.call('get_session', {}, USER_B);
    await rpc.call('get_session', {}, USER_B);
    expect(db.callers.slice(-2)).toEqual([USER_B, USER_B]);

    const plain = countingRpc();
    const unchecked = cachePublicCalls(plain.rpc, manualFeed());
    await unchecked.call('get_session', {}, USER_A);
    await unchecked.call('get_session', {}, USER_A);
    expect(plain.calls).toHaveLength(2);
  });
});

describe('cachePublicCalls: a caller\'s progress', () => {
  const journeyArgs = { id: 'e1' };

  it('keeps journeys and paths per token; a notice about the user drops only that user\'s', async () => {
    const { feed, rpc } = vouchingSetup();
    expect(await rpc.call('get_user_journey', journeyArgs, USER_A)).toBe('get_user_journey#1');
    expect(await rpc.call('get_learning_path', { target: 't' }, USER_A)).toBe('get_learning_path#2');
    expect(await rpc.call('get_user_journey', journeyArgs, USER_B)).toBe('get_user_journey#3');
    expect(await rpc.call('get_user_journey', journeyArgs, USER_A)).toBe('get_user_journey#1');
    feed.notify('user:u1'); // USER_A's sub: an event was recorded elsewhere
    expect(await rpc.call('get_user_journey', journeyArgs, USER_A)).toBe('get_user_journey#4');
    expect(await rpc.call('get_learning_path', { target: 't' }, USER_A)).toBe('get_learning_path#5');
    expect(await rpc.call('get_user_journey', journeyArgs, USER_B)).toBe('get_user_journey#3');
  });

  it('a write of the caller\'s progress here drops what is kept for that user before it is answered, even when it fails', async () => {
    const { db, rpc } = vouchingSetup();
    await rpc.call('list_user_journeys', {}, USER_A);
    await rpc.call('list_user_journeys', {}, USER_B);
    await rpc.call('record_learning_event', { spark_id: 's', verb: 'started' }, USER_A);
    expect(await rpc.call('list_user_journeys', {}, USER_A)).toBe('list_user_journeys#4');
    expect(await rpc.call('list_user_journeys', {}, USER_B)).toBe('list_user_journeys#2');
    db.failNext();
    await expect(rpc.call('enroll_in_trail', { trail_id: 't' }, USER_B)).rejects.toThrow('down');
    expect(await rpc.call('list_user_journeys', {}, USER_B)).toBe('list_user_journeys#6');
    expect(db.callers.filter((caller) => caller === USER_A)).toHaveLength(3);
  });

  it('keeps at most maxCallerChars of answers, dropping those of the tokens vouched for longest ago', async () => {
    const { rpc } = vouchingSetup({ maxCallerChars: 30 });
    await rpc.call('get_session', {}, USER_A); // get_session#1: 13 characters
    await rpc.call('get_session', {}, USER_B); // get_session#2
    await rpc.call('list_user_journeys', {}, USER_A); // list_user_journeys#3: over budget, B's go
    await Promise.resolve();
    expect(await rpc.call('get_session', {}, USER_A)).toBe('get_session#1');
    expect(await rpc.call('get_session', {}, USER_B)).toBe('get_session#4');
  });
});
