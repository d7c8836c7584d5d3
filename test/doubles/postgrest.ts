/**
 * A test double of PostgREST's RPC door, as a Supabase project's Data API serves it, over real
 * HTTP: `POST|GET /rest/v1/rpc/<fn>`. PostgREST itself cannot run on these machines; this runs
 * the transaction PostgREST documents (docs.postgrest.org: Authentication, Transactions,
 * Functions as RPC, Errors) against a real database, so the `api` schema can be tested as the
 * anon key exposes it:
 *
 *   0. the schema: `Content-Profile` (POST) or `Accept-Profile` (GET), as supabase-js sends
 *      them, must name the exposed schema (406 PGRST106 otherwise);
 *   1. the JWT: `Authorization: Bearer <jwt>`, else the `apikey` header's key (Supabase's
 *      gateway), verified HS256 with the project's JWT secret, or ES256/RS256 with the project's
 *      signing keys (a JWKS, as PostgREST's jwt-secret takes one); its `role` claim is the
 *      request role (no JWT: the anonymous role, claims `{"role":"anon"}`). A bad token is 401
 *      PGRST301. A publishable key (`sb_publishable_…`, not a JWT) is the gateway's part: it
 *      stands for the anonymous role, whether in `apikey` or as the bearer supabase-js sends.
 *   2. one transaction as the `authenticator` login role, READ ONLY for GET and for STABLE or
 *      IMMUTABLE functions, READ WRITE for a POST to a VOLATILE one;
 *   3. transaction-local `search_path`, `role`, `request.jwt.claims`, `request.method`,
 *      `request.path` (`/rpc/<fn>`), `request.headers` (JSON, lower-case names) and
 *      `request.cookies`;
 *   4. the pre-request hook: `pgrst.db_pre_request` from the authenticator's role settings, as
 *      PostgREST reads its in-database configuration (the schema sets it to
 *      private.check_request);
 *   5. the function, called with the JSON body's (or query string's) named arguments, each cast
 *      to its declared type through json_to_record; unknown or missing arguments are 404
 *      PGRST202, as PostgREST finds no such function in its schema cache;
 *   6. COMMIT, and the result as JSON; or the SQLSTATE mapped by PostgREST's HTTP status table
 *      (PTxyz: status xyz) with PostgREST's error body `{code, details, hint, message}`.
 *
 * What it does not do: tables and views, filters, embedding, Prefer headers, the
 * response.headers and response.status settings, overloaded functions, `aud` checks,
 * impersonated role settings, secret API keys. A real Supabase project (its gateway, PostgREST
 * version, pooler and keys) is what proves those; README.md says what this verifies.
 *
 * @example
 *   const door = await startPostgrest({ databaseUrl: authenticatorUrl(dbUrl), jwtSecret });
 *   await fetch(`${door.url}/rest/v1/rpc/get_metadata`, { method: 'POST', headers: { apikey: anonKey }, body: '{}' });
 *   await door.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT, type JSONWebKeySet, type JWTPayload } from 'jose';
import postgres from 'postgres';

export interface PostgrestOptions {
  /** The authenticator's connection string (a NOINHERIT login role that can become the request roles). */
  databaseUrl: string;
  /** The project's legacy JWT secret (HS256); unset: HS256 tokens are refused. */
  jwtSecret?: string;
  /** The project's signing keys, published at `jwksUrl` (Supabase Auth's JWKS) and/or given here. */
  jwksUrl?: string;
  jwks?: JSONWebKeySet;
  /** Publishable keys the gateway accepts for the anonymous role. */
  publishableKeys?: string[];
  /** Port to listen on (127.0.0.1); 0 picks a free one. */
  port?: number;
  /** The exposed schema (db-schemas). */
  schema?: string;
  /** db-anon-role. */
  anonRole?: string;
  /** db-extra-search-path, as Supabase configures it. */
  extraSearchPath?: string[];
}

