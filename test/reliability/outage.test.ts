import { afterAll, describe, expect, it } from 'vitest';
import { isEnvelope, runLoad, sleep, startApi, startPostgres, superuser, timedRequest, type Api, type Outcome, type Postgres } from './harness.js';
import { prepareWorkload } from './workload.js';
import { followProvider, startFakeProvider, type FakeProvider } from '../e2e/oauth-fixtures.js';

// The API's connect timeout is 2 s in these tests; nothing may take much longer than that.
const BOUND_MS = 10_000;

describe('database outage', () => {
  let pg: Postgres | undefined;
  let api: Api | undefined;
  afterAll(async () => {
    await api?.stop();
    await pg?.dispose();
  });

  it('answers 503 in the envelope while Postgres is down and recovers within 5 s without losing acknowledged writes', async () => {
    pg = await startPostgres();
    api = await startApi({ DATABASE_URL: pg.url, DATABASE_API_URL: pg.apiUrl, SEED_DEMO_CONTENT: 'false' });
    const sql = superuser(pg.url);
    const workload = await prepareWorkload(api.baseUrl, sql);
    await sql.end();

    const load = runLoad(8, 60_000, (i) => workload.next(i));
    await sleep(1500);
    const downAt = Date.now();
    await pg.stop();
    await sleep(3000);

    // While the database is down: health says so, with the failing check.
    const health = await timedRequest(`${api.baseUrl}/metadata/health`, {}, BOUND_MS);
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'unavailable', checks: { database: 'unavailable' } });
    const read = await timedRequest(`${api.baseUrl}/metadata`, {}, BOUND_MS);
    expect(read.status).toBe(503);
    expect(JSON.parse(read.body).error.code).toBe('SERVICE_UNAVAILABLE');

    const upAt = Date.now();
    await pg.restart();
    const backAt = Date.now(); // Postgres accepts connections again
    // Full service: a database-backed read answers 200 again, by itself. The window opens when
    // Postgres accepts connections, however long its start-up took.
    let recoveredAt = 0;
    let lastSeen = '';
    while (Date.now() - backAt < 15_000) {
      const r = await timedRequest(`${api.baseUrl}/metadata`, {}, BOUND_MS);
      if (r.status === 200) {
        recoveredAt = Date.now();
        break;
      }
      lastSeen = `${r.status} after ${r.ms} ms ${r.error ?? r.body.slice(0, 200)}`;
      await sleep(100);
    }
    await sleep(1000);
    load.stop();
    const outcomes: Outcome[] = await load.done;

    expect(recoveredAt, `service did not come back (Postgres start-up took ${backAt - upAt} ms; last answer: ${lastSeen}; API log: ${api.output().slice(-2000)})`).toBeGreaterThan(0);
    expect(recoveredAt - backAt, `service returned ${recoveredAt - backAt} ms after Postgres (start-up took ${backAt - upAt} ms)`).toBeLessThanOrEqual(5000);
    // Every request got an answer (no socket error, the API never went away), within the bound.
    const failures = outcomes.filter((o) => o.status === 0);
    expect(failures.map((f) => `${f.tag} ${f.error}`)).toEqual([]);
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(BOUND_MS);
    // Only 2xx or 503 in the envelope; nothing else (no 500).
    for (const o of outcomes) {
      if (o.status >= 200 && o.status < 300) continue;
      expect(o.status, `${o.tag}: ${o.body}`).toBe(503);
      if (o.tag !== '/metadata/health') {
        expect(isEnvelope(o.body)).toBe(true);
        expect(JSON.parse(o.body).error.code).toBe('SERVICE_UNAVAILABLE');
      }
    }
    const during = outcomes.filter((o) => o.startedAt > downAt + 500 && o.startedAt < upAt);
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((o) => o.status === 503)).toBe(true);
    // After recovery everything is 200 again.
    const after = outcomes.filter((o) => o.startedAt > recoveredAt + 200);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((o) => o.status !== 200 && o.status !== 201).map((o) => `${o.tag} ${o.status}`)).toEqual([]);
    expect(api.child.exitCode).toBeNull();

    const check = superuser(pg.url);
    expect(await workload.missingWrites(check)).toBe(0);
    await check.end();
    console.log(`outage: ${outcomes.length} requests, ${during.length} during the outage, Postgres start-up ${backAt - upAt} ms, service back ${recoveredAt - backAt} ms later (writes: ${workload.writes ? workload.acked.length : 'route not available'})`);
  });
});

/**
 * Sign-in, callback, refresh, logout and session cleanup after a database restart, with both
 * rate-limit stores. They reach Postgres through the same pool owner as the reads; when they
 * kept the pool that recovery had replaced, they answered 503 until the API restarted (and
 * with RATE_LIMIT_STORE=postgres, so did every rate-limited request).
 */
