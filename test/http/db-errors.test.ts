import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromDatabaseError } from '../../src/http/database-errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The error a statement fails with, as postgres.js delivers it. */
async function failure(query: string): Promise<unknown> {
  try {
    await db.sql.unsafe(query);
  } catch (error) {
    return error;
  }
  throw new Error(`expected ${query} to fail`);
}

describe('database errors', () => {
  it('shows the message and JSON detail of errors our SQL raised', async () => {
    const error = await failure(
      `do $$ begin raise exception using errcode = '22023', message = 'verb must be one of the learning verbs', detail = '{"field":"verb"}'; end $$`,
    );
    expect((error as { routine?: string }).routine).toBe('exec_stmt_raise');
    expect(fromDatabaseError(error)?.toEnvelope()).toEqual({
      error: { code: 'VALIDATION_ERROR', message: 'verb must be one of the learning verbs', details: { field: 'verb' } },
    });
  });

  it.each([
    ['23514 check_violation', `insert into app.rate_limit_counters values (repeat('z', 300), now(), 1)`, 'VALIDATION_ERROR', 400],
    ['22P02 invalid_text_representation', `select 'not-a-uuid'::uuid`, 'VALIDATION_ERROR', 400],
    ['23505 unique_violation', `insert into app.rate_limit_counters values ('k', 'epoch', 1), ('k', 'epoch', 1)`, 'CONFLICT', 409],
    ['23503 foreign_key_violation', `insert into app.refresh_tokens (session_id, token_hash) values (gen_random_uuid(), repeat('a', 64))`, 'VALIDATION_ERROR', 400],
    ['22P05 untranslatable_character', `select '"a\\u0000b"'::jsonb`, 'VALIDATION_ERROR', 400],
  ])('answers a built-in %s with its code, a generic message and no details', async (_name, query, code, status) => {
    const error = await failure(query);
    expect((error as { routine?: string }).routine).not.toBe('exec_stmt_raise');
    const api = fromDatabaseError(error)!;
    expect(api.code).toBe(code);
    expect(api.status).toBe(status);
    expect(api.details).toEqual({});
    const text = JSON.stringify(api.toEnvelope());
    for (const leak of ['rate_limit_counters', 'Failing row', 'zzz', 'not-a-uuid', 'refresh_tokens', 'session_id', 'constraint', 'jsonb']) {
      expect(text).not.toContain(leak);
    }
  });

  it('leaves unmapped built-in errors to the INTERNAL_ERROR handler', async () => {
    expect(fromDatabaseError(await failure('select 1/0'))).toBeUndefined();
  });
});
