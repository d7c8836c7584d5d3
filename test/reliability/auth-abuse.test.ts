import { SignJWT, UnsecuredJWT } from 'jose';
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_SECRET, SERVICE_SECRET, isEnvelope, openApiRoutes, startApi, startPostgres, timedRequest, type Api, type Postgres } from './harness.js';

/**
 * The JWT attacks of the auth issue's list, run against a live server on a route that needs a
 * user (the first of these that exists on this branch).
 */
const PROTECTED = ['/user/me/journeys', '/snapshots/current', '/search?q=data', '/auth/session'];
const key = new TextEncoder().encode(JWT_SECRET);
const now = () => Math.floor(Date.now() / 1000);
const USER = '6f1c2a9e-3b7d-4c1e-9a55-0d2b7c4e8f10';

function base(claims: Record<string, unknown> = {}) {
  return new SignJWT({ role: 'authenticated', user_role: 'learner', subscription_plan: 'free', ...claims }).setSubject(USER);
}

describe('auth abuse', () => {
  let pg: Postgres | undefined;
  let api: Api | undefined;
  let route = '';
  beforeAll(async () => {
    pg = await startPostgres();
    api = await startApi({ DATABASE_URL: pg.url, DATABASE_API_URL: pg.apiUrl, SEED_DEMO_CONTENT: 'false', JWT_ISSUER: 'https://sparkpath.test/auth' });
    const routes = await openApiRoutes(api.baseUrl);
    route = PROTECTED.find((p) => routes.has(`GET ${p.split('?')[0]}`)) ?? '';
  });
  afterAll(async () => {
    await api?.stop();
    await pg?.dispose();
  });

  const valid = () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('authenticated').setIssuer('https://sparkpath.test/auth').setIssuedAt().setExpirationTime(now() + 600).sign(key);

  it('a well-formed token is accepted (the attacks below are refused for their flaw, not by accident)', async (ctx) => {
    if (!route) ctx.skip();
    const res = await timedRequest(`${api!.baseUrl}${route}`, { headers: { Authorization: `Bearer ${await valid()}` } });
    expect(res.status, res.body).toBe(200);
  });

  const attacks: [string, () => Promise<string>][] = [
    ['alg none', async () => new UnsecuredJWT({ role: 'authenticated', sub: USER, aud: 'authenticated', iss: 'https://sparkpath.test/auth', exp: now() + 600 }).encode()],
    ['tampered payload (sub swapped, signature kept)', async () => {
      const [h, , s] = (await valid()).split('.');
      const payload = Buffer.from(JSON.stringify({ role: 'authenticated', sub: '00000000-0000-4000-8000-000000000001', aud: 'authenticated', iss: 'https://sparkpath.test/auth', exp: now() + 600 })).toString('base64url');
      return `${h}.${payload}.${s}`;
    }],
    ['tampered signature', async () => {
      const token = await valid();
      return `${token.slice(0, -4)}${token.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    }],
    ['expired', () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('authenticated').setIssuer('https://sparkpath.test/auth').setIssuedAt(now() - 7200).setExpirationTime(now() - 3600).sign(key)],
    ['not yet valid (future nbf)', () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('authenticated').setIssuer('https://sparkpath.test/auth').setNotBefore(now() + 3600).setExpirationTime(now() + 7200).sign(key)],
    ['wrong audience', () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('service_role').setIssuer('https://sparkpath.test/auth').setExpirationTime(now() + 600).sign(key)],
    ['wrong issuer', () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('authenticated').setIssuer('https://evil.example').setExpirationTime(now() + 600).sign(key)],
    ['missing issuer (an issuer is configured)', () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('authenticated').setExpirationTime(now() + 600).sign(key)],
    ['missing exp', () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('authenticated').setIssuer('https://sparkpath.test/auth').sign(key)],
    ['signed with another secret', () => base().setProtectedHeader({ alg: 'HS256' }).setAudience('authenticated').setIssuer('https://sparkpath.test/auth').setExpirationTime(now() + 600).sign(new TextEncoder().encode('x'.repeat(48)))],
    ['HS/ES confusion (ES256 token, no JWKS configured)', async () => {
      const { privateKey } = await promisify(generateKeyPair)('ec', { namedCurve: 'P-256' });
      return base().setProtectedHeader({ alg: 'ES256' }).setAudience('authenticated').setIssuer('https://sparkpath.test/auth').setExpirationTime(now() + 600).sign(privateKey);
    }],
    ['HS512 with the right secret (algorithm not allowed)', () => base().setProtectedHeader({ alg: 'HS512' }).setAudience('authenticated').setIssuer('https://sparkpath.test/auth').setExpirationTime(now() + 600).sign(key)],
    ['garbage', async () => 'not.a.jwt'],
    ['huge garbage', async () => `${'a'.repeat(6000)}.${'b'.repeat(6000)}.c`],
  ];

  for (const [name, make] of attacks) {
    it(`refuses a bearer token: ${name} -> 401 UNAUTHORIZED in the envelope`, async (ctx) => {
      if (!route) ctx.skip();
      const res = await timedRequest(`${api!.baseUrl}${route}`, { headers: { Authorization: `Bearer ${await make()}` } });
      expect(res.status, res.body).toBe(401);
      expect(isEnvelope(res.body)).toBe(true);
      expect(JSON.parse(res.body).error.code).toBe('UNAUTHORIZED');
    });
  }

  it('an invalid bearer token is not rescued by a valid service secret (a user JWT always wins)', async (ctx) => {
    if (!route) ctx.skip();
    const res = await timedRequest(`${api!.baseUrl}${route}`, { headers: { Authorization: 'Bearer not.a.jwt', 'X-Service-Auth': SERVICE_SECRET } });
    expect(res.status).toBe(401);
  });

  it('journeys: the service caller gets 403 and another user sees 404 for an enrollment that is not theirs', async (ctx) => {
    const routes = await openApiRoutes(api!.baseUrl);
    if (!routes.has('GET /user/me/journeys/{id}')) ctx.skip();
    const service = await timedRequest(`${api!.baseUrl}/user/me/journeys`, { headers: { 'X-Service-Auth': SERVICE_SECRET } });
    expect(service.status).toBe(403);
    expect(isEnvelope(service.body)).toBe(true);
    const other = await timedRequest(`${api!.baseUrl}/user/me/journeys/0b7e3c52-1111-4a2b-8c3d-5e6f7a8b9c0d`, { headers: { Authorization: `Bearer ${await valid()}` } });
    expect(other.status).toBe(404);
    expect(JSON.parse(other.body).error.code).toBe('NOT_FOUND');
  });
});
