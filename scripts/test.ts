/**
 * `npm test`: everything that must be true before a change lands, against a real PostgreSQL.
 *
 *   1. pgTAP, PostgreSQL 15, chromium and pgbouncer are installed (Debian packages); pgTAP is
 *      visible to the embedded PostgreSQL 17 and 18 builds (scripts/postgres-servers.ts)
 *   2. a throwaway PostgreSQL 18 cluster with the migrated template database
 *   3. supabase/migrations give exactly the catalog supabase/schemas gives
 *   4. pgTAP suite (supabase/tests) through pg_prove: on 18 with and without supabase/seed.sql;
 *      on a vanilla 15 the migration runner migrated; on Supabase-shaped 15 and 17 databases
 *      after `supabase db push --include-seed`, as `supabase test db` runs it, with proof that
 *      the push left Supabase's objects as they were (scripts/supabase-platform.ts)
 *   5. `supabase db advisors`: nothing at WARN or ERROR
 *   6. src/db/database.types.ts matches `supabase gen types`; TypeScript typecheck
 *   7. vitest (HTTP, e2e, property tests), each file on its own clone of the template; the HTTP
 *      tests twice, the second time through the Data API transport (vitest project data-api)
 *   8. reliability suite, short form (test/reliability: live API processes and databases, a standby)
 *
 * Ends with one line `N passed, N failed` counting every test and check.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { committedDatabaseTypes, generateDatabaseTypes } from './db-types.js';
import { ensureChromium } from './chromium.js';
import { ensurePgbouncer } from './pgbouncer.js';
import { ensurePgtap } from './pgtap.js';
import { enableLocalApiLogin } from '../src/db/login-role.js';
import { migrate } from '../src/db/migrate.js';
import { DEBIAN_15, embedded17, embedded18, startPostgres } from './postgres-servers.js';
import { buildFromSchemas, catalogDifferences, diffDatabases, dropDatabase, lineDifferences } from './schema-catalog.js';
import { authUid, PERMITTED_PLATFORM_CHANGES, platformState, startSupabaseShaped } from './supabase-platform.js';
import { startTestCluster, TEMPLATE_DB, withDatabase } from './test-database.js';

const root = path.resolve(import.meta.dirname, '..');
const artifacts = path.join(root, 'test-artifacts');
const seedFile = path.join(root, 'supabase/seed.sql');
mkdirSync(artifacts, { recursive: true });
const tally = { passed: 0, failed: 0 };
const failures: string[] = [];
const log = (line: string) => console.log(`\n== ${line}`);

function record(name: string, passed: number, failed: number) {
  tally.passed += passed;
  tally.failed += failed;
  if (failed > 0) failures.push(`${name}: ${failed} failed`);
}

/**
 * Runs a step and collects its output, without blocking the event loop: the throwaway cluster's
 * PostgreSQL writes its log into a pipe this process drains, and a blocked loop lets that pipe
 * fill, after which every backend that logs (any ERROR) stalls, and so does DROP DATABASE.
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stderr.write(chunk);
    });
    child.on('error', (error) => resolve({ status: 1, output: `${output}${error.message}` }));
    child.on('close', (code) => resolve({ status: code ?? 1, output }));
  });
}

log('pgTAP and PostgreSQL 15 (Debian), pgTAP for the embedded 17 and 18');
const [build17, build18] = await Promise.all([embedded17(), embedded18()]);
ensurePgtap((line) => console.log(line), [build17.extensionDir, build18.extensionDir]);
log('chromium (browser tests)');
ensureChromium((line) => console.log(line));
log('pgbouncer (the transaction-pooler test)');
ensurePgbouncer((line) => console.log(line));

log('starting a throwaway PostgreSQL and migrating the template database');
const cluster = await startTestCluster();
try {
  const env = { TEST_ADMIN_DATABASE_URL: cluster.adminUrl, TEST_TEMPLATE_READY: '1' };

  log('supabase/migrations give exactly the catalog of supabase/schemas');
  const schemasDb = 'sparkpath_schemas';
  try {
    const schemasUrl = await buildFromSchemas(cluster.adminUrl, schemasDb);
    // The template is a local development database (src/db/login-role.ts): so is this one.
    await enableLocalApiLogin(schemasUrl);
    const differences = await catalogDifferences(cluster.templateUrl, schemasUrl);
    const statements = await diffDatabases(cluster.templateUrl, schemasUrl);
    for (const line of differences.slice(0, 50)) console.log(line.slice(0, 400));
    if (statements !== '') console.log(`statements that would make them agree:\n${statements.slice(0, 4000)}`);
    const agree = differences.length === 0 && statements === '';
    if (!agree) console.log('supabase/schemas and supabase/migrations disagree: run `npm run db:diff -- <name>` (or fix the schema file)');
    record('schema files match migrations', agree ? 1 : 0, agree ? 0 : 1);
  } catch (error) {
    console.log(`could not build the schema files: ${(error as Error).message}`);
    record('schema files match migrations', 0, 1);
  } finally {
    await dropDatabase(cluster.adminUrl, schemasDb);
  }

  // The pgTAP suite on the embedded PostgreSQL 18 as its superuser, twice: on the empty catalog the
  // HTTP tests start from, and with supabase/seed.sql loaded (the files make their own fixtures
  // beside the seed's). Each file runs in its own transaction and rolls back;
  // 00-test-helpers.test.sql installs the shared `tests` helpers first, for every run alike.
  for (const seeded of [true, false]) {
    const name = `PostgreSQL 18, ${seeded ? 'with seed' : 'without seed'}`;
    log(`pgTAP suite (supabase/tests), ${name}`);
    const database = seeded ? 'sparkpath_pgtap_seeded' : 'sparkpath_pgtap';
    await createPgtapDatabase(cluster.adminUrl, database, seeded);
    await proveSuite(name, withDatabase(cluster.adminUrl, database), { searchPath: true });
  }

  // PostgreSQL 15 as a DATABASE_URL meets it: a vanilla server, the migrations applied by this
  // project's runner (`npm run db:migrate`) as its superuser.
  log(`PostgreSQL 15 (${DEBIAN_15.source}): the migrations apply, pgTAP suite without seed`);
  await onServer('PostgreSQL 15', () => startPostgres(DEBIAN_15), async (server) => {
    const url = withDatabase(server.adminUrl, 'sparkpath');
    await createDatabase(server.adminUrl, 'sparkpath');
    await migrate(url);
    record('migrations apply (PostgreSQL 15)', 1, 0);
    await createPgtap(url);
    await proveSuite('PostgreSQL 15, without seed', url, { searchPath: true });
  });

  // A Supabase-shaped database on the two majors hosted Supabase runs. The migrations and the
  // seed arrive by `supabase db push`, as on a hosted project; then the suite runs the way
  // `supabase test db` runs it after `supabase db reset`: pgTAP created in `extensions`, pg_prove
  // as postgres (no superuser there) with its role's search_path, on the seeded database.
  for (const build of [DEBIAN_15, build17]) {
    const name = `Supabase-shaped PostgreSQL ${build.major}`;
    log(`${name} (${build.source}): supabase db push --include-seed, Supabase's objects untouched, pgTAP as postgres`);
    await onServer(name, () => startSupabaseShaped(build), async (project) => {
      const before = await platformState(project.adminUrl);
      const push = await run('npx', ['--no-install', 'supabase', 'db', 'push', `--remote=${project.url}`, '--include-seed', '--yes']);
      if (push.status !== 0) throw new Error('supabase db push failed');
      record(`supabase db push applies the migrations and the seed (${name})`, 1, 0);
      const changed = lineDifferences(before, await platformState(project.adminUrl));
      const unexpected = changed.filter((line) => !PERMITTED_PLATFORM_CHANGES.some((permitted) => permitted.test(line)));
      console.log(`changed of Supabase's: ${changed.length === 0 ? 'nothing' : `\n  ${changed.join('\n  ')}`}`);
      if (unexpected.length > 0) console.log(`not permitted (supabase/schemas/01-platform.sql says what may change):\n  ${unexpected.join('\n  ')}`);
      record(`Supabase's roles, schemas and privileges untouched (${name})`, unexpected.length === 0 ? 1 : 0, unexpected.length === 0 ? 0 : 1);
      const uid = await authUid(project.adminUrl);
      const supabases = uid.owner === 'supabase_auth_admin' && uid.definitions === 1 && uid.gotrues;
      if (!supabases) console.log(`auth.uid() is not Supabase's own: ${JSON.stringify(uid)}`);
      record(`auth.uid() is Supabase's, the shim's never created (${name})`, supabases ? 1 : 0, supabases ? 0 : 1);
      await createPgtap(project.adminUrl);
      await proveSuite(`${name}, with seed, as postgres`, project.url, { searchPath: false });
    });
  }

  log('supabase db advisors (nothing at WARN or ERROR)');
  const advisors = await run('npx', ['--no-install', 'supabase', 'db', 'advisors', `--remote=${cluster.templateUrl}`, '--yes', '--level', 'warn', '--fail-on', 'warn']);
  record('supabase db advisors', advisors.status === 0 ? 1 : 0, advisors.status === 0 ? 0 : 1);

  log('database types are up to date (src/db/database.types.ts)');
  const fresh = generateDatabaseTypes(cluster.templateUrl);
  const typesCurrent = fresh === committedDatabaseTypes();
  if (!typesCurrent) console.log('src/db/database.types.ts is stale: run `npm run db:types` and commit the result');
  record('database types', typesCurrent ? 1 : 0, typesCurrent ? 0 : 1);

  log('TypeScript typecheck');
  const tsc = await run('npx', ['--no-install', 'tsc', '-p', '.']);
  record('typecheck', tsc.status === 0 ? 1 : 0, tsc.status === 0 ? 0 : 1);

  log('vitest');
  const report = path.join(artifacts, 'vitest.json');
  const vitest = await run('npx', ['--no-install', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], env);
  try {
    const results = JSON.parse(readFileSync(report, 'utf8')) as { numPassedTests: number; numFailedTests: number; numFailedTestSuites: number };
    record('vitest', results.numPassedTests, results.numFailedTests + results.numFailedTestSuites);
  } catch {
    record('vitest', 0, 1);
  }
  if (vitest.status !== 0 && !failures.some((f) => f.startsWith('vitest'))) record('vitest exit status', 0, 1);
} finally {
  await cluster.stop();
}

// Live processes with their own throwaway databases: soak, outage, shutdown, hostile input, auth
// abuse, two instances on one database, a read replica. The short form keeps this step to a few
// minutes (about four on a loaded 2-core machine).
log('reliability suite, short form (test/reliability; `npm run test:reliability` is the long form)');
const reliabilityReport = path.join(artifacts, 'reliability.json');
const reliability = await run('npx', ['--no-install', 'vitest', 'run', '-c', 'vitest.reliability.config.ts', '--reporter=default', '--reporter=json', `--outputFile.json=${reliabilityReport}`], { RELIABILITY_MODE: 'short' });
try {
  const results = JSON.parse(readFileSync(reliabilityReport, 'utf8')) as { numPassedTests: number; numFailedTests: number; numFailedTestSuites: number };
  record('reliability', results.numPassedTests, results.numFailedTests + results.numFailedTestSuites);
} catch {
  record('reliability', 0, 1);
}
if (reliability.status !== 0 && !failures.some((f) => f.startsWith('reliability'))) record('reliability exit status', 0, 1);

if (failures.length > 0) console.log(`\nFailures:\n  ${failures.join('\n  ')}`);
console.log(`\n${tally.passed} passed, ${tally.failed} failed`);
process.exit(tally.failed > 0 ? 1 : 0);

/**
 * Starts a server, works on it and stops it. A server that does not start, or work that throws,
 * is one failed check named after `name` (the checks the work recorded before stay counted).
 */
