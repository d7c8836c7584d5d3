import postgres from 'postgres';
import { isConnectionError } from './errors.js';

export interface DatabasePoolOptions {
  url: string;
  poolMax: number;
  /** Calls in flight per connection: 1 never pipelines; more lets postgres.js pipeline. */
  pipelineDepth?: number;
  statementTimeoutMs: number;
  connectTimeoutSeconds: number;
  pingTimeoutMs?: number;
  /**
   * The `iss` of the access tokens this API signs. The database's session check
   * (private.check_request) insists that such tokens name a session of ours; tokens of other
   * issuers sharing the secret (Supabase Auth) are not session-bound here.
   */
  tokenIssuer?: string;
  /** The service's public home page, which the xAPI export names (setting sparkpath.home_page). */
  homePage?: string;
  /** Shown in pg_stat_activity; a read replica's pool says so (default `sparkpath-api`). */
  applicationName?: string;
  /** Named prepared statements; off behind a transaction pooler (connection-mode.ts). Default true. */
  prepare?: boolean;
}

/**
 * The one owner of the API's connections. Everything that talks to PostgreSQL (the rpc, the
 * session store, the shared rate-limit counters, session cleanup) runs its statements through
 * `run`, which always uses the pool in service now: after a database restart the recovery below
 * swaps in a fresh pool, and every caller gets it on its next statement.
 */
export interface DatabasePool {
  /** Runs `work` on the current pool within the call deadline; a connection failure starts recovery. */
  run<T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T>;
  /** Resolves when the database answers `select 1` within the health timeout. */
  ping(): Promise<void>;
  /**
   * The connection settings the server did not receive, with the value the pool sent: a
   * transaction pooler (Supavisor, PgBouncer) does not pass start-up parameters on.
   */
  missingSettings(): Promise<{ name: string; expected: string; actual: string | null }[]>;
  close(): Promise<void>;
}

export function createDatabasePool(options: DatabasePoolOptions): DatabasePool {
  const prepare = options.prepare ?? true;
  const tokenIssuer = options.tokenIssuer ?? 'sparkpath';
  // The start-up parameters missingSettings() looks for, as the server reports them (pg_settings
  // gives statement_timeout in milliseconds).
  const settings: Record<string, string> = {
    statement_timeout: String(options.statementTimeoutMs),
    'sparkpath.token_issuer': tokenIssuer,
    ...(options.homePage ? { 'sparkpath.home_page': options.homePage } : {}),
  };
  const open = () =>
    postgres(options.url, {
      max: options.poolMax,
      connect_timeout: options.connectTimeoutSeconds,
      idle_timeout: 60,
      max_lifetime: 60 * 30,
      // postgres.js waits out an exponential backoff before a connection reconnects, shared by
      // the whole pool and growing with every failed connect (up to 20 s); during an outage a
      // few hundred refused connects made every call after the restart wait that long. The
      // circuit below already keeps calls away from a database that is down, so a reconnect
      // is tried after a short, fixed pause.
      backoff: () => 0.1,
      prepare,
      onnotice: () => undefined,
      // Calls pipelined per connection before postgres.js queues the rest (FIFO) for the first
      // connection that frees: a short call waits behind at most depth - 1 others. postgres.js
      // reads this option (default 100) but its types leave it out.
      ...({ max_pipeline: options.pipelineDepth ?? 1 } as object),
      connection: {
        application_name: options.applicationName ?? 'sparkpath-api',
        statement_timeout: options.statementTimeoutMs,
        ...settings,
      },
    });
  let sql = open();
  let lastSuccessAt = 0;
  let circuitOpen = false;
  let recovering: Promise<void> | undefined;
  let closing = false;

  const unavailable = (message: string) => Object.assign(new Error(message), { code: '08001' });

  /** Swaps in a fresh pool; the old one is torn down (its pending queries fail, as 503s). */
  function replacePool(stale: postgres.Sql) {
    if (sql !== stale || closing) return;
    sql = open();
    void stale.end({ timeout: 0 }).catch(() => undefined);
  }

  /** A throwaway one-connection client, so a wedged pool cannot fool the check. */
  async function probe(): Promise<boolean> {
    const client = postgres(options.url, {
      max: 1,
      prepare,
      connect_timeout: options.connectTimeoutSeconds,
      onnotice: () => undefined,
      connection: { application_name: 'sparkpath-api-probe' },
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client`select 1`,
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('probe timed out')), 1500))),
      ]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      void client.end({ timeout: 0 }).catch(() => undefined);
    }
  }

  /**
   * After a connection failure: probe every 500 ms. While the database is down the circuit is
   * open and calls fail at once with 503 instead of queueing; as soon as a probe succeeds the
   * circuit closes. The pool is replaced when the database was really gone (a probe failed): a
   * call that happened to finish after the failure says nothing about the connections that
   * died with the server. After a blip the first probe survives, the pool is replaced only if
   * it has not answered since.
   */
  function startRecovery() {
    if (recovering || closing) return;
    const since = performance.now();
    const stale = sql;
    recovering = (async () => {
      let wentDown = false;
      while (!closing) {
        if (await probe()) {
          if (wentDown || lastSuccessAt < since) replacePool(stale);
          circuitOpen = false;
          return;
        }
        wentDown = circuitOpen = true;
        await new Promise((r) => setTimeout(r, 500).unref());
      }
    })().finally(() => {
      recovering = undefined;
    });
  }

  /**
   * postgres.js 3.4.9 can wedge when the server goes away: a connection whose socket closes
   * during start-up (Postgres shutting down or starting up) reconnects forever and never
   * rejects its queries, even after the server is back (porsager/postgres#1193). So every call
   * has a deadline, connection failures start the recovery above, and a pool that made no
   * progress at all during a call that ran out of time is replaced.
   */
  async function guarded<T>(deadlineMs: number, work: (db: postgres.Sql) => Promise<T>): Promise<T> {
    if (circuitOpen) throw unavailable('the database is unavailable');
    const db = sql;
    const startedAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        work(db),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            if (lastSuccessAt < startedAt) replacePool(db);
            reject(unavailable('the database did not answer in time'));
          }, deadlineMs);
        }),
      ]);
      lastSuccessAt = performance.now();
      return result;
    } catch (error) {
      if (isConnectionError(error)) startRecovery();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
  // Long enough for a connect plus the longest statement the server allows.
  const callDeadlineMs = options.connectTimeoutSeconds * 1000 + options.statementTimeoutMs + 1000;

  return {
    run: (work) => guarded(callDeadlineMs, work),
    async ping() {
      await guarded(options.pingTimeoutMs ?? 2000, (db) => db`select 1`);
    },
    async missingSettings() {
      // pg_settings has the built-in ones in their base unit; custom ones only current_setting.
      const rows = await guarded(callDeadlineMs, (db) => db<{ name: string; setting: string | null }[]>`
        select n.name, coalesce((select s.setting from pg_catalog.pg_settings s where s.name = n.name),
                                pg_catalog.current_setting(n.name, true)) as setting
        from pg_catalog.unnest(${Object.keys(settings)}::text[]) as n(name)`);
      const actual = new Map(rows.map((row) => [row.name, row.setting || null]));
      return Object.entries(settings)
        .filter(([name, expected]) => actual.get(name) !== expected)
        .map(([name, expected]) => ({ name, expected, actual: actual.get(name) ?? null }));
    },
    async close() {
      closing = true;
      await sql.end({ timeout: 5 });
    },
  };
}
