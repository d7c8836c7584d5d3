import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { writeSchemaDiff } from '../../scripts/db-diff.js';

const root = path.resolve(import.meta.dirname, '../..');
const temps: string[] = [];
// One diff builds two databases from scratch: about 17 s on a 2-core machine at a load of 8.
const DIFF_TIMEOUT_MS = 60_000;

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

// Each test builds two to four databases from the whole schema: minutes, not seconds, on a loaded machine.
describe('npm run db:diff', { timeout: 180_000 }, () => {
  it('writes nothing when supabase/schemas and supabase/migrations agree', async () => {
    const { schemasDir, migrationsDir } = await copies();
    const before = await readdir(migrationsDir);
    const file = await writeSchemaDiff({ name: 'nothing', schemasDir, migrationsDir, adminUrl: inject('adminDatabaseUrl') });
    expect(file).toBeUndefined();
    expect(await readdir(migrationsDir)).toEqual(before);
  }, DIFF_TIMEOUT_MS);

  it('writes a migration that redefines a changed function and its comment, which then brings the two in agreement', async () => {
    const { schemasDir, migrationsDir } = await copies();
    const metadata = path.join(schemasDir, '03-metadata.sql');
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
  }, 2 * DIFF_TIMEOUT_MS);

  it("writes a new function's grants and takes PUBLIC's execute from it, as the schema files do (migra carries neither)", async () => {
    const { schemasDir, migrationsDir } = await copies();
    const metadata = path.join(schemasDir, '03-metadata.sql');
    await writeFile(
      metadata,
      `${await readFile(metadata, 'utf8')}
create or replace function api.count_difficulty_levels() returns integer language sql stable set search_path = ''
as $$ select pg_catalog.count(*)::integer from app.difficulty_levels $$;
grant execute on function api.count_difficulty_levels() to anon, authenticated;
`,
    );
    const adminUrl = inject('adminDatabaseUrl');

    const file = await writeSchemaDiff({ name: 'count_levels', schemasDir, migrationsDir, adminUrl });
    const migration = await readFile(file!, 'utf8');
    expect(migration).toMatch(/create or replace function api\.count_difficulty_levels\(\)/i);
    const privileges = migration.split('\n').filter((line) => /^(grant|revoke) /.test(line));
    expect(privileges).toEqual([
      'revoke all on function api.count_difficulty_levels() from public;',
      'grant execute on function api.count_difficulty_levels() to anon;',
      'grant execute on function api.count_difficulty_levels() to authenticated;',
    ]);

    expect(await writeSchemaDiff({ name: 'again', schemasDir, migrationsDir, adminUrl })).toBeUndefined();
  }, 2 * DIFF_TIMEOUT_MS);

  it('carries what migra leaves out besides routine privileges: routine settings, a column grant, and the options of a view it rewrites', async () => {
    const { schemasDir, migrationsDir } = await copies();
    const journeys = path.join(schemasDir, '10-journeys.sql');
    const text = await readFile(journeys, 'utf8');
    const changed = text
      .replace('where le.user_id = js.user_id and le.spark_id = js.spark_id and le.voided_at is null\n) p;',
               'where le.user_id = js.user_id and le.spark_id = js.spark_id and le.voided_at is null and le.verb <> \'\'\n) p;')
      .replace("stable\nrows 1\nset search_path = ''\n", "stable\nrows 1\nset search_path = app, private\nset work_mem to '8MB'\n")
      .concat(`
grant update (recorded_at) on app.learning_events to authenticated;
`);
    expect(changed).not.toBe(text);
    await writeFile(journeys, changed);
    const learning = path.join(schemasDir, '14-learning.sql');
    const learningText = await readFile(learning, 'utf8');
    const withoutSetting = learningText.replace("(the caller, snapshot and trail are parameters).\nset plan_cache_mode to 'force_generic_plan'\n",
      '(the caller, snapshot and trail are parameters).\n');
    expect(withoutSetting).not.toBe(learningText);
    await writeFile(learning, withoutSetting);
    const adminUrl = inject('adminDatabaseUrl');

    const file = await writeSchemaDiff({ name: 'probe', schemasDir, migrationsDir, adminUrl });
    const migration = await readFile(file!, 'utf8');
    expect(migration).toMatch(/create or replace view "app"."journey_spark_progress"/i);
    expect(migration).toContain('alter view app.journey_spark_progress set (security_invoker=true);');
    expect(migration).toContain('grant update (recorded_at) on table app.learning_events to authenticated;');
    // Reset and set again in the schema file's order: the definitions list them in that order.
    expect(migration).toContain([
      'alter function private.journey_trail(trail_id uuid) reset all;',
      'alter function private.journey_trail(trail_id uuid) set search_path to app, private;',
      "alter function private.journey_trail(trail_id uuid) set work_mem to '8MB';",
    ].join('\n'));
    expect(migration).toContain([
      'alter function api.list_next_sparks(trail text, limit_count integer) reset all;',
      "alter function api.list_next_sparks(trail text, limit_count integer) set search_path to '';",
    ].join('\n'));
    expect(await writeSchemaDiff({ name: 'again', schemasDir, migrationsDir, adminUrl })).toBeUndefined();
  }, 2 * DIFF_TIMEOUT_MS);
});
