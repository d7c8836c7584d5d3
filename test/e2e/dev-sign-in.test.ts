import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { loadConfig } from '../../src/config.js';
import { DEMO_ACCOUNTS, startDevIdentityProvider, type DevIdentityProvider } from '../../src/auth/dev-identity-provider.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const CALLBACK = 'http://localhost:3000/explore/callback';

/** A browser's cookie jar and redirect-following, enough to walk the provider's pages. */
function browserAgent() {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res: Response) => {
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  return {
    /** Follows redirects from `url` until one leaves for `stopAt` (returned) or a page answers (returned with its HTML). */
    async walk(url: string, init: RequestInit = {}, stopAt = CALLBACK): Promise<{ callback?: URL; page?: { url: string; status: number; html: string } }> {
      let next = url;
      let request = init;
      for (let hop = 0; hop < 10; hop += 1) {
        const res = await fetch(next, { ...request, redirect: 'manual', headers: { ...(request.headers as Record<string, string>), cookie: cookieHeader() } });
        keep(res);
        const location = res.headers.get('location');
        if (!location) return { page: { url: next, status: res.status, html: await res.text() } };
        const target = new URL(location, next);
        if (target.href.startsWith(stopAt)) return { callback: target };
        next = target.href;
        request = {};
      }
      throw new Error('too many redirects');
    },
    post(url: string, form: Record<string, string>) {
      return this.walk(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
    },
  };
}

describe('auth routes: the dev provider (local OpenID provider of development)', () => {
  let t: TestApp;
  let idp: DevIdentityProvider;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ redirectUri: CALLBACK });
    t = await createTestApp({ AUTH_CALLBACK_URL: CALLBACK }, { devSignIn: idp.client });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  /** /auth/login → the provider's login page: the attempt's binding cookie and the page's form actions. */
  async function startSignIn() {
    const login = await t.app.request(`/auth/login?provider=dev&redirect=${encodeURIComponent('http://localhost:3000/explore/trails')}`);
    expect(login.status).toBe(302);
    const binding = /svc-oauth-binding=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
    const authorize = new URL(login.headers.get('location')!);
    const agent = browserAgent();
    const { page } = await agent.walk(authorize.href);
    expect(page?.status).toBe(200);
    const action = (name: string) => new URL(new RegExp(`action="(/interaction/[^"]+/${name})"`).exec(page!.html)![1], idp.client.issuer).href;
    return { agent, binding: binding!, authorize, html: page!.html, action };
  }

  async function finishSignIn(callback: URL, binding: string) {
    const res = await t.app.request(`/auth/callback${callback.search}`, { headers: { Cookie: `svc-oauth-binding=${binding}` } });
    return { res, body: await res.json() };
  }

  it('runs the whole flow: PKCE, state, nonce, the login page, a demo learner, the ID token, the callback and a refresh', async () => {
    const { agent, binding, authorize, html, action } = await startSignIn();
    expect(authorize.origin).toBe(idp.client.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: 'sparkpath-dev',
      redirect_uri: CALLBACK,
      response_type: 'code',
      code_challenge_method: 'S256',
      prompt: 'login',
      scope: 'openid email profile',
    });
    expect(authorize.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const account of DEMO_ACCOUNTS) expect(html).toContain(`data-email="${account.email}"`);

    const { callback } = await agent.post(action('login'), { email: 'premium@example.com' });
    expect(callback?.searchParams.get('state')).toBe(authorize.searchParams.get('state'));
    expect(callback?.searchParams.get('iss')).toBe(idp.client.issuer);

    const { res, body } = await finishSignIn(callback!, binding);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      user: { email: 'premium@example.com', display_name: 'Priya Premium', provider: 'dev' },
      redirect_url: 'http://localhost:3000/explore/trails',
    });
    // The demo learner's plan is in the very first access token.
    expect(decodeJwt(body.session.access_token)).toMatchObject({ email: 'premium@example.com', user_role: 'learner', subscription_plan: 'premium' });
    expect(res.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(expect.arrayContaining(['svc-access-token', 'svc-refresh-token']));

    const refreshed = await t.app.request('/auth/refresh', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ refresh_token: body.session.refresh_token }) });
    expect(refreshed.status).toBe(200);
    expect(decodeJwt((await refreshed.json()).access_token)).toMatchObject({ sub: body.user.id, subscription_plan: 'premium' });
  });

  it('the admin demo learner signs in as an admin; the same email next time is the same profile', async () => {
    const first = await startSignIn();
    const one = await finishSignIn((await first.agent.post(first.action('login'), { email: 'admin@example.com' })).callback!, first.binding);
    expect(decodeJwt(one.body.session.access_token)).toMatchObject({ user_role: 'admin' });
    const session = await t.app.request('/snapshots', { headers: { Authorization: `Bearer ${one.body.session.access_token}` } });
    expect(session.status).toBe(200);

    const second = await startSignIn();
    const two = await finishSignIn((await second.agent.post(second.action('login'), { email: 'admin@example.com' })).callback!, second.binding);
    expect(two.body).toMatchObject({ is_new_user: false, user: { id: one.body.user.id } });
  });

  it('any email address signs in as a free learner named after it', async () => {
    const { agent, binding, action } = await startSignIn();
    const { res, body } = await finishSignIn((await agent.post(action('login'), { email: '  Sam.Rivera@Example.org ' })).callback!, binding);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ is_new_user: true, user: { email: 'sam.rivera@example.org', display_name: 'Sam Rivera', provider: 'dev' } });
    expect(decodeJwt(body.session.access_token)).toMatchObject({ user_role: 'learner', subscription_plan: 'free' });
  });

  it('a malformed email stays on the login page with a message', async () => {
    const { agent, action } = await startSignIn();
    const { page } = await agent.post(action('login'), { email: 'not an email' });
    expect(page?.status).toBe(400);
    expect(page?.html).toContain('Type an email address');
  });

  it('Cancel returns access_denied to the callback, which creates no session', async () => {
    const { agent, binding, action } = await startSignIn();
    const { callback } = await agent.post(action('cancel'), {});
    expect(callback?.searchParams.get('error')).toBe('access_denied');
    const { res, body } = await finishSignIn(callback!, binding);
    expect(res.status).toBe(401);
    expect(body).toMatchObject({ error: { code: 'UNAUTHORIZED', details: { reason: 'access_denied' } } });
  });

  it('GET /auth/providers lists it, so a front end shows its button', async () => {
    const res = await t.app.request('/auth/providers');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ providers: [{ id: 'dev', name: 'Dev provider' }] });
  });

  it('a replayed callback (same code and state) is refused', async () => {
    const { agent, binding, action } = await startSignIn();
    const { callback } = await agent.post(action('login'), { email: 'learner@example.com' });
    expect((await finishSignIn(callback!, binding)).res.status).toBe(200);
    const replay = await finishSignIn(callback!, binding);
    expect(replay.body).toMatchObject({ error: { details: { reason: 'state_already_used' } } });
  });
});

