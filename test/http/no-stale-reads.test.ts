import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog } from '../helpers/content.js';
import { TEST_SERVICE_SECRET } from '../helpers/tokens.js';

// Issue 16, "Measured defects": with the API's listening connection stopped (standing in for a
// half-open socket after a failover), a rollback by SQL went unseen for as long as it was
// stopped. Nothing answers from memory but immutable snapshot bodies now, so whatever holds
// such a connection, the next request sees the rollback.
describe('reads after a change made directly in the database', () => {
  let t: TestApp;
  const stopped: number[] = [];
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    for (const pid of stopped) process.kill(pid, 'SIGCONT');
    await t?.close();
  });

  const service = { 'X-Service-Auth': TEST_SERVICE_SECRET };
  const domains = async () => ((await (await t.app.request('/discovery/domains/')).json()) as { data: { slug: string }[] }).data.map((d) => d.slug);

  it('a rollback by SQL is answered by the very next request, even with any listening backend stopped', async () => {
    const older = await insertCatalog(t.db.sql, { domains: [{ slug: 'data' }] }, { name: 'Older' });
    await insertCatalog(t.db.sql, { domains: [{ slug: 'data' }, { slug: 'web' }] }, { name: 'Newer' });
    expect(((await (await t.app.request('/snapshots/current', { headers: service })).json()) as { name: string }).name).toBe('Newer');
    expect(await domains()).toEqual(['data', 'web']);

    // A listening connection that no longer hears anything (the API no longer opens one).
    const listeners = await t.db.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and application_name = 'sparkpath-api-listen'`;
    for (const { pid } of listeners) {
      process.kill(pid, 'SIGSTOP');
      stopped.push(pid);
    }

    await t.db.sql.begin(async (tx) => {
      await tx`update app.snapshots set status = 'archived' where status = 'published'`;
      await tx`update app.snapshots set status = 'published' where id = ${older.snapshotId}`;
    });
    const current = await t.app.request('/snapshots/current', { headers: service });
    expect(((await current.json()) as { id: string; name: string })).toMatchObject({ id: older.snapshotId, name: 'Older' });
    expect(await domains()).toEqual(['data']);
  });
});
