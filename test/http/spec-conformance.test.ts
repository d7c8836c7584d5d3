import { randomUUID } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog } from '../helpers/content.js';
import { signIn } from '../helpers/sessions.js';
import { testUser, TEST_JWT_SECRET, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

/**
 * Issue 23: the seven places where the service answered differently from the specification.
 * Each test is the reproduction, asserted the way the spec reads.
 */
let t: TestApp;
/** The setting for item 3: 30-second access tokens, nothing else configured. */
let shortTokens: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  shortTokens = await createTestApp({ ACCESS_TOKEN_TTL_S: '30' });
  await insertCatalog(t.db.sql, {
    domains: [
      {
        slug: 'web',
        name: 'web',
        trails: [
          { slug: 'http', title: 'HTTP Fundamentals', concepts: [{ slug: 'verbs', title: 'Verbs', sparks: ['get-and-post'] }] },
          { slug: 'transformers', title: 'How Transformers Work', concepts: [{ slug: 'attention', title: 'attention', sparks: ['dot-product'] }] },
          { slug: 'llm', title: 'LLM Applications', concepts: [{ slug: 'prompts', title: 'Écrire des prompts', sparks: ['few-shot'] }] },
          { slug: 'layout', title: 'Layout', concepts: [{ slug: 'grid', title: 'Grid', sparks: ['areas'] }] },
          { slug: 'apis', title: 'apis in practice', concepts: [{ slug: 'rest', title: 'Rest', sparks: ['resources'] }] },
          { slug: 'eclair', title: 'Éclairs and Edges', concepts: [{ slug: 'edge', title: 'Edge Cases', sparks: ['nulls'] }] },
        ],
      },
      { slug: 'data', name: 'Data' },
      { slug: 'ethics', name: 'Éthique' },
      { slug: 'english', name: 'English' },
    ],
    spark_links: [{ source: 'get-and-post', target: 'resources' }],
  });
});
afterAll(async () => {
  await t?.close();
  await shortTokens?.close();
});

const refresh = (app: TestApp, token: string) =>
  app.app.request('/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: token }) });

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await t.app.request(path, { headers });
  return { res, body: await res.json() };
};

