/**
 * Live-process harness for the reliability suite: a real PostgreSQL (embedded, temp dir, free
 * port) and the real API started as a child process, plus a small closed-loop load generator.
 * Everything listens on 127.0.0.1 and every load stops by itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { prepareDatabase } from '../../src/db/database.js';
import { apiLoginUrl } from '../../src/db/login-role.js';
import { freePort, withDatabase } from '../../scripts/test-database.js';
import { npmStartArgs } from '../../bench/start-command.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const JWT_SECRET = 'reliability-jwt-secret-0123456789abcdefghijkl';
export const SERVICE_SECRET = 'reliability-service-secret-0123456789abcdefgh';
/** Short form (CI, `npm test`) unless RELIABILITY_MODE=full. */
export const FULL = process.env.RELIABILITY_MODE === 'full';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Postgres {
  /** The owner connection. */
  url: string;
  /** The API's login role (DATABASE_API_URL). */
  apiUrl: string;
  adminUrl: string;
  dataDir: string;
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
  dispose(): Promise<void>;
}

/** A migrated database in a throwaway cluster that a test can stop and start again. */
export async function startPostgres(): Promise<Postgres> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-reliability-'));
  const dataDir = path.join(dir, 'pg');
  const port = await freePort();
  let server: EmbeddedDatabase | undefined = await startEmbeddedPostgres({ dataDir, port, database: 'sparkpath' });
  const url = withDatabase(server.adminUrl, 'sparkpath');
  await prepareDatabase(url, { seed: true, enableLocalApiLogin: true });
  return {
    url,
    apiUrl: apiLoginUrl(url),
    adminUrl: server.adminUrl,
    dataDir,
    port,
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async restart() {
      server = await startEmbeddedPostgres({ dataDir, port, database: 'sparkpath' });
    },
    async dispose() {
      await server?.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Api {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  output: () => string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

let startArgs: string[] | undefined;

/**
 * The API as a real process, started exactly as `npm start` starts it (the same bundle and node
 * flags; configuration only through the environment), so signals and exits are real.
 */
export async function startApi(env: Record<string, string>): Promise<Api> {
  const port = await freePort();
  let output = '';
  startArgs ??= npmStartArgs(ROOT);
  const child = spawn(process.execPath, startArgs, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SUPABASE_JWT_SECRET: JWT_SECRET,
      SERVICE_AUTH_SECRET: SERVICE_SECRET,
      DB_CONNECT_TIMEOUT_S: '2',
      // Rate limits stay on (part of the pipeline under test) with budgets the loads never reach.
      RATE_LIMIT_ANONYMOUS: '1000000',
      RATE_LIMIT_FREE_USER: '1000000',
      RATE_LIMIT_PREMIUM_USER: '1000000',
      // Lets the suite run against a pipelining pool too: DB_PIPELINE_DEPTH=4 npm run test:reliability
      ...(process.env.DB_PIPELINE_DEPTH ? { DB_PIPELINE_DEPTH: process.env.DB_PIPELINE_DEPTH } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d));
  child.stderr!.on('data', (d: Buffer) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`API exited during start-up: ${output}`);
    try {
      if ((await fetch(`${baseUrl}/metadata/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`API did not start: ${output}`);
    await sleep(200);
  }
  return {
    child,
    pid: child.pid!,
    baseUrl,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const code = await Promise.race([exited, sleep(20_000).then(() => 'timeout' as const)]);
      if (code === 'timeout') child.kill('SIGKILL');
    },
  };
}

export interface Outcome {
  status: number; // 0 when the request failed at the socket level
  ms: number;
  body: string;
  error?: string;
  startedAt: number;
  tag?: string;
}

/** One request with a client-side bound, so a hung server shows up as a failure. */
export async function timedRequest(url: string, init: RequestInit & { tag?: string } = {}, boundMs = 15_000): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const res = await fetchRetryingAReset(url, { ...init, signal: AbortSignal.timeout(boundMs) });
    const body = await res.text();
    return { status: res.status, ms: Date.now() - startedAt, body, startedAt, tag: init.tag };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { status: 0, ms: Date.now() - startedAt, body: '', error: cause ?? (error as Error).name, startedAt, tag: init.tag };
  }
}

/**
 * fetch, sending an idempotent request (GET, HEAD) once more when the server reset the connection:
 * a kept-alive socket the server's keep-alive timeout (5 s) closed just as fetch reused it is reset
 * before the API sees the request (RFC 9110, 9.2.2: such a request may be retried). A down API
 * still fails: its port refuses the retry.
 */
async function fetchRetryingAReset(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const idempotent = ['GET', 'HEAD'].includes((init.method ?? 'GET').toUpperCase());
    if (!idempotent || (error as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw error;
    return fetch(url, init);
  }
}

/** Closed-loop load: `concurrency` workers issue `next(i)` until `durationMs` has passed or `stop()`. */
export function runLoad(concurrency: number, durationMs: number, next: (i: number) => Promise<Outcome>) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  const end = Date.now() + durationMs;
  let counter = 0;
  const workers = Array.from({ length: concurrency }, async () => {
    while (!stopped && Date.now() < end) outcomes.push(await next(counter++));
  });
  return {
    outcomes,
    stop: () => {
      stopped = true;
    },
    done: Promise.all(workers).then(() => outcomes),
  };
}

/** `{error:{code,message,details}}` with the right types. */
export function isEnvelope(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const e = parsed.error;
    return Boolean(e) && typeof e!.code === 'string' && typeof e!.message === 'string' && typeof e!.details === 'object' && e!.details !== null && !Array.isArray(e!.details);
  } catch {
    return false;
  }
}

export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

export async function openApiRoutes(baseUrl: string): Promise<Set<string>> {
  const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const routes = new Set<string>();
  for (const [p, methods] of Object.entries(doc.paths)) for (const m of Object.keys(methods)) routes.add(`${m.toUpperCase()} ${p.replace(/\/+$/, '') || '/'}`);
  return routes;
}

export function superuser(url: string) {
  return postgres(url, { max: 2, onnotice: () => undefined });
}
