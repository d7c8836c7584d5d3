import { createServer, type Server } from 'node:http';
import { serve, type ServerType } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevIdentityProvider, type DevIdentityProvider } from '../../src/auth/dev-identity-provider.js';
import { prepareDatabase } from '../../src/db/database.js';
import { freePort } from '../../scripts/test-database.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';

interface Read {
  status: number;
  json: boolean;
  requestId: string | null;
  etag: string | null;
  rateLimit: string | null;
}

/** A bare page on its own origin: the stand-in for a front end's dev server (its code runs through page.evaluate). */
async function startFrontEnd(port: number): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>front end</title><p>front end</p>');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/**
 * Issue 20's done-when for CORS, in Chromium: a page on a listed origin signs in across origins
 * (the provider sends the browser back to the front end's callback page, which hands code and
 * state to the API with credentials: 'include') and then reads every public and signed-in
 * endpoint of the OpenAPI document; a page on another origin of the same site, whose requests
 * carry the same cookies, reads nothing, and its cookie-authenticated refresh is refused.
 */
describe.skipIf(!hasChromium)('CORS in a real browser', () => {
  let t: TestApp;
  let api: ServerType;
  let idp: DevIdentityProvider;
  let frontEnd: Server;
  let elsewhere: Server;
  let browser: Browser;
  let apiBase: string;
  let appOrigin: string;
  let otherOrigin: string;

  beforeAll(async () => {
    const [apiPort, appPort, otherPort] = [await freePort(), await freePort(), await freePort()];
    apiBase = `http://localhost:${apiPort}`;
    appOrigin = `http://localhost:${appPort}`;
    otherOrigin = `http://localhost:${otherPort}`;
    idp = await startDevIdentityProvider({ redirectUri: `${appOrigin}/callback` });
    t = await createTestApp({ CORS_ALLOWED_ORIGINS: appOrigin, AUTH_CALLBACK_URL: `${appOrigin}/callback` }, { devSignIn: idp.client });
    await prepareDatabase(t.db.url, { seed: true });
    api = serve({ fetch: t.app.fetch, port: apiPort, hostname: '127.0.0.1' });
    await new Promise((resolve) => api.once('listening', resolve));
    frontEnd = await startFrontEnd(appPort);
    elsewhere = await startFrontEnd(otherPort);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    for (const server of [api, frontEnd, elsewhere]) await new Promise((resolve) => server?.close(resolve));
    await t?.close();
    await idp?.close();
  });

  /** fetch() from inside the page; a CORS refusal is the TypeError the page sees. */
  const read = (page: Page, url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    page.evaluate(
      async ({ url, init }) => {
        try {
          const res = await fetch(url, { ...init, credentials: 'include' });
          const text = await res.text();
          let json = false;
          try {
            JSON.parse(text);
            json = true;
          } catch {
            json = false;
          }
          return { status: res.status, json, requestId: res.headers.get('X-Request-Id'), etag: res.headers.get('ETag'), rateLimit: res.headers.get('RateLimit-Remaining') } as Read;
        } catch (error) {
          return { refused: String(error) };
        }
      },
      { url, init },
    );

  it('a page on a listed origin signs in through the dev provider and reads every endpoint with credentials; another origin reads none', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();

    // Sign in from the front end: the API, the provider's page, back to the front end's callback page.
    await page.goto(`${appOrigin}/`);
    await page.goto(`${apiBase}/auth/login?provider=dev&redirect=${encodeURIComponent(`${appOrigin}/courses`)}`);
    await page.click('button[data-email="learner@example.com"]');
    await page.waitForURL(`${appOrigin}/callback?**`);
    const signedIn = await page.evaluate(async (api) => {
      const res = await fetch(`${api}/auth/callback${location.search}`, { credentials: 'include' });
      return res.json();
    }, apiBase);
    expect(signedIn).toMatchObject({ user: { email: 'learner@example.com' }, redirect_url: `${appOrigin}/courses` });
    const bearer = { Authorization: `Bearer ${signedIn.session.access_token}` };

    // Writes with a preflight (JSON body, bearer, Idempotency-Key): enroll and record an event.
    const trails = await (await fetch(`${apiBase}/discovery/trails?per_page=1`)).json();
    const sparkList = await (await fetch(`${apiBase}/discovery/sparks?concept=${trails.data[0].concepts[0].slug}`)).json();
    const enrolled = await read(page, `${apiBase}/user/me/journeys`, { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json' }, body: JSON.stringify({ trail_id: trails.data[0].id }) });
    expect(enrolled).toMatchObject({ status: 201, json: true });
    const event = await read(page, `${apiBase}/user/me/events`, { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json', 'Idempotency-Key': 'cors-1' }, body: JSON.stringify({ spark_id: sparkList.data[0].id, verb: 'completed' }) });
    expect(event).toMatchObject({ status: 201, json: true });

    // Every GET operation of the document, with real arguments. A new endpoint fails here until it is listed.
    const document = await (await fetch(`${apiBase}/openapi.json`)).json();
    const journeys = await (await fetch(`${apiBase}/user/me/journeys`, { headers: bearer })).json();
    const snapshot = await (await fetch(`${apiBase}/snapshots/current`, { headers: bearer })).json();
    const spark = sparkList.data[1]?.slug ?? sparkList.data[0].slug;
    const samples: Record<string, string> = {
      '/metadata': '/metadata',
      '/metadata/difficulty-levels': '/metadata/difficulty-levels',
      '/metadata/health': '/metadata/health',
      '/discovery/domains': '/discovery/domains',
      '/discovery/domains/{slug}': '/discovery/domains/data-and-ai',
      '/discovery/domains/{slug}/trails': '/discovery/domains/data-and-ai/trails',
      '/discovery/domains/{slug}/related': '/discovery/domains/data-and-ai/related',
      '/discovery/trails': '/discovery/trails',
      '/discovery/concepts': '/discovery/concepts',
      '/discovery/sparks': '/discovery/sparks',
      '/discovery/all': '/discovery/all',
      '/discovery/facets': '/discovery/facets',
      '/discovery/browse': '/discovery/browse',
      '/discovery/health': '/discovery/health',
      '/snapshots': '/snapshots',
      '/snapshots/current': '/snapshots/current',
      '/snapshots/{id}': `/snapshots/${snapshot.id}`,
      '/snapshots/{id}/changes': `/snapshots/${snapshot.id}/changes?since=${snapshot.id}`,
      '/snapshots/health': '/snapshots/health',
      '/auth/session': '/auth/session',
      '/auth/providers': '/auth/providers',
      '/auth/jwks.json': '/auth/jwks.json',
      '/user/me/journeys': '/user/me/journeys',
      '/user/me/journeys/{id}': `/user/me/journeys/${journeys.data[0].id}`,
      '/user/me/next': '/user/me/next',
      '/user/me/reviews': '/user/me/reviews',
      '/user/me/statements': '/user/me/statements',
      '/search': '/search?q=sql',
      '/search/autocomplete': '/search/autocomplete?q=sq',
      '/search/health': '/search/health',
      '/graph/sparks/{slug}': `/graph/sparks/${spark}?direction=both`,
      '/graph/path': `/graph/path?target=${spark}`,
      '/graph/links/sparks': '/graph/links/sparks',
      '/graph/health': '/graph/health',
    };
    // Navigations, not reads: the browser goes there (login) or the front end's page calls it once (callback, above).
    const navigations = ['/auth/login', '/auth/callback'];
    const gets = Object.entries<Record<string, unknown>>(document.paths).filter(([, operations]) => operations.get).map(([p]) => p);
    expect(gets.filter((p) => !navigations.includes(p) && !(p in samples))).toEqual([]);

    const needsToken = (p: string) => /^\/(user|search|graph|snapshots)/.test(p) && !p.endsWith('/health');
    for (const [template, sample] of Object.entries(samples)) {
      const headers = needsToken(template) ? bearer : {};
      const direct = await fetch(`${apiBase}${sample}`, { headers });
      const seen = await read(page, `${apiBase}${sample}`, { headers });
      expect(seen, `${template} from the listed origin`).toEqual({
        status: direct.status,
        json: true,
        requestId: expect.any(String),
        etag: direct.headers.get('etag') ? expect.any(String) : null,
        rateLimit: direct.headers.get('ratelimit-remaining') === null ? null : expect.any(String),
      });
      expect(direct.status, `${template} answers`).toBeLessThan(500);
    }
    // The same-origin trailing-slash variant of the domains list, and the cookie-only reads.
    expect(await read(page, `${apiBase}/discovery/domains/`)).toMatchObject({ status: 200, json: true });
    expect(await page.evaluate(async (api) => (await (await fetch(`${api}/auth/session`, { credentials: 'include' })).json()).authenticated, apiBase)).toBe(true);

    // Another origin of the same site: its requests carry the same cookies, yet it reads nothing.
    const other = await context.newPage();
    await other.goto(`${otherOrigin}/`);
    for (const sample of ['/discovery/domains', '/auth/session', '/user/me/journeys']) {
      expect(await read(other, `${apiBase}${sample}`), sample).toEqual({ refused: expect.stringContaining('TypeError') });
    }
    expect(await read(other, `${apiBase}/user/me/journeys`, { headers: bearer })).toEqual({ refused: expect.stringContaining('TypeError') });
    // Its cookie-authenticated refresh is sent (no preflight for a bare POST) and refused by the CSRF guard.
    expect(await read(other, `${apiBase}/auth/refresh`, { method: 'POST' })).toEqual({ refused: expect.stringContaining('TypeError') });
    expect(t.logs.filter((l) => l.path === '/auth/refresh' && l.status === 403).length).toBe(1);

    // The listed origin refreshes with the cookie (untouched by that attempt), then signs out.
    const refreshed = await page.evaluate(async (api) => {
      const res = await fetch(`${api}/auth/refresh`, { method: 'POST', credentials: 'include' });
      return { status: res.status, body: await res.json() };
    }, apiBase);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).toMatch(/^ey/);
    const loggedOut = await read(page, `${apiBase}/auth/logout`, { method: 'POST', headers: { Authorization: `Bearer ${refreshed.body.access_token}` } });
    expect(loggedOut).toMatchObject({ status: 200, json: true });
    expect((await context.cookies(`${apiBase}/auth/refresh`)).filter((c) => c.name.startsWith('svc-') && c.name !== 'svc-oauth-binding')).toEqual([]);
    await context.close();
  }, 90_000);
});
