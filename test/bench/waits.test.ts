import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countSample, topWaits, waitSampler, waitShare, type WaitCounts } from '../../bench/waits.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('bench wait counts', () => {
  it('counts each active backend of a sample once, under its wait event or CPU', () => {
    const counts: WaitCounts = { samples: 0, active: 0, by: {} };
    countSample(counts, [{ wait_event_type: 'IO', wait_event: 'DataFileRead' }, { wait_event_type: null, wait_event: null }]);
    countSample(counts, [{ wait_event_type: 'IO', wait_event: 'DataFileRead' }, { wait_event_type: 'LWLock', wait_event: 'BufferMapping' }]);
    countSample(counts, []);
    expect(counts).toEqual({ samples: 3, active: 4, by: { 'IO:DataFileRead': 2, CPU: 1, 'LWLock:BufferMapping': 1 } });
    expect(waitShare(counts, 'IO')).toBe(0.5);
    expect(waitShare(counts, 'CPU')).toBe(0.25);
    expect(waitShare(counts, 'Lock')).toBe(0);
    expect(topWaits(counts)).toEqual([{ event: 'IO:DataFileRead', share: 0.5 }, { event: 'LWLock:BufferMapping', share: 0.25 }]);
  });

  it('has no shares where no backend was active', () => {
    expect(waitShare({ samples: 5, active: 0, by: {} }, 'IO')).toBeUndefined();
    expect(waitShare(undefined, 'IO')).toBeUndefined();
  });
});

describe('bench wait sampler', () => {
  let db: TestDatabase;
  let watcher: postgres.Sql;
  beforeAll(async () => {
    db = await createTestDatabase();
    watcher = postgres(db.url, { max: 1, onnotice: () => undefined });
  });
  afterAll(async () => {
    await watcher.end();
    await db.drop();
  });

  it('sees the database\'s busy backends only while started, and not itself', async () => {
    const database = new URL(db.url).pathname.slice(1);
    const sampler = waitSampler(watcher, database, 20);
    sampler.start();
    // Two backends busy for a while: one sleeping (a wait event), one computing (none).
    await Promise.all([
      db.sql`select pg_sleep(0.4)`,
      db.sql`select count(*) from generate_series(1, 3000000)`,
    ]);
    await sampler.stop();
    const { samples, active, by } = sampler.counts;
    expect(samples).toBeGreaterThan(5);
    expect(by['Timeout:PgSleep']).toBeGreaterThan(5);
    expect(by.CPU).toBeGreaterThan(0);
    expect(active).toBeLessThanOrEqual(2 * samples);
    // Stopped: nothing more is counted.
    await db.sql`select pg_sleep(0.2)`;
    expect(sampler.counts.samples).toBe(samples);
  });
});