async function onServer<T extends { stop(): Promise<void> }>(
  name: string,
  start: () => Promise<T>,
  work: (started: T) => Promise<void>,
) {
  let started: T;
  try {
    started = await start();
  } catch (error) {
    console.log(`${name} did not start: ${(error as Error).message}`);
    record(`${name} starts`, 0, 1);
    return;
  }
  try {
    await work(started);
  } catch (error) {
    console.log(`${name}: ${(error as Error).message}`);
    record(name, 0, 1);
  } finally {
    await started.stop();
  }
}

/**
 * The pgTAP suite against `url`, one pg_prove per file (so a file that dies midway counts its
 * unrun tests as failures), each test recorded under `name`. With `searchPath`, the connection
 * puts `extensions` on the search_path (pgTAP lives there), as Supabase's postgres role does.
 */
async function proveSuite(name: string, url: string, options: { searchPath: boolean }) {
  const parsed = new URL(url);
  const pgEnv = {
    PGHOST: parsed.hostname,
    PGPORT: parsed.port,
    PGUSER: decodeURIComponent(parsed.username),
    PGPASSWORD: decodeURIComponent(parsed.password),
    PGDATABASE: parsed.pathname.slice(1),
    PGOPTIONS: options.searchPath ? '-c search_path=public,extensions' : '',
  };
  const testFiles = readdirSync(path.join(root, 'supabase/tests')).filter((f) => f.endsWith('.sql')).sort();
  for (const file of testFiles) {
    const prove = await run('pg_prove', ['--verbose', path.join('supabase/tests', file)], pgEnv);
    const planned = Number(/^1\.\.(\d+)/m.exec(prove.output)?.[1] ?? 0);
    const ok = [...prove.output.matchAll(/^ok \d+/gm)].length;
    const notOk = [...prove.output.matchAll(/^not ok \d+/gm)].length;
    const failed = notOk + Math.max(planned - ok - notOk, 0) + (prove.status !== 0 && notOk === 0 && planned <= ok ? 1 : 0);
    record(`pgTAP ${file} (${name})`, ok, failed);
  }
}

async function createDatabase(adminUrl: string, database: string, template?: string) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists ${database} with (force)`);
    await admin.unsafe(`create database ${database}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
}

/** As `supabase test db` does before running the files. */
async function createPgtap(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql.unsafe('create extension if not exists pgtap with schema extensions');
  } finally {
    await sql.end();
  }
}

/**
 * A database for the pgTAP suite: a clone of the migrated template with pgTAP, and with
 * supabase/seed.sql loaded when `seeded`.
 */
async function createPgtapDatabase(adminUrl: string, database: string, seeded: boolean) {
  await createDatabase(adminUrl, database, TEMPLATE_DB);
  const url = withDatabase(adminUrl, database);
  await createPgtap(url);
  if (!seeded) return;
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql.begin((tx) => tx.unsafe(readFileSync(seedFile, 'utf8')));
  } finally {
    await sql.end();
  }
}
