import { randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { installSchema, startSupabaseAuthDouble, type SupabaseAuthDouble } from '../helpers/supabase-auth-double.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';

// Supabase Auth cannot run here: these tests run the API against a local server that answers
// Supabase Auth's documented endpoints over real HTTP (test/helpers/supabase-auth-double.ts),
// on a database shaped as a Supabase project's (GoTrue's auth.users exists before the
// migrations, so they attach the profile trigger; every token goes through the project's hook).

const CALLBACK = 'http://127.0.0.1:3000/auth/callback';
const APP = 'https://app.example.com';
// Distinct budgets, so RateLimit-Limit tells the caller's role apart (admins have none).
const BUDGETS = { RATE_LIMIT_FREE_USER: '5001', RATE_LIMIT_PREMIUM_USER: '5002', RATE_LIMIT_ANONYMOUS: '5003' };

/** The cookies a browser keeps for the API (one origin; paths ignored, asserted where they matter). */
class CookieJar {
  readonly values = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('='));
      const expired = attributes.some((a) => /^\s*max-age=0$/i.test(a));
      if (expired) this.values.delete(name);
      else this.values.set(name, pair.slice(name.length + 1));
    }
  }
  header(names?: string[]) {
    return [...this.values].filter(([name]) => !names || names.includes(name)).map(([n, v]) => `${n}=${v}`).join('; ');
  }
}

async function supabaseShapedApp(env: Record<string, string>, signing: 'ES256' | 'HS256') {
  const db = await createTestDatabase({ beforeMigrations: installSchema });
  const double = await startSupabaseAuthDouble({
    sql: db.sql,
    signing: signing === 'ES256' ? { alg: 'ES256' } : { alg: 'HS256', secret: TEST_JWT_SECRET },
    redirectAllowList: [CALLBACK],
    siteUrl: 'http://127.0.0.1:3000',
  });
  const t = await createTestApp(
    {
      SUPABASE_URL: double.url,
      SUPABASE_ANON_KEY: double.anonKey,
      ...(signing === 'ES256' ? { SUPABASE_JWT_SECRET: '' } : {}),
      AUTH_CALLBACK_URL: CALLBACK,
      AUTH_ALLOWED_REDIRECT_ORIGINS: APP,
      AUTH_DEFAULT_REDIRECT_URL: `${APP}/home`,
      ...BUDGETS,
      ...env,
    },
    { database: db },
  );
  return { t, double };
}

