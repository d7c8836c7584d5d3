import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type postgres from 'postgres';
import { itemProblems, type BundleProblem } from './bundle-schema.js';
import { BundleSyntaxError, readBundleItems } from './bundle-reader.js';

/**
 * The snapshot lifecycle as the CLI (and tests) drive it. Every step is one SQL function in
 * `private` (supabase/schemas/05-lifecycle.sql); this module only streams the
 * bundle into the database and reports.
 */

export interface ImportOptions {
  name?: string;
  versionLabel?: string;
  description?: string;
  promote?: boolean;
  /**
   * Where the import is, phase by phase: the CLI draws a progress bar from these on a terminal
   * and prints one structured line per finished phase otherwise. Setting it also asks the
   * database for its phases (`sparkpath.import_progress`); they arrive as notices on the
   * connection, which the caller hands to `importPhaseFromNotice`.
   */
  progress?: (event: ImportEvent) => void;
  /** Characters in the source, when known (a file): the read phase's total. */
  size?: number;
}

/** Phases in order: the CLI reads and stages, the database validates, writes, derives, promotes. */
export const IMPORT_PHASES = ['read', 'validate', 'write', 'derive', 'promote', 'vacuum'] as const;
export type ImportPhase = (typeof IMPORT_PHASES)[number];

export interface ImportEvent {
  phase: ImportPhase;
  /** `progress` only while reading: `characters` of `size` read, `items` staged so far. */
  state: 'started' | 'progress' | 'finished';
  ms?: number;
  characters?: number;
  size?: number;
  items?: number;
  /** Rows per kind: bundle elements when reading, table rows when writing. */
  counts?: Record<string, number>;
  [figure: string]: unknown;
}

/** The database's phase notices (private.report_import_phase) as events; undefined for any other notice. */
export function importPhaseFromNotice(notice: { message?: string; detail?: string }): ImportEvent | undefined {
  if (notice.message !== 'import phase' || !notice.detail) return undefined;
  return JSON.parse(notice.detail) as ImportEvent;
}

export interface ImportOutcome {
  import_id: string;
  status: 'succeeded' | 'failed';
  snapshot_id: string | null;
  parent_snapshot_id?: string | null;
  snapshot_status?: 'draft' | 'published';
  counts?: Record<string, number>;
  timings?: Record<string, number>;
  error?: { code: string; message: string; problems?: (BundleProblem & { cycle?: string[] })[]; problem_count?: number };
}

/** How many schema problems the CLI keeps in the error record (all are counted). */
const MAX_LISTED_PROBLEMS = 1000;
const COPY_BATCH_CHARS = 1 << 20;
/** Read progress is reported at most this often. */
const PROGRESS_EVERY_MS = 100;

class SchemaProblems extends Error {
  constructor(readonly problems: BundleProblem[], readonly total: number, readonly snapshotMeta: Record<string, unknown>) {
    super(`the content bundle has ${total} problem${total === 1 ? '' : 's'}`);
  }
}

/** COPY text format: backslash, tab, newline and carriage return are escaped. */
const copyField = (text: string) =>
  text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));

/**
 * Imports a bundle read from `source` into a new draft snapshot (promoted with `promote`).
 * The bundle is parsed as a stream (memory bounded by its largest element); each element is
 * checked against the zod schema and COPYed into a staging table in 1 MB batches; the database
 * then validates the whole bundle and writes it set-based, in the same transaction. Every
 * failure is recorded in app.content_imports and returned, never thrown.
 */
