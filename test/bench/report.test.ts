import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { writeReport, type BenchResults } from '../../bench/report.js';

// A real run's results (the search and learner families at 1x and 10x) as the report reads them.
const recorded = (): BenchResults => JSON.parse(readFileSync(new URL('../../docs/benchmarks-search-and-learners.json', import.meta.url), 'utf8'));

const growthRow = (report: string, family: string) =>
  report.split('\n').find((line) => line.startsWith(`| p95 growth 10x/1x ≤ 1.5 | ${family} |`));

describe('bench report: growth rows', () => {
  it('gives the body-cache hit rate of both runs where a snapshot family misses the growth target', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['search.autocomplete'] = { base_p95_ms: 18, x10_p95_ms: 90, ratio: 5, x10_hit_rate: 0.9 };
    expect(growthRow(writeReport(r), 'search.autocomplete')).toContain('over by 3.50; body-cache hits 97.4% at 1x, 90.0% at 10x');
  });

  it('says a rate the run did not record is not recorded, rather than presuming every request a hit', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['snapshots.changes'] = { base_p95_ms: 10, x10_p95_ms: 20, ratio: 2 };
    const row = growthRow(writeReport(r), 'snapshots.changes');
    expect(row).toContain('at 1x, not recorded at 10x');
    expect(row).not.toContain('grows with the catalog');
  });

  it('gives no growth verdict where the 10x run had failed responses, and counts them in their own row', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['snapshots.changes'] = { base_p95_ms: 10, x10_p95_ms: 5, ratio: 0.5, x10_errors: 6949, x10_requests: 8500 };
    r.growth.ratios['learning.next'] = { base_p95_ms: 10, x10_p95_ms: 12, ratio: 1.2, x10_errors: 0, x10_requests: 9000 };
    const report = writeReport(r).split('\n');
    expect(report).toContain('| 0 errors at 10x | snapshots.changes | 6,949 of 8,500 | **missed** |');
    expect(growthRow(report.join('\n'), 'snapshots.changes')).toBe('| p95 growth 10x/1x ≤ 1.5 | snapshots.changes | 0.50 | **not measured** (the growth runs had failed responses) |');
    expect(report).toContain('| 0 errors at 10x | learning.next | 0 of 9,000 | met |');
    expect(growthRow(report.join('\n'), 'learning.next')).toContain('| 1.20 | met (margin 0.30) |');
  });

  it('names no cause for a family outside the body cache', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['learning.next'] = { base_p95_ms: 10, x10_p95_ms: 20, ratio: 2 };
    expect(growthRow(writeReport(r), 'learning.next')).toMatch(/over by 0\.50\) \|$/);
  });
});

describe('bench report: what the growth runs waited on', () => {
  const waits = (io: number, cpu: number, lock = 0) => ({ samples: 100, active: io + cpu + lock, by: { 'IO:DataFileRead': io, CPU: cpu, 'LWLock:BufferMapping': lock } });
  const sideBySide = { main_run_p95_ms: 17.5, base_rps: 900, base_requests: 5000, base_errors: 0, x10_rps: 300, x10_requests: 2000, x10_errors: 0 };

  it('says where a 10x side that missed waited on storage, with the host\'s iowait', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['learning.next'] = {
      ...sideBySide, base_p95_ms: 10, x10_p95_ms: 60, ratio: 6,
      base_cpu: { api: 0.4, postgres: 1.3, client: 0.1, host_iowait: 0.01 }, x10_cpu: { api: 0.1, postgres: 0.5, client: 0.1, host_iowait: 0.62 },
      base_waits: waits(1, 99), x10_waits: waits(60, 30, 10),
    };
    r.growth.ratios['learning.reviews'] = { ...sideBySide, base_p95_ms: 10, x10_p95_ms: 30, ratio: 3, base_waits: waits(0, 100), x10_waits: waits(10, 90) };
    const report = writeReport(r);
    expect(growthRow(report, 'learning.next')).toContain('over by 4.50; at 10x 60.0% of the active backends\' samples waited on storage (mostly IO:DataFileRead), host iowait 0.62 cores: it read the catalog from disk');
    // A side mostly on the CPU gets no such note.
    expect(growthRow(report, 'learning.reviews')).toMatch(/over by 1\.50\) \|$/);
    const table = report.split('\n').find((line) => line.startsWith('| learning.next | 10.00 | 60.00 |'));
    expect(table).toMatch(/\| 1\.0% · 0\.0% \/ 60\.0% · 10\.0% \| 0\.01 \/ 0\.62 \|$/);
  });
});

