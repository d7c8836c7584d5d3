import type { SupabaseClient } from '@supabase/supabase-js';
import { supabaseClientOptions } from '../supabase/client-options.js';
import { createApiCatalog } from './api-catalog.js';
import type { Database } from './database.types.js';
import { DataApiError } from './errors.js';
import type { DatabasePool } from './pool.js';
import type { ApiArgs, ApiFunctionName, DbCaller, Rpc, SnapshotFunctionName, SnapshotRead } from './rpc.js';
import { callKey, type SnapshotCache } from './snapshot-cache.js';

export interface DataApiRpcOptions {
  /** The project URL the Data API answers at (DATA_API_URL, by default SUPABASE_URL). */
  url: string;
  /** The project's anon (publishable) key: every request carries it, never the service_role key. */
  anonKey: string;
  /** Only to learn, once, which api functions just read (they go as GET); no request uses it. */
  pool: DatabasePool;
  /** Bodies of snapshot reads, shared by every route. */
  snapshotCache: SnapshotCache;
  /** How long one call may take before it fails (503). */
  timeoutMs: number;
}

type ApiClient = SupabaseClient<Database, 'api'>;

/**
 * The Data API adapter of the rpc port (DATA_API=supabase): every api call goes to a Supabase
 * project's PostgREST as the caller, through supabase-js's `.rpc()`, so PostgREST verifies the
 * caller's token, switches into its role, sets its claims and runs the pre-request hook
 * (private.check_request) and the function, exactly as for any other client of the project.
 *
 * - Who calls: a user's verified token travels as `Authorization: Bearer`; anonymous and service
 *   callers send the anon key, a service caller with its `X-Service-Auth` header, which the
 *   database checks itself (private.request_caller). Never the service_role key.
 * - One supabase-js client for the process, with no session of its own (its `accessToken` is
 *   null, which also disables its Auth client), and the caller's headers set on each request's
 *   own builder: no credential outlives the request it came with. Creating a client per request
 *   costs more CPU for the same isolation (docs/supabase.md, section 7, has the numbers).
 * - Reads go as GET (`stable` and `immutable` functions, introspected once through `pool`; a
 *   Supabase API load balancer may send a GET to a read replica), writes as POST. A GET cannot
 *   carry a null, so a read with a null argument goes as POST, which PostgREST also runs read-only.
 * - supabase-js parses the function's JSON; the body is serialised again for the API's answer.
 * - A snapshot read is a version read, `api.resolve_snapshot(snapshot_id, for_function)`, which
 *   applies the read's own access rule, then, unless the API (snapshot cache) or the client
 *   (If-None-Match) holds that version's body, the read itself pinned to the resolved snapshot.
 *   So a held body costs one cheap call, a new one two calls.
 * - Errors: PostgREST's error body carries the SQLSTATE in `code`; they are thrown as
 *   DataApiError and mapped at the HTTP edge by the same table as the direct transport's.
 *   supabase-js's retries of GETs are off: the API answers 503 with Retry-After and the client
 *   decides.
 */
export function createDataApiRpc(options: DataApiRpcOptions): Omit<Rpc, 'health'> & { ping(): Promise<void> } {
  const { snapshotCache } = options;
  const catalog = createApiCatalog(options.pool);
  let loaded: Promise<ApiClient> | undefined;

  // supabase-js is loaded on first use, as in the Supabase Auth mode: a service that never talks
  // to a Supabase project never loads it.
  function client(): Promise<ApiClient> {
    loaded ??= Promise.all([import('@supabase/supabase-js'), supabaseClientOptions(Math.ceil(options.timeoutMs / 1000))]).then(
      ([{ createClient }, common]) =>
        createClient<Database, 'api'>(options.url, options.anonKey, {
          ...common,
          db: { schema: 'api' },
          accessToken: async () => null,
        }),
    );
    return loaded;
  }

  async function send(fn: ApiFunctionName, args: object, caller: DbCaller, signal?: AbortSignal): Promise<unknown> {
    const present = Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));
    const reads = (await catalog()).get(fn)?.reads ?? false;
    const get = reads && Object.values(present).every((value) => ['string', 'number', 'boolean'].includes(typeof value));
    let request = (await client()).rpc(fn, present as ApiArgs<typeof fn>, { get }).retry(false);
    if (caller.role === 'authenticated') {
      if (!caller.token) throw new Error('an authenticated caller reaches the Data API only with its token');
      request = request.setHeader('Authorization', `Bearer ${caller.token}`);
    }
    for (const [name, value] of Object.entries(caller.headers ?? {})) request = request.setHeader(name, value);
    if (signal) request = request.abortSignal(signal);
    const { data, error, status } = await request;
    if (error) throw new DataApiError(status, error);
    return data;
  }

  return {
    async call<F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string> {
      return JSON.stringify(await send(fn, args, caller));
    },
    async readSnapshot<F extends SnapshotFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller, clientVersions: readonly string[] = []): Promise<SnapshotRead> {
      const key = callKey(fn, args);
      // Taken before the calls: an eviction meanwhile cannot take a body this read relies on.
      const held = snapshotCache.heldFor(key);
      const requested = (args as { snapshot_id?: string }).snapshot_id;
      const resolved = (await send('resolve_snapshot', { snapshot_id: requested, for_function: fn }, caller)) as { snapshot_id: string | null; version: string };
      const kept = held.get(resolved.version);
      if (kept !== undefined) return { ...resolved, body: kept };
      if (clientVersions.includes(resolved.version)) return { ...resolved, body: null };
      // Pinned, so the body belongs to the version reported even if a promote lands meanwhile.
      const body = JSON.stringify(await send(fn, { ...args, snapshot_id: resolved.snapshot_id ?? undefined }, caller));
      snapshotCache.set(key, resolved.version, body);
      return { ...resolved, body };
    },
    /** The Data API answers an anonymous call of its cheapest function. */
    async ping() {
      await send('list_difficulty_levels', {}, { role: 'anon', claims: null }, AbortSignal.timeout(2000));
    },
  };
}

/**
 * A `sparkpath.*` setting of the project's `authenticator` role in this database (as PostgREST
 * logs in), or null when unset. The direct transport sends these settings with every connection
 * (the token issuer, the public home page); PostgREST cannot, so a deployment sets them on the
 * role (docs/supabase.md, section 7) and the server warns at start-up when they differ.
 */
export async function postgrestRoleSetting(pool: DatabasePool, name: string): Promise<string | null> {
  const prefix = `${name}=`;
  const [row] = await pool.run((sql) => sql<{ value: string | null }[]>`
    select (select pg_catalog.substr(s, pg_catalog.length(${prefix}) + 1)
            from pg_catalog.pg_db_role_setting r, pg_catalog.unnest(r.setconfig) s
            where r.setrole = (select oid from pg_catalog.pg_roles where rolname = 'authenticator')
              and r.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = pg_catalog.current_database()))
              and pg_catalog.starts_with(s, ${prefix})
            order by r.setdatabase desc limit 1) as value`);
  return row?.value ?? null;
}
