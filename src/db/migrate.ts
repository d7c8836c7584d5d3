import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../supabase/migrations');
const MIGRATION_FILE = /^(\d{14})_(.+)\.sql$/;

export interface MigrationResult {
  applied: string[];
  skipped: number;
}

/**
 * Applies pending files of supabase/migrations, each in its own transaction, recording them in
 * `supabase_migrations.schema_migrations` exactly as the supabase CLI does, so
 * `supabase migration up --remote` and this runner agree on what is applied.
 */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    // Serialise concurrent starters (two API instances) on one advisory lock.
    await sql`select pg_advisory_lock(hashtext('sparkpath.migrate'))`;
    await sql.unsafe(`
      create schema if not exists supabase_migrations;
      create table if not exists supabase_migrations.schema_migrations (version text not null primary key);
      alter table supabase_migrations.schema_migrations add column if not exists statements text[];
      alter table supabase_migrations.schema_migrations add column if not exists name text;
    `);
    const done = new Set(
      (await sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations`).map((r) => r.version),
    );
    const files = (await readdir(dir)).filter((f) => MIGRATION_FILE.test(f)).sort();
    const applied: string[] = [];
    for (const file of files) {
      const [, version, name] = MIGRATION_FILE.exec(file)!;
      if (done.has(version)) continue;
      const text = await readFile(path.join(dir, file), 'utf8');
      await sql.begin(async (tx) => {
        await tx.unsafe(text);
        await tx`insert into supabase_migrations.schema_migrations (version, name, statements)
                 values (${version}, ${name}, ${[text]})`;
      });
      applied.push(file);
    }
    return { applied, skipped: files.length - applied.length };
  } finally {
    await sql.end();
  }
}
