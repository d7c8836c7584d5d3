/**
 * `npm run content -- <command>`: the content operator's tool.
 *
 *   import <bundle.json|-> [--promote] [--name N] [--version-label V] [--description D] [--json]
 *   promote <snapshot-id> [--import <import-id>]      (also: promote --import <import-id> <snapshot-id>)
 *   rollback [<snapshot-id>]                          (default: back to the current snapshot's parent)
 *   list [--json]
 *   generate --sparks N [--seed S] [--name N] [--version-label V]   > bundle.json
 *   seed-sql                                          regenerate supabase/seed.sql from content/demo
 *   schema                                            regenerate docs/content-bundle.schema.json
 *
 * Database commands use DATABASE_URL, or the embedded PostgreSQL (reusing it when the server
 * already runs it). Progress goes to stderr; results to stdout.
 */
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { bundleJsonSchema } from '../content/bundle-schema.js';
import { generateBundle } from '../content/generate.js';
import { importBundleFile, importPhaseFromNotice, listContent, promoteSnapshot, rollbackSnapshot, vacuumContent, type ImportEvent, type ImportOutcome } from '../content/operations.js';
import { buildSeedSql } from '../content/seed-sql.js';
import { importProgress } from './import-progress.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const SCHEMA_FILE = path.join(ROOT, 'docs/content-bundle.schema.json');
export const SEED_FILE = path.join(ROOT, 'supabase/seed.sql');

const USAGE = `usage: npm run content -- <command>
  import <bundle.json|-> [--promote] [--name N] [--version-label V] [--description D] [--json]
  promote <snapshot-id> [--import <import-id>]
  rollback [<snapshot-id>]
  list [--json]
  generate --sparks N [--seed S] [--name N] [--version-label V]
  seed-sql
  schema`;

class UsageError extends Error {}

/** Imports at least this large are followed by VACUUM ANALYZE of the content tables. */
const VACUUM_FROM_SPARKS = 10_000;

export interface CliIo {
  out: (text: string) => void | Promise<void>;
  err: (line: string) => void;
  /** Progress bars are drawn here when it is a terminal; otherwise progress is one JSON line per phase on `err`. */
  terminal?: NodeJS.WriteStream;
}

const defaultIo: CliIo = {
  out: async (text) => {
    if (!process.stdout.write(text)) await once(process.stdout, 'drain');
  },
  err: (line) => process.stderr.write(`${line}\n`),
  terminal: process.stderr,
};

