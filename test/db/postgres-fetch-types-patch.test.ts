/**
 * postgres.js 3.4.9 runs a query for the array types as the first statement of every new
 * connection and drops its promise: when that query fails, Node sees an unhandled rejection and
 * exits (porsager/postgres#1192). The API died that way in an outage test, its pool being
 * replaced while Postgres restarted. patches/postgres+3.4.9.patch handles the promise; these
 * tests fail if `npm ci` did not apply it.
 *
 * The failure is made certain, not timed: in a scratch database `pg_type` is not readable by a
 * plain login role, so the types query fails on every connection that role opens. The client
 * runs in a child process, as the API does, so an unhandled rejection ends it as it would end
 * the API.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../../scripts/test-database.js';

const run = promisify(execFile);
const adminUrl = inject('adminDatabaseUrl');
const suffix = randomBytes(5).toString('hex');
const database = `fetch_types_${suffix}`;
const role = `fetch_types_${suffix}`;
const password = randomBytes(12).toString('hex');

// Opens one connection and runs `select 1` twice. postgres.js fails the connection's first
// query with the types query's error; the second runs as usual. `import` loads the ESM build
// (src/), `require` the CommonJS one (cjs/src/).
const client = (load: string) => `
  ${load}
  const sql = postgres(process.env.URL, { max: 1, onnotice: () => undefined });
  const first = await sql\`select 1 as one\`.then(() => 'answered', (error) => error.code);
  const [second] = await sql\`select 1 as one\`;
  await sql.end();
  console.log(JSON.stringify({ first, second }));`;
const builds = {
  src: { args: ['--input-type=module', '-e', client("import postgres from 'postgres';")] },
  'cjs/src': { args: ['-e', `(async () => { ${client("const postgres = require('postgres');")} })()`] },
};

describe('postgres.js array-types query failing', () => {
  let url: string;

  beforeAll(async () => {
    const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
    try {
      await admin.unsafe(`create role ${role} login password '${password}'`);
      await admin.unsafe(`create database ${database}`);
    } finally {
      await admin.end();
    }
    const scratch = postgres(withDatabase(adminUrl, database), { max: 1, onnotice: () => undefined });
    try {
      await scratch.unsafe('revoke select on pg_catalog.pg_type from public');
    } finally {
      await scratch.end();
    }
    const target = new URL(withDatabase(adminUrl, database));
    target.username = role;
    target.password = password;
    url = target.href;
  });
  afterAll(async () => {
    const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
    await admin.unsafe(`drop database if exists ${database} with (force)`);
    await admin.unsafe(`drop role if exists ${role}`);
    await admin.end();
  });

  it.each(Object.keys(builds) as (keyof typeof builds)[])('fails one query, not the process (%s)', async (build) => {
    const { stdout } = await run(process.execPath, builds[build].args, { env: { ...process.env, URL: url }, timeout: 20_000 });
    expect(JSON.parse(stdout.trim())).toEqual({ first: '42501', second: { one: 1 } });
  });

  it('is patched in the Cloudflare build too (it cannot run under Node)', async () => {
    const root = path.resolve(path.dirname(createRequire(import.meta.url).resolve('postgres')), '../..');
    for (const build of ['src', 'cjs/src', 'cf/src']) {
      const source = await readFile(path.join(root, build, 'connection.js'), 'utf8');
      expect(source, build).toContain('return fetchArrayTypes().catch(() => undefined)');
    }
  });
});
