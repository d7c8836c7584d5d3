import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { TEMPLATE_DB, withDatabase } from '../../scripts/test-database.js';

export interface TestDatabase {
  url: string;
  /** Superuser connection for arranging data and asserting on tables directly. */
  sql: postgres.Sql;
  drop(): Promise<void>;
}

/** A fresh database cloned from the migrated template: private to the calling test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database ${name} template ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const sql = postgres(url, { max: 4, onnotice: () => undefined });
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