describe('database outage: sign-in and sessions', () => {
  const CALLBACK = 'http://127.0.0.1:3000/auth/callback';
  let pg: Postgres | undefined;
  let google: FakeProvider | undefined;
  const apis: Api[] = [];
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.stop()));
    await google?.close();
    await pg?.dispose();
  });

  /** /auth/login → the provider → /auth/callback, as a browser would. */
  async function signIn(api: Api) {
    const login = await fetch(`${api.baseUrl}/auth/login?provider=google`, { redirect: 'manual', signal: AbortSignal.timeout(BOUND_MS) });
    if (login.status !== 302) return { step: 'login', status: login.status, body: await login.text() };
    const binding = login.headers.getSetCookie().find((c) => c.startsWith('svc-oauth-binding='))!.split(';')[0];
    const callbackUrl = await followProvider(login.headers.get('location')!, CALLBACK);
    const callback = await timedRequest(`${api.baseUrl}/auth/callback${callbackUrl.search}`, { headers: { cookie: binding } }, BOUND_MS);
    if (callback.status !== 200) return { step: 'callback', status: callback.status, body: callback.body };
    const { session } = JSON.parse(callback.body) as { session: { access_token: string; refresh_token: string } };
    return { step: 'done', status: 200, body: '', session };
  }

  const refresh = (api: Api, token: string) =>
    timedRequest(`${api.baseUrl}/auth/refresh`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ refresh_token: token }) }, BOUND_MS);
  const logout = (api: Api, access: string) => timedRequest(`${api.baseUrl}/auth/logout`, { method: 'POST', headers: { Authorization: `Bearer ${access}` } }, BOUND_MS);

  it('sign-in, callback, refresh, logout and cleanup work again after Postgres restarts, with either rate-limit store', async () => {
    pg = await startPostgres();
    google = await startFakeProvider('google', CALLBACK);
    google.accounts.set('alice', { id: 'alice', email: 'alice@example.com', name: 'Alice' });
    const env = {
      DATABASE_URL: pg.url,
      DATABASE_API_URL: pg.apiUrl,
      SEED_DEMO_CONTENT: 'false',
      // Plain-http providers are allowed outside production only.
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      SESSION_CLEANUP_INTERVAL_S: '1',
      AUTH_CALLBACK_URL: CALLBACK,
      OAUTH_ALLOW_INSECURE_HTTP: 'true',
      GOOGLE_CLIENT_ID: google.clientId,
      GOOGLE_CLIENT_SECRET: google.clientSecret,
      GOOGLE_ISSUER: google.issuer,
      GOOGLE_AUTHORIZATION_URL: `${google.issuer}/auth`,
      GOOGLE_TOKEN_URL: `${google.issuer}/token`,
      GOOGLE_JWKS_URL: `${google.issuer}/jwks`,
    };
    for (const store of ['memory', 'postgres']) apis.push(await startApi({ ...env, RATE_LIMIT_STORE: store }));

    // Before: each instance signs a user in; the refresh token is used after the restart.
    const before = await Promise.all(apis.map((api) => signIn(api)));
    expect(before.map((b) => `${b.step} ${b.status} ${b.body}`)).toEqual(['done 200 ', 'done 200 ']);

    await pg.stop();
    for (const api of apis) {
      // Reads fail too (as under load): the API notices the outage and recovers its pool.
      const read = await timedRequest(`${api.baseUrl}/metadata`, {}, BOUND_MS);
      expect(read.status, `${read.error ?? ""} after ${read.ms} ms ${read.body}`).toBe(503);
      const during = await timedRequest(`${api.baseUrl}/auth/login?provider=google`, { redirect: 'manual' }, BOUND_MS);
      expect(during.status, `${during.error ?? ""} after ${during.ms} ms ${during.body}`).toBe(503);
      expect(JSON.parse(during.body).error.code).toBe('SERVICE_UNAVAILABLE');
    }
    await sleep(1500);
    await pg.restart();
    const restartedAt = Date.now();
    for (const api of apis) {
      while (Date.now() - restartedAt < 15_000) {
        if ((await timedRequest(`${api.baseUrl}/metadata`, {}, BOUND_MS)).status === 200) break;
        await sleep(100);
      }
    }
    const logLength = apis.map((api) => api.output().length);

    for (const [i, api] of apis.entries()) {
      const store = i === 0 ? 'memory' : 'postgres';
      const health = await timedRequest(`${api.baseUrl}/metadata/health`, {}, BOUND_MS);
      expect(JSON.parse(health.body), store).toEqual({ status: 'ok', checks: { database: 'ok', sessions: 'ok' } });
      const after = await signIn(api);
      expect(`${after.step} ${after.status} ${after.body}`, store).toBe('done 200 ');
      const refreshed = await refresh(api, before[i].session!.refresh_token);
      expect(refreshed.status, `${store}: ${refreshed.body}`).toBe(200);
      const ended = await logout(api, after.session!.access_token);
      expect(ended.status, `${store}: ${ended.body}`).toBe(200);
      // The logged-out token is refused by the next request (no instance keeps sessions in memory).
      expect(JSON.parse((await timedRequest(`${api.baseUrl}/auth/session`, { headers: { Authorization: `Bearer ${after.session!.access_token}` } })).body)).toMatchObject({ authenticated: false });
    }
    // The cleanup routine (every second here) ran after the restart and did not fail.
    await sleep(2500);
    for (const [i, api] of apis.entries()) {
      const since = api.output().slice(logLength[i]);
      expect(since, `instance ${i}`).not.toContain('session cleanup failed');
      expect(since, `instance ${i}`).toContain('"msg":"session cleanup"');
    }
  });
});
