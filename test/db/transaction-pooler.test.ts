import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { withDatabase } from '../../scripts/test-database.js';
import { loadConfig } from '../../src/config.js';
import { connectionMode } from '../../src/db/connection-mode.js';
import { migrate } from '../../src/db/migrate.js';
import { createDependencies } from '../../src/deps.js';
import { createTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { hasPgbouncer, startPgbouncer, type Pgbouncer } from '../helpers/pgbouncer.js';
import { startServer } from '../helpers/server-process.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';

describe('DB_PREPARE', () => {
  it('auto turns prepared statements off on Supavisor\'s transaction port only; true and false decide', () => {
    const pooler = 'postgres://postgres.abcdefghijklmnopqrst:pw@aws-0-eu-west-1.pooler.supabase.com:6543/postgres';
    const session = 'postgres://postgres.abcdefghijklmnopqrst:pw@aws-0-eu-west-1.pooler.supabase.com:5432/postgres';
    const direct = 'postgres://postgres:pw@db.abcdefghijklmnopqrst.supabase.co/postgres';
    expect(connectionMode(pooler, 'auto')).toEqual({ prepare: false, transactionPooler: true, reason: "DB_PREPARE=auto, database on port 6543 (Supavisor's transaction mode)" });
    expect(connectionMode(session, 'auto')).toMatchObject({ prepare: true, transactionPooler: false });
    expect(connectionMode(direct, 'auto')).toEqual({ prepare: true, transactionPooler: false, reason: 'DB_PREPARE=auto, database on port 5432' });
    expect(connectionMode(direct, 'false')).toMatchObject({ prepare: false, transactionPooler: true });
    expect(connectionMode(pooler, 'true')).toMatchObject({ prepare: true, transactionPooler: true });
    expect(() => loadConfig({ DB_PREPARE: 'maybe' })).toThrow('Invalid configuration: DB_PREPARE');
  });
});

// PgBouncer in transaction mode stands in for Supavisor's port 6543 (test/helpers/pgbouncer.ts):
// it passes no start-up parameters on, and no transaction finds what an earlier one left on
// its server connection.
describe.skipIf(!hasPgbouncer)('behind a transaction pooler', () => {
  const adminUrl = inject('adminDatabaseUrl');
  let bouncer: Pgbouncer;
  const dropped: string[] = [];

  /** An empty database of the test cluster, dropped after the file. */
  async function emptyDatabase() {
    const name = `pooler_${randomBytes(5).toString('hex')}`;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    dropped.push(name);
    return withDatabase(adminUrl, name);
  }

  beforeAll(async () => {
    bouncer = await startPgbouncer(adminUrl);
  });
  afterAll(async () => {
    await bouncer?.stop();
    const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
    for (const name of dropped) await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it('the server migrates, seeds and serves through it, and says at start-up what it chose and which settings did not arrive', async () => {
    const url = bouncer.through(await emptyDatabase());
    const server = await startServer({ DATABASE_URL: url, DB_PREPARE: 'false', SUPABASE_JWT_SECRET: TEST_JWT_SECRET, JWT_ISSUER: 'https://api.example.com' });
    try {
      expect(server.lines.find((l) => l.msg === 'database ready')).toMatchObject({ embedded: false, demo_content_loaded: true });
      expect(server.lines.find((l) => l.msg === 'database connection')).toMatchObject({ prepared_statements: false, transaction_pooler: true, reason: `DB_PREPARE=false, database on port ${new URL(url).port}` });
      expect(server.lines.some((l) => String(l.msg).startsWith('transaction pooler: the API listens for no notifications'))).toBe(true);
      expect(server.lines.find((l) => l.level === 40 && String(l.msg).includes('did not receive these connection settings'))).toMatchObject({
        missing: [
          { name: 'statement_timeout', expected: '5000', actual: '0' },
          { name: 'sparkpath.token_issuer', expected: 'https://api.example.com', actual: null },
          { name: 'sparkpath.home_page', expected: 'http://localhost:3000', actual: null },
        ],
        fix: [
          `alter role current_user set "statement_timeout" = '5000'`,
          `alter role current_user set "sparkpath.token_issuer" = 'https://api.example.com'`,
          `alter role current_user set "sparkpath.home_page" = 'http://localhost:3000'`,
        ],
      });
      const domains = await fetch(`${server.baseUrl}/discovery/domains`);
      expect(domains.status).toBe(200);
      expect(((await domains.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    } finally {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);

  it('sign-in, the session check, refresh and logout work with DB_PREPARE=false; with prepared statements the second sign-in fails', async () => {
    const db = await createTestDatabase();
    const t = await createTestApp({ DB_PREPARE: 'false' }, { database: { ...db, url: bouncer.through(db.url) } });
    const prepared = createDependencies({ ...t.config, DB_PREPARE: 'true' }, bouncer.through(db.url));
    try {
      const identity = () => ({ provider: 'github', providerUserId: randomUUID(), email: `${randomUUID()}@example.com`, displayName: 'Pooled', avatarUrl: null });
      const meta = { userAgent: null, ipAddress: null };
      for (let i = 0; i < 3; i += 1) {
        const { tokens } = await t.deps.auth.signIn(identity(), meta);
        const bearer = { Authorization: `Bearer ${tokens.access_token}` };
        expect((await t.app.request('/user/me/journeys', { headers: bearer })).status).toBe(200);
        expect((await (await t.app.request('/auth/session', { headers: bearer })).json()).authenticated).toBe(true);
        const refreshed = await t.app.request('/auth/refresh', { method: 'POST', body: JSON.stringify({ refresh_token: tokens.refresh_token }), headers: { 'content-type': 'application/json' } });
        expect(refreshed.status).toBe(200);
        const next = { Authorization: `Bearer ${(await refreshed.json()).access_token}` };
        expect((await t.app.request('/auth/logout', { method: 'POST', headers: next })).status).toBe(200);
        expect((await t.app.request('/user/me/journeys', { headers: next })).status).toBe(401);
      }

      await prepared.auth.signIn(identity(), meta);
      await expect(prepared.auth.signIn(identity(), meta)).rejects.toMatchObject({ code: '26000' });
    } finally {
      await prepared.close();
      await t.close();
    }
  });

  it('settings on the API login role reach through the pooler where start-up parameters do not', async () => {
    const missing = async (url: string) => {
      const deps = createDependencies(loadConfig({ NODE_ENV: 'test', DB_PREPARE: 'false', SUPABASE_JWT_SECRET: TEST_JWT_SECRET }), bouncer.through(url));
      try {
        return (await deps.pool.missingSettings()).map((setting) => setting.name);
      } finally {
        await deps.close();
      }
    };
    const [plain, fixed] = [await emptyDatabase(), await emptyDatabase()];
    expect(await missing(plain)).toEqual(['statement_timeout', 'sparkpath.token_issuer', 'sparkpath.home_page']);
    // The fix the start-up warning gives, scoped to one database so no other test sees it; made
    // before the pooler's first server connection to it, since role settings apply at login.
    const direct = postgres(fixed, { max: 1, onnotice: () => undefined });
    const database = new URL(fixed).pathname.slice(1);
    await direct.unsafe(`alter role current_user in database ${database} set statement_timeout = '5000'`);
    await direct.unsafe(`alter role current_user in database ${database} set "sparkpath.token_issuer" = 'sparkpath'`);
    await direct.unsafe(`alter role current_user in database ${database} set "sparkpath.home_page" = 'http://localhost:3000'`);
    await direct.end();
    expect(await missing(fixed)).toEqual([]);
  });

  it('two instances starting at once through the pooler apply each migration exactly once', async () => {
    const url = bouncer.through(await emptyDatabase());
    const [first, second] = await Promise.all([migrate(url), migrate(url)]);
    const all = [...first.applied, ...second.applied].sort();
    expect(all.length).toBeGreaterThan(0);
    expect(new Set(all).size).toBe(all.length);
    expect((await migrate(url)).applied).toEqual([]);
  });
});
