import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionMinter, type SessionMinter } from '../../bench/sessions.js';
import { JWT_SECRET, ROOT, SERVICE_SECRET, isEnvelope, openApiRoutes, startApi, startPostgres, timedRequest, type Api, type Postgres } from './harness.js';

/**
 * The session attacks of the auth issue against a live server: refresh-token reuse after the
 * grace window, logout, missing and forged refresh tokens, cross-site cookie refresh. Skipped
 * while src/auth is not on the branch.
 */
const hasAuth = existsSync(path.join(ROOT, 'src/auth/auth-service.ts'));

describe.runIf(hasAuth)('auth abuse: sessions', () => {
  let pg: Postgres | undefined;
  let api: Api | undefined;
  let minter: SessionMinter | undefined;
  let protectedRoute = '/auth/session';

  beforeAll(async () => {
    pg = await startPostgres();
    // Grace window 0: any second use of a refresh token is a reuse (no sleeps in the test).
    api = await startApi({ DATABASE_URL: pg.url, DATABASE_API_URL: pg.apiUrl, SEED_DEMO_CONTENT: 'false', REFRESH_REUSE_GRACE_S: '0' });
    minter = await createSessionMinter(pg.url, { SUPABASE_JWT_SECRET: JWT_SECRET, SERVICE_AUTH_SECRET: SERVICE_SECRET, REFRESH_REUSE_GRACE_S: '0' });
    const routes = await openApiRoutes(api.baseUrl);
    if (routes.has('GET /user/me/journeys')) protectedRoute = '/user/me/journeys';
  });
  afterAll(async () => {
    await minter?.close();
    await api?.stop();
    await pg?.dispose();
  });

  const refresh = (token: string | undefined, headers: Record<string, string> = {}) =>
    timedRequest(`${api!.baseUrl}/auth/refresh`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: token === undefined ? '{}' : JSON.stringify({ refresh_token: token }),
    });
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('a reused refresh token revokes the whole session: the newest refresh token and the access tokens stop working', async () => {
    const [session] = await minter!.mint(1);
    const first = await refresh(session.refreshToken);
    expect(first.status, first.body).toBe(200);
    const rotated = JSON.parse(first.body) as { access_token: string; refresh_token: string };
    expect(rotated.refresh_token).not.toBe(session.refreshToken);

    const reuse = await refresh(session.refreshToken);
    expect(reuse.status).toBe(401);
    expect(isEnvelope(reuse.body)).toBe(true);

    const newest = await refresh(rotated.refresh_token);
    expect(newest.status).toBe(401);
    const access = await timedRequest(`${api!.baseUrl}${protectedRoute}`, { headers: bearer(rotated.access_token) });
    if (protectedRoute === '/auth/session') expect(JSON.parse(access.body).authenticated).toBe(false);
    else expect(access.status).toBe(401);
  });

  it('after logout the access token is refused at once, and a second logout is 401', async () => {
    const [session] = await minter!.mint(1);
    const before = await timedRequest(`${api!.baseUrl}/auth/session`, { headers: bearer(session.accessToken) });
    expect(JSON.parse(before.body).authenticated).toBe(true);
    const logout = await timedRequest(`${api!.baseUrl}/auth/logout`, { method: 'POST', headers: bearer(session.accessToken) });
    expect(logout.status, logout.body).toBe(200);
    const after = await timedRequest(`${api!.baseUrl}/auth/session`, { headers: bearer(session.accessToken) });
    expect(JSON.parse(after.body).authenticated).toBe(false);
    const again = await timedRequest(`${api!.baseUrl}/auth/logout`, { method: 'POST', headers: bearer(session.accessToken) });
    expect(again.status).toBe(401);
    expect((await refresh(session.refreshToken)).status).toBe(401);
  });

  it('refresh without a token is 401 MISSING_REFRESH_TOKEN; forged tokens are 401 in the envelope', async () => {
    const missing = await refresh(undefined);
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body).error.code).toBe('MISSING_REFRESH_TOKEN');
    for (const forged of ['x', 'A'.repeat(43), 'A'.repeat(5000), "' or 1=1 --"]) {
      const res = await refresh(forged);
      expect(res.status, forged.slice(0, 20)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(isEnvelope(res.body)).toBe(true);
    }
  });

  it('a cross-site request refreshing with the cookie is refused and sets no cookie', async () => {
    const [session] = await minter!.mint(1);
    const res = await timedRequest(`${api!.baseUrl}/auth/refresh`, {
      method: 'POST',
      headers: { Cookie: `svc-refresh-token=${session.refreshToken}`, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(isEnvelope(res.body)).toBe(true);
    // The token was not consumed: the legitimate client can still refresh.
    expect((await refresh(session.refreshToken)).status).toBe(200);
  });
});
