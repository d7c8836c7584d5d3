import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../bench/loadgen.js';
import { measure, measureInterleaved, type Side } from '../../bench/measure.js';

const result = (p95_ms: number): LoadResult => ({ rps: 100, p50_ms: p95_ms / 2, p95_ms, p99_ms: p95_ms * 2, requests: 600, errors: 0, non2xx: 0, duration_s: 6, client_cpu_s: 0.3 });

/** A side whose runs write their name in a shared log and answer with the next p95 from its list. */
function side(name: string, log: string[], p95s: number[], windows?: string[]): Side {
  let i = 0;
  return {
    run: async () => {
      log.push(name);
      return result(p95s[i++]);
    },
    pids: { api: process.pid, postgres: process.pid },
    window: windows && { start: async () => void windows.push(`${name} start`), end: async () => void windows.push(`${name} end`) },
  };
}

describe('bench measurement', () => {
  it('runs one side three times and keeps the last two', async () => {
    const log: string[] = [];
    const m = await measure(side('a', log, [99, 10, 20]).run, { postgres: process.pid });
    expect(log).toEqual(['a', 'a', 'a']);
    expect(m.p95_ms).toBe(15);
    expect(m.runs.map((r) => r.p95_ms)).toEqual([10, 20]);
    expect(m.requests).toBe(1200);
  });

  it('interleaves two sides as A B, then kept A B B A, so a drift of the host weighs on both alike', async () => {
    const log: string[] = [];
    const windows: string[] = [];
    // The host slows by 1 ms a run: kept runs 3..6 at 13, 14, 15, 16 ms on a side that costs 10 ms
    // and on one that costs 10 ms too; A B B A gives both the same mean.
    const [a, b] = await measureInterleaved([side('a', log, [11, 13, 16], windows), side('b', log, [12, 14, 15], windows)]);
    expect(log).toEqual(['a', 'b', 'a', 'b', 'b', 'a']);
    expect(windows).toEqual(['a start', 'b start', 'a end', 'b end']);
    expect(a.p95_ms).toBe(14.5);
    expect(b.p95_ms).toBe(14.5);
    expect(a.runs.map((r) => r.p95_ms)).toEqual([13, 16]);
    expect(b.runs.map((r) => r.p95_ms)).toEqual([14, 15]);
  });

  it('repeats the kept A B B A block for more rounds, each side averaging all its kept runs', async () => {
    const log: string[] = [];
    const windows: string[] = [];
    const [a, b] = await measureInterleaved([side('a', log, [1, 10, 20, 30, 40], windows), side('b', log, [2, 11, 21, 31, 41], windows)], 2);
    expect(log).toEqual(['a', 'b', 'a', 'b', 'b', 'a', 'a', 'b', 'b', 'a']);
    expect(windows).toEqual(['a start', 'b start', 'a end', 'b end']);
    expect(a.runs.map((r) => r.p95_ms)).toEqual([10, 20, 30, 40]);
    expect(b.runs.map((r) => r.p95_ms)).toEqual([11, 21, 31, 41]);
    expect(a.p95_ms).toBe(25);
    expect(b.p95_ms).toBe(26);
  });

  it('starts and stops a side\'s sampler around each of its kept runs, not the discarded one', async () => {
    const log: string[] = [];
    const sampler = (name: string) => ({ start: () => void log.push(`${name} sampling`), stop: async () => void log.push(`${name} stopped`) });
    await measureInterleaved([{ ...side('a', log, [1, 2, 3]), sampler: sampler('a') }, { ...side('b', log, [1, 2, 3]), sampler: sampler('b') }]);
    expect(log).toEqual([
      'a', 'b',
      'a sampling', 'a', 'a stopped', 'b sampling', 'b', 'b stopped',
      'b sampling', 'b', 'b stopped', 'a sampling', 'a', 'a stopped',
    ]);
  });

  it('charges each side the CPU of its own kept runs', async () => {
    // Spins until the process has used 200 ms of CPU, however busy the machine is.
    const spin = () => {
      const start = process.cpuUsage();
      while (process.cpuUsage(start).user + process.cpuUsage(start).system < 200_000);
    };
    const pids = { api: process.pid, postgres: process.pid };
    const [idle, loaded] = await measureInterleaved([
      { run: async () => (await new Promise((r) => setTimeout(r, 200)), result(1)), pids },
      { run: async () => (spin(), result(1)), pids },
    ]);
    // Each kept run of the spinning side cost 200 ms of CPU, charged to it and not to the sleeping one.
    expect(loaded.cpu.api).toBeGreaterThan(0.05);
    expect(loaded.cpu.api).toBeGreaterThan(3 * idle.cpu.api!);
  });
});
