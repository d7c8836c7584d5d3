import postgres from 'postgres';
import { CallGate } from './call-gate.js';
import { isConnectionError } from './errors.js';
import type { ApiArgs, ApiFunctionName, DbCaller, Rpc } from './rpc.js';

export interface PostgresRpcOptions {
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
}

interface ApiFunction {
  params: Map<string, string>; // parameter name -> SQL type
}

/**
 * The postgres.js adapter of the rpc port.
 *
 * One request is one statement: `select private.dispatch(role, claims, call, args)`. The
 * dispatcher sets `role` and `request.jwt.claims` transaction-locally and runs the api function,
 * so RLS sees exactly what PostgREST would give it, in one round trip instead of four.
 * `call` is built here from introspected function and parameter names only; values travel in
 * `args` (jsonb) and are cast to each parameter's declared type inside the database.
 */
export function createPostgresRpc(options: PostgresRpcOptions): Rpc & { sql: postgres.Sql; liveFor(claims: string): Promise<number | null> } {
  const open = () =>
    postgres(options.url, {
      max: options.poolMax,
      connect_timeout: options.connectTimeoutSeconds,
      idle_timeout: 60,
      max_lifetime: 60 * 30,
      prepare: true,
      onnotice: () => undefined,
      connection: {
        application_name: 'sparkpath-api',
        statement_timeout: options.statementTimeoutMs,
        'sparkpath.token_issuer': options.tokenIssuer ?? 'sparkpath',
      },
    });
  let sql = open();
  // A bounded, first-come-first-served admission to the pool (see call-gate.ts for why).
  const gate = new CallGate(options.poolMax * (options.pipelineDepth ?? 1));
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
   * pool is replaced (unless it has already answered since the failure) and the circuit closes.
   */
  function startRecovery() {
    if (recovering || closing) return;
    const since = performance.now();
    const stale = sql;
    recovering = (async () => {
      while (!closing) {
        if (await probe()) {
          if (lastSuccessAt < since) replacePool(stale);
          circuitOpen = false;
          return;
        }
        circuitOpen = true;
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
  async function guarded<T>(deadlineMs: number, run: (db: postgres.Sql) => Promise<T>): Promise<T> {
    if (circuitOpen) throw unavailable('the database is unavailable');
    const db = sql;
    const startedAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    // The deadline covers waiting for a slot too.
    const slot = gate.enter();
    try {
      const result = await Promise.race([
        slot.ready.then(() => run(db)),
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
      slot.leave();
    }
  }
  // Long enough for a connect plus the longest statement the server allows.
  const callDeadlineMs = options.connectTimeoutSeconds * 1000 + options.statementTimeoutMs + 1000;

  let catalog: Promise<Map<string, ApiFunction>> | undefined;
  const callTexts = new Map<string, string>();

  function loadCatalog(): Promise<Map<string, ApiFunction>> {
    catalog ??= guarded(callDeadlineMs, introspect).catch((error: unknown) => {
      catalog = undefined; // retry on the next call, e.g. after the database comes back
      throw error;
    });
    return catalog;
  }

  async function callText(fn: string, keys: string[]): Promise<string> {
    const cacheKey = `${fn}(${keys.join(',')})`;
    const cached = callTexts.get(cacheKey);
    if (cached) return cached;
    if (!/^[a-z_][a-z0-9_]*$/.test(fn)) throw new Error(`invalid api function name ${fn}`);
    const definition = (await loadCatalog()).get(fn);
    if (!definition) throw new Error(`api.${fn} does not exist`);
    const named = keys.map((key) => {
      const type = definition.params.get(key);
      if (!type) throw new Error(`api.${fn} has no parameter ${key}`);
      return `${quoteIdent(key)} => ${castArgument(key, type)}`;
    });
    const text = `api.${fn}(${named.join(', ')})`;
    callTexts.set(cacheKey, text);
    return text;
  }

  return {
    get sql() {
      return sql;
    },
    async call<F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string> {
      const present: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(args as Record<string, unknown>)) if (value !== undefined) present[key] = value;
      const call = await callText(fn, Object.keys(present).sort());
      // The args travel as text and are parsed by the server: handing postgres.js a string for
      // a jsonb parameter would encode it a second time (a jsonb string, not an object).
      const rows = await guarded(callDeadlineMs, (db) =>
        db.unsafe<{ body: string | null }[]>(
          'select private.dispatch($1, $2, $3, $4::text::jsonb) as body',
          [caller.role, caller.claims ?? '', call, JSON.stringify(present)],
          { prepare: true },
        ),
      );
      return rows[0]?.body ?? 'null';
    },
    /** private.request_live_for: seconds the session check keeps passing `claims`, or null. */
    async liveFor(claims: string): Promise<number | null> {
      const rows = await guarded(callDeadlineMs, (db) =>
        db.unsafe<{ live_for: number | null }[]>('select private.request_live_for($1::text::jsonb) as live_for', [claims], { prepare: true }),
      );
      return rows[0]?.live_for ?? null;
    },
    async ping(): Promise<void> {
      await guarded(options.pingTimeoutMs ?? 2000, (db) => db`select 1`);
    },
    close: async () => {
      closing = true;
      await sql.end({ timeout: 5 });
    },
  };
}

async function introspect(sql: postgres.Sql): Promise<Map<string, ApiFunction>> {
  const rows = await sql<{ name: string; arg_names: string[] | null; arg_types: string[] }[]>`
    select p.proname as name,
           p.proargnames[1:p.pronargs] as arg_names,
           array(select pg_catalog.format_type(t, null)
                 from unnest(p.proargtypes::oid[]) with ordinality as a(t, i) order by i) as arg_types
    from pg_catalog.pg_proc p
    where p.pronamespace = 'api'::regnamespace`;
  const functions = new Map<string, ApiFunction>();
  for (const row of rows) {
    if (functions.has(row.name)) throw new Error(`api.${row.name} is overloaded; the rpc port needs unique names`);
    const params = new Map<string, string>();
    (row.arg_names ?? []).forEach((name, i) => params.set(name, row.arg_types[i]));
    functions.set(row.name, { params });
  }
  return functions;
}

function castArgument(key: string, type: string): string {
  const field = quoteLiteral(key);
  if (type === 'jsonb' || type === 'json') return `($1->${field})::${type}`;
  if (type.endsWith('[]')) {
    return `(select coalesce(pg_catalog.array_agg(e), '{}') from pg_catalog.jsonb_array_elements_text($1->${field}) e)::${type}`;
  }
  return `($1->>${field})::${type}`;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;
