import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionMinter, type SessionMinter } from '../../bench/sessions.js';
import { startStandby, type Standby } from '../../scripts/standby.js';
import { apiLoginUrl } from '../../src/db/login-role.js';
import { JWT_SECRET, SERVICE_SECRET, runLoad, sleep, startApi, startPostgres, superuser, timedRequest, type Api, type Postgres } from './harness.js';
import { prepareWorkload, userToken } from './workload.js';

/**
 * A primary and a streaming standby (PostgreSQL's low-level base backup, scripts/standby.ts),
 * and the API with DATABASE_READ_URL on the standby. Pausing the standby's replay makes it
 * deterministically behind, so each test can tell which server answered from the answer itself.
 */
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sub: string; session_id: string };

describe('a read replica (DATABASE_READ_URL)', () => {
  let pg: Postgres | undefined;
  let standby: Standby | undefined;
  let api: Api | undefined;
  let minter: SessionMinter | undefined;
  let primary: postgres.Sql;
  let replica: postgres.Sql;
  let reader: string;

  beforeAll(async () => {
    pg = await startPostgres();
    standby = await startStandby({ primaryAdminUrl: pg.adminUrl, primaryDataDir: pg.dataDir, dataDir: path.join(path.dirname(pg.dataDir), 'standby') });
    primary = superuser(pg.url);
    replica = superuser(standby.url('sparkpath'));
    // The API's login role on both servers (the standby replays the role from the primary).
    api = await startApi({ DATABASE_URL: pg.url, DATABASE_API_URL: pg.apiUrl, DATABASE_READ_URL: apiLoginUrl(standby.url('sparkpath')) });
    reader = await userToken(randomUUID());
    minter = await createSessionMinter(pg.url, { SUPABASE_JWT_SECRET: JWT_SECRET, SERVICE_AUTH_SECRET: SERVICE_SECRET });
  });
  afterAll(async () => {
    await minter?.close();
    await api?.stop();
    await replica?.end();
    await primary?.end();
    await standby?.dispose();
    await pg?.dispose();
  });

  const get = (route: string, token?: string) =>
    timedRequest(`${api!.baseUrl}${route}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  const json = async (route: string, token?: string) => {
    const res = await get(route, token);
    expect(res.status, `${route}: ${res.body}`).toBe(200);
    return JSON.parse(res.body);
  };
  const currentSnapshot = async () => ((await json('/snapshots/current', reader)) as { id: string }).id;

  /** Stops the standby's replay and waits until it has stopped: from now on it is behind. */
  async function pauseReplay() {
    await replica`select pg_catalog.pg_wal_replay_pause()`;
    while ((await replica`select pg_catalog.pg_get_wal_replay_pause_state() as state`)[0].state !== 'paused') await sleep(10);
  }
  /** Resumes replay and waits until the standby has replayed everything the primary wrote. */
  async function catchUp() {
    await replica`select pg_catalog.pg_wal_replay_resume()`;
    const [{ lsn }] = await primary`select pg_catalog.pg_current_wal_lsn()::text as lsn`;
    while (!(await replica`select pg_catalog.pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn as done`)[0].done) await sleep(10);
  }
  /** A draft snapshot of the demo catalog, made current on the primary. */
  async function promoteDraftOnPrimary(): Promise<string> {
    const [{ id }] = await primary`select id from app.snapshots where status = 'draft' order by created_at limit 1`;
    await primary`select private.promote_snapshot(${id}::uuid)`;
    return id as string;
  }

  it('the read pool connects to the standby only, and the primary pool to the primary only', async () => {
    const byName = (sql: postgres.Sql) =>
      sql<{ application_name: string; n: number }[]>`
        select application_name, count(*)::int as n from pg_catalog.pg_stat_activity
        where application_name like 'sparkpath-api%' group by 1`.then((rows) => Object.fromEntries(rows.map((r) => [r.application_name, r.n])));
    await json('/discovery/domains');
    expect(await replica`select pg_catalog.pg_is_in_recovery() as standby`).toEqual([{ standby: true }]);
    expect(Object.keys(await byName(replica))).toEqual(['sparkpath-api-read']);
    expect(Object.keys(await byName(primary))).not.toContain('sparkpath-api-read');
  });

  it('reads are answered by the standby: while it is behind, they show what it has replayed', async () => {
    const before = await currentSnapshot();
    await pauseReplay();
    try {
      const promoted = await promoteDraftOnPrimary();
      expect(promoted).not.toBe(before);
      // The primary has the new current snapshot; the API still answers the standby's.
      expect(await currentSnapshot()).toBe(before);
      // A snapshot the standby does not know yet is "not found" there: the primary has the word.
      const [{ id: fresh }] = await primary`insert into app.snapshots (name, version_label, status) values ('fresh', '1', 'draft') returning id`;
      const pinned = await json(`/discovery/domains?snapshot_id=${fresh}`);
      expect(pinned.data).toEqual([]);
      await catchUp();
      expect(await currentSnapshot()).toBe(promoted);
    } finally {
      await catchUp();
    }
  });

  it("a learner's write followed at once by their read sees the write, although the standby is behind", async () => {
    const [session] = await minter!.mint(1);
    const [{ id: trailId }] = await primary`
      select id from app.trails where snapshot_id = private.resolve_snapshot_id(null) order by slug limit 1`;
    await pauseReplay();
    try {
      const enroll = await timedRequest(`${api!.baseUrl}/user/me/journeys`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${session.accessToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ trail_id: trailId }),
      });
      // Written on the primary: the standby refuses writes, and has not replayed this one.
      expect(enroll.status, enroll.body).toBe(201);
      const journeyId = JSON.parse(enroll.body).id as string;
      expect(await primary`select count(*)::int as n from app.enrollments where id = ${journeyId}`).toEqual([{ n: 1 }]);
      expect(await replica`select count(*)::int as n from app.enrollments where id = ${journeyId}`).toEqual([{ n: 0 }]);

      const journeys = await json('/user/me/journeys', session.accessToken);
      expect(journeys.data.map((j: { id: string }) => j.id)).toEqual([journeyId]);
      expect((await json(`/user/me/journeys/${journeyId}`, session.accessToken)).id).toBe(journeyId);
    } finally {
      await catchUp();
    }
    // Once the standby has replayed the write it answers that learner again: taken away on the
    // primary only, the enrollment is still listed by the (paused) standby.
    await pauseReplay();
    try {
      await primary`delete from app.enrollments where trail_id = ${trailId} and user_id = ${claimsOf(session.accessToken).sub}`;
      expect((await json('/user/me/journeys', session.accessToken)).data).toHaveLength(1);
    } finally {
      await catchUp();
    }
    expect((await json('/user/me/journeys', session.accessToken)).data).toHaveLength(0);
  });

  it('a session signed in a moment ago is accepted although the standby does not know it yet', async () => {
    await pauseReplay();
    try {
      const [session] = await minter!.mint(1);
      expect(await replica`select count(*)::int as n from app.sessions where id = ${claimsOf(session.accessToken).session_id}`).toEqual([{ n: 0 }]);
      const me = await json('/auth/session', session.accessToken);
      expect(me.authenticated).toBe(true);
      expect((await json('/user/me/journeys', session.accessToken)).data).toEqual([]);
    } finally {
      await catchUp();
    }
  });

  it('a mixed read and write load through the replica answers no 5xx (no read function writes)', async () => {
    const workload = await prepareWorkload(api!.baseUrl, primary);
    const load = runLoad(4, 3000, (i) => workload.next(i));
    const outcomes = await load.done;
    const failed = outcomes.filter((o) => o.status === 0 || o.status >= 500);
    expect(failed.map((o) => `${o.tag} ${o.status} ${o.body.slice(0, 200)}`)).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(20);
    expect(await workload.missingWrites(primary)).toBe(0);
  });

  it('without the standby, reads are answered by the primary and health says the replica is away; it is used again once back', async () => {
    await standby!.stop();
    const expected = (await primary`select id from app.snapshots where status = 'published'`)[0].id as string;
    expect(await currentSnapshot()).toBe(expected);
    const [session] = await minter!.mint(1);
    expect((await json('/user/me/journeys', session.accessToken)).data).toEqual([]);
    const health = await get('/metadata/health');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok', checks: { database: 'ok', sessions: 'ok', read_replica: 'unavailable' } });

    await standby!.start();
    const deadline = Date.now() + 20_000;
    while (JSON.parse((await get('/metadata/health')).body).checks.read_replica !== 'ok' && Date.now() < deadline) await sleep(200);
    expect(JSON.parse((await get('/metadata/health')).body).checks.read_replica).toBe('ok');
    await catchUp();
    // Back on the standby: while it is behind again, the API answers what it has replayed.
    await pauseReplay();
    try {
      await primary`select private.rollback_snapshot()`;
      expect(await currentSnapshot()).toBe(expected);
    } finally {
      await catchUp();
    }
    expect(await currentSnapshot()).not.toBe(expected);
  });
});