describe('AUTH_PROVIDER=supabase: /auth answered by Supabase Auth (ES256 tokens, the project JWKS)', () => {
  let t: TestApp;
  let double: SupabaseAuthDouble;

  beforeAll(async () => {
    ({ t, double } = await supabaseShapedApp({ AUTH_PROVIDER: 'supabase' }, 'ES256'));
  });
  afterAll(async () => {
    await t?.close();
    await double?.close();
  });
  beforeEach(() => {
    double.deny = false;
  });

  /** /auth/login → Supabase Auth → the provider → Supabase Auth → back at the callback URL (not yet called). */
  async function startLogin(jar: CookieJar, provider: 'google' | 'github', redirect = `${APP}/after`) {
    const login = await t.app.request(`/auth/login?provider=${provider}&redirect=${encodeURIComponent(redirect)}`, { headers: { cookie: jar.header() } });
    expect(login.status).toBe(302);
    jar.take(login);
    let location = login.headers.get('location')!;
    const start = new URL(location);
    for (let hop = 0; hop < 5 && !location.startsWith(CALLBACK); hop += 1) {
      const res = await fetch(location, { redirect: 'manual' });
      expect(res.status, `${location} answered ${res.status}`).toBe(302);
      location = res.headers.get('location')!;
    }
    expect(location.startsWith(CALLBACK)).toBe(true);
    return { login, start, callbackUrl: new URL(location) };
  }

  async function signIn(jar: CookieJar, provider: 'google' | 'github' = 'github') {
    const { callbackUrl } = await startLogin(jar, provider);
    const res = await t.app.request(`/auth/callback${callbackUrl.search}`, { headers: { cookie: jar.header() } });
    jar.take(res);
    return res;
  }

  const identity = (name: string) => ({ sub: String(Math.floor(Math.random() * 1e9)), email: `${name.toLowerCase()}.${randomUUID().slice(0, 8)}@example.com`, name });
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('GET /auth/providers offers the spec\'s two providers, and GET /auth/login refuses the local dev one with 400', async () => {
    const providers = await t.app.request('/auth/providers');
    expect(providers.status).toBe(200);
    expect(((await providers.json()) as { providers: { id: string }[] }).providers.map((p) => p.id)).toEqual(['google', 'github']);
    const dev = await t.app.request('/auth/login?provider=dev');
    expect(dev.status).toBe(400);
    expect(await dev.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: { reason: 'provider_not_configured', provider: 'dev' } } });
  });

  it('GET /auth/login sends the browser to Supabase Auth\'s /authorize with a PKCE S256 challenge, the verifier in a callback-only cookie', async () => {
    const jar = new CookieJar();
    const { login, start } = await startLogin(jar, 'github');
    expect(start.origin + start.pathname).toBe(`${double.url}/auth/v1/authorize`);
    expect(start.searchParams.get('provider')).toBe('github');
    expect(start.searchParams.get('redirect_to')).toBe(CALLBACK);
    expect(start.searchParams.get('code_challenge_method')).toBe('s256');
    expect(start.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(login.headers.get('cache-control')).toBe('no-store');
    const verifier = login.headers.getSetCookie().filter((line) => line.startsWith('svc-sb-auth-code-verifier='));
    expect(verifier).toHaveLength(1);
    expect(verifier[0]).toMatch(/HttpOnly/);
    expect(verifier[0]).toMatch(/Secure/);
    expect(verifier[0]).toMatch(/SameSite=Lax/);
    expect(verifier[0]).toMatch(/Path=\/auth\/callback/);
    // No session cookie of Supabase's own: the spec's two cookies carry the session.
    expect(login.headers.getSetCookie().some((line) => line.startsWith('svc-sb-auth='))).toBe(false);
  });

  it('GET /auth/callback exchanges the code and answers the spec\'s sign-in body; the trigger made the profile, the hook put its role in the token', async () => {
    const jar = new CookieJar();
    double.nextIdentity = { ...identity('Grace'), avatarUrl: 'https://avatars.example.com/g.png' };
    const res = await signIn(jar);
    expect(res.status).toBe(200);
    const body = await res.json();
    const [profile] = await t.db.sql`select id, provider, display_name, user_role, subscription_plan from app.users where email = ${double.nextIdentity.email}`;
    expect(body).toEqual({
      user: { id: profile.id, email: double.nextIdentity.email, display_name: 'Grace', provider: 'github' },
      session: { access_token: expect.any(String), refresh_token: expect.any(String), expires_at: expect.any(String), expires_in: 3600 },
      is_new_user: true,
      redirect_url: `${APP}/after`,
    });
    expect(profile).toMatchObject({ provider: 'github', user_role: 'learner', subscription_plan: 'free' });
    const claims = decodeJwt(body.session.access_token);
    expect(decodeProtectedHeader(body.session.access_token).alg).toBe('ES256');
    expect(claims).toMatchObject({ iss: double.issuer, sub: profile.id, role: 'authenticated', user_role: 'learner', subscription_plan: 'free' });
    expect(Date.parse(body.session.expires_at)).toBe((claims.exp as number) * 1000);
    expect(jar.values.get('svc-access-token')).toBe(body.session.access_token);
    expect(jar.values.get('svc-refresh-token')).toBe(body.session.refresh_token);
    const sessionCookies = res.headers.getSetCookie().filter((line) => /^svc-(access|refresh)-token=/.test(line));
    expect(sessionCookies.every((line) => /HttpOnly/.test(line) && /Secure/.test(line) && /SameSite=Lax/.test(line))).toBe(true);
    expect(double.requests.filter((r) => r.path.startsWith('/auth/v1/token?grant_type=pkce')).every((r) => r.apikey)).toBe(true);
  });

  it('a second sign-in of the same identity is not a new user', async () => {
    const person = identity('Ada');
    double.nextIdentity = person;
    expect((await (await signIn(new CookieJar(), 'google')).json()).is_new_user).toBe(true);
    double.nextIdentity = person;
    const again = await (await signIn(new CookieJar(), 'google')).json();
    expect(again.is_new_user).toBe(false);
    expect(again.user.provider).toBe('google');
  });

  it('a Supabase Auth token gets its role\'s answers: learner, then premium and admin after a refresh', async () => {
    const jar = new CookieJar();
    double.nextIdentity = identity('Pat');
    const { session, user } = await (await signIn(jar)).json();
    const learner = await t.app.request('/user/me/journeys', { headers: bearer(session.access_token) });
    expect(learner.status).toBe(200);
    expect(learner.headers.get('ratelimit-limit')).toBe(BUDGETS.RATE_LIMIT_FREE_USER);

    await t.db.sql`update app.users set subscription_plan = 'premium' where id = ${user.id}`;
    const refreshed = await t.app.request('/auth/refresh', { method: 'POST', headers: { cookie: jar.header(['svc-refresh-token']) } });
    expect(refreshed.status).toBe(200);
    const premium = await refreshed.json();
    expect(premium.refresh_token).not.toBe(session.refresh_token);
    expect(decodeJwt(premium.access_token)).toMatchObject({ subscription_plan: 'premium', user_role: 'learner' });
    const premiumAnswer = await t.app.request('/user/me/journeys', { headers: bearer(premium.access_token) });
    expect(premiumAnswer.headers.get('ratelimit-limit')).toBe(BUDGETS.RATE_LIMIT_PREMIUM_USER);

    await t.db.sql`update app.users set user_role = 'admin' where id = ${user.id}`;
    const admin = await (await t.app.request('/auth/refresh', { method: 'POST', body: JSON.stringify({ refresh_token: premium.refresh_token }), headers: { 'content-type': 'application/json' } })).json();
    expect(decodeJwt(admin.access_token).user_role).toBe('admin');
    const adminAnswer = await t.app.request('/user/me/journeys', { headers: bearer(admin.access_token) });
    expect(adminAnswer.status).toBe(200);
    expect(adminAnswer.headers.get('ratelimit-limit')).toBeNull();
  });

  it('GET /auth/session asks Supabase Auth, then answers with the profile; POST /auth/logout ends the session there and the token is refused here', async () => {
    const jar = new CookieJar();
    double.nextIdentity = identity('Lin');
    const { session, user } = await (await signIn(jar)).json();
    const state = await (await t.app.request('/auth/session', { headers: bearer(session.access_token) })).json();
    expect(state).toEqual({
      authenticated: true,
      user: { id: user.id, email: user.email, display_name: 'Lin', provider: 'github', avatar_url: null },
      session: { id: decodeJwt(session.access_token).session_id, provider: 'github', expires_at: expect.any(String), created_at: expect.any(String) },
    });
    expect(double.requests.some((r) => r.method === 'GET' && r.path === '/auth/v1/user' && r.bearer && r.apikey)).toBe(true);

    const logout = await t.app.request('/auth/logout', { method: 'POST', headers: { ...bearer(session.access_token), cookie: jar.header() } });
    expect(logout.status).toBe(200);
    expect(await logout.json()).toEqual({ success: true, message: 'Signed out' });
    expect(double.requests.filter((r) => r.path === '/auth/v1/logout?scope=local' && r.bearer)).toHaveLength(1);
    expect(logout.headers.getSetCookie().filter((line) => /^svc-(access|refresh)-token=;/.test(line) && /Max-Age=0/.test(line))).toHaveLength(2);

    // Refused everywhere at once, though the token has not expired: here, and by Supabase Auth.
    expect((await t.app.request('/user/me/journeys', { headers: bearer(session.access_token) })).status).toBe(401);
    expect(await (await t.app.request('/auth/session', { headers: bearer(session.access_token) })).json()).toEqual({ authenticated: false, user: null, session: null });
    const refresh = await t.app.request('/auth/refresh', { method: 'POST', body: JSON.stringify({ refresh_token: session.refresh_token }), headers: { 'content-type': 'application/json' } });
    expect(refresh.status).toBe(401);
    expect((await refresh.json()).error.details.reason).toBe('refresh_token_revoked');
    expect((await t.app.request('/auth/logout', { method: 'POST', headers: bearer(session.access_token) })).status).toBe(401);
  });

  it('a session ended at Supabase Auth by another device (signOut global) reads as anonymous at GET /auth/session', async () => {
    const person = identity('Kim');
    double.nextIdentity = person;
    const phone = await (await signIn(new CookieJar())).json();
    double.nextIdentity = person;
    const laptop = await (await signIn(new CookieJar())).json();
    const signOutEverywhere = await fetch(`${double.url}/auth/v1/logout?scope=global`, { method: 'POST', headers: { ...bearer(laptop.session.access_token), apikey: double.anonKey } });
    expect(signOutEverywhere.status).toBe(204);
    const cookie = `svc-access-token=${phone.session.access_token}`;
    expect(await (await t.app.request('/auth/session', { headers: { cookie } })).json()).toMatchObject({ authenticated: false });
  });

  it('refresh reuse, an unknown refresh token and a missing one are refused as the built-in mode refuses them', async () => {
    const jar = new CookieJar();
    double.nextIdentity = identity('Rae');
    const { session } = await (await signIn(jar)).json();
    const post = (token: string) => t.app.request('/auth/refresh', { method: 'POST', body: JSON.stringify({ refresh_token: token }), headers: { 'content-type': 'application/json' } });
    expect((await post(session.refresh_token)).status).toBe(200);
    const reuse = await post(session.refresh_token);
    expect(reuse.status).toBe(401);
    expect((await reuse.json()).error.details.reason).toBe('refresh_token_reuse');
    expect(reuse.headers.getSetCookie().some((line) => line.startsWith('svc-refresh-token=;'))).toBe(true);
    expect((await (await post('not-a-token')).json()).error.details.reason).toBe('refresh_token_invalid');
    const missing = await t.app.request('/auth/refresh', { method: 'POST' });
    expect(missing.status).toBe(401);
    expect((await missing.json()).error.code).toBe('MISSING_REFRESH_TOKEN');
  });

  it('the callback refuses another browser, a replayed code and a cancelled sign-in, and opens no session', async () => {
    const jar = new CookieJar();
    double.nextIdentity = identity('Eve');
    const { callbackUrl } = await startLogin(jar, 'github');
    const elsewhere = await t.app.request(`/auth/callback${callbackUrl.search}`);
    expect(elsewhere.status).toBe(400);
    expect((await elsewhere.json()).error.details.reason).toBe('browser_mismatch');

    const { callbackUrl: second } = await startLogin(jar, 'github');
    const cookie = jar.header();
    expect((await t.app.request(`/auth/callback${second.search}`, { headers: { cookie } })).status).toBe(200);
    const replay = await t.app.request(`/auth/callback${second.search}`, { headers: { cookie } });
    expect(replay.status).toBe(401);
    expect((await replay.json()).error.details.reason).toBe('code_exchange_failed');

    double.deny = true;
    const { callbackUrl: cancelled } = await startLogin(jar, 'github');
    expect(cancelled.searchParams.get('error')).toBe('access_denied');
    const refused = await t.app.request(`/auth/callback${cancelled.search}`, { headers: { cookie: jar.header() } });
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.details.reason).toBe('access_denied');
    expect(refused.headers.getSetCookie().some((line) => line.startsWith('svc-access-token=') && !/Max-Age=0/.test(line))).toBe(false);
  });

  it('an open redirect is replaced by the default target', async () => {
    const jar = new CookieJar();
    double.nextIdentity = identity('Mo');
    const { callbackUrl } = await startLogin(jar, 'github', 'https://evil.example.net/');
    const body = await (await t.app.request(`/auth/callback${callbackUrl.search}`, { headers: { cookie: jar.header() } })).json();
    expect(body.redirect_url).toBe(`${APP}/home`);
  });
});

