import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../supabase/migrations');
const MIGRATION_FILE = /^(\d{14})_(.+)\.sql$/;

export interface MigrationResult {
  applied: string[];
  skipped: number;
}

/** The version of the migration that replaced the first 30 (squashed before the first release). */
export const BASELINE_VERSION = '20261124000000';

/**
 * A database migrated with the history the baseline replaced has every object already but not
 * the baseline's record, and applying the baseline over it would fail halfway. Say what to do.
 */
function refuseSquashedHistory(done: Set<string>, files: string[]): void {
  if (done.size === 0 || done.has(BASELINE_VERSION)) return;
  if (![...done].some((version) => version < BASELINE_VERSION)) return;
  if (!files.some((file) => file.startsWith(`${BASELINE_VERSION}_`))) return;
  throw new Error(
    'This database was migrated with the migration history that was squashed into ' +
      `${BASELINE_VERSION}_baseline.sql before the first release, so it cannot be upgraded in place. ` +
      'For the embedded development database, stop the API and delete its data directory ' +
      '(EMBEDDED_PG_DATA_DIR, default .data/postgres); the next `npm start` recreates it with the demo content. ' +
      'For a database whose data you must keep, dump the data, recreate the database, apply the migrations and restore the data.',
  );
}

/**
 * Applies pending files of supabase/migrations, each in its own transaction, recording them in
 * `supabase_migrations.schema_migrations` exactly as the supabase CLI does, so
 * `supabase migration up --remote` and this runner agree on what is applied.
 */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  // Nothing here outlives a transaction, so the runner works through a transaction pooler
  // (Supavisor's port 6543) as well as directly: no prepared statements, and concurrent starters
  // (two API instances) queue on a transaction-level advisory lock, taken by every transaction.
  const sql = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => undefined });
  const locked = <T>(work: (tx: postgres.TransactionSql) => Promise<T>) =>
    sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext('sparkpath.migrate'))`;
      return work(tx);
    }) as Promise<T>;
  try {
    const done = await locked(async (tx) => {
      await tx.unsafe(`
        create schema if not exists supabase_migrations;
        create table if not exists supabase_migrations.schema_migrations (version text not null primary key);
        alter table supabase_migrations.schema_migrations add column if not exists statements text[];
        alter table supabase_migrations.schema_migrations add column if not exists name text;
      `);
      return new Set((await tx<{ version: string }[]>`select version from supabase_migrations.schema_migrations`).map((r) => r.version));
    });
    const files = (await readdir(dir)).filter((f) => MIGRATION_FILE.test(f)).sort();
    refuseSquashedHistory(done, files);
    const applied: string[] = [];
    for (const file of files) {
      const [, version, name] = MIGRATION_FILE.exec(file)!;
      if (done.has(version)) continue;
      const text = await readFile(path.join(dir, file), 'utf8');
      const ran = await locked(async (tx) => {
        // Another starter may have applied it while this one waited for the lock.
        const [recorded] = await tx`select 1 from supabase_migrations.schema_migrations where version = ${version}`;
        if (recorded) return false;
        await tx.unsafe(text);
        await tx`insert into supabase_migrations.schema_migrations (version, name, statements)
                 values (${version}, ${name}, ${[text]})`;
        return true;
      });
      if (ran) applied.push(file);
    }
    return { applied, skipped: files.length - applied.length };
  } finally {
    await sql.end();
  }
}
