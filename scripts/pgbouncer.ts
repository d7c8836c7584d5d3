import { existsSync } from 'node:fs';
import { aptInstall } from './apt.js';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

/**
 * The transaction-pooler test (test/db/transaction-pooler.test.ts) puts Debian's PgBouncer in
 * front of the test database, standing in for Supavisor's transaction mode; install it when
 * missing (root), else that test is skipped.
 */
export function ensurePgbouncer(log: (line: string) => void): void {
  if (existsSync(PGBOUNCER)) return;
  if (process.getuid?.() !== 0) {
    log('pgbouncer is missing: the transaction-pooler test will be skipped. Install it with: sudo apt-get install -y pgbouncer');
    return;
  }
  log('installing pgbouncer from Debian');
  aptInstall(['pgbouncer']);
}
