import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

function token(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, ['--import', 'tsx', 'src/cli/token.ts', ...args], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'development', DATABASE_URL: t.db.url, SUPABASE_JWT_SECRET: TEST_JWT_SECRET, SEED_DEMO_CONTENT: 'false', LOG_LEVEL: 'silent', ...env },
  });
}

describe('auth routes: npm run token', () => {
  it('creates the user once and prints tokens that work against the API', async () => {
    const first = JSON.parse((await token(['--email', 'Cli@Example.com', '--role', 'admin', '--plan', 'premium'])).stdout);
    expect(first).toMatchObject({ email: 'cli@example.com', is_new_user: true, expires_in: 3600 });
    expect(decodeJwt(first.access_token)).toMatchObject({ user_role: 'admin', subscription_plan: 'premium', sub: first.user_id });
    const state = await (await t.app.request('/auth/session', { headers: { Authorization: `Bearer ${first.access_token}` } })).json();
    expect(state).toMatchObject({ authenticated: true, user: { id: first.user_id, provider: 'dev' } });
    const refreshed = await t.app.request('/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: first.refresh_token }) });
    expect(refreshed.status).toBe(200);

    const second = JSON.parse((await token(['--email', 'cli@example.com'])).stdout);
    expect(second).toMatchObject({ user_id: first.user_id, is_new_user: false });
    expect(decodeJwt(second.access_token)).toMatchObject({ user_role: 'admin', subscription_plan: 'premium' });
  }, 60_000);

  it('is refused when NODE_ENV=production', async () => {
    await expect(token(['--email', 'prod@example.com'], { NODE_ENV: 'production' })).rejects.toMatchObject({
      stderr: expect.stringContaining('refused when NODE_ENV=production'),
    });
    expect((await t.db.sql`select count(*)::int as n from app.users where email = 'prod@example.com'`)[0].n).toBe(0);
  }, 60_000);

  it('prints its usage for --help, and names an unknown option without a stack trace', async () => {
    expect((await token(['--help'])).stdout).toContain('usage: npm run token -- --email');
    const failure = await token(['--emial', 'x@example.com']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("Unknown option '--emial'");
    expect(failure?.stderr).toContain('usage: npm run token');
    expect(failure?.stderr).not.toMatch(/\bat .*token\.ts:\d+/);
  }, 60_000);
});
