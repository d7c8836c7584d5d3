import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createDataApiRpc, postgrestRoleSetting } from '../../src/db/data-api-rpc.js';
import type { DbCaller } from '../../src/db/rpc.js';
import { SnapshotCache } from '../../src/db/snapshot-cache.js';
import { fromDatabaseError } from '../../src/http/database-errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type InsertedCatalog } from '../helpers/content.js';
import { postJson } from '../helpers/requests.js';
import { testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

/**
 * The Data API transport itself (src/db/data-api-rpc.ts), against the PostgREST double: what
 * travels to the project, and what comes back. The HTTP suite runs through it as a whole in the
 * vitest project `data-api`; this file proves what that suite cannot see.
 */
const anon: DbCaller = { role: 'anon', claims: null };
const service: DbCaller = { role: 'anon', claims: null, headers: { 'x-service-auth': TEST_SERVICE_SECRET } };
/** A user as the context resolution hands it to the rpc: its claims, and the token they come from. */
const asUser = (token: string, claimsOf = token): DbCaller => ({ role: 'authenticated', claims: JSON.stringify(decodeJwt(claimsOf)), token });

let t: TestApp;
let content: InsertedCatalog;
const sent = () => t.dataApi!.requests;
/** The requests the double received while `work` ran. */
async function during(work: () => unknown) {
  const before = sent().length;
  await work();
  return sent().slice(before);
}

beforeAll(async () => {
  t = await createTestApp({ DATA_API: 'supabase' });
  content = await insertCatalog(t.db.sql, {
    domains: [{ slug: 'data', trails: [{ slug: 'sql-basics', concepts: [{ slug: 'select', sparks: ['select-star'] }] }] }],
  });
});
afterAll(() => t?.close());

describe('the Data API transport', () => {
  it('sends the anon key for anonymous callers, the caller\'s token for users, the anon key and X-Service-Auth for service callers; never the service_role key', async () => {
    const user = await testUser();
    const anonymous = await during(() => t.app.request('/metadata'));
    const signedIn = await during(() => t.app.request('/user/me/journeys', { headers: user.headers }));
    const serviced = await during(() => t.app.request('/search?q=select', { headers: { 'X-Service-Auth': TEST_SERVICE_SECRET } }));
    const anonKey = t.config.SUPABASE_ANON_KEY!;
    expect(decodeJwt(anonKey).role).toBe('anon');
    for (const request of [...anonymous, ...signedIn, ...serviced]) expect(request.headers.apikey).toBe(anonKey);
    expect(anonymous.map((r) => r.headers.authorization)).toEqual([`Bearer ${anonKey}`]);
    expect(signedIn.map((r) => r.headers.authorization)).toEqual([user.headers.Authorization]);
    expect(serviced.length).toBeGreaterThan(0);
    for (const request of serviced) {
      expect(request.headers.authorization).toBe(`Bearer ${anonKey}`);
      expect(request.headers['x-service-auth']).toBe(TEST_SERVICE_SECRET);
    }
    for (const request of [...anonymous, ...signedIn]) expect(request.headers['x-service-auth']).toBeUndefined();
    for (const request of sent()) {
      const bearer = String(request.headers.authorization).replace(/^Bearer /, '');
      expect(decodeJwt(bearer).role).not.toBe('service_role');
    }
  });

  it('calls reads as GET with Accept-Profile api and writes as POST with Content-Profile api', async () => {
    const user = await testUser();
    const read = await during(() => t.app.request('/user/me/journeys?status=in_progress', { headers: user.headers }));
    expect(read.map((r) => [r.method, r.path, r.headers['accept-profile']])).toEqual([
      ['GET', '/rest/v1/rpc/list_user_journeys?status=in_progress&sort=recent', 'api'],
    ]);
    const write = await during(async () => {
      const res = await postJson(t, '/user/me/journeys', user, { trail_id: content.id('trail', 'sql-basics') });
      expect(res.status).toBe(201);
    });
    expect(write.map((r) => [r.method, r.path, r.headers['content-profile']])).toEqual([['POST', '/rest/v1/rpc/enroll_in_trail', 'api']]);
  });

  it('a read with a null argument goes as POST, which a GET query string cannot carry', async () => {
    const calls = await during(() => t.deps.rpc.call('list_snapshots', { status: null as unknown as string }, service));
    expect(calls.map((r) => [r.method, r.path])).toEqual([['POST', '/rest/v1/rpc/list_snapshots']]);
  });

  it('a new snapshot read costs the version read and the read pinned to it; a held body only the version read', async () => {
    const first = await during(async () => {
      const res = await t.app.request('/discovery/domains?per_page=7');
      expect(res.status).toBe(200);
      expect((await res.json()).data.map((d: { slug: string }) => d.slug)).toEqual(['data']);
    });
    expect(first.map((r) => r.path)).toEqual([
      '/rest/v1/rpc/resolve_snapshot?for_function=list_discovery_domains',
      `/rest/v1/rpc/list_discovery_domains?page=1&per_page=7&trail_limit=5&snapshot_id=${content.snapshotId}`,
    ]);
    const again = await during(() => t.app.request('/discovery/domains?per_page=7'));
    expect(again.map((r) => r.path)).toEqual(['/rest/v1/rpc/resolve_snapshot?for_function=list_discovery_domains']);
  });

  it('a client holding the version gets a 304 after the version read alone, with no body kept here', async () => {
    const cold = createDataApiRpc({ url: t.dataApi!.url, anonKey: t.config.SUPABASE_ANON_KEY!, pool: t.deps.pool, snapshotCache: new SnapshotCache(0), timeoutMs: 5000 });
    const read = await cold.readSnapshot('list_domains', { page: 1 }, anon);
    expect(read.version).toBe(content.snapshotId);
    const calls = await during(async () => {
      expect(await cold.readSnapshot('list_domains', { page: 1 }, anon, [read.version])).toEqual({ ...read, body: null });
    });
    expect(calls.map((r) => r.path)).toEqual(['/rest/v1/rpc/resolve_snapshot?for_function=list_domains']);
  });

  it('never serves a held body to a caller the read refuses: the version read applies the read\'s own rule', async () => {
    const args = { q: 'select' };
    const served = await t.deps.rpc.readSnapshot('search_content', args, service);
    expect(JSON.parse(served.body!).data.length).toBeGreaterThan(0);
    // Straight through the port, without the route's own check: the Data API refuses it.
    const refused = await t.deps.rpc.readSnapshot('search_content', args, anon).catch((error: unknown) => error);
    expect(fromDatabaseError(refused)?.toEnvelope()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'Authentication required', details: {} } });
  });

  it('maps PostgREST\'s errors by their SQLSTATE: our messages and details shown, PostgreSQL\'s own answered generically', async () => {
    const user = await testUser();
    const unknown = await t.app.request('/domains/no-such-domain');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('NOT_FOUND');
    const invalid = await t.deps.rpc.call('list_user_journeys', { sort: 'sideways' }, asUser(user.token)).catch((e: unknown) => e);
    expect(fromDatabaseError(invalid)?.toEnvelope()).toEqual({
      error: { code: 'VALIDATION_ERROR', message: 'sort must be one of recent, progress, started', details: { field: 'sort', value: 'sideways', allowed: ['recent', 'progress', 'started'] } },
    });
    // A cast PostgREST makes itself (22P02): no text of PostgreSQL's reaches the client.
    const cast = await t.deps.rpc.call('get_user_journey', { id: 'not-a-uuid' }, asUser(user.token)).catch((e: unknown) => e);
    expect((cast as { code?: string }).code).toBe('22P02');
    expect(fromDatabaseError(cast)?.toEnvelope()).toEqual({ error: { code: 'VALIDATION_ERROR', message: 'A value in the request is invalid', details: {} } });
  });

  it('a token the Data API does not accept is 401', async () => {
    const user = await testUser();
    const foreign = await new SignJWT(decodeJwt(user.token)).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-projects-secret-0123456789abcdef'));
    const refused = await t.deps.rpc.call('list_user_journeys', {}, asUser(foreign, user.token)).catch((e: unknown) => e);
    expect((refused as { code?: string }).code).toBe('PGRST301');
    expect(fromDatabaseError(refused)?.toEnvelope()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'The Data API did not accept the access token', details: {} } });
  });

  it('reports the Data API in the health checks', async () => {
    const res = await t.app.request('/metadata/health');
    expect(await res.json()).toEqual({ status: 'ok', checks: { database: 'ok', sessions: 'ok', data_api: 'ok' } });
  });

  it('reads the settings PostgREST\'s sessions get (token issuer, home page) from the authenticator role', async () => {
    for (const [name, value] of [['sparkpath.token_issuer', 'https://api.example.test'], ['sparkpath.home_page', 'https://learn.example.test']]) {
      expect(await postgrestRoleSetting(t.deps.pool, name)).toBeNull();
      await t.db.sql.unsafe(`alter role authenticator in database ${t.db.sql.options.database} set "${name}" = '${value}'`);
      try {
        expect(await postgrestRoleSetting(t.deps.pool, name)).toBe(value);
      } finally {
        await t.db.sql.unsafe(`alter role authenticator in database ${t.db.sql.options.database} reset "${name}"`);
      }
    }
  });
});

