import type { LoadResult } from './loadgen.js';
import { CLK_TCK, hostIowaitTicks, processTicks, treeTicks } from './proc.js';
import type { Measurement } from './report.js';
import type { RunSampler } from './waits.js';

/** The kept runs as one: rates and percentiles averaged, counts and durations summed. */
export function average(results: LoadResult[]): LoadResult {
  const mean = (k: keyof LoadResult) => results.reduce((s, r) => s + r[k], 0) / results.length;
  const sum = (k: keyof LoadResult) => results.reduce((s, r) => s + r[k], 0);
  return {
    rps: mean('rps'), p50_ms: mean('p50_ms'), p95_ms: mean('p95_ms'), p99_ms: mean('p99_ms'),
    requests: sum('requests'), errors: sum('errors'), non2xx: sum('non2xx'), duration_s: sum('duration_s'), client_cpu_s: sum('client_cpu_s'),
  };
}

/** Something sampled just before and just after the kept runs. */
export interface Window {
  start(): Promise<void>;
  end(): Promise<void>;
}

/** One thing measured: its run, the processes whose CPU it costs, and what to sample around it. */
export interface Side {
  run: () => Promise<LoadResult>;
  pids: { api?: number; postgres: number };
  /** Sampled around the whole kept block; sides measured together must not share what it counts. */
  window?: Window;
  /** Started before each kept run of this side and stopped after it (bench/waits.ts). */
  sampler?: RunSampler;
}

/** Three runs, first discarded; CPU of the API and Postgres sampled around the kept runs. */
export async function measure(run: () => Promise<LoadResult>, pids: Side['pids'], window?: Window): Promise<Measurement> {
  return (await measureInterleaved([{ run, pids, window }]))[0];
}

/**
 * Each side runs once (discarded), then `rounds` times A B … B A, kept: a drift of the shared host
 * during the block weighs on every side alike, so their ratio measures the sides and not the hour,
 * and more rounds average out the swings of short runs. CPU is sampled around each kept run and
 * charged to its side.
 */
export async function measureInterleaved(sides: Side[], rounds = 1): Promise<Measurement[]> {
  for (const side of sides) await side.run();
  for (const side of sides) await side.window?.start();
  const kept = sides.map(() => [] as LoadResult[]);
  const ticks = sides.map(() => ({ api: 0, pg: 0, iowait: 0, seconds: 0 }));
  const round = [...sides.keys(), ...[...sides.keys()].reverse()];
  for (const i of Array.from({ length: rounds }, () => round).flat()) {
    const { run, pids, sampler } = sides[i];
    sampler?.start();
    const before = { api: pids.api ? processTicks(pids.api) : 0, pg: treeTicks(pids.postgres), iowait: hostIowaitTicks(), at: performance.now() };
    kept[i].push(await run());
    ticks[i].api += pids.api ? processTicks(pids.api) - before.api : 0;
    ticks[i].pg += treeTicks(pids.postgres) - before.pg;
    ticks[i].iowait += hostIowaitTicks() - before.iowait;
    ticks[i].seconds += (performance.now() - before.at) / 1000;
    await sampler?.stop();
  }
  for (const side of sides) await side.window?.end();
  return sides.map((side, i) => {
    const result = average(kept[i]);
    const { api, pg, iowait, seconds } = ticks[i];
    return {
      ...result,
      runs: kept[i],
      cpu: {
        api: side.pids.api ? api / CLK_TCK / seconds : undefined,
        postgres: pg / CLK_TCK / seconds,
        client: result.client_cpu_s / seconds,
        host_iowait: iowait / CLK_TCK / seconds,
      },
    };
  });
}
