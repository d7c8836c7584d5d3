import { afterEach, describe, expect, it } from 'vitest';
import { BASELINE_VERSION, migrate } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase | undefined;
afterEach(async () => {
  await db?.drop();
  db = undefined;
});

describe('migrations', () => {
  it('a migrated database has nothing pending and records the baseline', async () => {
    db = await createTestDatabase();
    const result = await migrate(db.url);
    expect(result.applied).toEqual([]);
    const rows = await db.sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations`;
    expect(rows.map((r) => r.version)).toContain(BASELINE_VERSION);
  });

  it('refuses a database migrated with the squashed history and says what to do', async () => {
    db = await createTestDatabase();
    // What a .data/postgres migrated before the squash holds: the old versions, no baseline.
    await db.sql`delete from supabase_migrations.schema_migrations`;
    await db.sql`insert into supabase_migrations.schema_migrations (version, name)
                 values ('20261122000100', 'supabase_platform'), ('20261123000100', 'user_progress_notify')`;
    await expect(migrate(db.url)).rejects.toThrow(/squashed into 20261124000000_baseline\.sql.*delete its data directory \(EMBEDDED_PG_DATA_DIR, default \.data\/postgres\)/s);
    const [{ count }] = await db.sql<{ count: number }[]>`select count(*)::int as count from supabase_migrations.schema_migrations`;
    expect(count).toBe(2);
  });
});
