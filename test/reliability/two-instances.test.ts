import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionMinter, type SessionMinter } from '../../bench/sessions.js';
import { JWT_SECRET, ROOT, SERVICE_SECRET, sleep, startApi, startPostgres, superuser, type Api, type Postgres } from './harness.js';

/**
 * Two API processes on one database, as two instances behind a load balancer: nothing either
 * keeps in memory decides an answer. Sessions are checked by the database on every request,
 * rate-limit counters live in the Postgres store, and the snapshot bodies an instance keeps are
 * immutable, looked up by the version the database says answers now.
 *
 * In the reliability suite rather than the HTTP suite: the claim is about processes, and two
 * apps built in one test process would share its module graph. It costs about 10 s.
 */
const FREE_USER_BUDGET = 4;
const WINDOW_MS = 60_000;

describe('two API instances on one database', () => {
  let pg: Postgres | undefined;
  let a: Api | undefined;
  let b: Api | undefined;
  let minter: SessionMinter | undefined;

  beforeAll(async () => {
    pg = await startPostgres();
    const env = { DATABASE_URL: pg.url, DATABASE_API_URL: pg.apiUrl, RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_FREE_USER: String(FREE_USER_BUDGET), RATE_LIMIT_WINDOW_S: String(WINDOW_MS / 1000) };
    [a, b] = await Promise.all([startApi(env), startApi(env)]);
    minter = await createSessionMinter(pg.url, { SUPABASE_JWT_SECRET: JWT_SECRET, SERVICE_AUTH_SECRET: SERVICE_SECRET });
  });
  afterAll(async () => {
    await minter?.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await pg?.dispose();
  });

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('a logout through one instance is refused by the other on the very next request', async () => {
    const [session] = await minter!.mint(1);
    const before = await fetch(`${b!.baseUrl}/auth/session`, { headers: bearer(session.accessToken) });
    expect((await before.json()).authenticated).toBe(true);

    const logout = await fetch(`${a!.baseUrl}/auth/logout`, { method: 'POST', headers: bearer(session.accessToken) });
    expect(logout.status, await logout.text()).toBe(200);

    const journeys = await fetch(`${b!.baseUrl}/user/me/journeys`, { headers: bearer(session.accessToken) });
    expect(journeys.status).toBe(401);
    expect((await journeys.json()).error.code).toBe('UNAUTHORIZED');
    const after = await fetch(`${b!.baseUrl}/auth/session`, { headers: bearer(session.accessToken) });
    expect((await after.json()).authenticated).toBe(false);
    const refresh = await fetch(`${b!.baseUrl}/auth/refresh`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ refresh_token: session.refreshToken }) });
    expect(refresh.status).toBe(401);
  });

  it('a rate-limit budget spent through one instance is spent for the other (RATE_LIMIT_STORE=postgres)', async () => {
    const [session] = await minter!.mint(1);
    // Windows are fixed and aligned to the epoch: a budget spent across a window's end starts
    // over (CI once saw the fifth request answered 200), so the requests below go in one window.
    const msLeft = WINDOW_MS - (Date.now() % WINDOW_MS);
    if (msLeft < 5_000) await sleep(msLeft + 100);
    const remaining: string[] = [];
    for (let i = 0; i < FREE_USER_BUDGET; i++) {
      const res = await fetch(`${(i % 2 === 0 ? a : b)!.baseUrl}/user/me/journeys`, { headers: bearer(session.accessToken) });
      expect(res.status, await res.text()).toBe(200);
      remaining.push(res.headers.get('ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    for (const instance of [a!, b!]) {
      const limited = await fetch(`${instance.baseUrl}/user/me/journeys`, { headers: bearer(session.accessToken) });
      expect(limited.status).toBe(429);
      expect((await limited.json()).error.code).toBe('RATE_LIMITED');
    }
  });

  it('a snapshot promoted with the content CLI is served by both instances on their next request', async () => {
    const read = async (instance: Api, etag?: string) => {
      const res = await fetch(`${instance.baseUrl}/discovery/domains?per_page=100`, { headers: etag ? { 'If-None-Match': etag } : {} });
      return { status: res.status, etag: res.headers.get('etag')!, body: await res.text() };
    };
    const db = superuser(pg!.url);
    try {
      const [{ draft, current }] = await db<{ draft: string; current: string }[]>`
        select (select id from app.snapshots where status = 'draft' order by created_at limit 1) as draft,
               (select id from app.snapshots where status = 'published') as current`;
      const [firstA, firstB] = [await read(a!), await read(b!)];
      // Both hold the current snapshot's body now: a repeat is 304 on either.
      expect(firstA.etag).toBe(firstB.etag);
      expect(firstA.etag).toContain(current);
      expect((await read(b!, firstB.etag)).status).toBe(304);

      await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/content.ts', 'promote', draft], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: pg!.url },
      });

      const [nextA, nextB] = [await read(a!, firstA.etag), await read(b!, firstB.etag)];
      for (const next of [nextA, nextB]) {
        expect(next.status).toBe(200);
        expect(next.etag).toContain(draft);
        expect(next.body).not.toBe(firstA.body);
      }
      expect(nextA.body).toBe(nextB.body);
      const [{ domains }] = await db<{ domains: number }[]>`
        select count(*)::int as domains from app.domains where snapshot_id = ${draft} and is_published`;
      expect(JSON.parse(nextA.body).data).toHaveLength(domains);
    } finally {
      await db.end();
    }
  });
});