export interface Postgrest {
  /** Base URL; the RPC door is `${url}/rest/v1/rpc/<fn>`. */
  url: string;
  /** Every request received, in order: method, path with query, headers (lower-case names). */
  requests: { method: string; path: string; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}

interface ApiFunction {
  params: { name: string; type: string; hasDefault: boolean }[];
  volatile: boolean;
}

/** PostgreSQL errors PostgREST answers with another status than the prefix rules below. */
const EXACT_STATUS: Record<string, number> = {
  '23503': 409, '23505': 409, '25006': 405, '53400': 500, P0001: 400, '42883': 404, '42P01': 404, '42P17': 500,
};
const PREFIX_STATUS: [string, number][] = [
  ['08', 503], ['09', 500], ['0L', 403], ['0P', 403], ['25', 500], ['28', 403], ['2D', 500], ['38', 500], ['39', 500],
  ['3B', 500], ['40', 500], ['53', 503], ['54', 500], ['55', 500], ['57', 500], ['58', 500], ['F0', 500], ['HV', 500],
  ['P0', 500], ['XX', 500],
];

/**
 * PostgREST's SQLSTATE → HTTP status table (docs.postgrest.org, Errors): PTxyz is status xyz,
 * 42501 is 403 with a JWT and 401 without, anything unlisted is 400.
 *
 * @example postgrestStatus('P0002', true) // => 500
 */
export function postgrestStatus(sqlstate: string, authenticated: boolean): number {
  const custom = /^PT(\d{3})$/.exec(sqlstate);
  if (custom) return Number(custom[1]);
  if (sqlstate === '42501') return authenticated ? 403 : 401;
  return EXACT_STATUS[sqlstate] ?? PREFIX_STATUS.find(([prefix]) => sqlstate.startsWith(prefix))?.[1] ?? 400;
}

export async function startPostgrest(options: PostgrestOptions): Promise<Postgrest> {
  const schema = options.schema ?? 'api';
  const anonRole = options.anonRole ?? 'anon';
  const searchPath = [schema, ...(options.extraSearchPath ?? ['public', 'extensions'])].map(ident).join(', ');
  const secret = options.jwtSecret ? new TextEncoder().encode(options.jwtSecret) : undefined;
  const local = options.jwks?.keys.length ? createLocalJWKSet(options.jwks) : undefined;
  const remote = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : undefined;
  const publishable = new Set(options.publishableKeys ?? []);
  const sql = postgres(options.databaseUrl, { max: 4, onnotice: () => undefined, connection: { application_name: 'postgrest-double' } });

  // The schema cache and the in-database configuration, read once at start as PostgREST does.
  const functions = new Map<string, ApiFunction>();
  const rows = await sql<{ name: string; names: string[] | null; types: string[]; defaults: number; volatility: string }[]>`
    select p.proname as name, p.proargnames[1:p.pronargs] as names, p.pronargdefaults as defaults, p.provolatile as volatility,
           array(select pg_catalog.format_type(t, null) from unnest(p.proargtypes::oid[]) with ordinality a(t, i) order by i) as types
    from pg_catalog.pg_proc p where p.pronamespace = ${schema}::regnamespace`;
  for (const row of rows) {
    const names = row.names ?? [];
    functions.set(row.name, {
      params: row.types.map((type, i) => ({ name: names[i], type, hasDefault: i >= row.types.length - row.defaults })),
      volatile: row.volatility === 'v',
    });
  }
  const [setting] = await sql<{ pre_request: string | null }[]>`
    select (select pg_catalog.substring(s, '^pgrst\\.db_pre_request=(.*)$')
            from pg_catalog.pg_db_role_setting r, unnest(r.setconfig) s
            where r.setrole = (select oid from pg_catalog.pg_roles where rolname = current_user)
              and r.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))
              and s like 'pgrst.db_pre_request=%'
            order by r.setdatabase desc limit 1) as pre_request`;
  const preRequest = setting?.pre_request ?? null;
  if (preRequest !== null && !/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/.test(preRequest)) throw new Error(`unsupported db-pre-request ${preRequest}`);

  /** A token of the project: HS256 with the secret, asymmetric with the signing keys. */
  async function verify(token: string): Promise<JWTPayload> {
    const { alg } = decodeProtectedHeader(token);
    if (alg === 'HS256') {
      if (!secret) throw new Error('No suitable key or wrong key type');
      return (await jwtVerify(token, secret, { algorithms: ['HS256'] })).payload;
    }
    const keys = [local, remote].filter((set) => set !== undefined);
    for (const [i, set] of keys.entries()) {
      try {
        return (await jwtVerify(token, set, { algorithms: ['ES256', 'RS256'] })).payload;
      } catch (error) {
        if (i === keys.length - 1) throw error;
      }
    }
    throw new Error('No suitable key or wrong key type');
  }

  async function authenticate(req: IncomingMessage): Promise<{ role: string; claims: Record<string, unknown>; authenticated: boolean }> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? (typeof req.headers.apikey === 'string' ? req.headers.apikey : undefined);
    if (!token || publishable.has(token)) return { role: anonRole, claims: { role: anonRole }, authenticated: false };
    const payload = await verify(token);
    const role = typeof payload.role === 'string' ? payload.role : anonRole;
    return { role, claims: { ...payload, role }, authenticated: true };
  }

  const requests: Postgrest['requests'] = [];

