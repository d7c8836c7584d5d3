import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertCatalog } from '../helpers/content.js';

describe('test content builder', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('inserts a catalog into one snapshot and keeps entity ids across snapshots', async () => {
    const spec = {
      categories: [{ slug: 'tech' }],
      domains: [{ slug: 'data', category: 'tech', trails: [{ slug: 'sql-basics', concepts: [{ slug: 'select', sparks: ['select-star', 'where'] }] }] }],
      spark_links: [{ source: 'select-star', target: 'where' }],
    };
    const first = await insertCatalog(db.sql, spec);
    const second = await insertCatalog(db.sql, spec, { ids: first.ids });
    const [counts] = await db.sql`select
      (select count(*)::int from app.sparks where snapshot_id = ${second.snapshotId}) as sparks,
      (select count(*)::int from app.spark_links where snapshot_id = ${second.snapshotId}) as links,
      (select status from app.snapshots where id = ${first.snapshotId}) as first_status`;
    expect(counts).toEqual({ sparks: 2, links: 1, first_status: 'archived' });
    expect(second.id('spark', 'where')).toBe(first.id('spark', 'where'));
  });
});
