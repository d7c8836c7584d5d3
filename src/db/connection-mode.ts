/** Supavisor's transaction-mode port on a Supabase project (its session mode and Postgres use 5432). */
export const SUPAVISOR_TRANSACTION_PORT = 6543;

export interface ConnectionMode {
  /** Named prepared statements (postgres.js `prepare`). */
  prepare: boolean;
  /**
   * Behind a transaction pooler: each transaction may run on another server connection, so
   * nothing may rely on the session (prepared statements, LISTEN, session settings or locks).
   */
  transactionPooler: boolean;
  /** Why, in one line for the start-up log. */
  reason: string;
}

/**
 * How to talk to the database at `url`, from DB_PREPARE: `auto` turns prepared statements off on
 * Supavisor's transaction port (which cannot keep them) and on otherwise; `false` says the
 * connection goes through a transaction pooler of another port (PgBouncer's, say).
 *
 * @example
 *   connectionMode('postgres://postgres.abc:pw@aws-0-eu-west-1.pooler.supabase.com:6543/postgres', 'auto')
 *   // → { prepare: false, transactionPooler: true, reason: "DB_PREPARE=auto, database on port 6543 (Supavisor's transaction mode)" }
 */
export function connectionMode(url: string, setting: 'auto' | 'true' | 'false'): ConnectionMode {
  const port = Number(new URL(url).port || 5432);
  const onTransactionPort = port === SUPAVISOR_TRANSACTION_PORT;
  const prepare = setting === 'auto' ? !onTransactionPort : setting === 'true';
  const where = onTransactionPort ? `port ${port} (Supavisor's transaction mode)` : `port ${port}`;
  return { prepare, transactionPooler: onTransactionPort || setting === 'false', reason: `DB_PREPARE=${setting}, database on ${where}` };
}
