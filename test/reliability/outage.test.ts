import { afterAll, describe, expect, it } from 'vitest';
import { isEnvelope, runLoad, sleep, startApi, startPostgres, superuser, timedRequest, type Api, type Outcome, type Postgres } from './harness.js';
import { prepareWorkload } from './workload.js';

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
    api = await startApi({ DATABASE_URL: pg.url, SEED_DEMO_CONTENT: 'false' });
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
    // Full service: a database-backed read answers 200 again, by itself.
    let recoveredAt = 0;
    while (Date.now() - upAt < 15_000) {
      const r = await timedRequest(`${api.baseUrl}/metadata`, {}, BOUND_MS);
      if (r.status === 200) {
        recoveredAt = Date.now();
        break;
      }
      await sleep(100);
    }
    await sleep(1000);
    load.stop();
    const outcomes: Outcome[] = await load.done;

    expect(recoveredAt, 'service did not come back').toBeGreaterThan(0);
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