  async function handle(req: IncomingMessage, res: ServerResponse) {
    requests.push({ method: req.method ?? '', path: req.url ?? '/', headers: { ...req.headers } });
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/rest\/v1\/rpc\/([^/]+)$/.exec(url.pathname);
    if (!match) return send(res, 404, { code: 'PGRST125', details: null, hint: null, message: 'Invalid path specified in request URL' });
    if (req.method !== 'GET' && req.method !== 'POST') {
      return send(res, 405, { code: 'PGRST101', details: null, hint: null, message: 'Only GET and POST verbs are allowed for functions' });
    }
    const profile = req.headers[req.method === 'GET' ? 'accept-profile' : 'content-profile'];
    if (profile !== undefined && profile !== schema) {
      return send(res, 406, { code: 'PGRST106', details: null, hint: `Only the following schemas are exposed: ${schema}`, message: `Invalid schema: ${String(profile)}` });
    }
    let caller;
    try {
      caller = await authenticate(req);
    } catch (error) {
      return send(res, 401, { code: 'PGRST301', details: null, hint: null, message: (error as Error).message }, { 'WWW-Authenticate': 'Bearer' });
    }
    let args: Record<string, unknown>;
    if (req.method === 'GET') {
      args = Object.fromEntries(url.searchParams);
    } else {
      const parsed = parseJson(await readBody(req));
      if (!parsed) return send(res, 400, { code: 'PGRST102', details: null, hint: null, message: 'Empty or invalid json' });
      args = parsed;
    }
    const name = decodeURIComponent(match[1]);
    const fn = functions.get(name);
    const given = Object.keys(args).sort();
    const fits = fn && given.every((k) => fn.params.some((p) => p.name === k)) && fn.params.every((p) => p.hasDefault || given.includes(p.name));
    if (!fn || !fits) {
      return send(res, 404, {
        code: 'PGRST202',
        details: `Searched for the function ${schema}.${name} with parameters ${given.join(', ') || 'without parameters'}, but no matches were found in the schema cache.`,
        hint: null,
        message: `Could not find the function ${schema}.${name}(${given.join(', ')}) in the schema cache`,
      });
    }
    const used = fn.params.filter((p) => given.includes(p.name));
    const call = `${ident(schema)}.${ident(name)}(${used.map((p) => `${ident(p.name)} := _.${ident(p.name)}`).join(', ')})`;
    const source = used.length ? `pg_catalog.json_to_record($1::text::json) as _(${used.map((p) => `${ident(p.name)} ${p.type}`).join(', ')})` : '(select $1::text::json) as _';
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : (v ?? '')]));
    const cookies = Object.fromEntries(
      (req.headers.cookie ?? '').split(';').map((c) => c.trim()).filter(Boolean).map((c) => [c.split('=')[0], c.slice(c.indexOf('=') + 1)]),
    );
    try {
      const body = await sql.begin(req.method === 'GET' || !fn.volatile ? 'read only' : 'read write', async (tx) => {
        await tx`select pg_catalog.set_config('search_path', ${searchPath}, true), pg_catalog.set_config('role', ${caller.role}, true),
                 pg_catalog.set_config('request.jwt.claims', ${JSON.stringify(caller.claims)}, true),
                 pg_catalog.set_config('request.method', ${req.method ?? ''}, true), pg_catalog.set_config('request.path', ${`/rpc/${name}`}, true),
                 pg_catalog.set_config('request.headers', ${JSON.stringify(headers)}, true),
                 pg_catalog.set_config('request.cookies', ${JSON.stringify(cookies)}, true)`;
        if (preRequest) await tx.unsafe(`select ${preRequest.split('.').map(ident).join('.')}()`);
        const [row] = await tx.unsafe<{ body: string | null }[]>(`select pg_catalog.to_json(${call})::text as body from ${source}`, [JSON.stringify(args)]);
        return row?.body ?? 'null';
      });
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(body);
    } catch (error) {
      if (!(error instanceof postgres.PostgresError)) throw error;
      const status = postgrestStatus(error.code, caller.authenticated);
      return send(res, status, { code: error.code, details: error.detail ?? null, hint: error.hint ?? null, message: error.message },
        status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {});
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { code: 'PGRSTX00', details: null, hint: null, message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sql.end();
    },
  };
}

/** A Supabase key: an HS256 JWT with a `role` claim, signed with the project's JWT secret. */
export async function supabaseKey(role: 'anon' | 'service_role', jwtSecret: string): Promise<string> {
  return new SignJWT({ role, iss: 'supabase' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(jwtSecret));
}

/** The login role PostgREST connects as on Supabase; its password on a local test server only. */
export const AUTHENTICATOR = { role: 'authenticator', password: 'authenticator' };

/**
 * Creates Supabase's request roles and `authenticator` on a local test server, as Supabase's
 * init scripts do (authenticator: LOGIN NOINHERIT, able to become anon, authenticated and
 * service_role). Run before the migrations, which register the pre-request hook on it
 * (supabase/schemas/12-dispatch.sql).
 */
export async function ensureAuthenticator(adminUrl: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await sql.unsafe(`
      do $$
      begin
        if not exists (select from pg_roles where rolname = 'anon') then create role anon nologin noinherit; end if;
        if not exists (select from pg_roles where rolname = 'authenticated') then create role authenticated nologin noinherit; end if;
        if not exists (select from pg_roles where rolname = 'service_role') then create role service_role nologin noinherit bypassrls; end if;
        if not exists (select from pg_roles where rolname = 'authenticator') then
          create role authenticator login noinherit password '${AUTHENTICATOR.password}';
        end if;
        grant anon, authenticated, service_role to authenticator;
      end
      $$`);
  } finally {
    await sql.end();
  }
}

/** The authenticator's connection string on the server and database of `url`. */
export function authenticatorUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = AUTHENTICATOR.role;
  parsed.password = AUTHENTICATOR.password;
  return parsed.toString();
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

function parseJson(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
