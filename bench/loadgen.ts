import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runMeasured } from './proc.js';
import type { RequestSpec } from './endpoints.js';

export const WRK_SCRIPT = path.resolve(import.meta.dirname, 'wrk/report.lua');

export interface LoadResult {
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  requests: number;
  /** non-2xx responses plus socket errors (connect, read, write, timeout). */
  errors: number;
  non2xx: number;
  duration_s: number;
  /** CPU seconds used by the load generator itself. */
  client_cpu_s: number;
}

/** One request per line: METHOD \t PATH \t Name: value\x1fName: value \t BODY (see report.lua). */
export async function writeRequestsFile(file: string, requests: RequestSpec[]): Promise<void> {
  const lines = requests.map((r) => {
    const headers = Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('\x1f');
    for (const part of [r.path, headers, r.body ?? '']) if (/[\t\n]/.test(part)) throw new Error(`request field contains a tab or newline: ${part}`);
    return [r.method, r.path, headers, r.body ?? ''].join('\t');
  });
  await writeFile(file, `${lines.join('\n')}\n`);
}

/** How wrk walks the requests file (bench/wrk/report.lua). */
export type WrkMode = 'plain' | 'zipf' | 'write' | 'rotate' | 'consume';

/**
 * wrk with 2 threads (one per core), no pipelining; the Lua script reports JSON from done().
 * `write` runs need a run id (the idempotency keys' prefix) and a file for the acknowledged ids.
 */
export async function runWrk(url: string, requestsFile: string, connections: number, seconds: number, mode: WrkMode = 'plain', write?: { runId: string; ackedFile: string }): Promise<LoadResult> {
  const threads = Math.min(2, connections);
  const args = ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '5s', '-s', WRK_SCRIPT, url, '--', requestsFile, mode, String(threads),
    ...(write ? [write.runId, write.ackedFile] : [])];
  const run = await runMeasured('wrk', args);
  const line = /WRK_JSON (\{.*\})/.exec(run.stdout)?.[1];
  if (!line) throw new Error(`wrk produced no report (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  const r = JSON.parse(line) as {
    requests: number; duration_s: number; rps: number; p50_ms: number; p95_ms: number; p99_ms: number; non2xx: number;
    errors: { connect: number; read: number; write: number; status: number; timeout: number };
  };
  const socketErrors = r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout;
  return {
    rps: r.rps, p50_ms: r.p50_ms, p95_ms: r.p95_ms, p99_ms: r.p99_ms, requests: r.requests,
    errors: r.non2xx + socketErrors, non2xx: r.non2xx, duration_s: r.duration_s, client_cpu_s: run.cpuSeconds,
  };
}

export interface PgbenchTarget {
  host: string;
  port: string;
  user: string;
  password: string;
  database: string;
}

/**
 * pgbench with one script file per request variant (equal weights), -M prepared like the API
 * and PostgREST, per-transaction log for exact percentiles.
 */
export async function runPgbench(target: PgbenchTarget, scripts: string[], connections: number, seconds: number, protocol: 'prepared' | 'simple' = 'prepared'): Promise<LoadResult> {
  if (scripts.length > 128) throw new Error(`pgbench takes at most 128 scripts, got ${scripts.length}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-pgbench-'));
  try {
    const files: string[] = [];
    for (const [i, script] of scripts.entries()) {
      const file = path.join(dir, `s${i}.sql`);
      await writeFile(file, script);
      files.push('-f', `${file}@1`);
    }
    const args = ['-n', '-c', String(connections), '-j', '2', '-T', String(seconds), '-M', protocol, '-l', '--log-prefix', path.join(dir, 'log'), ...files];
    const run = await runMeasured('pgbench', args, {
      PGHOST: target.host, PGPORT: target.port, PGUSER: target.user, PGPASSWORD: target.password, PGDATABASE: target.database,
    });
    const tps = Number(/tps = ([\d.]+)/.exec(run.stdout)?.[1] ?? NaN);
    if (!Number.isFinite(tps)) throw new Error(`pgbench failed (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
    const failed = Number(/number of failed transactions: (\d+)/.exec(run.stdout)?.[1] ?? 0);
    const latencies: number[] = [];
    for (const name of await readdir(dir)) {
      if (!name.startsWith('log')) continue;
      for (const line of (await readFile(path.join(dir, name), 'utf8')).split('\n')) {
        const fields = line.split(' ');
        if (fields.length >= 3) latencies.push(Number(fields[2]) / 1000);
      }
    }
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] : NaN;
    const processed = Number(/number of transactions actually processed: (\d+)/.exec(run.stdout)?.[1] ?? latencies.length);
    return {
      rps: tps, p50_ms: pct(50), p95_ms: pct(95), p99_ms: pct(99), requests: processed, errors: failed, non2xx: 0,
      duration_s: seconds, client_cpu_s: run.cpuSeconds,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
