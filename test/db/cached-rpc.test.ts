import { describe, expect, it } from 'vitest';
import { cachePublicCalls } from '../../src/db/cached-rpc.js';
import type { ChangeFeed } from '../../src/db/change-feed.js';
import type { DbCaller, Rpc } from '../../src/db/rpc.js';

const ANON: DbCaller = { role: 'anon', claims: null };

/** An rpc that counts calls and answers `fn#n`, or fails / waits when told to. */
function countingRpc() {
  const calls: string[] = [];
  let pending: (() => void) | undefined;
  let failNext = false;
  let holdNext = false;
  const rpc = {
    sql: 'the pool',
    async call(fn: string, args: unknown) {
      calls.push(`${fn} ${JSON.stringify(args)}`);
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
    failNext: () => (failNext = true),
    holdNext: () => (holdNext = true),
    release: () => pending?.(),
  };
}

function manualFeed(): ChangeFeed & { set(epoch: number | null): void } {
  let current: number | null = 1;
  return { epoch: () => current, set: (e) => (current = e), close: async () => undefined };
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

  it('sends callers with a token, other functions and every call while the feed is down to the database', async () => {
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