describe('bench report: growth table', () => {
  it('sets the 10x run\'s throughput and CPU beside the base run\'s, and a dash where a run did not record them', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    const base = r.families.find((f) => f.name === 'learning.next')!.byConnections[8]!.api;
    r.growth.ratios['learning.next'] = { base_p95_ms: 10, x10_p95_ms: 20, ratio: 2, x10_rps: 1234.4, x10_cpu: { api: 0.5, postgres: 1.25, client: 0.1 } };
    r.growth.ratios['learning.reviews'] = { base_p95_ms: 10, x10_p95_ms: 20, ratio: 2 };
    const table = (family: string) => writeReport(r).split('\n').find((line) => line.startsWith(`| ${family} | 10.00 | 20.00 |`));
    // Before interleaving, the base was the main run's: its p95, throughput and CPU.
    expect(table('learning.next')).toBe(`| learning.next | 10.00 | 20.00 | 2.00 | ${Math.round(base.rps)} / 1234 | ${base.cpu.api!.toFixed(2)} / ${base.cpu.postgres.toFixed(2)} | 0.50 / 1.25 |`);
    expect(table('learning.reviews')).toMatch(/ \/ – \| .* \| – \|$/);
    expect(writeReport(r).split('\n').some((line) => line.startsWith('This run predates interleaved growth runs'))).toBe(true);
  });

  it('gives an interleaved run\'s own 1x figures, the main run\'s p95 beside them, and says how it measured', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['learning.next'] = {
      base_p95_ms: 10, x10_p95_ms: 12, ratio: 1.2, main_run_p95_ms: 17.5,
      base_rps: 900.4, base_cpu: { api: 0.4, postgres: 1.3, client: 0.1 }, base_errors: 0, base_requests: 5000,
      x10_rps: 800, x10_cpu: { api: 0.35, postgres: 1.4, client: 0.1 }, x10_errors: 0, x10_requests: 4000,
    };
    const report = writeReport(r).split('\n');
    expect(report).toContain('| learning.next | 10.00 | 12.00 | 1.20 | 17.50 | 900 / 800 | 0.40 / 1.30 | 0.35 / 1.40 |');
    // A run that does not record its rounds predates them: it kept one.
    expect(report.find((line) => line.startsWith("Each family's 1x and 10x runs are interleaved"))).toContain('kept once, 2 runs a side averaged');
    r.settings.growth_rounds = 2;
    expect(writeReport(r)).toContain('the block 1x, 10x, 10x, 1x kept twice, 4 runs a side averaged');
    expect(report).toContain('| 0 errors in the growth runs (1x and 10x) | learning.next | 0 of 9,000 | met |');
  });

  it('counts failed responses of the interleaved 1x runs against the growth verdict too', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['learning.next'] = { base_p95_ms: 10, x10_p95_ms: 12, ratio: 1.2, main_run_p95_ms: 11, base_errors: 3, base_requests: 5000, x10_errors: 0, x10_requests: 4000 };
    const report = writeReport(r);
    expect(report.split('\n')).toContain('| 0 errors in the growth runs (1x and 10x) | learning.next | 3 of 9,000 | **missed** |');
    expect(growthRow(report, 'learning.next')).toContain('**not measured**');
  });

  it('gives the hit rate of the interleaved 1x run where it has one', () => {
    const r = recorded();
    if (!r.growth.run) throw new Error('the recorded run has a growth run');
    r.growth.ratios['search.autocomplete'] = { base_p95_ms: 18, x10_p95_ms: 90, ratio: 5, main_run_p95_ms: 17, base_hit_rate: 0.5, x10_hit_rate: 0.9 };
    expect(growthRow(writeReport(r), 'search.autocomplete')).toContain('body-cache hits 50.0% at 1x, 90.0% at 10x');
  });
});

describe('bench report: import row', () => {
  const importRow = (report: string) => report.split('\n').find((line) => line.startsWith('| import and promote ≤ 30 s |'));

  it('judges the 50,000-spark import read to vacuum, and leaves the 10x import out', () => {
    const r = recorded();
    const base = r.imports!.find((i) => i.sparks === 50_000)!;
    base.seconds = 29.4;
    expect(importRow(writeReport(r))).toBe('| import and promote ≤ 30 s | 50,000 sparks | 29.4 s | met (margin 0.6 s) |');
    base.seconds = 57.8;
    expect(importRow(writeReport(r))).toBe('| import and promote ≤ 30 s | 50,000 sparks | 57.8 s | **missed** (over by 27.8 s) |');
    r.imports = r.imports!.filter((i) => i.sparks !== 50_000);
    expect(importRow(writeReport(r))).toBeUndefined();
  });
});

const p95Row = (report: string, family: string) =>
  report.split('\n').find((line) => line.startsWith(`| p95 ≤ `) && line.includes(` at 8 connections | ${family} |`));

describe('bench report: p95 rows', () => {
  it('gives the CPU per request the target would need when the run kept every core busy', () => {
    const r = recorded();
    const at8 = r.families.find((f) => f.name === 'learning.next')!.byConnections[8]!;
    // 1,000 req/s on 2 busy cores: 2,000 µs a request; p95 20 ms against 10 asks for half of it
    Object.assign(at8.api, { rps: 1000, p95_ms: 20, cpu: { api: 0.4, postgres: 1.5, client: 0.1 } });
    expect(p95Row(writeReport(r), 'learning.next')).toContain('the machine was busy (2.00 of 2 cores), where latency grows with the CPU each request costs: 2000 µs measured (API, Postgres and load generator), about 1000 µs would meet the target) |');
  });

  it('gives no CPU figure when the machine had idle cores', () => {
    const r = recorded();
    const at8 = r.families.find((f) => f.name === 'learning.next')!.byConnections[8]!;
    Object.assign(at8.api, { rps: 1000, p95_ms: 20, cpu: { api: 0.3, postgres: 0.9, client: 0.1 } });
    const row = p95Row(writeReport(r), 'learning.next');
    expect(row).toContain('**missed**');
    expect(row).not.toContain('machine was busy');
  });
});

describe('bench report: EXPLAIN', () => {
  it('says of each plan whether it is a warmed call or a first call, whose durations include planning', () => {
    const r = recorded();
    r.explains = [
      { family: 'learning.next', reason: 'p95 20.00 ms > target 10 ms at 8 connections', plan: 'duration: 4.2 ms  plan: …', warm_ups: 5 },
      { family: 'search', reason: 'p95 30.00 ms > target 20 ms at 8 connections', plan: 'duration: 90.1 ms  plan: …' },
    ];
    const report = writeReport(r).split('\n');
    expect(report).toContain('p95 20.00 ms > target 10 ms at 8 connections; the call after 5 calls of it in the same session (cached plans)');
    expect(report).toContain('p95 30.00 ms > target 20 ms at 8 connections; the first call in a fresh session: its durations include planning every statement');
  });
});
