import { Writable } from 'node:stream';
import { createRoute, z } from '@hono/zod-openapi';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createJwtVerifier } from '../../src/context/jwt.js';
import { ROLE_PERMISSIONS } from '../../src/context/permissions.js';
import type { Rpc } from '../../src/db/rpc.js';
import { createErrorHandler } from '../../src/http/error-handler.js';
import { createRouter } from '../../src/http/router.js';
import { intQuery } from '../../src/http/schemas.js';
import { createLogger } from '../../src/logger.js';
import { createOfflineApp, createTestApp, healthyChecks, type TestApp } from '../helpers/app.js';
import { signToken, TEST_JWT_SECRET, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

const DEV_USER = '0d3c1f7e-8a6b-4c2d-9e1f-123456789abc';
const loopback = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };
const remote = { incoming: { socket: { remoteAddress: '203.0.113.9' } } };

const offline: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(offline.map((app) => app.close()));
});

function appWith(rpc: Partial<Rpc>, env: Record<string, string> = {}) {
  const built = createOfflineApp(rpc, env);
  offline.push(built);
  return built;
}

const lastRole = (logs: Record<string, unknown>[]) => logs.at(-1)?.role;

describe('request pipeline', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('error envelope', () => {
    it('an unknown route answers 404 NOT_FOUND in the envelope', async () => {
      const res = await t.app.request('/no/such/route');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No route for GET /no/such/route', details: {} } });
    });

    it('a wrong method on a known path answers 405 METHOD_NOT_ALLOWED with Allow', async () => {
      const res = await t.app.request('/metadata/difficulty-levels', { method: 'DELETE' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      const body = await res.json();
      expect(body.error.code).toBe('METHOD_NOT_ALLOWED');
      expect(body.error.details).toEqual({ allow: ['GET', 'HEAD'] });
    });

    it('a body above BODY_LIMIT_BYTES answers 413 PAYLOAD_TOO_LARGE', async () => {
      const { app } = appWith({}, { BODY_LIMIT_BYTES: '1024' });
      const res = await app.request('/metadata', { method: 'POST', body: 'x'.repeat(5000), headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(413);
      expect((await res.json()).error.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('an unexpected exception answers 500 INTERNAL_ERROR without leaking its text', async () => {
      const { app, logs } = appWith({
        call: async () => {
          throw new Error('relation "app.secret_table" does not exist at /srv/app.ts:12');
        },
      });
      const res = await app.request('/metadata');
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred', details: {} } });
      expect(text).not.toMatch(/secret_table|app\.ts|stack/);
      expect(logs.some((l) => l.msg === 'unhandled error')).toBe(true);
    });

    it('a database connection failure answers 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
      const { app } = appWith({
        call: async () => {
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        },
      });
      const res = await app.request('/metadata');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect((await res.json()).error.code).toBe('SERVICE_UNAVAILABLE');
    });

    it('zod validation failures answer 400 VALIDATION_ERROR naming every offending field', async () => {
      const router = createRouter();
      router.openapi(
        createRoute({
          method: 'get',
          path: '/probe',
          request: { query: z.object({ page: intQuery(1, 1, 10), per_page: intQuery(20, 1, 100) }) },
          responses: { 200: { description: 'ok' } },
        }),
        (c) => c.body(null, 200) as never,
      );
      router.onError(createErrorHandler(createLogger('silent')));
      const res = await router.request('/probe?page=0&per_page=abc');
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(['page', 'per_page']);
      expect(body.error.message).toContain('page');
    });
  });

  describe('request id and logging', () => {
    it('echoes a sane X-Request-Id and logs one JSON line with method, route, status, duration and role', async () => {
      const res = await t.app.request('/metadata', { headers: { 'X-Request-Id': 'abc-123' } });
      expect(res.headers.get('x-request-id')).toBe('abc-123');
      const line = t.logs.find((l) => l.req_id === 'abc-123');
      expect(line).toMatchObject({ method: 'GET', route: '/metadata', status: 200, role: 'ANONYMOUS' });
      expect(typeof line?.duration_ms).toBe('number');
    });

    it('replaces an unacceptable X-Request-Id with a generated one', async () => {
      const res = await t.app.request('/metadata', { headers: { 'X-Request-Id': 'bad id with spaces <script>' } });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('context resolution order', () => {
    it('dev bypass gives an ADMIN context for DEV_USER_ID on loopback', async () => {
      const { app, logs } = appWith({}, { DEV_BYPASS_AUTH: 'true', DEV_USER_ID: DEV_USER });
      await app.request('/metadata', {}, loopback);
      expect(lastRole(logs)).toBe('ADMIN');
    });

    it('dev bypass is refused from a non-loopback address', async () => {
      const { app, logs } = appWith({}, { DEV_BYPASS_AUTH: 'true', DEV_USER_ID: DEV_USER });
      await app.request('/metadata', {}, remote);
      expect(lastRole(logs)).toBe('ANONYMOUS');
    });

    it('dev bypass is refused for a request forwarded by a proxy on loopback', async () => {
      const { app, logs } = appWith({}, { DEV_BYPASS_AUTH: 'true', DEV_USER_ID: DEV_USER });
      await app.request('/metadata', { headers: { 'X-Forwarded-For': '198.51.100.7' } }, loopback);
      expect(lastRole(logs)).toBe('ANONYMOUS');
    });

    it('dev bypass stays off unless DEV_BYPASS_AUTH=true', async () => {
      const { app, logs } = appWith({}, { DEV_USER_ID: DEV_USER });
      await app.request('/metadata', {}, loopback);
      expect(lastRole(logs)).toBe('ANONYMOUS');
    });

    it('a valid user JWT resolves the role from user_role and subscription_plan', async () => {
      const { app, logs } = appWith({});
      await app.request('/metadata', { headers: { Authorization: `Bearer ${await signToken({ subscription_plan: 'premium' })}` } });
      expect(lastRole(logs)).toBe('PREMIUM_USER');
      await app.request('/metadata', { headers: { Authorization: `Bearer ${await signToken({ user_role: 'admin' })}` } });
      expect(lastRole(logs)).toBe('ADMIN');
      await app.request('/metadata', { headers: { Authorization: `Bearer ${await signToken()}` } });
      expect(lastRole(logs)).toBe('FREE_USER');
    });

    it('a user JWT wins over a valid service header', async () => {
      const { app, logs } = appWith({});
      await app.request('/metadata', { headers: { Authorization: `Bearer ${await signToken()}`, 'X-Service-Auth': TEST_SERVICE_SECRET } });
      expect(lastRole(logs)).toBe('FREE_USER');
    });

    it('a valid X-Service-Auth gives the SERVICE context', async () => {
      const { app, logs } = appWith({});
      await app.request('/metadata', { headers: { 'X-Service-Auth': TEST_SERVICE_SECRET } });
      expect(lastRole(logs)).toBe('SERVICE');
    });

    it('a wrong or short service secret leaves the caller anonymous', async () => {
      const { app, logs } = appWith({});
      await app.request('/metadata', { headers: { 'X-Service-Auth': `${TEST_SERVICE_SECRET}x` } });
      expect(lastRole(logs)).toBe('ANONYMOUS');
      await app.request('/metadata', { headers: { 'X-Service-Auth': 'short' } });
      expect(lastRole(logs)).toBe('ANONYMOUS');
    });

    it('an expired JWT is 401, not anonymous', async () => {
      const res = await t.app.request('/metadata', { headers: { Authorization: `Bearer ${await signToken({ expiresInSeconds: -60 })}` } });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('UNAUTHORIZED');
    });

    it('a tampered JWT is 401', async () => {
      const token = await signToken();
      const [h, p, s] = token.split('.');
      const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
      payload.user_role = 'admin';
      const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
      expect((await t.app.request('/metadata', { headers: { Authorization: `Bearer ${forged}` } })).status).toBe(401);
    });

    it('an alg:none JWT is 401', async () => {
      const none = new UnsecuredJWT({ role: 'authenticated', user_role: 'admin' })
        .setSubject(DEV_USER)
        .setAudience('authenticated')
        .setExpirationTime('1h')
        .encode();
      expect((await t.app.request('/metadata', { headers: { Authorization: `Bearer ${none}` } })).status).toBe(401);
    });

    it('a JWT signed with another secret, for another audience or without exp is 401', async () => {
      const other = await signToken({ secret: 'another-secret-another-secret-another-secret' });
      const wrongAud = await signToken({ audience: 'someone-else' });
      const noExp = await new SignJWT({ role: 'authenticated' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(DEV_USER)
        .setAudience('authenticated')
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      for (const token of [other, wrongAud, noExp]) {
        expect((await t.app.request('/metadata', { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
      }
    });

    it('a JWT with an unknown user_role is 401', async () => {
      const res = await t.app.request('/metadata', { headers: { Authorization: `Bearer ${await signToken({ user_role: 'superuser' })}` } });
      expect(res.status).toBe(401);
    });

    it('a malformed Authorization header is 401', async () => {
      expect((await t.app.request('/metadata', { headers: { Authorization: 'Basic dXNlcjpwYXNz' } })).status).toBe(401);
    });

    it('a Supabase Auth token (its own issuer and session_id) works on database-backed routes', async () => {
      const token = await signToken({ extra: { iss: 'https://project.supabase.co/auth/v1', session_id: '6f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f' } });
      const res = await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ data: [] });
    });

    it("a token of this API's own issuer naming no session of ours is refused by the database", async () => {
      const token = await signToken({ extra: { iss: 'sparkpath', session_id: '6f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f' } });
      const res = await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('UNAUTHORIZED');
    });

    it('an invalid access-token cookie is ignored: the caller stays anonymous', async () => {
      const res = await t.app.request('/metadata', { headers: { Cookie: 'svc-access-token=garbage' } });
      expect(res.status).toBe(200);
    });
  });

  describe('permissions', () => {
    it('SERVICE holds exactly the permissions the spec grants it', () => {
      expect([...ROLE_PERMISSIONS.SERVICE].sort()).toEqual(
        ['BYPASS_RATE_LIMITS', 'READ_FULL_CONTENT', 'READ_PREMIUM_CONTENT', 'READ_PREVIEW_CONTENT', 'READ_PUBLIC_CONTENT', 'UNLIMITED_SEARCH'].sort(),
      );
    });
    it('ANONYMOUS may only read public content; ADMIN holds every permission', () => {
      expect([...ROLE_PERMISSIONS.ANONYMOUS]).toEqual(['READ_PUBLIC_CONTENT']);
      expect(ROLE_PERMISSIONS.ADMIN.size).toBe(10);
    });
  });

  describe('configuration', () => {
    it('a short SERVICE_AUTH_SECRET stops start-up with one line naming the variable', () => {
      expect(() => loadConfig({ SERVICE_AUTH_SECRET: 'too-short' })).toThrow(
        'Invalid configuration: SERVICE_AUTH_SECRET must be at least 32 characters',
      );
    });
    it('a non-numeric PORT is refused by name', () => {
      expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/^Invalid configuration: PORT /);
    });
    it('DEV_BYPASS_AUTH is refused in production', () => {
      expect(() => loadConfig({ NODE_ENV: 'production', SUPABASE_JWT_SECRET: TEST_JWT_SECRET, DEV_BYPASS_AUTH: 'true', DEV_USER_ID: DEV_USER })).toThrow(
        /DEV_BYPASS_AUTH/,
      );
    });
  });

  describe('health', () => {
    it('GET /metadata/health answers 503 naming the database check when the database is unreachable', async () => {
      const { app } = appWith({});
      const res = await app.request('/metadata/health');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'unavailable', checks: { database: 'unavailable', sessions: 'unavailable' } });
      const data = await app.request('/metadata');
      expect(data.status).toBe(503);
      expect((await data.json()).error.code).toBe('SERVICE_UNAVAILABLE');
    });

    it('GET /metadata/health answers 503 naming the sessions check when sign-in cannot run', async () => {
      const healthy = await t.app.request('/metadata/health');
      expect(await healthy.json()).toEqual({ status: 'ok', checks: healthyChecks(t) });
      await t.db.sql`alter function private.refresh_session(text, text, integer, integer) rename to refresh_session_moved`;
      try {
        const res = await t.app.request('/metadata/health');
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({ status: 'unavailable', checks: { ...healthyChecks(t), sessions: 'unavailable' } });
      } finally {
        await t.db.sql`alter function private.refresh_session_moved(text, text, integer, integer) rename to refresh_session`;
      }
    });
  });
});

describe('integer query parameters', () => {
  it('accept plain digits and refuse exponent, hex, fractional and padded forms', async () => {
    const router = createRouter();
    router.openapi(
      createRoute({
        method: 'get',
        path: '/probe',
        request: { query: z.object({ page: intQuery(1, 1, 1000) }) },
        responses: { 200: { description: 'ok' } },
      }),
      (c) => c.json({ page: c.req.valid('query').page }, 200) as never,
    );
    router.onError(createErrorHandler(createLogger('silent')));
    expect(await (await router.request('/probe?page=42')).json()).toEqual({ page: 42 });
    expect(await (await router.request('/probe')).json()).toEqual({ page: 1 });
    for (const bad of ['1e2', '0x10', '1.0', '%207', '', '99999999999999999999', '-1']) {
      const res = await router.request(`/probe?page=${bad}`);
      expect(res.status, `page=${bad}`).toBe(400);
    }
  });
});