/** Runs one CLI command; resolves to the exit code. `connect` opens the database lazily. */
export async function runContentCli(argv: string[], io: CliIo = defaultIo, connect: () => Promise<Connection> = connectDatabase): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      promote: { type: 'boolean', default: false },
      name: { type: 'string' },
      'version-label': { type: 'string' },
      description: { type: 'string' },
      import: { type: 'string' },
      json: { type: 'boolean', default: false },
      sparks: { type: 'string' },
      seed: { type: 'string', default: 'sparkpath' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    io.err(USAGE);
    return values.help ? 0 : 2;
  }

  switch (command) {
    case 'generate': {
      const sparks = Number(values.sparks);
      if (!values.sparks || !Number.isInteger(sparks) || sparks < 1 || sparks > 10_000_000) {
        throw new UsageError('generate needs --sparks N (a whole number from 1 to 10,000,000)');
      }
      for (const chunk of generateBundle({ sparks, seed: values.seed, name: values.name, versionLabel: values['version-label'] })) await io.out(chunk);
      return 0;
    }
    case 'schema':
      await writeFile(SCHEMA_FILE, bundleJsonSchema());
      io.err(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)}`);
      return 0;
    case 'seed-sql':
      await writeFile(SEED_FILE, await buildSeedSql());
      io.err(`wrote ${path.relative(process.cwd(), SEED_FILE)}`);
      return 0;
    case 'import':
    case 'promote':
    case 'rollback':
    case 'list':
      break;
    default:
      throw new UsageError(`unknown command "${command}"\n${USAGE}`);
  }

  const connection = await connect();
  try {
    const sql = connection.sql;
    if (command === 'import') {
      const file = rest[0];
      if (!file) throw new UsageError('import needs a bundle file (or - for stdin)');
      const progress = importProgress({ terminal: io.terminal, line: io.err }, ['validate', 'write', 'derive', ...(values.promote ? ['promote'] : [])]);
      const stopListening = connection.onNotice((notice) => {
        const event = importPhaseFromNotice(notice);
        if (event) progress.onEvent(event);
      });
      let outcome: ImportOutcome;
      try {
        outcome = await importBundleFile(sql, file, {
          name: values.name,
          versionLabel: values['version-label'],
          description: values.description,
          promote: values.promote,
          progress: progress.onEvent,
        });
        if (outcome.status === 'succeeded' && (outcome.counts?.sparks ?? 0) >= VACUUM_FROM_SPARKS) {
          const began = Date.now();
          progress.onEvent({ phase: 'vacuum', state: 'started' });
          await vacuumContent(sql);
          progress.onEvent({ phase: 'vacuum', state: 'finished', ms: Date.now() - began } satisfies ImportEvent);
        }
      } finally {
        progress.done();
        stopListening();
      }
      await io.out(values.json ? `${JSON.stringify(outcome, null, 2)}\n` : describeImport(outcome));
      if (outcome.status === 'failed') {
        for (const problem of outcome.error?.problems ?? []) io.err(`  ${problem.path}: ${problem.message}`);
        const listed = outcome.error?.problems?.length ?? 0;
        const total = outcome.error?.problem_count ?? listed;
        if (total > listed) io.err(`  … and ${total - listed} more`);
        return 1;
      }
      return 0;
    }
    if (command === 'promote') {
      const snapshotId = rest[0];
      if (!snapshotId) throw new UsageError('promote needs a snapshot id');
      const result = await promoteSnapshot(sql, snapshotId, values.import);
      await io.out(`promoted ${result.snapshot_id}; it is now current${result.previous_snapshot_id ? ` (archived ${result.previous_snapshot_id})` : ''}\n`);
      return 0;
    }
    if (command === 'rollback') {
      const result = await rollbackSnapshot(sql, rest[0]);
      await io.out(`rolled back to ${result.snapshot_id}; it is now current${result.previous_snapshot_id ? ` (archived ${result.previous_snapshot_id})` : ''}\n`);
      return 0;
    }
    const listing = await listContent(sql);
    if (values.json) {
      await io.out(`${JSON.stringify(listing, null, 2)}\n`);
      return 0;
    }
    const lines = ['snapshots (newest first):'];
    if (listing.snapshots.length === 0) lines.push('  (none)');
    for (const s of listing.snapshots) {
      const c = s.entity_counts;
      lines.push(
        `  ${s.id}  ${s.status.padEnd(9)}  ${s.version_label}  ${s.name}`,
        `      ${c.domains} domains, ${c.trails} trails, ${c.concepts} concepts, ${c.sparks} sparks, ${c.spark_links} spark links · created ${s.created_at}${s.published_at ? ` · published ${s.published_at}` : ''}${s.parent_snapshot_id ? ` · parent ${s.parent_snapshot_id}` : ''}`,
      );
    }
    lines.push('recent imports:');
    if (listing.imports.length === 0) lines.push('  (none)');
    for (const i of listing.imports) {
      lines.push(`  ${i.id}  ${i.status.padEnd(9)}  ${i.version_label ?? '-'}  ${i.snapshot_id ?? '(no snapshot)'}  ${i.timings.total_ms ?? '?'} ms${i.error ? `  ${i.error}` : ''}`);
    }
    await io.out(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await connection.close();
  }
}

function describeImport(outcome: ImportOutcome): string {
  if (outcome.status === 'failed') return `import ${outcome.import_id} failed: ${outcome.error?.message}\n`;
  const counts = Object.entries(outcome.counts ?? {})
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  return `import ${outcome.import_id} succeeded: snapshot ${outcome.snapshot_id} (${outcome.snapshot_status}) in ${outcome.timings?.total_ms} ms\n  ${counts}\n`;
}

export interface Connection {
  sql: postgres.Sql;
  /** Listens to the connection's notices (the import's phases); returns the unsubscribe. */
  onNotice(listener: (notice: postgres.Notice) => void): () => void;
  close(): Promise<void>;
}

/** A one-connection client whose notices can be listened to; `stop` runs after it ends. */
export function openConnection(url: string, stop: () => Promise<void> = async () => undefined): Connection {
  const listeners = new Set<(notice: postgres.Notice) => void>();
  const sql = postgres(url, {
    max: 1,
    // No prepared statements: the CLI may run through a transaction pooler (docs/supabase.md).
    prepare: false,
    onnotice: (notice) => listeners.forEach((listener) => listener(notice)),
    connection: { application_name: 'sparkpath-content-cli' },
  });
  return {
    sql,
    onNotice(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      await sql.end();
      await stop();
    },
  };
}

/**
 * DATABASE_URL, or the embedded database: reused when it already answers (the server is
 * running), started otherwise. Pending migrations are applied first; the demo seed is not.
 */
async function connectDatabase(): Promise<Connection> {
  const config = loadConfig();
  let url = config.DATABASE_URL;
  let stop = async () => undefined as void;
  if (!url) {
    const running = `postgres://postgres:postgres@127.0.0.1:${config.EMBEDDED_PG_PORT}/sparkpath`;
    if (await answers(running)) url = running;
    else {
      process.stderr.write(`starting the embedded database in ${config.EMBEDDED_PG_DATA_DIR}\n`);
      const database = await openDatabase(config);
      url = database.url;
      stop = database.stop;
    }
  }
  await migrate(url);
  return openConnection(url, stop);
}

async function answers(url: string): Promise<boolean> {
  const probe = postgres(url, { max: 1, prepare: false, connect_timeout: 1, onnotice: () => undefined });
  try {
    await probe`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = await runContentCli(process.argv.slice(2));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const detail = (error as { detail?: string }).detail;
    process.stderr.write(`content: ${message}${detail ? `\n  ${detail}` : ''}\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