describe('spec conformance (issue 23)', () => {
  it('1. GET /user/me/journeys with only the access-token cookie answers 401; the bearer header works', async () => {
    const s = await signIn(t);
    const cookieOnly = await get('/user/me/journeys', { cookie: `svc-access-token=${s.access_token}` });
    expect(cookieOnly.res.status).toBe(401);
    expect(cookieOnly.body.error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'bearer_required' } });
    const bearer = await get('/user/me/journeys', s.bearer);
    expect(bearer.res.status).toBe(200);
    expect(bearer.body).toEqual({ data: [] });
    // The cookie still identifies the browser elsewhere (GET /auth/session: cookie or bearer).
    expect((await get('/auth/session', { cookie: `svc-access-token=${s.access_token}` })).body.authenticated).toBe(true);
  });

  it('4. service callers read the spark graph and spark links; /graph/path says why it is per learner', async () => {
    const service = { 'X-Service-Auth': TEST_SERVICE_SECRET };
    const graph = await get('/graph/sparks/resources', service);
    expect(graph.res.status).toBe(200);
    expect(graph.body.nodes.map((n: { slug: string }) => n.slug).sort()).toEqual(['get-and-post', 'resources']);
    const links = await get('/graph/links/sparks', service);
    expect(links.res.status).toBe(200);
    expect(links.body.data.map((l: { source: { slug: string } }) => l.source.slug)).toEqual(['get-and-post']);
    const path = await get('/graph/path?target=resources', service);
    expect(path.res.status).toBe(403);
    expect(path.body.error.code).toBe('FORBIDDEN');
    expect(path.body.error.message).toMatch(/learner/);
  });

  it('5. the documented default `all` is accepted and means the same as leaving the parameter out', async () => {
    const user = await testUser();
    const omitted = await get('/discovery/all?per_page=50');
    const all = await get('/discovery/all?types=all&per_page=50');
    expect(all.res.status).toBe(200);
    expect(all.body).toEqual(omitted.body);
    expect(all.res.headers.get('etag')).toBe(omitted.res.headers.get('etag'));
    expect((await get('/discovery/all?types=ALL')).res.status).toBe(200);
    expect((await get('/discovery/all?types=all,trail')).res.status).toBe(400);

    const searchAll = await get('/search/?q=edge&type=all', user.headers);
    const searchOmitted = await get('/search/?q=edge', user.headers);
    expect(searchAll.res.status).toBe(200);
    expect(searchAll.body).toEqual(searchOmitted.body);
    expect(searchAll.body.data.length).toBeGreaterThan(0);
  });

  it('3. the cleanup routine ends a session whose access token expired without a refresh (default idle limit = lifetime + 10 s)', async () => {
    expect(shortTokens.config.SESSION_IDLE_TIMEOUT_S).toBe(30 + 10);
    const idle = await signIn(shortTokens);
    const fresh = await signIn(shortTokens);
    // The reproduction: 45 s after sign-in, no refresh, 30-second access tokens.
    await shortTokens.db.sql`
      update app.sessions set created_at = created_at - interval '45 seconds', last_activity_at = last_activity_at - interval '45 seconds',
        access_expires_at = access_expires_at - interval '45 seconds' where id = ${idle.sessionId}`;

    const { sessions_deactivated } = await shortTokens.deps.cleanup();
    expect(sessions_deactivated).toBe(1);
    const rows = await shortTokens.db.sql`select id, active, end_reason from app.sessions where id in ${shortTokens.db.sql([idle.sessionId, fresh.sessionId])}`;
    expect(Object.fromEntries(rows.map((r) => [r.id, [r.active, r.end_reason]]))).toEqual({
      [idle.sessionId]: [false, 'idle'],
      [fresh.sessionId]: [true, null],
    });
    const late = await refresh(shortTokens, idle.refresh_token);
    expect(late.status).toBe(401);
    expect((await late.json()).error.details.reason).toBe('refresh_token_revoked');
    expect((await refresh(shortTokens, fresh.refresh_token)).status).toBe(200);
  });

  it('3. deployments that want longer sessions set SESSION_IDLE_TIMEOUT_S', () => {
    const base = { NODE_ENV: 'test' as const };
    expect(loadConfig(base).SESSION_IDLE_TIMEOUT_S).toBe(3600 + 10);
    expect(loadConfig({ ...base, ACCESS_TOKEN_TTL_S: '900' }).SESSION_IDLE_TIMEOUT_S).toBe(910);
    expect(loadConfig({ ...base, SESSION_IDLE_TIMEOUT_S: '604800' }).SESSION_IDLE_TIMEOUT_S).toBe(604800);
    expect(() => loadConfig({ ...base, ACCESS_TOKEN_TTL_S: '3600', SESSION_IDLE_TIMEOUT_S: '600' })).toThrow(/SESSION_IDLE_TIMEOUT_S/);
  });

  it('2. a refresh retried inside the grace window gets the same successor token set, never a second branch', async () => {
    const s = await signIn(t);
    const first = await refresh(t, s.refresh_token);
    expect(first.status).toBe(200);
    const successor = await first.json();
    const retry = await refresh(t, s.refresh_token);
    expect(retry.status).toBe(200);
    const again = await retry.json();
    expect({ access_token: again.access_token, refresh_token: again.refresh_token, expires_at: again.expires_at }).toEqual({
      access_token: successor.access_token, refresh_token: successor.refresh_token, expires_at: successor.expires_at,
    });
    const [{ children }] = await t.db.sql`
      select count(*)::int as children from app.refresh_tokens c join app.refresh_tokens p on p.id = c.parent_id where p.session_id = ${s.sessionId}`;
    expect(children).toBe(1);
    // What the database keeps to replay it is sealed: neither token appears in it.
    const [{ sealed }] = await t.db.sql`select string_agg(successor_sealed, ' ') as sealed from app.refresh_tokens where session_id = ${s.sessionId}`;
    expect(sealed).toBeTruthy();
    expect(sealed).not.toContain(successor.refresh_token);
    expect(sealed).not.toContain(successor.access_token.split('.')[1]);

    // The successor keeps working; the old token after the grace window is reuse: the family goes.
    const next = await refresh(t, successor.refresh_token);
    expect(next.status).toBe(200);
    const latest = await next.json();
    await t.db.sql`update app.refresh_tokens set rotated_at = rotated_at - interval '11 seconds' where session_id = ${s.sessionId}`;
    const reuse = await refresh(t, s.refresh_token);
    expect(reuse.status).toBe(401);
    expect((await reuse.json()).error.details.reason).toBe('refresh_token_reuse');
    expect((await refresh(t, latest.refresh_token)).status).toBe(401);
  });

  it('2. concurrent refreshes from several tabs all succeed with one successor', async () => {
    const s = await signIn(t);
    const results = await Promise.all(Array.from({ length: 4 }, () => refresh(t, s.refresh_token)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const bodies = await Promise.all(results.map((r) => r.json()));
    expect(new Set(bodies.map((b) => b.refresh_token)).size).toBe(1);
    expect((await get('/user/me/journeys', { Authorization: `Bearer ${bodies[3].access_token}` })).res.status).toBe(200);
  });

  describe('7. logout invalidates every token the service accepts', () => {
    const now = () => Math.floor(Date.now() / 1000);
    /** A token of the identity service (Supabase Auth) sharing the JWT secret: foreign iss, maybe no session_id. */
    const identityServiceToken = (sub: string, extra: Record<string, unknown> = {}) =>
      new SignJWT({ role: 'authenticated', email: 'ada@example.com', app_metadata: { provider: 'email' }, ...extra })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(sub)
        .setIssuer('https://project.supabase.co/auth/v1')
        .setAudience('authenticated')
        .setIssuedAt(now() - 5)
        .setExpirationTime(now() + 3600)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));

    it('a token without a server-side session is refused after logout, by the database session check', async () => {
      const sub = randomUUID();
      const token = await identityServiceToken(sub);
      const other = await identityServiceToken(sub, { jti: randomUUID() });
      const bearer = { Authorization: `Bearer ${token}` };
      expect((await get('/user/me/journeys', bearer)).res.status).toBe(200);

      const state = (await get('/auth/session', bearer)).body;
      expect(state.authenticated).toBe(true);
      const claims = decodeJwt(token);
      expect(state.session).toMatchObject({ provider: 'email' });
      expect(state.session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(new Date(state.session.expires_at).getTime()).toBe(claims.exp! * 1000);
      expect(new Date(state.session.created_at).getTime()).toBe(claims.iat! * 1000);

      const logout = await t.app.request('/auth/logout', { method: 'POST', headers: bearer });
      expect(logout.status).toBe(200);
      expect(await logout.json()).toEqual({ success: true, message: 'Signed out' });
      const refused = await get('/user/me/journeys', bearer);
      expect(refused.res.status).toBe(401);
      expect((await get('/metadata', bearer)).res.status).toBe(401);
      expect((await get('/auth/session', bearer)).body).toEqual({ authenticated: false, user: null, session: null });
      expect((await t.app.request('/auth/logout', { method: 'POST', headers: bearer })).status).toBe(401);
      // Only that token: another token of the same user still works.
      expect((await get('/user/me/journeys', { Authorization: `Bearer ${other}` })).res.status).toBe(200);
      const events = await t.db.sql`select event_type from app.outbox_events where aggregate_id = ${sub}`;
      expect(events.map((e) => e.event_type)).toEqual(['identity.user_logged_out']);
    });

    it('a token naming another issuer\'s session is recorded too; its session object is built from the claims', async () => {
      const sessionId = randomUUID();
      const token = await identityServiceToken(randomUUID(), { session_id: sessionId });
      const bearer = { Authorization: `Bearer ${token}` };
      expect((await get('/auth/session', bearer)).body.session).toMatchObject({ id: sessionId, provider: 'email' });
      expect((await t.app.request('/auth/logout', { method: 'POST', headers: bearer })).status).toBe(200);
      expect((await get('/user/me/journeys', bearer)).res.status).toBe(401);
    });
  });

  it('6. alphabetical means case-insensitive and accent-aware, not byte order', async () => {
    const items = (await get('/discovery/all?per_page=50&nested_limit=0')).body.data as { type: string; name?: string; title?: string }[];
    const of = (type: string) => items.filter((i) => i.type === type).map((i) => i.name ?? i.title);
    expect(of('DOMAIN')).toEqual(['Data', 'English', 'Éthique', 'web']);
    expect(of('TRAIL')).toEqual(['apis in practice', 'Éclairs and Edges', 'How Transformers Work', 'HTTP Fundamentals', 'Layout', 'LLM Applications']);
    expect(of('CONCEPT')).toEqual(['attention', 'Écrire des prompts', 'Edge Cases', 'Grid', 'Rest', 'Verbs']);
    // The same order wherever titles are listed alphabetically.
    const trails = (await get('/discovery/trails?per_page=50')).body.data.map((t: { title: string }) => t.title);
    expect(trails).toEqual(of('TRAIL'));
    const domains = (await get('/discovery/domains?per_page=50')).body.data.map((d: { name: string }) => d.name);
    expect(domains).toEqual(of('DOMAIN'));
    const facets = (await get('/discovery/facets')).body;
    expect(facets.tracks.map((t: { name: string }) => t.name)).toEqual(of('TRAIL'));
  });
});
