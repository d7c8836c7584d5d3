/**
 * `npx tsx bench/replica-lag.ts [--learners N]`: the numbers behind the read-your-own-writes
 * design (docs/architecture.md, "Read replicas"). Starts a primary (embedded PostgreSQL, temp
 * dir, free port) with the demo catalog and a streaming standby of it (scripts/standby.ts), then
 *
 *   1. how long after a write commits the standby's snapshot sees it (polled), and
 *   2. through the rpc adapter as the API composes it, `record_learning_event` followed by
 *      `list_user_journeys` for N learners, the read issued 0, 2, 5 and 10 ms after the write's
 *      answer: how many reads the primary had to answer (the replica had not replayed the
 *      learner's write) and the read latency.
 *
 * Prints a table; everything listens on 127.0.0.1 and stops by itself.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { prepareDatabase } from '../src/db/database.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createDatabasePool, type DatabasePool } from '../src/db/pool.js';
import { createPostgresRpc } from '../src/db/postgres-rpc.js';
import { SnapshotCache } from '../src/db/snapshot-cache.js';
import { startStandby } from '../scripts/standby.js';
import { freePort, withDatabase } from '../scripts/test-database.js';

const { values } = parseArgs({ options: { learners: { type: 'string', default: '300' } } });
const learners = Number(values.learners);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

const dir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-replica-lag-'));
const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'primary'), port: await freePort(), database: 'sparkpath' });
const standby = await startStandby({ primaryAdminUrl: server.adminUrl, primaryDataDir: path.join(dir, 'primary'), dataDir: path.join(dir, 'standby') });
const primaryUrl = withDatabase(server.adminUrl, 'sparkpath');
const pools: DatabasePool[] = [];
try {
  await prepareDatabase(primaryUrl, { seed: true });
  const primary = postgres(primaryUrl, { max: 1, onnotice: () => undefined });
  const replica = postgres(standby.url('sparkpath'), { max: 1, onnotice: () => undefined });
  await primary`create table public.lag_probe (id int)`;

  // 1. Commit → visible on the standby.
  const visibleAfter: number[] = [];
  for (let i = 0; i < 200; i++) {
    const [{ xid }] = await primary`with w as (insert into public.lag_probe values (${i}) returning 1)
      select pg_catalog.pg_current_xact_id_if_assigned()::text as xid from w`;
    const startedAt = performance.now();
    while (!(await replica`select pg_catalog.pg_visible_in_snapshot(${xid}::xid8, pg_catalog.pg_current_snapshot()) as seen`)[0].seen);
    visibleAfter.push(performance.now() - startedAt);
  }
  visibleAfter.sort((a, b) => a - b);
  console.log(`write visible on the standby after: p50 ${percentile(visibleAfter, 0.5).toFixed(1)} ms, p99 ${percentile(visibleAfter, 0.99).toFixed(1)} ms`);

  // 2. A learner's write, then their read, through the rpc adapter.
  let counting = false;
  const counts = { primary: 0, replica: 0 };
  const counted = (pool: DatabasePool, server: 'primary' | 'replica'): DatabasePool => ({
    ...pool,
    run: (work) => ((counts[server] += counting ? 1 : 0), pool.run(work)),
  });
  const options = { poolMax: 4, statementTimeoutMs: 5000, connectTimeoutSeconds: 3 };
  pools.push(createDatabasePool({ url: primaryUrl, ...options }), createDatabasePool({ url: standby.url('sparkpath'), ...options }));
  const rpc = createPostgresRpc({ pool: counted(pools[0], 'primary'), readPool: counted(pools[1], 'replica'), snapshotCache: new SnapshotCache(1 << 20) });
  const sparks = (await primary`select id from app.sparks where snapshot_id = private.resolve_snapshot_id(null) limit 50`).map((r) => r.id as string);

  console.log('\n| Read issued after the write\'s answer | Reads the primary answered | Read latency p50 / p90 |\n|---|---|---|');
  for (const pauseMs of [0, 2, 5, 10]) {
    counts.primary = counts.replica = 0;
    const latencies: number[] = [];
    for (let i = 0; i < learners; i++) {
      const caller = { role: 'authenticated' as const, claims: JSON.stringify({ sub: randomUUID(), role: 'authenticated', aud: 'authenticated' }) };
      await rpc.call('record_learning_event', { spark_id: sparks[i % sparks.length], verb: 'started' }, caller);
      if (pauseMs > 0) await sleep(pauseMs);
      counting = true;
      const startedAt = performance.now();
      await rpc.call('list_user_journeys', {}, caller);
      latencies.push(performance.now() - startedAt);
      counting = false;
    }
    latencies.sort((a, b) => a - b);
    const when = pauseMs === 0 ? 'at once' : `${pauseMs} ms later`;
    console.log(`| ${when} | ${((100 * counts.primary) / learners).toFixed(0)} % | ${percentile(latencies, 0.5).toFixed(1)} ms / ${percentile(latencies, 0.9).toFixed(1)} ms |`);
  }
  await primary.end();
  await replica.end();
} finally {
  await Promise.all(pools.map((pool) => pool.close()));
  await standby.dispose();
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