describe('the built-in mode with a Supabase Auth token (HS256, the project\'s JWT secret)', () => {
  let t: TestApp;
  let double: SupabaseAuthDouble;

  beforeAll(async () => {
    // JWT_ISSUER pinned: this API's own issuer and Supabase Auth's are both accepted.
    ({ t, double } = await supabaseShapedApp({ JWT_ISSUER: 'https://api.example.com' }, 'HS256'));
  });
  afterAll(async () => {
    await t?.close();
    await double?.close();
  });

  /** A password sign-in at Supabase Auth, as the spec's example obtains a JWT. */
  async function passwordToken(email: string, password: string) {
    const res = await fetch(`${double.url}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: { apikey: double.anonKey, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { access_token: string; refresh_token: string };
  }

  it('a Supabase Auth token with the hook\'s claims gets its role\'s answers, logs out, and is refused after logout while its sibling works', async () => {
    const email = `sam.${randomUUID().slice(0, 8)}@example.com`;
    const userId = await double.createPasswordUser(email, 'correct horse', 'Sam');
    await t.db.sql`update app.users set subscription_plan = 'premium' where id = ${userId}`;
    const first = await passwordToken(email, 'correct horse');
    const second = await passwordToken(email, 'correct horse');
    expect(decodeJwt(first.access_token)).toMatchObject({ iss: double.issuer, sub: userId, subscription_plan: 'premium', user_role: 'learner' });
    expect(decodeJwt(first.access_token).session_id).not.toBe(decodeJwt(second.access_token).session_id);

    const answer = await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${first.access_token}` } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-limit')).toBe(BUDGETS.RATE_LIMIT_PREMIUM_USER);
    expect(await (await t.app.request('/auth/session', { headers: { Authorization: `Bearer ${first.access_token}` } })).json()).toMatchObject({
      authenticated: true,
      user: { id: userId, display_name: 'Sam', provider: 'email' },
    });

    // Default mode: the token is recorded at logout (its session is Supabase Auth's, not ours).
    const logout = await t.app.request('/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${first.access_token}` } });
    expect(logout.status).toBe(200);
    const [recorded] = await t.db.sql`select user_id from app.revoked_access_tokens`;
    expect(recorded.user_id).toBe(userId);
    expect(double.requests.some((r) => r.path.startsWith('/auth/v1/logout'))).toBe(false);

    expect((await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${first.access_token}` } })).status).toBe(401);
    expect((await t.app.request('/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${first.access_token}` } })).status).toBe(401);
    expect((await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${second.access_token}` } })).status).toBe(200);
  });

  it('accepts the issuers configured and refuses any other, even with the right key', async () => {
    expect(t.config.JWT_ACCEPTED_ISSUERS).toEqual(['https://api.example.com', double.issuer]);
    const { SignJWT } = await import('jose');
    const now = Math.floor(Date.now() / 1000);
    const sign = (iss: string) =>
      new SignJWT({ role: 'authenticated' }).setProtectedHeader({ alg: 'HS256' }).setSubject(randomUUID()).setIssuer(iss)
        .setAudience('authenticated').setIssuedAt(now).setExpirationTime(now + 60).sign(new TextEncoder().encode(TEST_JWT_SECRET));
    expect((await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${await sign(double.issuer)}` } })).status).toBe(200);
    expect((await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${await sign('https://elsewhere.example.com/auth/v1')}` } })).status).toBe(401);
  });
});
