import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_FRONTEND_ORIGINS, loadConfig } from '../../src/config.js';
import { CORS_MAX_AGE_S } from '../../src/http/cors.js';
import { createOfflineApp, createTestApp, type TestApp } from '../helpers/app.js';
import { signIn } from '../helpers/sessions.js';

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

/** Every Access-Control-* header of a response, by lower-case name. */
const corsHeaders = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')));
const vary = (res: Response) => (res.headers.get('vary') ?? '').split(',').map((v) => v.trim().toLowerCase());

describe('CORS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ CORS_ALLOWED_ORIGINS: `${APP}, http://localhost:5173` });
  });
  afterAll(() => t?.close());

  it('GET from a listed origin is readable with credentials and exposes the headers a client needs', async () => {
    const res = await t.app.request('/discovery/domains', { headers: { Origin: APP } });
    expect(res.status).toBe(200);
    expect(corsHeaders(res)).toEqual({
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'ETag,X-Request-Id,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,RateLimit-Policy,Retry-After',
    });
    expect(vary(res)).toContain('origin');
    expect(res.headers.get('etag')).toMatch(/^"/);
  });

  it('a request from an unlisted origin gets no CORS header at all (the browser keeps the body from the page)', async () => {
    const res = await t.app.request('/discovery/domains', { headers: { Origin: OTHER } });
    expect(res.status).toBe(200);
    expect(corsHeaders(res)).toEqual({});
    expect(vary(res)).toContain('origin');
  });

  it('a request without Origin gets no CORS header but still says Vary: Origin, so shared caches keep origins apart', async () => {
    const res = await t.app.request('/discovery/domains');
    expect(corsHeaders(res)).toEqual({});
    expect(vary(res)).toContain('origin');
  });

  it('answers the preflight of a listed origin with methods, request headers and a max-age', async () => {
    const res = await t.app.request('/user/me/events', {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,idempotency-key' },
    });
    expect(res.status).toBe(204);
    const headers = corsHeaders(res);
    expect(headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(headers['access-control-allow-credentials']).toBe('true');
    expect(headers['access-control-allow-methods']?.split(',')).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(headers['access-control-allow-headers']?.split(',')).toEqual(
      expect.arrayContaining(['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match', 'X-Request-Id', 'X-Service-Auth']),
    );
    expect(headers['access-control-max-age']).toBe(String(CORS_MAX_AGE_S));
    expect(vary(res)).toContain('origin');
  });

  it('refuses the preflight of an unlisted origin with 403 and no CORS header', async () => {
    const res = await t.app.request('/user/me/events', {
      method: 'OPTIONS',
      headers: { Origin: OTHER, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(res.status).toBe(403);
    expect(corsHeaders(res)).toEqual({});
    expect(await res.json()).toMatchObject({ error: { code: 'FORBIDDEN', details: { reason: 'origin_not_allowed', origin: OTHER } } });
  });

  it('errors carry the CORS headers too, so a listed front end can read a 401', async () => {
    const res = await t.app.request('/user/me/journeys', { headers: { Origin: APP } });
    expect(res.status).toBe(401);
    expect(corsHeaders(res)['access-control-allow-origin']).toBe(APP);
    expect(await res.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });

  it('credentialed requests: the session cookie reads /auth/session and refreshes from a listed origin', async () => {
    const user = await signIn(t);
    const session = await t.app.request('/auth/session', { headers: { Origin: APP, Cookie: `svc-access-token=${user.access_token}` } });
    expect(corsHeaders(session)['access-control-allow-credentials']).toBe('true');
    expect(await session.json()).toMatchObject({ authenticated: true, user: { id: user.userId } });

    // A cookie-authenticated write from a listed origin passes the CSRF guard.
    const refreshed = await t.app.request('/auth/refresh', { method: 'POST', headers: { Origin: APP, Cookie: `svc-refresh-token=${user.refresh_token}` } });
    expect(refreshed.status).toBe(200);
    expect(corsHeaders(refreshed)['access-control-allow-origin']).toBe(APP);
    expect((await refreshed.json()).refresh_token).not.toBe(user.refresh_token);
  });

  it('the CSRF guard still refuses a cookie-authenticated write from an unlisted origin', async () => {
    const user = await signIn(t);
    const res = await t.app.request('/auth/refresh', { method: 'POST', headers: { Origin: OTHER, Cookie: `svc-refresh-token=${user.refresh_token}` } });
    expect(res.status).toBe(403);
    expect(corsHeaders(res)).toEqual({});
    expect(await res.json()).toMatchObject({ error: { code: 'FORBIDDEN', details: { reason: 'cross_site_request', origin: OTHER } } });
    // The refresh token was not spent: the real front end can still use it.
    const mine = await t.app.request('/auth/refresh', { method: 'POST', headers: { Origin: APP, Cookie: `svc-refresh-token=${user.refresh_token}` } });
    expect(mine.status).toBe(200);
  });

  it('a listed origin is also a valid sign-in redirect target', async () => {
    expect(t.deps.auth.redirectPolicy.allowedOrigins.has(APP)).toBe(true);
    expect(t.deps.auth.redirectPolicy.allowedOrigins.has(OTHER)).toBe(false);
  });
});

describe('CORS configuration', () => {
  it('defaults to the local front-end dev servers outside production and to none in production', () => {
    expect(loadConfig({}).CORS_ALLOWED_ORIGINS.split(',')).toEqual([...DEV_FRONTEND_ORIGINS]);
    expect(loadConfig({ NODE_ENV: 'test' }).CORS_ALLOWED_ORIGINS.split(',')).toEqual([...DEV_FRONTEND_ORIGINS]);
    expect(loadConfig({ NODE_ENV: 'production', SUPABASE_JWT_SECRET: 'x'.repeat(32) }).CORS_ALLOWED_ORIGINS).toBe('');
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: '' }).CORS_ALLOWED_ORIGINS).toBe('');
  });

  it.each(['*', 'https://app.example.com/', 'https://app.example.com/path', 'app.example.com', 'ftp://files.example.com'])('refuses %s: origins only', (value) => {
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: value })).toThrow(/CORS_ALLOWED_ORIGINS must list origins/);
  });

  it('with no origin listed, adds no CORS header and no Vary', async () => {
    const { app, close } = createOfflineApp({}, { CORS_ALLOWED_ORIGINS: '' });
    try {
      const res = await app.request('/openapi.json', { headers: { Origin: APP } });
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual({});
      expect(vary(res)).not.toContain('origin');
    } finally {
      await close();
    }
  });
});
