import { serve, type ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/test-database.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { providerEnv, startFakeProvider, type FakeProvider } from './oauth-fixtures.js';


describe.skipIf(!hasChromium)('auth routes: sign-in in a real browser', () => {
  let t: TestApp;
  let server: ServerType;
  let browser: Browser;
  let google: FakeProvider;
  let github: FakeProvider;
  let baseUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    const callback = `${baseUrl}/auth/callback`;
    google = await startFakeProvider('google', callback);
    github = await startFakeProvider('github', callback);
    google.accounts.set('dana', { id: 'dana', email: 'dana@example.com', name: 'Dana' });
    t = await createTestApp({ ...providerEnv(google, github, callback), AUTH_ALLOWED_REDIRECT_ORIGINS: baseUrl, AUTH_DEFAULT_REDIRECT_URL: `${baseUrl}/` });
    server = serve({ fetch: t.app.fetch, port, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await t?.close();
    await google?.close();
    await github?.close();
  });

  it('signs in through the provider, keeps the session in cookies, refreshes and signs out', async () => {
    google.nextAccount = 'dana';
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${baseUrl}/auth/login?provider=google&redirect=${encodeURIComponent(`${baseUrl}/welcome`)}`);
    expect(new URL(page.url()).pathname).toBe('/auth/callback');
    expect(response?.status()).toBe(200);
    const signedIn = JSON.parse((await page.textContent('body')) ?? '');
    expect(signedIn).toMatchObject({ is_new_user: true, redirect_url: `${baseUrl}/welcome`, user: { email: 'dana@example.com', provider: 'google' } });

    const cookies = await context.cookies(baseUrl);
    const access = cookies.find((c) => c.name === 'svc-access-token');
    expect(access).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
    // HttpOnly: scripts cannot read the tokens.
    expect(await page.evaluate(() => document.cookie)).not.toContain('svc-access-token');

    await page.goto(`${baseUrl}/auth/session`);
    expect(JSON.parse((await page.textContent('body')) ?? '')).toMatchObject({ authenticated: true, user: { email: 'dana@example.com' } });

    const refreshed = await page.evaluate(async () => {
      const res = await fetch('/auth/refresh', { method: 'POST' });
      return { status: res.status, body: await res.json() };
    });
    expect(refreshed.status).toBe(200);
    expect((await context.cookies(baseUrl)).find((c) => c.name === 'svc-access-token')?.value).toBe(refreshed.body.access_token);

    const loggedOut = await page.evaluate(async (token) => {
      const res = await fetch('/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
      return res.status;
    }, refreshed.body.access_token);
    expect(loggedOut).toBe(200);
    expect((await context.cookies(baseUrl)).filter((c) => c.name.startsWith('svc-') && c.name !== 'svc-oauth-binding')).toEqual([]);
    await page.goto(`${baseUrl}/auth/session`);
    expect(JSON.parse((await page.textContent('body')) ?? '')).toEqual({ authenticated: false, user: null, session: null });
    await context.close();
  }, 60_000);
});