describe('the Data API transport, unreachable', () => {
  let down: TestApp;
  beforeAll(async () => {
    down = await createTestApp({ DATA_API: 'supabase', DATA_API_URL: 'http://127.0.0.1:9', SUPABASE_ANON_KEY: 'sb_publishable_unreachable' });
  });
  afterAll(() => down?.close());

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After, and the health check names the Data API', async () => {
    const res = await down.app.request('/metadata');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await res.json()).error.code).toBe('SERVICE_UNAVAILABLE');
    const health = await down.app.request('/metadata/health');
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'unavailable', checks: { database: 'ok', sessions: 'ok', data_api: 'unavailable' } });
  });
});

describe('DATA_API configuration', () => {
  const base = { NODE_ENV: 'test' as const, DATA_API: 'supabase' };

  it('takes the Data API at SUPABASE_URL unless DATA_API_URL names another', () => {
    expect(loadConfig({ ...base, SUPABASE_URL: 'https://abc.supabase.co', SUPABASE_ANON_KEY: 'k' }).DATA_API_URL).toBe('https://abc.supabase.co');
    expect(loadConfig({ ...base, SUPABASE_URL: 'https://abc.supabase.co', DATA_API_URL: 'https://abc-all.supabase.co', SUPABASE_ANON_KEY: 'k' }).DATA_API_URL).toBe('https://abc-all.supabase.co');
    expect(loadConfig({ NODE_ENV: 'test' }).DATA_API).toBe('postgres');
  });

  it.each([
    [{}, /SUPABASE_URL/],
    [{ SUPABASE_URL: 'https://abc.supabase.co' }, /SUPABASE_ANON_KEY/],
    [{ SUPABASE_URL: 'https://abc.supabase.co', SUPABASE_ANON_KEY: 'k', DATA_API_URL: 'https://abc.supabase.co/rest/v1' }, /DATA_API_URL/],
    [{ SUPABASE_URL: 'https://abc.supabase.co', SUPABASE_ANON_KEY: 'k', DEV_BYPASS_AUTH: 'true', DEV_USER_ID: '00000000-0000-4000-8000-000000000001' }, /DEV_BYPASS_AUTH/],
    [{ SUPABASE_URL: 'https://abc.supabase.co', SUPABASE_ANON_KEY: 'k', DATABASE_URL: 'postgres://a@h/d', DATABASE_READ_URL: 'postgres://a@r/d' }, /DATABASE_READ_URL/],
  ])('refuses DATA_API=supabase with %o', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});
