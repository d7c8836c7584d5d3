import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import type { DatabasePool } from '../../src/db/pool.js';
import { FENCE_TTL_MS, MAX_FENCED_CALLERS, createReadRouting } from '../../src/db/read-routing.js';

/**
 * The routing decisions on their own, with pools that record which server a statement reached
 * (the live primary + standby pair is test/reliability/read-replica.test.ts).
 */
type Server = 'primary' | 'replica';
interface Seen {
  server: Server;
  fence: string | undefined;
}

function fakePool(server: Server, fail?: () => unknown): DatabasePool & { marker: postgres.Sql } {
  const marker = { server } as unknown as postgres.Sql;
  return {
    marker,
    async run(work) {
      const failure = fail?.();
      if (failure) throw failure;
      return work(marker);
    },
    ping: async () => undefined,
    missingSettings: async () => [],
    close: async () => undefined,
  };
}

/** A read statement that answers one row, or none when the replica is "behind" the fence. */
function statement(seen: Seen[], replicaBehind = false) {
  return async (db: postgres.Sql, fence: string | undefined) => {
    const server = (db as unknown as { server: Server }).server;
    seen.push({ server, fence });
    return server === 'replica' && fence !== undefined && replicaBehind ? [] : [{ server }];
  };
}

/** An error as the server sends it (postgres.js copies the fields onto the instance). */
const sqlError = (code: string) => Object.assign(Object.create(postgres.PostgresError.prototype) as postgres.PostgresError, { code, message: code });

describe('read routing', () => {
  it('without a replica every read goes to the primary', async () => {
    const seen: Seen[] = [];
    const routing = createReadRouting(fakePool('primary'), undefined);
    routing.wrote('user-1', '42');
    expect(await routing.read('user-1', statement(seen))).toEqual([{ server: 'primary' }]);
    expect(seen).toEqual([{ server: 'primary', fence: undefined }]);
  });

  it('a read goes to the replica; after the caller wrote, it carries the fence and falls back while the replica is behind', async () => {
    const seen: Seen[] = [];
    const routing = createReadRouting(fakePool('primary'), fakePool('replica'));
    expect(await routing.read('user-1', statement(seen))).toEqual([{ server: 'replica' }]);
    routing.wrote('user-1', '42');
    routing.wrote('user-1', null); // a call that wrote nothing leaves the fence as it is
    expect(await routing.read('user-1', statement(seen, true))).toEqual([{ server: 'primary' }]);
    expect(await routing.read('user-2', statement(seen, true))).toEqual([{ server: 'replica' }]);
    expect(seen).toEqual([
      { server: 'replica', fence: undefined },
      { server: 'replica', fence: '{42}' },
      { server: 'primary', fence: undefined },
      { server: 'replica', fence: undefined },
    ]);
  });

  it("keeps a caller's last eight writes for FENCE_TTL_MS, and at most MAX_FENCED_CALLERS callers", async () => {
    let now = 0;
    const seen: Seen[] = [];
    const routing = createReadRouting(fakePool('primary'), fakePool('replica'), () => now);
    for (let xid = 1; xid <= 10; xid++) routing.wrote('user-1', String(xid));
    await routing.read('user-1', statement(seen));
    expect(seen.pop()?.fence).toBe('{3,4,5,6,7,8,9,10}');
    now += FENCE_TTL_MS;
    await routing.read('user-1', statement(seen));
    expect(seen.pop()?.fence).toBeUndefined();

    for (let i = 0; i <= MAX_FENCED_CALLERS; i++) routing.wrote(`caller-${i}`, '7');
    await routing.read('caller-0', statement(seen));
    expect(seen.pop()?.fence).toBeUndefined();
    await routing.read(`caller-${MAX_FENCED_CALLERS}`, statement(seen));
    expect(seen.pop()?.fence).toBe('{7}');
  });

  it('the primary answers when the replica is unreachable, in conflict with recovery, or refuses the session or finds nothing', async () => {
    for (const failure of [Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), sqlError('40001'), sqlError('PT401'), sqlError('PT404')]) {
      const seen: Seen[] = [];
      const routing = createReadRouting(fakePool('primary'), fakePool('replica', () => failure));
      expect(await routing.read(undefined, statement(seen))).toEqual([{ server: 'primary' }]);
    }
  });

  it('other errors of the replica are the answer (a timeout, a permission, bad input)', async () => {
    for (const code of ['57014', '42501', '22023']) {
      const routing = createReadRouting(fakePool('primary'), fakePool('replica', () => sqlError(code)));
      await expect(routing.read(undefined, statement([]))).rejects.toMatchObject({ code });
    }
  });
});
