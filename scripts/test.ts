/**
 * `npm test`: everything that must be true before a change lands, against a real PostgreSQL.
 *
 *   1. pgTAP, chromium and pgbouncer are installed (Debian packages); pgTAP is visible to the embedded PostgreSQL
 *   2. a throwaway cluster with the migrated template database
 *   3. supabase/migrations give exactly the catalog supabase/schemas gives
 *   4. pgTAP suite (supabase/tests) through pg_prove, on the seeded and on the empty catalog
 *   5. `supabase db advisors`: nothing at WARN or ERROR
 *   6. src/db/database.types.ts matches `supabase gen types`; TypeScript typecheck
 *   7. vitest (HTTP, e2e, property tests), each file on its own clone of the template
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
import { buildFromSchemas, catalogDifferences, diffDatabases, dropDatabase } from './schema-catalog.js';
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

log('pgTAP');
await ensurePgtap((line) => console.log(line));
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

  // Twice: on the seeded catalog, as `supabase test db` runs after `supabase db reset` (the
  // files must not collide with supabase/seed.sql), and on the empty catalog the HTTP tests
  // start from. Each file runs in its own transaction and rolls back; 00-test-helpers.test.sql
  // installs the shared `tests` helpers first, for both runs alike.
  for (const seeded of [true, false]) {
    const name = seeded ? 'with seed' : 'without seed';
    log(`pgTAP suite (supabase/tests), ${name}`);
    const database = seeded ? 'sparkpath_pgtap_seeded' : 'sparkpath_pgtap';
    await createPgtapDatabase(cluster.adminUrl, database, seeded);
    const url = new URL(cluster.adminUrl);
    const pgEnv = {
      PGHOST: url.hostname,
      PGPORT: url.port,
      PGUSER: decodeURIComponent(url.username),
      PGPASSWORD: decodeURIComponent(url.password),
      PGDATABASE: database,
      PGOPTIONS: '-c search_path=public,extensions',
    };
    const testFiles = readdirSync(path.join(root, 'supabase/tests')).filter((f) => f.endsWith('.sql')).sort();
    // One pg_prove per file, so a file that dies midway counts its unrun tests as failures.
    for (const file of testFiles) {
      const prove = await run('pg_prove', ['--verbose', path.join('supabase/tests', file)], pgEnv);
      const planned = Number(/^1\.\.(\d+)/m.exec(prove.output)?.[1] ?? 0);
      const ok = [...prove.output.matchAll(/^ok \d+/gm)].length;
      const notOk = [...prove.output.matchAll(/^not ok \d+/gm)].length;
      const failed = notOk + Math.max(planned - ok - notOk, 0) + (prove.status !== 0 && notOk === 0 && planned <= ok ? 1 : 0);
      record(`pgTAP ${file} (${name})`, ok, failed);
    }
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
 * A database for the pgTAP suite: a clone of the migrated template with pgTAP, and with
 * supabase/seed.sql loaded when `seeded` (what `supabase db reset` leaves behind).
 */
async function createPgtapDatabase(adminUrl: string, database: string, seeded: boolean) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists ${database} with (force)`);
    await admin.unsafe(`create database ${database} template ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const sql = postgres(withDatabase(adminUrl, database), { max: 1, onnotice: () => undefined });
  try {
    // As `supabase test db` does; the request roles' execute grant comes from 00-test-helpers.
    await sql.unsafe('create extension if not exists pgtap with schema extensions');
    if (seeded) await sql.begin((tx) => tx.unsafe(readFileSync(seedFile, 'utf8')));
  } finally {
    await sql.end();
  }
}
