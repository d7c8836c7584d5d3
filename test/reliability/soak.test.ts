import { afterAll, describe, expect, it } from 'vitest';
import { FULL, rssMb, runLoad, startApi, startPostgres, superuser, type Api, type Postgres } from './harness.js';
import { prepareWorkload } from './workload.js';

const DURATION_MS = FULL ? 60_000 : 10_000;

describe('soak', () => {
  let pg: Postgres | undefined;
  let api: Api | undefined;
  afterAll(async () => {
    await api?.stop();
    await pg?.dispose();
  });

  it(`${DURATION_MS / 1000} s of mixed reads and learning-event writes: no 5xx, every acknowledged write stored`, async () => {
    pg = await startPostgres();
    api = await startApi({ DATABASE_URL: pg.url, DATABASE_API_URL: pg.apiUrl, SEED_DEMO_CONTENT: 'true' });
    const sql = superuser(pg.url);
    const workload = await prepareWorkload(api.baseUrl, sql);
    const rssBefore = rssMb(api.pid);

    const outcomes = await runLoad(8, DURATION_MS, (i) => workload.next(i)).done;

    const byStatus: Record<string, number> = {};
    for (const o of outcomes) byStatus[o.status || o.error!] = (byStatus[o.status || o.error!] ?? 0) + 1;
    console.log(`soak: ${outcomes.length} requests over ${workload.reads.join(', ')}${workload.writes ? ' + POST /user/me/events' : ''}; statuses ${JSON.stringify(byStatus)}; RSS ${rssBefore.toFixed(0)} -> ${rssMb(api.pid).toFixed(0)} MB`);

    expect(outcomes.length).toBeGreaterThan(100);
    expect(outcomes.filter((o) => o.status === 0 || o.status >= 500).map((o) => `${o.tag} ${o.status} ${o.error ?? ''} ${o.body.slice(0, 200)}`)).toEqual([]);
    // Reads of this workload have no reason to fail at all.
    expect(outcomes.filter((o) => o.status >= 400).map((o) => `${o.tag} ${o.status} ${o.body.slice(0, 200)}`)).toEqual([]);
    if (workload.writes) expect(workload.acked.length).toBeGreaterThan(0);
    expect(await workload.missingWrites(sql)).toBe(0);
    await sql.end();
    expect(api.child.exitCode).toBeNull();
    expect(rssMb(api.pid)).toBeLessThan(rssBefore + 150);
  });
});
