import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { TEMPLATE_DB, withDatabase } from '../../scripts/test-database.js';
import { migrate } from '../../src/db/migrate.js';

export interface TestDatabase {
  url: string;
  /** Superuser connection for arranging data and asserting on tables directly. */
  sql: postgres.Sql;
  drop(): Promise<void>;
}

/**
 * A fresh database cloned from the migrated template: private to the calling test file.
 * With `beforeMigrations`, an empty database instead, where that runs first and the migrations
 * after, as on a platform that brings schemas of its own (Supabase Auth's auth.users).
 */
export async function createTestDatabase(options: { beforeMigrations?: (sql: postgres.Sql) => Promise<void> } = {}): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(options.beforeMigrations ? `create database ${name}` : `create database ${name} template ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const sql = postgres(url, { max: 4, onnotice: () => undefined });
  if (options.beforeMigrations) {
    await options.beforeMigrations(sql);
    await migrate(url);
  }
  return {
    url,
    sql,
    async drop() {
      await sql.end();
      const cleanup = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      try {
        await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}
