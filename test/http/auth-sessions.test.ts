import { randomUUID } from 'node:crypto';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn } from '../helpers/sessions.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';

const ISSUER = 'https://sparkpath.test';
let t: TestApp;
let noGrace: TestApp;

beforeAll(async () => {
  // With the in-memory public reads on: a token must still be checked in the database.
  t = await createTestApp({ JWT_ISSUER: ISSUER, AUTH_ALLOWED_REDIRECT_ORIGINS: 'https://app.example.com' });
  noGrace = await createTestApp({ JWT_ISSUER: ISSUER, REFRESH_REUSE_GRACE_S: '0' });
});
afterAll(async () => {
  await t?.close();
  await noGrace?.close();
});

const refresh = (app: TestApp, token: string) =>
  app.app.request('/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: token }) });

const sessionState = async (app: TestApp, headers: Record<string, string>) => {
  const res = await app.app.request('/auth/session', { headers });
  expect(res.status).toBe(200);
  return res.json();
};

const sign = (claims: Record<string, unknown>, secret = TEST_JWT_SECRET) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));

describe('auth routes: tokens and sessions', () => {
  it('issues an HS256 access token with the documented claims', async () => {
    const s = await signIn(t, 'claims@example.com');
    const claims = decodeJwt(s.access_token);
    expect(claims).toMatchObject({
      iss: ISSUER, sub: s.userId, aud: 'authenticated', role: 'authenticated', session_id: s.sessionId,
      email: 'claims@example.com', user_role: 'learner', subscription_plan: 'free',
    });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(Buffer.from(s.refresh_token, 'base64url').length).toBe(32);
  });

  it('GET /auth/session answers anonymous 200 without a token and for bad tokens', async () => {
    const anonymous = { authenticated: false, user: null, session: null };
    expect(await sessionState(t, {})).toEqual(anonymous);
    expect(await sessionState(t, { Authorization: 'Bearer not.a.jwt' })).toEqual(anonymous);
    expect(await sessionState(t, { Authorization: 'Basic abc' })).toEqual(anonymous);
    const expired = await sign({ sub: randomUUID(), role: 'authenticated', aud: 'authenticated', iss: ISSUER, exp: Math.floor(Date.now() / 1000) - 10 });
    expect(await sessionState(t, { Authorization: `Bearer ${expired}` })).toEqual(anonymous);
    expect(await sessionState(t, { cookie: `svc-access-token=${expired}` })).toEqual(anonymous);
  });

  it('GET /auth/session describes the signed-in user and session', async () => {
    const s = await signIn(t, 'who@example.com');
    const state = await sessionState(t, s.bearer);
    expect(state.authenticated).toBe(true);
    expect(state.user).toEqual({ id: s.userId, email: 'who@example.com', display_name: 'Tess', provider: 'github', avatar_url: null });
    expect(state.session).toMatchObject({ id: s.sessionId, provider: 'github' });
    expect(new Date(state.session.expires_at).toISOString()).toBe(s.expires_at);
  });

  it('POST /auth/refresh rotates both tokens, sets the cookies again and recomputes claims', async () => {
    const s = await signIn(t);
    await t.db.sql`update app.users set subscription_plan = 'premium', user_role = 'admin' where id = ${s.userId}`;
    const res = await refresh(t, s.refresh_token);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.refresh_token).not.toBe(s.refresh_token);
    expect(body.access_token).not.toBe(s.access_token);
    expect(body.expires_in).toBeGreaterThan(3500);
    expect(decodeJwt(body.access_token)).toMatchObject({ subscription_plan: 'premium', user_role: 'admin', session_id: s.sessionId });
    const cookies = res.headers.getSetCookie();
    expect(cookies.find((c) => c.startsWith('svc-access-token='))).toContain(body.access_token);
    expect(cookies.find((c) => c.startsWith('svc-refresh-token='))).toMatch(/HttpOnly; Secure; SameSite=Lax/);
    // The new refresh token works; the chain is recorded.
    expect((await refresh(t, body.refresh_token)).status).toBe(200);
    const chain = await t.db.sql`select count(*)::int as n, count(parent_id)::int as children from app.refresh_tokens r join app.sessions s on s.id = r.session_id where s.user_id = ${s.userId}`;
    expect(chain[0]).toEqual({ n: 3, children: 2 });
  });

  it('POST /auth/refresh reads the refresh token from the cookie', async () => {
    const s = await signIn(t);
    const res = await t.app.request('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh-token=${s.refresh_token}` } });
    expect(res.status).toBe(200);
    expect((await res.json()).refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('POST /auth/refresh answers 401 MISSING_REFRESH_TOKEN without a token, UNAUTHORIZED for an unknown one', async () => {
    const missing = await t.app.request('/auth/refresh', { method: 'POST' });
    expect(missing.status).toBe(401);
    expect((await missing.json()).error.code).toBe('MISSING_REFRESH_TOKEN');
    const empty = await t.app.request('/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await empty.json()).error.code).toBe('MISSING_REFRESH_TOKEN');
    const unknown = await refresh(t, 'x'.repeat(43));
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'refresh_token_invalid' } });
  });

  it('concurrent refreshes of one token inside the grace window all get the same working successor', async () => {
    const s = await signIn(t);
    const results = await Promise.all(Array.from({ length: 5 }, () => refresh(t, s.refresh_token)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const bodies = await Promise.all(results.map((r) => r.json()));
    expect(new Set(bodies.map((b) => b.refresh_token)).size).toBe(1);
    expect(new Set(bodies.map((b) => b.access_token)).size).toBe(1);
    expect((await sessionState(t, { Authorization: `Bearer ${bodies[0].access_token}` })).authenticated).toBe(true);
    expect((await refresh(t, bodies[4].refresh_token)).status).toBe(200);
  });

  it('reuse of a rotated refresh token after the grace window revokes the whole session', async () => {
    const s = await signIn(noGrace);
    const rotated = await (await refresh(noGrace, s.refresh_token)).json();
    const reuse = await refresh(noGrace, s.refresh_token);
    expect(reuse.status).toBe(401);
    expect((await reuse.json()).error.details.reason).toBe('refresh_token_reuse');
    // The newest token and every access token of the session are refused at once.
    const newest = await refresh(noGrace, rotated.refresh_token);
    expect(newest.status).toBe(401);
    expect((await newest.json()).error.details.reason).toBe('refresh_token_revoked');
    expect((await sessionState(noGrace, { Authorization: `Bearer ${rotated.access_token}` })).authenticated).toBe(false);
    expect((await noGrace.app.request('/metadata', { headers: { Authorization: `Bearer ${rotated.access_token}` } })).status).toBe(401);
    const [row] = await noGrace.db.sql`select active, end_reason from app.sessions where id = ${s.sessionId}`;
    expect(row).toEqual({ active: false, end_reason: 'refresh_token_reuse' });
  });

  it('refuses refresh after the inactivity limit and after the absolute lifetime', async () => {
    const idle = await signIn(t);
    await t.db.sql`update app.sessions set last_activity_at = now() - interval '8 days' where id = ${idle.sessionId}`;
    expect((await sessionState(t, idle.bearer)).authenticated).toBe(false);
    const idleRefresh = await refresh(t, idle.refresh_token);
    expect(idleRefresh.status).toBe(401);
    expect((await idleRefresh.json()).error.details.reason).toBe('refresh_token_expired');
    expect((await t.db.sql`select end_reason from app.sessions where id = ${idle.sessionId}`)[0].end_reason).toBe('idle');

    const old = await signIn(t);
    await t.db.sql`update app.sessions set expires_at = now() - interval '1 second' where id = ${old.sessionId}`;
    expect((await refresh(t, old.refresh_token)).status).toBe(401);
    expect((await t.db.sql`select end_reason from app.sessions where id = ${old.sessionId}`)[0].end_reason).toBe('expired');
  });

  it('POST /auth/logout ends the session: cookies cleared, token refused at once, event written', async () => {
    const s = await signIn(t);
    expect((await t.app.request('/metadata', { headers: s.bearer })).status).toBe(200);
    const res = await t.app.request('/auth/logout', { method: 'POST', headers: s.bearer });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, message: 'Signed out' });
    const cleared = res.headers.getSetCookie();
    expect(cleared.find((c) => c.startsWith('svc-access-token='))).toMatch(/Max-Age=0/);
    expect(cleared.find((c) => c.startsWith('svc-refresh-token='))).toMatch(/Max-Age=0/);

    const [row] = await t.db.sql`select active, end_reason from app.sessions where id = ${s.sessionId}`;
    expect(row).toEqual({ active: false, end_reason: 'logout' });
    const events = await t.db.sql`select event_type, payload->>'session_id' as session_id from app.outbox_events where aggregate_id = ${s.userId} order by id`;
    expect(events.at(-1)).toEqual({ event_type: 'identity.user_logged_out', session_id: s.sessionId });

    // The same, still unexpired and correctly signed token is refused from now on.
    expect((await t.app.request('/metadata', { headers: s.bearer })).status).toBe(401);
    expect((await sessionState(t, s.bearer)).authenticated).toBe(false);
    expect((await t.app.request('/auth/logout', { method: 'POST', headers: s.bearer })).status).toBe(401);
    expect((await refresh(t, s.refresh_token)).status).toBe(401);
  });

  it('POST /auth/logout requires a bearer token', async () => {
    const s = await signIn(t);
    const none = await t.app.request('/auth/logout', { method: 'POST' });
    expect(none.status).toBe(401);
    const cookieOnly = await t.app.request('/auth/logout', { method: 'POST', headers: { cookie: `svc-access-token=${s.access_token}`, origin: 'https://app.example.com' } });
    expect(cookieOnly.status).toBe(401);
    expect((await t.db.sql`select active from app.sessions where id = ${s.sessionId}`)[0].active).toBe(true);
  });

  it('refuses cookie-authenticated writes from another site', async () => {
    const s = await signIn(t);
    const cookie = `svc-refresh-token=${s.refresh_token}`;
    const evil = await t.app.request('/auth/refresh', { method: 'POST', headers: { cookie, origin: 'https://evil.example' } });
    expect(evil.status).toBe(403);
    expect((await evil.json()).error.details.reason).toBe('cross_site_request');
    const crossSite = await t.app.request('/auth/refresh', { method: 'POST', headers: { cookie, 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const nullOrigin = await t.app.request('/auth/refresh', { method: 'POST', headers: { cookie, origin: 'null' } });
    expect(nullOrigin.status).toBe(403);
    const ours = await t.app.request('/auth/refresh', { method: 'POST', headers: { cookie, origin: 'https://app.example.com', 'sec-fetch-site': 'same-site' } });
    expect(ours.status).toBe(200);
  });

  describe('JWT attacks are refused', () => {
    const now = () => Math.floor(Date.now() / 1000);
    async function expectRefused(token: string) {
      expect((await t.app.request('/metadata', { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
      expect((await t.app.request('/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
      expect((await sessionState(t, { Authorization: `Bearer ${token}` })).authenticated).toBe(false);
    }

    it('alg none, tampered payload, HS/ES confusion', async () => {
      const s = await signIn(t);
      const [header, payload, signature] = s.access_token.split('.');
      const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
      await expectRefused(none);
      const claims = decodeJwt(s.access_token);
      const tampered = Buffer.from(JSON.stringify({ ...claims, user_role: 'admin' })).toString('base64url');
      await expectRefused(`${header}.${tampered}.${signature}`);
      // An ES256 token is refused when no JWKS is configured; an HS256 token keyed with a public key too.
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const es = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
      await expectRefused(es);
      const confused = await sign({ ...claims }, JSON.stringify(await exportJWK(publicKey)));
      await expectRefused(confused);
    });

    it('expired, future nbf, wrong aud, wrong iss, missing exp', async () => {
      const s = await signIn(t);
      const base = { ...decodeJwt(s.access_token) };
      await expectRefused(await sign({ ...base, exp: now() - 5 }));
      await expectRefused(await sign({ ...base, nbf: now() + 600 }));
      await expectRefused(await sign({ ...base, aud: 'someone-else' }));
      await expectRefused(await sign({ ...base, iss: 'https://evil.example' }));
      const { exp: _exp, ...noExp } = base;
      await expectRefused(await sign(noExp));
      // The untouched token still works, so the refusals above are about the change.
      expect((await t.app.request('/metadata', { headers: s.bearer })).status).toBe(200);
    });

    it('unknown session, revoked session, session of another user', async () => {
      const s = await signIn(t);
      const base = { ...decodeJwt(s.access_token) };
      await expectRefused(await sign({ ...base, session_id: randomUUID() }));
      await expectRefused(await sign({ ...base, session_id: 'not-a-uuid' }));
      const other = await signIn(t);
      await expectRefused(await sign({ ...base, session_id: other.sessionId }));
      await t.db.sql`update app.sessions set active = false, ended_at = now(), end_reason = 'logout' where id = ${s.sessionId}`;
      await expectRefused(s.access_token);
    });
  });

  it('the cleanup routine deactivates sessions that can no longer be refreshed', async () => {
    const stale = await signIn(t);
    const expiredButRefreshable = await signIn(t);
    const fresh = await signIn(t);
    await t.db.sql`update app.sessions set access_expires_at = now() - interval '1 hour', last_activity_at = now() - interval '8 days' where id = ${stale.sessionId}`;
    // Inside the clock skew after its access token expired (idle limit = lifetime + 10 s).
    await t.db.sql`update app.sessions set access_expires_at = now() - interval '5 seconds', last_activity_at = now() - interval '3605 seconds' where id = ${expiredButRefreshable.sessionId}`;
    const result = await t.deps.cleanup();
    expect(result.sessions_deactivated).toBeGreaterThanOrEqual(1);
    const rows = await t.db.sql`select id, active from app.sessions where id in ${t.db.sql([stale.sessionId, expiredButRefreshable.sessionId, fresh.sessionId])}`;
    const active = Object.fromEntries(rows.map((r) => [r.id, r.active]));
    expect(active).toEqual({ [stale.sessionId]: false, [expiredButRefreshable.sessionId]: true, [fresh.sessionId]: true });
    const revoked = await t.db.sql`select count(*)::int as n from app.refresh_tokens where session_id = ${stale.sessionId} and revoked_at is null`;
    expect(revoked[0].n).toBe(0);
    expect((await refresh(t, expiredButRefreshable.refresh_token)).status).toBe(200);
  });

  it('users see only their own sessions', async () => {
    const a = await signIn(t);
    const b = await signIn(t);
    const rows = await t.db.sql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: a.userId, role: 'authenticated' })}, true)`;
      await tx`set local role authenticated`;
      return tx`select id, user_id from app.sessions`;
    });
    expect(rows.map((r) => r.user_id)).toEqual([a.userId]);
    expect(rows.map((r) => r.id)).not.toContain(b.sessionId);
  });
});