describe('the dev provider is for development only', () => {
  it('is on by default in development without real providers, off with one, off in test and production, and refused when forced in production', () => {
    expect(loadConfig({}).DEV_SIGN_IN).toBe(true);
    expect(loadConfig({ GOOGLE_CLIENT_ID: 'id' }).DEV_SIGN_IN).toBe(false);
    expect(loadConfig({ GITHUB_CLIENT_ID: 'id', DEV_SIGN_IN: 'true' }).DEV_SIGN_IN).toBe(true);
    expect(loadConfig({ DEV_SIGN_IN: 'false' }).DEV_SIGN_IN).toBe(false);
    expect(loadConfig({ AUTH_PROVIDER: 'supabase', SUPABASE_URL: 'https://p.supabase.co', SUPABASE_ANON_KEY: 'anon' }).DEV_SIGN_IN).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test' }).DEV_SIGN_IN).toBe(false);
    const production = { NODE_ENV: 'production', SUPABASE_JWT_SECRET: 'x'.repeat(32) };
    expect(loadConfig(production).DEV_SIGN_IN).toBe(false);
    expect(() => loadConfig({ ...production, DEV_SIGN_IN: 'true' })).toThrow('DEV_SIGN_IN must not be true when NODE_ENV=production');
  });

  it('the sign-in URLs follow PORT, so the explorer signs in on any port', () => {
    expect(loadConfig({ PORT: '4100' })).toMatchObject({
      AUTH_CALLBACK_URL: 'http://localhost:4100/explore/callback',
      AUTH_ALLOWED_REDIRECT_ORIGINS: 'http://localhost:4100',
      AUTH_DEFAULT_REDIRECT_URL: 'http://localhost:4100/explore',
    });
  });

  it('without the provider running, /auth/login?provider=dev answers provider_not_configured and /auth/providers lists none', async () => {
    const t = await createTestApp();
    try {
      const res = await t.app.request('/auth/login?provider=dev');
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: { reason: 'provider_not_configured', provider: 'dev' } } });
      expect(await (await t.app.request('/auth/providers')).json()).toEqual({ providers: [] });
    } finally {
      await t.close();
    }
  });
});
