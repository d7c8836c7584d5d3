import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { writeSchemaDiff } from '../../scripts/db-diff.js';

const root = path.resolve(import.meta.dirname, '../..');
const temps: string[] = [];

/** Copies of supabase/schemas and supabase/migrations that a test may change. */
async function copies() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-db-diff-test-'));
  temps.push(dir);
  const schemasDir = path.join(dir, 'schemas');
  const migrationsDir = path.join(dir, 'migrations');
  await cp(path.join(root, 'supabase/schemas'), schemasDir, { recursive: true });
  await cp(path.join(root, 'supabase/migrations'), migrationsDir, { recursive: true });
  return { schemasDir, migrationsDir };
}

afterEach(async () => {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

// Each diff builds two databases (one from the schema files, one from every migration) and
// compares them: seconds apiece, and more with every migration, so not the default 30 s.
describe('npm run db:diff', { timeout: 180_000 }, () => {
  it('writes nothing when supabase/schemas and supabase/migrations agree', async () => {
    const { schemasDir, migrationsDir } = await copies();
    const before = await readdir(migrationsDir);
    const file = await writeSchemaDiff({ name: 'nothing', schemasDir, migrationsDir, adminUrl: inject('adminDatabaseUrl') });
    expect(file).toBeUndefined();
    expect(await readdir(migrationsDir)).toEqual(before);
  });

  it('writes a migration that redefines a changed function and its comment, which then brings the two in agreement', async () => {
    const { schemasDir, migrationsDir } = await copies();
    const metadata = path.join(schemasDir, '02-metadata.sql');
    const text = await readFile(metadata, 'utf8');
    const changed = text
      .replace("order by d.sort_order), '[]'::jsonb))\n  from app.difficulty_levels d", "order by d.sort_order desc), '[]'::jsonb))\n  from app.difficulty_levels d")
      .replace("'Difficulty levels in order.", "'Difficulty levels, hardest first.");
    expect(changed).not.toBe(text);
    await writeFile(metadata, changed);
    const adminUrl = inject('adminDatabaseUrl');

    const file = await writeSchemaDiff({ name: 'hardest_first', schemasDir, migrationsDir, adminUrl });
    expect(file).toMatch(/\/\d{14}_hardest_first\.sql$/);
    const migration = await readFile(file!, 'utf8');
    expect(migration).toMatch(/create or replace function api\.list_difficulty_levels\(\)/i);
    expect(migration).toContain('order by d.sort_order desc');
    expect(migration).toContain("comment on function api.list_difficulty_levels() is 'Difficulty levels, hardest first.");
    expect(migration).not.toMatch(/api\.get_metadata/);

    // With the new migration applied, the schema files add nothing more.
    expect(await writeSchemaDiff({ name: 'again', schemasDir, migrationsDir, adminUrl })).toBeUndefined();
  });
});
