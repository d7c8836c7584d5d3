import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

// supabase/config.toml is what `supabase start` runs (Docker; not here) and what `supabase config
// push` sends to a project (network; not here). What runs here: the CLI itself loading and
// validating it, as every command does, in `supabase db push --dry-run` against a database
// migrated as a project would be, and the settings read back from the file.

const root = path.resolve(import.meta.dirname, '../..');
const configFile = path.join(root, 'supabase/config.toml');
const run = promisify(execFile);

interface Config {
  api: { schemas: string[] };
  db: { migrations: { schema_paths: string[] }; seed: { enabled: boolean; sql_paths: string[] } };
  auth: {
    additional_redirect_urls: string[];
    hook: { custom_access_token: { enabled: boolean; uri: string } };
    external: Record<string, { enabled: boolean; client_id: string; secret: string }>;
  };
}

/** `supabase db push --dry-run` from `workdir`, against `url`: loads and validates config.toml first. */
async function dryRunPush(workdir: string, url: string, env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run('npx', ['--no-install', 'supabase', 'db', 'push', '--dry-run', `--remote=${url}`, '--workdir', workdir], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('supabase/config.toml', () => {
  let db: TestDatabase;
  let config: Config;

  beforeAll(async () => {
    db = await createTestDatabase();
    config = parse(await readFile(configFile, 'utf8')) as unknown as Config;
  });
  afterAll(() => db?.drop());

  it('the supabase CLI loads and validates it, and finds the project\'s database up to date', async () => {
    const result = await dryRunPush(root, db.url, { GOOGLE_CLIENT_ID: 'google-client', GOOGLE_CLIENT_SECRET: 'g', GITHUB_CLIENT_ID: 'github-client', GITHUB_CLIENT_SECRET: 'h' });
    expect(result.output).toContain('Remote database is up to date');
    expect(result.ok).toBe(true);
  }, 60_000);

  it('a broken setting stops the CLI (the check above can fail)', async () => {
    const workdir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-config-'));
    try {
      await cp(path.join(root, 'supabase'), path.join(workdir, 'supabase'), { recursive: true });
      const broken = (await readFile(configFile, 'utf8')).replace(/^uri = "pg-functions:\/\/.*"$/m, 'uri = "private.custom_access_token_hook"');
      await writeFile(path.join(workdir, 'supabase/config.toml'), broken);
      const result = await dryRunPush(workdir, db.url);
      expect(result.ok).toBe(false);
      expect(result.output).toContain('Invalid hook config: auth.hook.custom_access_token.uri');
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }
  }, 60_000);

  it('enables the custom access token hook, naming the function the migrations create for supabase_auth_admin', async () => {
    const hook = config.auth.hook.custom_access_token;
    expect(hook.enabled).toBe(true);
    const [, database, schema, name] = /^pg-functions:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(hook.uri)!;
    expect(database).toBe('postgres');
    const signature = `${schema}.${name}(jsonb)`;
    const [row] = await db.sql`
      select pg_catalog.has_function_privilege('supabase_auth_admin', ${signature}, 'execute') as granted,
             pg_catalog.has_function_privilege('authenticated', ${signature}, 'execute') as exposed`;
    expect(row).toEqual({ granted: true, exposed: false });
  });

  it('enables Google and GitHub with credentials read from the environment', () => {
    for (const provider of ['google', 'github'] as const) {
      const upper = provider.toUpperCase();
      expect(config.auth.external[provider]).toMatchObject({ enabled: true, client_id: `env(${upper}_CLIENT_ID)`, secret: `env(${upper}_CLIENT_SECRET)` });
    }
    // Where Supabase Auth may send the browser back: AUTH_CALLBACK_URL's default (the explorer's
    // callback page, on the default port) and the API's own callback.
    expect(config.auth.additional_redirect_urls).toContain('http://localhost:3000/explore/callback');
    expect(config.auth.additional_redirect_urls).toContain('http://127.0.0.1:3000/auth/callback');
  });

  it('exposes the api schema only, declares the schema files and seeds the demo catalog', async () => {
    expect(config.api.schemas).toEqual(['api']);
    expect(config.db.migrations.schema_paths).toEqual(['./schemas/*.sql']);
    expect(config.db.seed).toEqual({ enabled: true, sql_paths: ['./seed.sql'] });
    expect((await readFile(path.join(root, 'supabase/seed.sql'), 'utf8')).length).toBeGreaterThan(0);
  });
});
