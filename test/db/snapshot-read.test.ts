import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createDatabasePool, type DatabasePool } from '../../src/db/pool.js';
import { createPostgresRpc } from '../../src/db/postgres-rpc.js';
import type { DbCaller } from '../../src/db/rpc.js';
import { SnapshotCache } from '../../src/db/snapshot-cache.js';
import { insertCatalog } from '../helpers/content.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const anon: DbCaller = { role: 'anon', claims: null };

describe('snapshot reads through the rpc', () => {
  let db: TestDatabase;
  let pool: DatabasePool;
  let statements = 0;
  let rpc: ReturnType<typeof createPostgresRpc>;

  beforeAll(async () => {
    db = await createTestDatabase();
    await insertCatalog(db.sql, { domains: [{ slug: 'data' }, { slug: 'web' }] });
    const config = loadConfig({ NODE_ENV: 'test' });
    const real = createDatabasePool({ url: db.url, poolMax: config.DB_POOL_MAX, pipelineDepth: config.DB_PIPELINE_DEPTH, statementTimeoutMs: 5000, connectTimeoutSeconds: 3 });
    // Every statement the rpc sends goes through run: count them.
    pool = { ...real, run: (work) => ((statements += 1), real.run(work)) };
    rpc = createPostgresRpc({ pool, snapshotCache: new SnapshotCache(1024 * 1024) });
    await rpc.call('list_difficulty_levels', {}, anon); // loads the function catalog once
  });
  afterAll(async () => {
    await pool?.close();
    await db?.drop();
  });

  it('costs one statement, and a repeated read one statement that skips the content query', async () => {
    statements = 0;
    const first = await rpc.readSnapshot('list_domains', { page: 1, per_page: 20 }, anon);
    expect(statements).toBe(1);
    expect(JSON.parse(first.body!).data.map((d: { slug: string }) => d.slug)).toEqual(['data', 'web']);
    expect(first.version).toBe(first.snapshot_id);

    // Without the function the content query would fail: the repeated read never runs it.
    await db.sql`revoke execute on function api.list_domains(integer, integer, uuid) from anon`;
    try {
      statements = 0;
      const again = await rpc.readSnapshot('list_domains', { per_page: 20, page: 1 }, anon);
      expect(statements).toBe(1);
      expect(again).toEqual(first);
    } finally {
      await db.sql`grant execute on function api.list_domains(integer, integer, uuid) to anon`;
    }
  });

  it('answers no body when the client holds the version the server has no body for', async () => {
    const read = await rpc.readSnapshot('list_domains', { page: 1, per_page: 1 }, anon);
    const other = createPostgresRpc({ pool, snapshotCache: new SnapshotCache(1024 * 1024) });
    const held = await other.readSnapshot('list_domains', { page: 1, per_page: 1 }, anon, [read.version]);
    expect(held).toEqual({ version: read.version, snapshot_id: read.snapshot_id, body: null });
  });

  it('a promote changes the version, and the new snapshot answers although the old body is held', async () => {
    const before = await rpc.readSnapshot('list_domains', { page: 1, per_page: 20 }, anon);
    await insertCatalog(db.sql, { domains: [{ slug: 'data' }, { slug: 'ops' }, { slug: 'web' }] });
    const after = await rpc.readSnapshot('list_domains', { page: 1, per_page: 20 }, anon);
    expect(after.version).not.toBe(before.version);
    expect(JSON.parse(after.body!).data.map((d: { slug: string }) => d.slug)).toEqual(['data', 'ops', 'web']);
  });
});
