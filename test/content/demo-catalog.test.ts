import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentBundleSchema, type ContentBundle } from '../../src/content/bundle-schema.js';
import { prepareDatabase } from '../../src/db/database.js';
import { DEMO_DIR, DEMO_SEED_PLAN } from '../../src/content/seed-sql.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const load = async (file: string) => ContentBundleSchema.parse(JSON.parse(await readFile(path.join(DEMO_DIR, file), 'utf8')));

function depth(bundle: ContentBundle): number {
  const edges = (bundle.spark_links ?? []).filter((l) => (l.type ?? 'prerequisite') === 'prerequisite');
  const memo = new Map<string, number>();
  const into = new Map<string, string[]>();
  for (const e of edges) into.set(e.target, [...(into.get(e.target) ?? []), e.source]);
  const d = (n: string): number => {
    if (!memo.has(n)) memo.set(n, Math.max(0, ...(into.get(n) ?? []).map((s) => d(s) + 1)));
    return memo.get(n)!;
  };
  return Math.max(...(bundle.sparks ?? []).map((s) => d(s.slug)));
}

describe('demo catalog', () => {
  it('the current bundle meets the catalog brief', async () => {
    const current = await load('2-current.json');
    expect(new Set(current.domains?.map((d) => d.category)).size).toBeGreaterThanOrEqual(2);
    expect(current.domains?.length).toBeGreaterThanOrEqual(4);
    expect(current.trails?.length).toBeGreaterThanOrEqual(12);
    expect(new Set(current.trails?.map((t) => t.difficulty_level ?? null))).toEqual(new Set(['beginner', 'intermediate', 'advanced', 'expert', null]));
    expect(current.concepts?.length).toBeGreaterThanOrEqual(40);
    expect(current.sparks?.length).toBeGreaterThanOrEqual(150);
    expect(current.beacons?.length).toBeGreaterThanOrEqual(12);
    expect(depth(current)).toBeGreaterThanOrEqual(4);
    expect(current.spark_links?.some((l) => l.type === 'related')).toBe(true);
    expect(current.sparks?.every((s) => (s.summary ?? '').length > 20)).toBe(true);
  });

  it('the archived version differs visibly from the current one', async () => {
    const [archived, current] = await Promise.all([load('1-archived.json'), load('2-current.json')]);
    expect(archived.domains?.length).toBeLessThan(current.domains?.length ?? 0);
    expect(archived.domains?.find((d) => d.slug === 'data-and-ai')?.name).not.toBe(current.domains?.find((d) => d.slug === 'data-and-ai')?.name);
  });

  describe('seeded into an empty database', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(() => db.drop());

    it('prepareDatabase loads supabase/seed.sql: one archived, one current and one draft snapshot', async () => {
      expect((await prepareDatabase(db.url, { seed: true })).seeded).toBe(true);
      const rows = await db.sql`
        select s.name, s.status, p.name as parent,
               (select count(*)::int from app.sparks x where x.snapshot_id = s.id) as sparks
        from app.snapshots s left join app.snapshots p on p.id = s.parent_snapshot_id
        order by s.created_at`;
      expect(rows.map((r) => [r.status, r.parent])).toEqual([
        ['archived', null],
        ['published', 'Autumn 2026 launch'],
        ['draft', 'Winter 2026 catalog'],
      ]);
      const bundles = await Promise.all(DEMO_SEED_PLAN.map((step) => load(step.file)));
      expect(rows.map((r) => r.sparks)).toEqual(bundles.map((b) => b.sparks?.length));
      expect((await prepareDatabase(db.url, { seed: true })).seeded).toBe(false);
    });
  });
});
