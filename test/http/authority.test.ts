import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../src/context/request-context.js';
import { createContextResolver } from '../../src/context/resolve-context.js';
import { PERMISSIONS, ROLE_PERMISSIONS, ROLES } from '../../src/context/permissions.js';
import type { ApiArgs, ApiFunctionName, DbCaller, Rpc, SnapshotFunctionName } from '../../src/db/rpc.js';
import { fromDatabaseError } from '../../src/http/database-errors.js';
import { authenticatorUrl, startPostgrest, supabaseKey, type Postgrest } from '../doubles/postgrest.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type InsertedCatalog } from '../helpers/content.js';
import { signIn } from '../helpers/sessions.js';
import { signToken, TEST_JWT_SECRET, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

/**
 * Who may call what, through both doors: the HTTP API (TypeScript's first filter, then SQL) and
 * PostgREST's (a Supabase project's Data API: SQL alone, test/doubles/postgrest.ts), plus the
 * API's dispatcher without the TypeScript filter. One table of expectations; every route and
 * every kind of caller must get the same answer through every door.
 */

type Outcome = 'ok' | 401 | 403;
type Audience = 'anyone' | 'jwt_or_service' | 'learner' | 'session';

const CALLERS = [
  'anonymous', // no credentials (PostgREST: the anon key, as Supabase clients send it)
  'anon_key', // the anon key as a bearer token
  'service', // X-Service-Auth with the service secret (PostgREST: with the anon key)
  'wrong_secret', // X-Service-Auth with another secret
  'learner', // a learner on the free plan
  'premium', // a learner on the premium plan
  'admin',
  'signed_in', // a session signed in through this API
  'signed_out', // a session that was signed out
  'service_role', // Supabase's service_role key: not a caller of this API
  'unknown_claims', // a valid JWT with a user_role the API does not know
] as const;
type Caller = (typeof CALLERS)[number];

/** The expectation table: what each kind of caller gets from each kind of route. */
const EXPECTED: Record<Audience, Record<Caller, Outcome>> = {
  // The open catalog and metadata: anyone, but a token the API refuses is refused everywhere.
  anyone: {
    anonymous: 'ok', anon_key: 'ok', service: 'ok', wrong_secret: 'ok', learner: 'ok', premium: 'ok', admin: 'ok',
    signed_in: 'ok', signed_out: 401, service_role: 401, unknown_claims: 401,
  },
  // "JWT required" content (snapshots, search, graph): a user's JWT or the service secret.
  jwt_or_service: {
    anonymous: 401, anon_key: 401, service: 'ok', wrong_secret: 401, learner: 'ok', premium: 'ok', admin: 'ok',
    signed_in: 'ok', signed_out: 401, service_role: 401, unknown_claims: 401,
  },
  // About one learner (journeys, events, learning paths): a user's JWT only.
  learner: {
    anonymous: 401, anon_key: 401, service: 403, wrong_secret: 401, learner: 'ok', premium: 'ok', admin: 'ok',
    signed_in: 'ok', signed_out: 401, service_role: 401, unknown_claims: 401,
  },
  // GET /auth/session answers everyone (anonymous callers: "not signed in").
  session: {
    anonymous: 'ok', anon_key: 'ok', service: 'ok', wrong_secret: 'ok', learner: 'ok', premium: 'ok', admin: 'ok',
    signed_in: 'ok', signed_out: 'ok', service_role: 'ok', unknown_claims: 'ok',
  },
};

interface CallerCredentials {
  /** Headers of an HTTP API request. */
  http: Record<string, string>;
  /** Headers of a Data API request (Supabase clients always send the apikey). */
  data: Record<string, string>;
  /** The user id behind a JWT, when there is one. */
  userId?: string;
}

interface RpcCall {
  fn: ApiFunctionName;
  args: Record<string, unknown>;
  /** The same call through the API's dispatcher (rpc.call or, for snapshot reads, rpc.readSnapshot). */
  dispatch(rpc: Rpc, caller: DbCaller): Promise<unknown>;
}
const call = <F extends ApiFunctionName>(fn: F, args: ApiArgs<F>): RpcCall => ({ fn, args, dispatch: (rpc, caller) => rpc.call(fn, args, caller) });
const read = <F extends SnapshotFunctionName>(fn: F, args: ApiArgs<F>): RpcCall => ({ fn, args, dispatch: (rpc, caller) => rpc.readSnapshot(fn, args, caller) });

interface Route {
  audience: Audience;
  method: 'GET' | 'POST';
  /** The HTTP request, and the api function PostgREST's door calls for it. */
  request(caller: CallerCredentials): { path: string; body?: unknown; rpc: RpcCall };
}

describe('who may call what: the HTTP API, its dispatcher and PostgREST agree', () => {
  let t: TestApp;
  let door: Postgrest;
  let c: InsertedCatalog;
  let anonKey: string;
  const callers = {} as Record<Caller, CallerCredentials>;
  const enrollments = new Map<string, string>();
  const events = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp();
    c = await insertCatalog(t.db.sql, {
      categories: [{ slug: 'tech' }],
      domains: [
        { slug: 'data', category: 'tech', trails: [{ slug: 'sql', concepts: [{ slug: 'select', sparks: ['select-star', 'joins'] }] }] },
        { slug: 'web', category: 'tech' },
      ],
      spark_links: [{ source: 'select-star', target: 'joins' }],
    });
    door = await startPostgrest({ databaseUrl: authenticatorUrl(t.db.url), jwtSecret: TEST_JWT_SECRET });
    anonKey = await supabaseKey('anon', TEST_JWT_SECRET);
    const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
    const user = async (claims: Parameters<typeof signToken>[0]) => {
      const userId = randomUUID();
      const token = await signToken({ ...claims, sub: userId });
      return { http: bearer(token), data: { apikey: anonKey, ...bearer(token) }, userId };
    };
    const signedIn = await signIn(t);
    const signedOut = await signIn(t);
    expect((await t.app.request('/auth/logout', { method: 'POST', headers: signedOut.bearer })).status).toBe(200);
    const serviceRoleKey = await supabaseKey('service_role', TEST_JWT_SECRET);
    Object.assign(callers, {
      anonymous: { http: {}, data: { apikey: anonKey } },
      anon_key: { http: bearer(anonKey), data: { apikey: anonKey, ...bearer(anonKey) } },
      service: { http: { 'X-Service-Auth': TEST_SERVICE_SECRET }, data: { apikey: anonKey, 'X-Service-Auth': TEST_SERVICE_SECRET } },
      wrong_secret: { http: { 'X-Service-Auth': `${TEST_SERVICE_SECRET}-not` }, data: { apikey: anonKey, 'X-Service-Auth': `${TEST_SERVICE_SECRET}-not` } },
      learner: await user({ user_role: 'learner', subscription_plan: 'free' }),
      premium: await user({ user_role: 'learner', subscription_plan: 'premium' }),
      admin: await user({ user_role: 'admin', subscription_plan: 'free' }),
      signed_in: { http: signedIn.bearer, data: { apikey: anonKey, ...signedIn.bearer }, userId: signedIn.userId },
      signed_out: { http: signedOut.bearer, data: { apikey: anonKey, ...signedOut.bearer }, userId: signedOut.userId },
      service_role: { http: bearer(serviceRoleKey), data: { apikey: serviceRoleKey, ...bearer(serviceRoleKey) } },
      unknown_claims: await user({ user_role: 'superuser' }),
    } satisfies Record<Caller, CallerCredentials>);
    // Each learner's own journey, for GET /user/me/journeys/{id}.
    for (const caller of Object.values(callers)) {
      if (!caller.userId) continue;
      const [row] = await t.db.sql<{ id: string }[]>`insert into app.enrollments (user_id, trail_id) values (${caller.userId}, ${c.id('trail', 'sql')}) returning id`;
      enrollments.set(caller.userId, row.id);
      // ...and a learning event of theirs, for POST /user/me/events/{id}/void.
      const [event] = await t.db.sql<{ id: string }[]>`
        insert into app.learning_events (user_id, spark_id, verb) values (${caller.userId}, ${c.id('spark', 'select-star')}, 'bookmarked') returning id`;
      events.set(caller.userId, event.id);
    }
  });
  afterAll(async () => {
    await door?.close();
    await t?.close();
  });

  const ROUTES: Record<string, Route> = {
    'GET /metadata': { audience: 'anyone', method: 'GET', request: () => ({ path: '/metadata', rpc: call('get_metadata', {}) }) },
    'GET /metadata/difficulty-levels': { audience: 'anyone', method: 'GET', request: () => ({ path: '/metadata/difficulty-levels', rpc: call('list_difficulty_levels', {}) }) },
    'GET /discovery/domains': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/domains', rpc: read('list_discovery_domains', {}) }) },
    'GET /discovery/domains/': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/domains/', rpc: read('list_domains', {}) }) },
    'GET /discovery/domains/{slug}': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/domains/data', rpc: read('get_domain', { slug: 'data' }) }) },
    'GET /discovery/domains/{slug}/trails': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/domains/data/trails', rpc: read('get_domain_trails', { slug: 'data' }) }) },
    'GET /discovery/domains/{slug}/related': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/domains/data/related', rpc: read('list_related_domains', { slug: 'data' }) }) },
    'GET /discovery/trails': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/trails', rpc: read('list_discovery_trails', {}) }) },
    'GET /discovery/concepts': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/concepts', rpc: read('list_discovery_concepts', {}) }) },
    'GET /discovery/sparks': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/sparks', rpc: read('list_discovery_sparks', {}) }) },
    'GET /discovery/all': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/all', rpc: read('list_discovery_items', {}) }) },
    'GET /discovery/facets': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/facets', rpc: read('get_discovery_facets', {}) }) },
    'GET /discovery/browse': { audience: 'anyone', method: 'GET', request: () => ({ path: '/discovery/browse', rpc: read('browse_catalog', {}) }) },
    'GET /snapshots': { audience: 'jwt_or_service', method: 'GET', request: () => ({ path: '/snapshots', rpc: call('list_snapshots', {}) }) },
    'GET /snapshots/current': { audience: 'jwt_or_service', method: 'GET', request: () => ({ path: '/snapshots/current', rpc: call('get_current_snapshot', {}) }) },
    'GET /snapshots/{id}': { audience: 'jwt_or_service', method: 'GET', request: () => ({ path: `/snapshots/${c.snapshotId}`, rpc: call('get_snapshot', { id: c.snapshotId }) }) },
    'GET /snapshots/{id}/changes': {
      audience: 'jwt_or_service',
      method: 'GET',
      request: () => ({ path: `/snapshots/${c.snapshotId}/changes?since=${c.snapshotId}`, rpc: read('list_snapshot_changes', { snapshot_id: c.snapshotId, since: c.snapshotId }) }),
    },
    'GET /search': { audience: 'jwt_or_service', method: 'GET', request: () => ({ path: '/search?q=select', rpc: read('search_content', { q: 'select' }) }) },
    'GET /search/autocomplete': { audience: 'jwt_or_service', method: 'GET', request: () => ({ path: '/search/autocomplete?q=se', rpc: read('list_search_suggestions', { q: 'se' }) }) },
    'GET /graph/sparks/{slug}': { audience: 'jwt_or_service', method: 'GET', request: () => ({ path: '/graph/sparks/joins', rpc: read('get_spark_graph', { slug: 'joins' }) }) },
    'GET /graph/links/sparks': { audience: 'jwt_or_service', method: 'GET', request: () => ({ path: '/graph/links/sparks', rpc: read('list_spark_links', {}) }) },
    'GET /graph/path': { audience: 'learner', method: 'GET', request: () => ({ path: '/graph/path?target=joins', rpc: call('get_learning_path', { target: 'joins' }) }) },
    'GET /user/me/journeys': { audience: 'learner', method: 'GET', request: () => ({ path: '/user/me/journeys', rpc: call('list_user_journeys', {}) }) },
    'GET /user/me/journeys/{id}': {
      audience: 'learner',
      method: 'GET',
      request: (caller) => {
        const id = (caller.userId && enrollments.get(caller.userId)) || randomUUID();
        return { path: `/user/me/journeys/${id}`, rpc: call('get_user_journey', { id }) };
      },
    },
    'POST /user/me/journeys': {
      audience: 'learner',
      method: 'POST',
      request: () => ({ path: '/user/me/journeys', body: { trail_id: c.id('trail', 'sql') }, rpc: call('enroll_in_trail', { trail_id: c.id('trail', 'sql') }) }),
    },
    'POST /user/me/events': {
      audience: 'learner',
      method: 'POST',
      request: () => ({
        path: '/user/me/events',
        body: { spark_id: c.id('spark', 'joins'), verb: 'started' },
        rpc: call('record_learning_event', { spark_id: c.id('spark', 'joins'), verb: 'started' }),
      }),
    },
    'POST /user/me/events/{id}/void': {
      audience: 'learner',
      method: 'POST',
      request: (caller) => {
        const id = (caller.userId && events.get(caller.userId)) || randomUUID();
        return { path: `/user/me/events/${id}/void`, rpc: call('void_learning_event', { id }) };
      },
    },
    'GET /user/me/next': { audience: 'learner', method: 'GET', request: () => ({ path: '/user/me/next', rpc: call('list_next_sparks', {}) }) },
    // A fixed due_before: the document names it (now would differ between the doors).
    'GET /user/me/reviews': {
      audience: 'learner',
      method: 'GET',
      request: () => ({ path: '/user/me/reviews?due_before=2030-01-01T00:00:00Z', rpc: call('list_due_reviews', { due_before: '2030-01-01T00:00:00Z' }) }),
    },
    'POST /user/me/reviews': {
      audience: 'learner',
      method: 'POST',
      request: () => ({
        path: '/user/me/reviews',
        body: { spark_id: c.id('spark', 'joins'), rating: 'good' },
        rpc: call('record_review', { spark_id: c.id('spark', 'joins'), rating: 'good' }),
      }),
    },
    'GET /user/me/statements': { audience: 'learner', method: 'GET', request: () => ({ path: '/user/me/statements', rpc: call('list_statements', {}) }) },
    'GET /auth/session': { audience: 'session', method: 'GET', request: () => ({ path: '/auth/session', rpc: call('get_session', {}) }) },
  };

  const outcome = (status: number): Outcome | number => (status >= 200 && status < 300 ? 'ok' : status);

  async function viaHttp(route: Route, caller: CallerCredentials) {
    const { path, body } = route.request(caller);
    const res = await t.app.request(path, {
      method: route.method,
      headers: { ...caller.http, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as unknown };
  }

  async function viaPostgrest(route: Route, caller: CallerCredentials) {
    const { rpc } = route.request(caller);
    const res = await fetch(`${door.url}/rest/v1/rpc/${rpc.fn}`, {
      method: 'POST',
      // As supabase-js sends an rpc of the `api` schema.
      headers: { ...caller.data, 'Content-Type': 'application/json', 'Content-Profile': 'api' },
      body: JSON.stringify(rpc.args),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  }

  /** The dispatcher with the caller the API resolves, without the routes' TypeScript filter. */
  async function viaDispatcher(route: Route, caller: CallerCredentials): Promise<number | undefined> {
    const resolve = createContextResolver({ verifier: t.deps.verifier, serviceSecret: TEST_SERVICE_SECRET });
    const context = await resolve({
      authorization: caller.http.Authorization,
      serviceHeader: caller.http['X-Service-Auth'],
      forwarded: false,
      // GET /auth/session reads credentials it cannot accept as anonymous (the API's lenient path).
    }).catch(() => (route.audience === 'session' ? ANONYMOUS : undefined));
    if (!context) return undefined; // refused by the token check (401) before any statement
    try {
      await route.request(caller).rpc.dispatch(t.deps.rpc, context.db);
      return 200;
    } catch (error) {
      return fromDatabaseError(error)?.status ?? 500;
    }
  }

  it.each(Object.keys(ROUTES))('%s answers every kind of caller as the expectation table says, through every door', async (name) => {
    const route = ROUTES[name];
    const seen: Record<string, unknown> = {};
    const want: Record<string, unknown> = {};
    for (const kind of CALLERS) {
      const caller = callers[kind];
      const expected = EXPECTED[route.audience][kind];
      const http = await viaHttp(route, caller);
      const data = await viaPostgrest(route, caller);
      const dispatcher = await viaDispatcher(route, caller);
      seen[kind] = { http: outcome(http.status), postgrest: outcome(data.status), dispatcher: dispatcher === undefined ? 401 : outcome(dispatcher) };
      want[kind] = { http: expected, postgrest: expected, dispatcher: expected };
      // A success is the same document through both doors (reads; a write says whether it created the row).
      if (expected === 'ok' && route.method === 'GET') expect(data.body, `${name} as ${kind}`).toEqual(http.body);
    }
    expect(seen).toEqual(want);
  });

  it('the table reaches every api function: each is a route\'s, but resolve_snapshot, which answers anyone as the open catalog does', async () => {
    const functions = await t.db.sql<{ name: string }[]>`select proname as name from pg_proc where pronamespace = 'api'::regnamespace`;
    const routed = new Set<string>(Object.values(ROUTES).map((route) => route.request(callers.learner).rpc.fn));
    expect(functions.map((f) => f.name).filter((name) => !routed.has(name))).toEqual(['resolve_snapshot']);
    const resolve: Route = { audience: 'anyone', method: 'GET', request: () => ({ path: '', rpc: read('resolve_snapshot', {}) }) };
    const seen = Object.fromEntries(await Promise.all(CALLERS.map(async (kind) => [kind, outcome((await viaPostgrest(resolve, callers[kind])).status)])));
    expect(seen).toEqual(EXPECTED.anyone);
  });

  it('GET /auth/session reads a signed-out session, the service_role key and unknown claims as "not signed in", through both doors', async () => {
    const route = ROUTES['GET /auth/session'];
    for (const kind of ['signed_out', 'service_role', 'unknown_claims', 'anonymous'] as const) {
      const anonymous = { authenticated: false, user: null, session: null };
      expect((await viaHttp(route, callers[kind])).body, kind).toEqual(anonymous);
      expect((await viaPostgrest(route, callers[kind])).body, kind).toEqual(anonymous);
    }
    expect((await viaPostgrest(route, callers.signed_in)).body).toMatchObject({ authenticated: true, user: { id: callers.signed_in.userId } });
  });

  it('PostgREST answers a refusal and a miss in its own error shape, with the status the SQLSTATE asks for', async () => {
    const refusal = await viaPostgrest(ROUTES['GET /search'], callers.anonymous);
    expect(refusal).toEqual({ status: 401, body: { code: 'PT401', message: 'Authentication required', details: null, hint: null } });
    const serviceRole = await viaPostgrest(ROUTES['GET /metadata'], callers.service_role);
    expect(serviceRole.body).toMatchObject({ code: 'PT401', details: '{"reason":"token_not_accepted"}' });
    const forbidden = await viaPostgrest(ROUTES['GET /user/me/journeys'], callers.service);
    expect(forbidden).toEqual({ status: 403, body: { code: 'PT403', message: 'Service callers cannot use this endpoint', details: '{"permission": "TRACK_PROGRESS"}', hint: null } });
    const ended = await viaPostgrest(ROUTES['GET /metadata'], callers.signed_out);
    expect(ended).toEqual({ status: 401, body: { code: 'PT401', message: 'Session is no longer active; sign in again', details: null, hint: null } });

    const missing = await fetch(`${door.url}/rest/v1/rpc/get_domain`, { method: 'POST', headers: { apikey: anonKey, 'Content-Type': 'application/json' }, body: '{"slug":"nowhere"}' });
    const http = await t.app.request('/discovery/domains/nowhere');
    expect(missing.status).toBe(404);
    expect(http.status).toBe(404);
    const body = (await missing.json()) as { code: string; message: string };
    expect(body.code).toBe('PT404');
    expect(((await http.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'NOT_FOUND', message: body.message });

    const invalid = await fetch(`${door.url}/rest/v1/rpc/search_content`, {
      method: 'POST',
      headers: { ...callers.learner.data, 'Content-Type': 'application/json' },
      body: '{"q":"select","per_page":1000}',
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { code: string }).code).toBe('22023');
    expect((await t.app.request('/search?q=select&per_page=1000', { headers: callers.learner.http })).status).toBe(400);
  });

  it('a snapshot body the API already holds is never given to a caller the function refuses', async () => {
    // A service caller's read fills the API's body cache for this call and version...
    const args = { q: 'joins' };
    await t.deps.rpc.readSnapshot('search_content', args, { role: 'anon', claims: null, headers: { 'x-service-auth': TEST_SERVICE_SECRET } });
    // ...and an anonymous read of the same call is refused by the database before any skip.
    const error = await t.deps.rpc.readSnapshot('search_content', args, { role: 'anon', claims: null }).catch((e: unknown) => e);
    expect(fromDatabaseError(error)).toMatchObject({ code: 'UNAUTHORIZED', status: 401, message: 'Authentication required' });
  });

  it('a token with upper-case ids signed out through the API is refused by PostgREST\'s pre-request hook too', async () => {
    const sub = randomUUID().toUpperCase();
    const token = await signToken({ sub, extra: { iss: 'https://project.supabase.co/auth/v1', jti: randomUUID() } });
    const caller = { http: { Authorization: `Bearer ${token}` }, data: { apikey: anonKey, Authorization: `Bearer ${token}` } };
    expect((await viaPostgrest(ROUTES['GET /search'], caller)).status).toBe(200);
    expect((await t.app.request('/auth/logout', { method: 'POST', headers: caller.http })).status).toBe(200);
    expect((await viaHttp(ROUTES['GET /search'], caller)).status).toBe(401);
    expect(await viaPostgrest(ROUTES['GET /search'], caller)).toMatchObject({ status: 401, body: { code: 'PT401' } });
  });

  it('the API\'s permission matrix is the database\'s', async () => {
    const rows = await t.db.sql<{ role: string; permissions: string[] }[]>`select r as role, private.role_permissions(r) as permissions from unnest(${ROLES}::text[]) r`;
    const database = Object.fromEntries(rows.map((r) => [r.role, [...r.permissions].sort()]));
    const api = Object.fromEntries(ROLES.map((role) => [role, PERMISSIONS.filter((p) => ROLE_PERMISSIONS[role].has(p)).sort()]));
    expect(database).toEqual(api);
  });
});
