/**
 * `npx tsx bench/data-api.ts [--reads N]`: the numbers behind the Data API transport's design
 * (docs/supabase.md, section 7). Starts an embedded PostgreSQL (temp dir, free port) with the
 * demo catalog and the PostgREST double on it (test/doubles/postgrest.ts: PostgREST's
 * transaction, not its speed), then measures
 *
 *   1. the CPU a request spends building its supabase-js client: a client per request (the
 *      issue's shape) against one client whose requests carry their caller's headers (no I/O:
 *      the fetch answers at once);
 *   2. snapshot reads of many distinct inputs (every domain, a search per spark title, the graph
 *      of every spark) as a signed-in learner, through the Data API transport: a new body (the
 *      version read plus the pinned read), a held body (the version read alone), and the read
 *      alone (what a transport without the body cache would send); and the same reads through
 *      the direct transport, for reference.
 *
 * Prints two tables; everything listens on 127.0.0.1 and stops by itself.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@supabase/supabase-js';
import { SignJWT } from 'jose';
import postgres from 'postgres';
import { createDataApiRpc } from '../src/db/data-api-rpc.js';
import type { Database } from '../src/db/database.types.js';
import { prepareDatabase } from '../src/db/database.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { apiLoginUrl } from '../src/db/login-role.js';
import { createDatabasePool } from '../src/db/pool.js';
import { createPostgresRpc } from '../src/db/postgres-rpc.js';
import type { ApiArgs, DbCaller, Rpc, SnapshotFunctionName } from '../src/db/rpc.js';
import { SnapshotCache } from '../src/db/snapshot-cache.js';
import { supabaseClientOptions } from '../src/supabase/client-options.js';
import { freePort, withDatabase } from '../scripts/test-database.js';
import { authenticatorUrl, ensureAuthenticator, startPostgrest, supabaseKey } from '../test/doubles/postgrest.js';

const { values } = parseArgs({ options: { reads: { type: 'string', default: '300' } } });
const reads = Number(values.reads);
const secret = 'bench-secret-for-the-data-api-transport-0123456789';
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

// 1. The client a request is sent with: CPU only.
{
  const answer = async () => new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
  const anonKey = await supabaseKey('anon', secret);
  const token = await supabaseKey('anon', secret);
  // Built as the service builds its clients (Realtime transport), on the bench's own fetch.
  const options = { ...(await supabaseClientOptions(10)), db: { schema: 'api' as const } };
  const shared = createClient<Database, 'api'>('http://127.0.0.1:9', anonKey, { ...options, accessToken: async () => null, global: { fetch: answer } });
  const shapes: [string, () => PromiseLike<unknown>][] = [
    ['a client per request (global Authorization header)', () =>
      createClient<Database, 'api'>('http://127.0.0.1:9', anonKey, {
        ...options,
        auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
        global: { fetch: answer, headers: { Authorization: `Bearer ${token}` } },
      }).rpc('list_difficulty_levels', {}, { get: true })],
    ['one client, the caller\'s headers on each request', () =>
      shared.rpc('list_difficulty_levels', {}, { get: true }).setHeader('Authorization', `Bearer ${token}`)],
  ];
  console.log('\n| supabase-js client | CPU per request (mean of 5,000, fastest of 3 runs) |\n|---|---|');
  for (const [name, send] of shapes) {
    for (let i = 0; i < 500; i++) await send();
    let best = Infinity;
    for (let run = 0; run < 3; run++) {
      const startedAt = performance.now();
      for (let i = 0; i < 5000; i++) await send();
      best = Math.min(best, ((performance.now() - startedAt) * 1000) / 5000);
    }
    console.log(`| ${name} | ${best.toFixed(0)} µs |`);
  }
}

// 2. Snapshot reads through both transports.
const dir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-data-api-'));
const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort(), database: 'sparkpath' });
const url = withDatabase(server.adminUrl, 'sparkpath');
const closers: (() => Promise<unknown>)[] = [];
try {
  await ensureAuthenticator(server.adminUrl);
  await prepareDatabase(url, { seed: true, enableLocalApiLogin: true });
  const owner = postgres(url, { max: 1, onnotice: () => undefined });
  closers.push(() => owner.end());
  const sparks = await owner<{ slug: string; title: string }[]>`select slug, title from app.sparks where snapshot_id = private.resolve_snapshot_id(null) order by slug`;
  const domains = await owner<{ slug: string }[]>`select slug from app.domains where snapshot_id = private.resolve_snapshot_id(null) order by slug`;
  const door = await startPostgrest({ databaseUrl: authenticatorUrl(url), jwtSecret: secret });
  closers.push(() => door.close());
  const pool = createDatabasePool({ url: apiLoginUrl(url), poolMax: 4, statementTimeoutMs: 5000, connectTimeoutSeconds: 3 });
  closers.push(() => pool.close());

  const claims = { sub: '00000000-0000-4000-8000-00000000b001', role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 3600 };
  const token = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
  const learner: DbCaller = { role: 'authenticated', claims: JSON.stringify(claims), token };
  const anonKey = await supabaseKey('anon', secret);
  const dataApi = (budget: number) => createDataApiRpc({ url: door.url, anonKey, pool, snapshotCache: new SnapshotCache(budget), timeoutMs: 9000 });
  const direct = (budget: number) => createPostgresRpc({ pool, snapshotCache: new SnapshotCache(budget) });

  type Read = { fn: SnapshotFunctionName; args: ApiArgs<SnapshotFunctionName> };
  const workload: Read[] = [];
  for (let i = 0; workload.length < reads; i++) {
    const spark = sparks[i % sparks.length];
    const pick = i % 3;
    if (pick === 0) workload.push({ fn: 'get_domain', args: { slug: domains[i % domains.length].slug } });
    else if (pick === 1) workload.push({ fn: 'search_content', args: { q: spark.title.split(' ')[0].slice(0, 20), page: 1 + (i % 2) } });
    else workload.push({ fn: 'get_spark_graph', args: { slug: spark.slug } });
  }

  async function measure(name: string, read: (r: Read) => Promise<unknown>) {
    for (const r of workload) await read(r); // the same buffers and plans for every row
    const latencies: number[] = [];
    for (const r of workload) {
      const startedAt = performance.now();
      await read(r);
      latencies.push(performance.now() - startedAt);
    }
    latencies.sort((a, b) => a - b);
    console.log(`| ${name} | ${percentile(latencies, 0.5).toFixed(2)} ms | ${percentile(latencies, 0.9).toFixed(2)} ms |`);
  }
  console.log(`\n| ${reads} distinct snapshot reads, one learner, one at a time | p50 | p90 |\n|---|---|---|`);
  // A warm-up pass of each runs the workload once before it is timed; the cache of a "held
  // body" transport is filled by it.
  const cold = dataApi(0);
  await measure('Data API, new body: version read + pinned read', (r) => cold.readSnapshot(r.fn, r.args, learner));
  const warm = dataApi(64 << 20);
  await measure('Data API, held body: version read alone', (r) => warm.readSnapshot(r.fn, r.args, learner));
  await measure('Data API, the read alone (no body cache)', (r) => cold.call(r.fn, r.args, learner));
  const directCold: Omit<Rpc, 'health'> = direct(0);
  await measure('direct, new body (one statement)', (r) => directCold.readSnapshot(r.fn, r.args, learner));
  const directWarm = direct(64 << 20);
  await measure('direct, held body (one statement, no content query)', (r) => directWarm.readSnapshot(r.fn, r.args, learner));
} finally {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
