import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { followProvider, providerEnv, startFakeProvider, type FakeProvider } from './oauth-fixtures.js';

const CALLBACK = 'http://127.0.0.1:3000/auth/callback';
const APP = 'https://app.example.com';

let t: TestApp;
let google: FakeProvider;
let github: FakeProvider;

beforeAll(async () => {
  google = await startFakeProvider('google', CALLBACK);
  github = await startFakeProvider('github', CALLBACK);
  for (const p of [google, github]) {
    p.accounts.set('alice', { id: 'alice', email: 'Alice@Example.com', name: 'Alice Liddell', picture: 'https://img.example/alice.png' });
    p.accounts.set('bob', { id: 'bob', email: 'bob@example.com', name: 'Bob' });
  }
  t = await createTestApp({
    ...providerEnv(google, github, CALLBACK),
    AUTH_ALLOWED_REDIRECT_ORIGINS: `${APP},http://localhost:5173`,
    AUTH_DEFAULT_REDIRECT_URL: `${APP}/home`,
  });
});

afterAll(async () => {
  await t?.close();
  await google?.close();
  await github?.close();
});

beforeEach(() => {
  google.deny = false;
  github.deny = false;
});

function cookieValue(res: Response, name: string): string | undefined {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  return line?.split(';')[0].slice(name.length + 1);
}

/** /auth/login → the provider (signs in `account`) → back at the callback URL, not yet called. */
async function startLogin(provider: 'google' | 'github', account: string, redirect = `${APP}/after`, binding?: string) {
  (provider === 'google' ? google : github).nextAccount = account;
  const res = await t.app.request(`/auth/login?provider=${provider}&redirect=${encodeURIComponent(redirect)}`, {
    headers: binding ? { cookie: `svc-oauth-binding=${binding}` } : {},
  });
  expect(res.status).toBe(302);
  const browser = cookieValue(res, 'svc-oauth-binding')!;
  const callbackUrl = await followProvider(res.headers.get('location')!, CALLBACK);
  return { callbackUrl, binding: browser };
}

const callback = (url: URL, binding: string | undefined, query = url.search) =>
  t.app.request(`/auth/callback${query}`, { headers: binding ? { cookie: `svc-oauth-binding=${binding}`, 'user-agent': 'vitest-browser' } : {} });

const sessionCount = async () => Number((await t.db.sql`select count(*)::int as n from app.sessions`)[0].n);