export async function importBundle(sql: postgres.Sql, source: AsyncIterable<string | Buffer>, options: ImportOptions = {}): Promise<ImportOutcome> {
  const progress = options.progress ?? (() => undefined);
  const startedAt = new Date();
  const began = Date.now();
  try {
    return await sql.begin(async (tx) => {
      if (options.progress) await tx`select pg_catalog.set_config('sparkpath.import_progress', 'on', true)`;
      await tx`select private.begin_content_staging()`;
      const copy = await tx`copy pg_temp.content_bundle_items (kind, position, item) from stdin`.writable();
      const problems: BundleProblem[] = [];
      let problemTotal = 0;
      let snapshotMeta: Record<string, unknown> = {};
      const counts: Record<string, number> = {};
      let items = 0;
      let batch = '';
      const read = { characters: 0 };
      let reported = 0;
      const flush = async () => {
        if (batch === '') return;
        const ok = copy.write(batch);
        batch = '';
        if (!ok) await once(copy, 'drain');
      };
      progress({ phase: 'read', state: 'started', size: options.size });
      try {
        for await (const item of readBundleItems(source, read)) {
          for (const problem of itemProblems(item.key, item.position, item.value)) {
            problemTotal++;
            if (problems.length < MAX_LISTED_PROBLEMS) problems.push(problem);
          }
          if (item.key === 'snapshot' && item.value && typeof item.value === 'object') snapshotMeta = item.value as Record<string, unknown>;
          batch += `${copyField(item.key)}\t${item.position}\t${copyField(JSON.stringify(item.value))}\n`;
          items++;
          counts[item.key] = (counts[item.key] ?? 0) + 1;
          if (batch.length >= COPY_BATCH_CHARS) {
            await flush();
            if (Date.now() - reported >= PROGRESS_EVERY_MS) {
              reported = Date.now();
              progress({ phase: 'read', state: 'progress', characters: read.characters, size: options.size, items });
            }
          }
        }
        await flush();
        copy.end();
        await finished(copy);
      } catch (error) {
        copy.destroy();
        throw error;
      }
      progress({ phase: 'read', state: 'finished', ms: Date.now() - began, characters: read.characters, size: options.size, items, counts, problems: problemTotal });
      if (problemTotal > 0) throw new SchemaProblems(problems, problemTotal, snapshotMeta);
      const [row] = await tx<{ result: ImportOutcome }[]>`
        select private.import_staged_content(
          ${options.name ?? null}, ${options.versionLabel ?? null}, ${options.description ?? null}, ${options.promote ?? false}
        ) as result`;
      return row.result;
    });
  } catch (error) {
    if (!(error instanceof SchemaProblems) && !(error instanceof BundleSyntaxError)) throw error;
    const meta = error instanceof SchemaProblems ? error.snapshotMeta : {};
    const failure =
      error instanceof SchemaProblems
        ? { code: '22023', message: error.message, problem_count: error.total, problems: error.problems }
        : { code: '22P02', message: error.message, problem_count: 1, problems: [{ path: '$', message: error.message }] };
    const name = options.name ?? (typeof meta.name === 'string' ? meta.name : null);
    const versionLabel = options.versionLabel ?? (typeof meta.version_label === 'string' ? meta.version_label : null);
    // Its own statement, after the rollback: the attempt is on record, no content is.
    const [row] = await sql<{ id: string }[]>`
      select private.record_failed_import(${name}, ${versionLabel}, ${sql.json(failure as unknown as postgres.JSONValue)}, ${startedAt}) as id`;
    return { import_id: row.id, status: 'failed', snapshot_id: null, error: failure };
  }
}

/**
 * VACUUM ANALYZE of every table an import writes (outside its transaction, as VACUUM must be):
 * fresh statistics for the planner and a set visibility map, so reads use index-only scans and
 * the right joins right away instead of after the next autovacuum. Those tables are the ones in
 * `app` keyed by snapshot, but for the learners' enrollments and the import log: read from the
 * catalog, so a table derived at import in the future is never left with stale statistics (a
 * hand-kept list missed seven, and a change list then hashed a whole snapshot's digests).
 */
export async function vacuumContent(sql: postgres.Sql): Promise<void> {
  const tables = await sql<{ name: string }[]>`
    select pg_catalog.format('%I.%I', n.nspname, c.relname) as name
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'app' and c.relkind = 'r' and c.relname not in ('enrollments', 'content_imports')
      and exists (select from pg_catalog.pg_attribute a where a.attrelid = c.oid and a.attname = 'snapshot_id' and not a.attisdropped)
    order by c.relname`;
  await sql.unsafe(`vacuum (analyze) ${tables.map((t) => t.name).join(', ')}`);
}

export async function importBundleFile(sql: postgres.Sql, file: string, options: ImportOptions = {}): Promise<ImportOutcome> {
  if (file === '-') return importBundle(sql, process.stdin.setEncoding('utf8'), options);
  // Bytes, close enough to characters for a progress bar.
  const size = (await stat(file)).size;
  return importBundle(sql, createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }), { size, ...options });
}

export interface LifecycleOutcome {
  snapshot_id: string;
  status: 'published';
  previous_snapshot_id: string | null;
}

/** Draft -> current; the previous current is archived. Optionally checks the import that made it. */
export async function promoteSnapshot(sql: postgres.Sql, snapshotId: string, importId?: string): Promise<LifecycleOutcome> {
  const [row] = await sql<{ result: LifecycleOutcome }[]>`
    select private.promote_snapshot(${snapshotId}::uuid, ${importId ?? null}::uuid) as result`;
  return row.result;
}

/** Archived -> current again (default: the current snapshot's parent); the current is archived. */
export async function rollbackSnapshot(sql: postgres.Sql, snapshotId?: string): Promise<LifecycleOutcome> {
  const [row] = await sql<{ result: LifecycleOutcome }[]>`
    select private.rollback_snapshot(${snapshotId ?? null}::uuid) as result`;
  return row.result;
}

export interface SnapshotListing {
  id: string;
  name: string;
  version_label: string;
  description: string;
  status: 'draft' | 'published' | 'archived';
  created_at: string;
  published_at: string | null;
  parent_snapshot_id: string | null;
  entity_counts: Record<string, number>;
}

export interface ImportListing {
  id: string;
  snapshot_id: string | null;
  status: 'running' | 'succeeded' | 'failed';
  name: string | null;
  version_label: string | null;
  counts: Record<string, number>;
  error: string | null;
  timings: Record<string, number>;
  started_at: string;
  finished_at: string | null;
}

export async function listContent(sql: postgres.Sql, imports = 10): Promise<{ snapshots: SnapshotListing[]; imports: ImportListing[] }> {
  const [row] = await sql<{ snapshots: SnapshotListing[]; imports: ImportListing[] }[]>`
    select private.list_content_snapshots() as snapshots, private.list_content_imports(${imports}) as imports`;
  return row;
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)}s`;
