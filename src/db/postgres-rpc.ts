import type postgres from 'postgres';
import { createApiCatalog } from './api-catalog.js';
import type { DatabasePool } from './pool.js';
import { createReadRouting, fenced } from './read-routing.js';
import { callKey, type SnapshotCache } from './snapshot-cache.js';
import type { ApiArgs, ApiFunctionName, DbCaller, Rpc, SnapshotFunctionName, SnapshotRead } from './rpc.js';

export interface PostgresRpcOptions {
  /** The pool every statement goes through (it outlives database restarts): the primary. */
  pool: DatabasePool;
  /**
   * A read replica's pool (DATABASE_READ_URL): reads go there first (src/db/read-routing.ts).
   * Without one the primary answers everything.
   */
  readPool?: DatabasePool;
  /** Bodies of snapshot reads, shared by every route. */
  snapshotCache: SnapshotCache;
}

const DISPATCH = 'select private.dispatch($1, $2, $3, $4::text::jsonb, $5::text::jsonb) as body';
/** A read of a caller who wrote lately: on a replica, only once it has replayed those writes ($6). */
const DISPATCH_FENCED = fenced(DISPATCH, 6);
/** A write also answers its transaction id (null if it wrote nothing), read after the call ran. */
const DISPATCH_WRITE = `select d.body, pg_catalog.pg_current_xact_id_if_assigned()::text as xid from (${DISPATCH} offset 0) as d`;
const SNAPSHOT_READ = 'select version, snapshot_id, body from private.dispatch_snapshot_read($1, $2, $3, $4::text::jsonb, $5::text[], $6::text::jsonb)';

/**
 * The postgres.js adapter of the rpc port.
 *
 * One request is one statement: `select private.dispatch(role, claims, call, args, headers)`.
 * The dispatcher sets `role`, `request.jwt.claims` and `request.headers` transaction-locally,
 * checks the caller's session and runs the api function, which decides whether its caller may
 * call it, so the database sees exactly what PostgREST would give it, in one round trip instead
 * of four. A snapshot read is one statement too
 * (private.dispatch_snapshot_read: the same, plus the snapshot resolution).
 * `call` is built here from introspected function and parameter names only; values travel in
 * `args` (jsonb) and are cast to each parameter's declared type inside the database.
 *
 * Reads and writes: a call of a `stable` (or `immutable`) api function, and every snapshot
 * read, may be answered by a read replica; a `volatile` one always goes to the primary. The
 * volatility is introspected with the parameters, so the routing follows the schema.
 */
export function createPostgresRpc({ pool, readPool, snapshotCache }: PostgresRpcOptions): Omit<Rpc, 'health'> {
  const routing = createReadRouting(pool, readPool);
  const loadCatalog = createApiCatalog(pool);
  const callTexts = new Map<string, { text: string; reads: boolean }>();

  async function callText(fn: string, keys: string[]): Promise<{ text: string; reads: boolean }> {
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
    const text = { text: `api.${fn}(${named.join(', ')})`, reads: definition.reads };
    callTexts.set(cacheKey, text);
    return text;
  }

  /** The call text, whether it only reads, and the args given (undefined means "the function's default"). */
  async function prepare(fn: string, args: object): Promise<{ call: string; reads: boolean; present: Record<string, unknown> }> {
    const present: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(args)) if (value !== undefined) present[key] = value;
    const { text, reads } = await callText(fn, Object.keys(present).sort());
    return { call: text, reads, present };
  }

  return {
    async call<F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string> {
      const { call, reads, present } = await prepare(fn, args);
      // The args travel as text and are parsed by the server: handing postgres.js a string for
      // a jsonb parameter would encode it a second time (a jsonb string, not an object).
      const params = [caller.role, caller.claims ?? '', call, JSON.stringify(present), headersText(caller)];
      const subject = readPool ? subjectOf(caller) : undefined;
      if (reads) {
        const rows = await routing.read(subject, (db, fence) =>
          fence === undefined
            ? db.unsafe<{ body: string | null }[]>(DISPATCH, params, { prepare: true })
            : db.unsafe<{ body: string | null }[]>(DISPATCH_FENCED, [...params, fence], { prepare: true }),
        );
        return rows[0]?.body ?? 'null';
      }
      const rows = await pool.run((db) => db.unsafe<{ body: string | null; xid: string | null }[]>(DISPATCH_WRITE, params, { prepare: true }));
      routing.wrote(subject, rows[0]?.xid);
      return rows[0]?.body ?? 'null';
    },
    async readSnapshot<F extends SnapshotFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller, clientVersions: readonly string[] = []): Promise<SnapshotRead> {
      const key = callKey(fn, args);
      // Taken before the call: an eviction meanwhile cannot take a body the database skipped.
      const held = snapshotCache.heldFor(key);
      // snapshot_id is always part of the call: the database pins it to the resolved snapshot.
      const { call, reads, present } = await prepare(fn, { ...args, snapshot_id: (args as { snapshot_id?: string }).snapshot_id ?? null });
      const params = [caller.role, caller.claims ?? '', call, JSON.stringify(present), [...new Set([...held.keys(), ...clientVersions])], headersText(caller)];
      type Row = { version: string; snapshot_id: string | null; body: string | null };
      const statement = (db: postgres.Sql) => db.unsafe<Row[]>(SNAPSHOT_READ, params, { prepare: true });
      // Snapshot content is written only by a promote, never by the caller: no fence needed.
      const rows = reads ? await routing.read(undefined, statement) : await pool.run(statement);
      const row = rows[0];
      if (!row) throw new Error('private.dispatch_snapshot_read returned no row');
      if (row.body !== null) {
        snapshotCache.set(key, row.version, row.body);
        return row;
      }
      // Skipped by the database: held here, or by the client (then body stays null).
      return { ...row, body: held.get(row.version) ?? null };
    },
  };
}

/** The caller's forwarded headers as JSON text (the dispatcher's request.headers), or null. */
const headersText = (caller: DbCaller) => (caller.headers ? JSON.stringify(caller.headers) : null);

function castArgument(key: string, type: string): string {
  const field = quoteLiteral(key);
  if (type === 'jsonb' || type === 'json') return `($1->${field})::${type}`;
  if (type.endsWith('[]')) {
    return `(select coalesce(pg_catalog.array_agg(e), '{}') from pg_catalog.jsonb_array_elements_text($1->${field}) e)::${type}`;
  }
  return `($1->>${field})::${type}`;
}

/** The caller whose writes fence its reads: the `sub` of its verified claims. */
function subjectOf(caller: DbCaller): string | undefined {
  if (!caller.claims) return undefined;
  const sub = (JSON.parse(caller.claims) as { sub?: unknown }).sub;
  return typeof sub === 'string' ? sub : undefined;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;
