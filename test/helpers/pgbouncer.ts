import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PGBOUNCER } from '../../scripts/pgbouncer.js';
import { freePort } from '../../scripts/test-database.js';

/** `npm test` installs Debian's pgbouncer when missing; a bare `vitest` run without it skips. */
export const hasPgbouncer = existsSync(PGBOUNCER);

export interface Pgbouncer {
  /** `databaseUrl` with its host and port replaced by the pooler's. */
  through(databaseUrl: string): string;
  stop(): Promise<void>;
}

/**
 * Debian's PgBouncer in transaction mode in front of the server of `serverUrl`: what Supavisor's
 * port 6543 is to a Supabase project. Like Supavisor it passes no start-up parameters on (they are
 * ignored, not refused), and each transaction may get another server connection: here it always
 * gets a clean one (DEALLOCATE ALL after every transaction), so whatever relies on the session
 * fails every time rather than now and then.
 */
export async function startPgbouncer(serverUrl: string): Promise<Pgbouncer> {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-pgbouncer-'));
  const ini = path.join(dir, 'pgbouncer.ini');
  await writeFile(ini, [
    '[databases]',
    `* = host=${server.hostname} port=${server.port} user=${decodeURIComponent(server.username)} password=${decodeURIComponent(server.password)}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = any',
    'pool_mode = transaction',
    'default_pool_size = 4',
    'max_client_conn = 200',
    'server_reset_query = DEALLOCATE ALL',
    'server_reset_query_always = 1',
    'ignore_startup_parameters = extra_float_digits,statement_timeout,sparkpath.token_issuer,sparkpath.home_page',
    `logfile = ${path.join(dir, 'pgbouncer.log')}`,
    '',
  ].join('\n'));
  await chmod(dir, 0o777);
  // PgBouncer refuses to run as root; Debian's package brings the postgres user.
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', ini] : [ini];
  const child = spawn(PGBOUNCER, args, { stdio: 'ignore' });
  await waitForPort(port);
  return {
    through(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on port ${port}`);
}