describe('auth routes: OAuth sign-in end to end', () => {
  it('GET /auth/providers lists the two configured providers (dev is for development only)', async () => {
    const res = await t.app.request('/auth/providers');
    expect(await res.json()).toEqual({ providers: [{ id: 'google', name: 'Google' }, { id: 'github', name: 'GitHub' }] });
  });

  it('GET /auth/login redirects to the provider with state, S256 PKCE and a nonce', async () => {
    const res = await t.app.request('/auth/login?provider=google');
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin).toBe(google.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get('state')).toBeTruthy();
    expect(location.searchParams.get('nonce')).toBeTruthy();
    expect(location.searchParams.get('redirect_uri')).toBe(CALLBACK);
    const binding = res.headers.getSetCookie().find((c) => c.startsWith('svc-oauth-binding='))!;
    expect(binding).toMatch(/HttpOnly/);
    expect(binding).toMatch(/Secure/);
    expect(binding).toMatch(/Path=\/auth\/callback/);
  });

  it('GET /auth/login records no more attempts per client than the anonymous budget allows', async () => {
    const limited = await createTestApp({
      ...providerEnv(google, github, CALLBACK),
      RATE_LIMITS_ENABLED: 'true',
      RATE_LIMIT_ANONYMOUS: '2',
      RATE_LIMIT_WINDOW_S: '3600',
      RATE_LIMIT_TRUST_PROXY: 'true',
    });
    try {
      const statuses = [];
      for (let i = 0; i < 5; i += 1) {
        const res = await limited.app.request('/auth/login?provider=google', { headers: { 'x-forwarded-for': `10.1.${i}.1, 198.51.100.23` } });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([302, 302, 429, 429, 429]);
      const [row] = await limited.db.sql`select count(*)::int as n from app.oauth_attempts`;
      expect(row.n).toBe(2);
    } finally {
      await limited.close();
    }
  });

  it('GET /auth/login answers 400 VALIDATION_ERROR for an unknown provider', async () => {
    const res = await t.app.request('/auth/login?provider=myspace');
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
  });

  it('signs in with the OIDC provider, sets the cookies and creates the profile once', async () => {
    const { callbackUrl, binding } = await startLogin('google', 'alice');
    expect(callbackUrl.searchParams.get('iss')).toBe(google.issuer);
    const res = await callback(callbackUrl, binding);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.user).toMatchObject({ email: 'alice@example.com', display_name: 'Alice Liddell', provider: 'google' });
    expect(body.is_new_user).toBe(true);
    expect(body.redirect_url).toBe(`${APP}/after`);
    expect(body.session.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.session.expires_in).toBeGreaterThan(3500);
    expect(new Date(body.session.expires_at).getTime()).toBeGreaterThan(Date.now());

    const cookies = res.headers.getSetCookie();
    const access = cookies.find((c) => c.startsWith('svc-access-token='))!;
    const refresh = cookies.find((c) => c.startsWith('svc-refresh-token='))!;
    for (const cookie of [access, refresh]) {
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).toMatch(/; SameSite=Lax/);
      expect(cookie).toMatch(/; Max-Age=\d+/);
    }
    expect(access).toMatch(/; Path=\/(;|$)/);
    expect(refresh).toMatch(/; Path=\/auth/);
    expect(cookieValue(res, 'svc-access-token')).toBe(body.session.access_token);

    // The cookie alone authenticates GET /auth/session.
    const session = await t.app.request('/auth/session', { headers: { cookie: `svc-access-token=${body.session.access_token}` } });
    const state = await session.json();
    expect(state.authenticated).toBe(true);
    expect(state.user).toMatchObject({ id: body.user.id, avatar_url: 'https://img.example/alice.png', provider: 'google' });
    expect(state.session.provider).toBe('google');

    const again = await startLogin('google', 'alice');
    const second = await (await callback(again.callbackUrl, again.binding)).json();
    expect(second.is_new_user).toBe(false);
    expect(second.user.id).toBe(body.user.id);

    const rows = await t.db.sql`select provider, provider_user_id, email, last_login_provider from app.users where id = ${body.user.id}`;
    expect(rows).toEqual([{ provider: 'google', provider_user_id: 'alice', email: 'alice@example.com', last_login_provider: 'google' }]);
    const events = await t.db.sql`select event_type from app.outbox_events where aggregate_id = ${body.user.id} order by id`;
    expect(events.map((e) => e.event_type)).toEqual(['identity.user_registered', 'identity.user_authenticated']);
    const [stored] = await t.db.sql`select user_agent, access_token_hash from app.sessions where user_id = ${body.user.id} order by created_at limit 1`;
    expect(stored.user_agent).toBe('vitest-browser');
    expect(stored.access_token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('signs in with the OAuth-only provider through its user and emails API', async () => {
    const { callbackUrl, binding } = await startLogin('github', 'bob');
    const res = await callback(callbackUrl, binding);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.user).toMatchObject({ email: 'bob@example.com', display_name: 'Bob', provider: 'github' });
    const [row] = await t.db.sql`select provider_user_id from app.users where id = ${body.user.id}`;
    expect(row.provider_user_id).toBe('1000');
  });

  it('keeps the same email at two providers as two identities', async () => {
    const g = await startLogin('google', 'bob');
    const h = await startLogin('github', 'bob');
    const a = await (await callback(g.callbackUrl, g.binding)).json();
    const b = await (await callback(h.callbackUrl, h.binding)).json();
    expect(a.user.id).not.toBe(b.user.id);
  });

  it('GET /auth/callback refuses a replayed state with 400 and opens no session', async () => {
    const { callbackUrl, binding } = await startLogin('google', 'alice');
    expect((await callback(callbackUrl, binding)).status).toBe(200);
    const before = await sessionCount();
    const replay = await callback(callbackUrl, binding);
    expect(replay.status).toBe(400);
    const body = await replay.json();
    expect(body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { reason: 'state_already_used' } });
    expect(replay.headers.getSetCookie().some((c) => c.startsWith('svc-access-token='))).toBe(false);
    expect(await sessionCount()).toBe(before);
  });

  it('GET /auth/callback refuses a replayed code under a fresh state with 401 code_exchange_failed', async () => {
    const first = await startLogin('google', 'alice');
    expect((await callback(first.callbackUrl, first.binding)).status).toBe(200);
    const second = await startLogin('google', 'alice', `${APP}/x`, first.binding);
    const forged = new URL(second.callbackUrl);
    forged.searchParams.set('code', first.callbackUrl.searchParams.get('code')!);
    const before = await sessionCount();
    const res = await callback(forged, second.binding);
    expect(res.status).toBe(401);
    expect((await res.json()).error.details.reason).toBe('code_exchange_failed');
    expect(await sessionCount()).toBe(before);
  });

  it('GET /auth/callback refuses missing, unknown, expired and other-browser states', async () => {
    const { callbackUrl, binding } = await startLogin('google', 'alice');
    const missing = new URL(callbackUrl);
    missing.searchParams.delete('state');
    expect((await (await callback(missing, binding)).json()).error.details.reason).toBe('missing_state');

    const unknown = new URL(callbackUrl);
    unknown.searchParams.set('state', 'not-a-state-we-issued');
    expect((await (await callback(unknown, binding)).json()).error.details.reason).toBe('unknown_state');

    const otherBrowser = await callback(callbackUrl, undefined);
    expect(otherBrowser.status).toBe(400);
    expect((await otherBrowser.json()).error.details.reason).toBe('browser_mismatch');
    const wrongBrowser = await callback(callbackUrl, 'A'.repeat(43));
    expect((await wrongBrowser.json()).error.details.reason).toBe('browser_mismatch');

    await t.db.sql`update app.oauth_attempts set expires_at = now() - interval '1 second' where consumed_at is null`;
    const expired = await callback(callbackUrl, binding);
    expect(expired.status).toBe(400);
    expect((await expired.json()).error.details.reason).toBe('state_expired');
  });

  it('GET /auth/callback answers 401 access_denied when the user cancels at the provider', async () => {
    google.deny = true;
    const { callbackUrl, binding } = await startLogin('google', 'alice');
    expect(callbackUrl.searchParams.get('error')).toBe('access_denied');
    const before = await sessionCount();
    const res = await callback(callbackUrl, binding);
    expect(res.status).toBe(401);
    expect((await res.json()).error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'access_denied' } });
    expect(await sessionCount()).toBe(before);
  });

  it('GET /auth/callback answers 401 issuer_mismatch for a wrong iss', async () => {
    const { callbackUrl, binding } = await startLogin('google', 'alice');
    const forged = new URL(callbackUrl);
    forged.searchParams.set('iss', github.issuer);
    const res = await callback(forged, binding);
    expect(res.status).toBe(401);
    expect((await res.json()).error.details.reason).toBe('issuer_mismatch');
  });

  it('two concurrent first callbacks of one identity create exactly one profile', async () => {
    google.accounts.set('carol', { id: 'carol', email: 'carol@example.com', name: 'Carol' });
    const a = await startLogin('google', 'carol');
    const b = await startLogin('google', 'carol');
    const [ra, rb] = await Promise.all([callback(a.callbackUrl, a.binding), callback(b.callbackUrl, b.binding)]);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    const [ba, bb] = [await ra.json(), await rb.json()];
    expect(ba.user.id).toBe(bb.user.id);
    expect([ba.is_new_user, bb.is_new_user].sort()).toEqual([false, true]);
    const rows = await t.db.sql`select count(*)::int as n from app.users where provider = 'google' and provider_user_id = 'carol'`;
    expect(rows[0].n).toBe(1);
  });

  it('GET /auth/login falls back to the default target for every open-redirect trick', async () => {
    const attacks = [
      '//evil.com', '/\\evil.com', '\\\\evil.com', 'https://app@evil.com', 'https://app.example.com@evil.com',
      'https://app.example.com.evil.com', 'javascript:alert(1)', 'data:text/html,<script>alert(1)</script>',
      '/%2F%2Fevil.com', 'http:evil.com', 'http://app.example.com/', 'https://app.example.com/%5Cevil.com',
      'https://app.example.com/a\tb', 'https://app.example.com/a\u0000b', 'https://evil.com', 'https://app.example.com/?a=1&a=2',
    ];
    for (const attack of attacks) {
      await t.app.request(`/auth/login?provider=google&redirect=${encodeURIComponent(attack)}`);
      const [row] = await t.db.sql`select redirect_url from app.oauth_attempts order by created_at desc, id limit 1`;
      expect(row.redirect_url, attack).toBe(`${APP}/home`);
    }
    // Repeated redirect parameters (an array) are refused too.
    await t.app.request(`/auth/login?provider=google&redirect=${encodeURIComponent(`${APP}/a`)}&redirect=${encodeURIComponent(`${APP}/b`)}`);
    const [repeated] = await t.db.sql`select redirect_url from app.oauth_attempts order by created_at desc limit 1`;
    expect(repeated.redirect_url).toBe(`${APP}/home`);

    // Allowed targets come back re-serialised; loopback http is accepted outside production.
    await t.app.request(`/auth/login?provider=google&redirect=${encodeURIComponent('HTTPS://APP.EXAMPLE.COM:443/path?x=1#frag')}`);
    const [ok] = await t.db.sql`select redirect_url from app.oauth_attempts order by created_at desc limit 1`;
    expect(ok.redirect_url).toBe(`${APP}/path?x=1#frag`);
    await t.app.request(`/auth/login?provider=google&redirect=${encodeURIComponent('http://localhost:5173/x')}`);
    const [loop] = await t.db.sql`select redirect_url from app.oauth_attempts order by created_at desc limit 1`;
    expect(loop.redirect_url).toBe('http://localhost:5173/x');
  });

  it('never stores or logs a raw access or refresh token', async () => {
    const { callbackUrl, binding } = await startLogin('github', 'alice');
    const signedIn = await (await callback(callbackUrl, binding)).json();
    const refreshed = await (
      await t.app.request('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh-token=${signedIn.session.refresh_token}` } })
    ).json();
    const logout = await t.app.request('/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${refreshed.access_token}` } });
    expect(logout.status).toBe(200);
    const secrets = [signedIn.session.access_token, signedIn.session.refresh_token, refreshed.access_token, refreshed.refresh_token,
      callbackUrl.searchParams.get('code')!, callbackUrl.searchParams.get('state')!, binding];

    const tables = await t.db.sql<{ name: string }[]>`select format('%I.%I', schemaname, tablename) as name from pg_tables where schemaname in ('app', 'private', 'public', 'api')`;
    let dump = '';
    for (const { name } of tables) dump += JSON.stringify(await t.db.sql.unsafe(`select * from ${name}`));
    const logText = JSON.stringify(t.logs);
    expect(dump).toContain(signedIn.user.id); // the dump does hold the session data...
    for (const secret of secrets) {
      expect(dump.includes(secret), 'a raw token is stored').toBe(false);
      expect(logText.includes(secret), 'a raw token is logged').toBe(false);
    }
  });
});
