import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_LOGIN_ROLE } from '../../src/db/login-role.js';
import { createPostgresRateLimitStore } from '../../src/db/rate-limit-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * The API's login role over a real login connection (DATABASE_API_URL), as the API's pool logs in:
 * it cannot become the owner, cannot read a table, and runs everything the API needs.
 * (supabase/tests/05-login-role-cannot-escape-its-request-role.test.sql states the catalog facts.)
 */
describe('the API login role', () => {
  let t: TestApp;
  let login: postgres.Sql;

  beforeAll(async () => {
    t = await createTestApp();
    login = postgres(t.apiUrl, { max: 1, onnotice: () => undefined });
  });
  afterAll(async () => {
    await login?.end();
    await t?.close();
  });

  const sqlstate = (query: Promise<unknown>) => query.then(() => 'ok', (error: { code?: string }) => error.code);

  it('logs in as sparkpath_api, which is no superuser', async () => {
    const [row] = await login<{ session_user: string; superuser: boolean }[]>`
      select session_user, (select rolsuper from pg_roles where rolname = session_user) as superuser`;
    expect(row).toEqual({ session_user: API_LOGIN_ROLE, superuser: false });
  });

  it('reads no app table as itself', async () => {
    for (const table of ['app.users', 'app.sessions', 'app.enrollments', 'app.learning_events', 'app.snapshots', 'app.service_auth_digest']) {
      expect(await sqlstate(login.unsafe(`select count(*) from ${table}`)), table).toBe('42501');
    }
  });

  it('cannot become the owner, neither as itself nor from inside a request role', async () => {
    expect(await sqlstate(login`set role postgres`)).toBe('42501');
    expect(await sqlstate(login`set session authorization postgres`)).toBe('42501');
    expect(await sqlstate(login`set role service_role`)).toBe('42501');
    for (const requestRole of ['anon', 'authenticated']) {
      const escapes = await login.begin(async (tx) => {
        await tx`select set_config('role', ${requestRole}, true)`;
        const [{ role }] = await tx<{ role: string }[]>`select current_user as role`;
        const viaSetConfig = await sqlstate(tx.savepoint((sp) => sp`select set_config('role', 'postgres', true)`));
        const viaSetRole = await sqlstate(tx.savepoint((sp) => sp`set local role postgres`));
        const viaAuthorization = await sqlstate(tx.savepoint((sp) => sp`set local session authorization postgres`));
        return { role, viaSetConfig, viaSetRole, viaAuthorization };
      });
      expect(escapes).toEqual({ role: requestRole, viaSetConfig: '42501', viaSetRole: '42501', viaAuthorization: '42501' });
    }
  });

  it('runs a request through the dispatcher, and the sign-in, rate-limit and cleanup functions', async () => {
    const [{ body }] = await login<{ body: string }[]>`select private.dispatch('anon', '', 'api.get_metadata()', '{}') as body`;
    expect(JSON.parse(body)).toHaveProperty('difficulty_levels');
    await t.deps.sessionStore.ready();
    await expect(t.deps.cleanup()).resolves.toMatchObject({ sessions_deactivated: expect.any(Number), oauth_attempts_deleted: expect.any(Number) });
    const store = createPostgresRateLimitStore(t.deps.pool);
    expect((await store.hit('login-role-test', 60_000)).count).toBe(1);
    expect((await store.peek('login-role-test', 60_000)).count).toBe(1);
    await expect(store.purge()).resolves.toEqual(expect.any(Number));
  });

  it('may not run what only the owner runs', async () => {
    expect(await sqlstate(login`select private.set_service_auth_digest(null)`)).toBe('42501');
    expect(await sqlstate(login`select api.get_metadata()`)).toBe('42501');
  });

  it('nothing a request role NOTIFYs reaches the API: it LISTENs on no channel', () => {
    // NOTIFY needs no privilege, so any role may send on any channel; the API answers from the
    // database on every request instead of trusting a notification (docs/architecture.md).
    const src = path.resolve(import.meta.dirname, '../../src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    // postgres.js's sql.listen() or a LISTEN statement; an HTTP server's listen() is no channel.
    const listening = files.filter((f) => /(?<!server)\.listen\(|\blisten\s+[a-z_"]/i.test(readFileSync(path.join(src, f), 'utf8')));
    expect(files.length).toBeGreaterThan(20);
    expect(listening).toEqual([]);
  });
});
