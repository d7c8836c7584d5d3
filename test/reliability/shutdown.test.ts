import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/test-database.js';
import { isAlive, postmasterPid, runLoad, sleep, startApi, superuser, timedRequest, type Api } from './harness.js';

describe('graceful shutdown', () => {
  let dir: string | undefined;
  let api: Api | undefined;
  afterAll(async () => {
    if (api && api.child.exitCode === null) api.child.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('SIGTERM during load finishes every in-flight request, exits 0 and stops embedded Postgres', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-shutdown-'));
    const dataDir = path.join(dir, 'pg');
    const pgPort = await freePort();
    // No DATABASE_URL: the API owns an embedded Postgres, which shutdown must stop.
    api = await startApi({ EMBEDDED_PG_DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort), SEED_DEMO_CONTENT: 'false' });
    const postmaster = postmasterPid(dataDir);
    expect(postmaster).toBeGreaterThan(0);

    // Hold a lock the metadata query needs, so requests are really in flight (waiting in the
    // database) when the signal arrives.
    const admin = superuser(`postgres://postgres:postgres@127.0.0.1:${pgPort}/sparkpath`);
    const reserved = await admin.reserve();
    await reserved`begin`;
    await reserved`lock table app.difficulty_levels in access exclusive mode`;

    // Connection: close per request, so a refused connection after close() is distinguishable
    // from a request cut halfway.
    const headers = { Connection: 'close' };
    const blocked = Array.from({ length: 6 }, () => timedRequest(`${api!.baseUrl}/metadata/difficulty-levels`, { headers }, 20_000));
    const background = runLoad(4, 1500, () => timedRequest(`${api!.baseUrl}/metadata/health`, { headers }, 20_000));
    await sleep(500);

    const sigtermAt = Date.now();
    api.child.kill('SIGTERM');
    await sleep(1000);
    // Still alive while requests are in flight.
    expect(api.child.exitCode).toBeNull();
    // Bounded: if shutdown wrongly stopped Postgres already, this connection is gone.
    await Promise.race([reserved`commit`.catch(() => undefined), sleep(3000)]);
    reserved.release();
    await Promise.race([admin.end({ timeout: 1 }).catch(() => undefined), sleep(3000)]);

    const inFlight = await Promise.all(blocked);
    const others = await background.done;
    const exitCode = await Promise.race([api.exited, sleep(20_000).then(() => 'timeout')]);

    // Every request that was accepted before SIGTERM got its complete answer.
    for (const r of inFlight) {
      expect(r.status, `${r.error ?? ''} ${r.body}`).toBe(200);
      expect(JSON.parse(r.body).data.length).toBeGreaterThan(0);
    }
    // Requests sent after the signal are refused at connect time (ECONNREFUSED, or ECONNRESET for
    // a connection still in the kernel's accept queue when the listener closed: never accepted);
    // requests sent before it get their answer.
    for (const r of others) {
      if (r.status === 0) {
        expect(['ECONNREFUSED', 'ECONNRESET'], `${r.error}`).toContain(r.error);
        expect(r.startedAt, 'a request sent before SIGTERM was cut').toBeGreaterThanOrEqual(sigtermAt - 20);
      } else {
        expect(r.status).toBe(200);
      }
    }
    expect(others.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    expect(exitCode, api.output()).toBe(0);
    expect(isAlive(postmaster!)).toBe(false);
    expect(postmasterPid(dataDir)).toBeUndefined();
  });
});
