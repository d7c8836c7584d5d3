import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConnection, runContentCli, type CliIo, type Connection } from '../../src/cli/content.js';
import { ContentBundleSchema } from '../../src/content/bundle-schema.js';
import { vacuumContent } from '../../src/content/operations.js';
import { vocabulary } from '../../src/content/generate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { smallBundle } from '../helpers/bundle.js';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (text) => void out.push(text), err: (line) => void err.push(line) };
  return { io, out: () => out.join(''), err: () => err.join('\n') };
}

async function generate(sparks: number, seed: string): Promise<string> {
  const c = capture();
  expect(await runContentCli(['generate', '--sparks', String(sparks), '--seed', seed], c.io)).toBe(0);
  return c.out();
}

/** Longest prerequisite chain (in edges), or -1 when the graph has a cycle. */
function longestPath(edges: { source: string; target: string; type?: string }[]): number {
  const next = new Map<string, string[]>();
  const indegree = new Map<string, number>();
  for (const e of edges.filter((e) => (e.type ?? 'prerequisite') === 'prerequisite')) {
    next.set(e.source, [...(next.get(e.source) ?? []), e.target]);
    indegree.set(e.target, (indegree.get(e.target) ?? 0) + 1);
    if (!indegree.has(e.source)) indegree.set(e.source, 0);
  }
  const depth = new Map<string, number>();
  const queue = [...indegree].filter(([, d]) => d === 0).map(([n]) => n);
  for (const n of queue) depth.set(n, 0);
  let seen = 0;
  while (queue.length) {
    const n = queue.shift()!;
    seen++;
    for (const m of next.get(n) ?? []) {
      depth.set(m, Math.max(depth.get(m) ?? 0, depth.get(n)! + 1));
      indegree.set(m, indegree.get(m)! - 1);
      if (indegree.get(m) === 0) queue.push(m);
    }
  }
  return seen === indegree.size ? Math.max(0, ...depth.values()) : -1;
}

describe('content CLI', () => {
  describe('generate', () => {
    it('is deterministic for a seed and differs between seeds', async () => {
      const a = await generate(3000, 'alpha');
      expect(await generate(3000, 'alpha')).toBe(a);
      expect(await generate(3000, 'beta')).not.toBe(a);
    });

    it('produces a schema-valid bundle with the documented shape and an acyclic, bounded-depth prerequisite DAG', async () => {
      const bundle = ContentBundleSchema.parse(JSON.parse(await generate(5000, 'shape')));
      expect(bundle.sparks).toHaveLength(5000);
      expect(bundle.concepts).toHaveLength(200);
      expect(bundle.trails).toHaveLength(20);
      expect(bundle.domains).toHaveLength(2);
      const links = bundle.spark_links ?? [];
      expect(links.length).toBeGreaterThan(13_000);
      expect(links.length).toBeLessThan(17_000);
      const depth = longestPath(links);
      expect(depth).toBeGreaterThanOrEqual(4);
      expect(depth).toBeLessThanOrEqual(40);
      expect(new Set(bundle.trails?.map((t) => t.difficulty_level))).toEqual(new Set(['beginner', 'intermediate', 'advanced', 'expert', null]));
      expect(new Set(bundle.concepts?.flatMap((c) => c.sparks ?? [])).size).toBe(5000);
    });

    it('writes from a Zipf vocabulary that grows with the catalog: a few very common words, most in a handful of sparks', async () => {
      const bundle = ContentBundleSchema.parse(JSON.parse(await generate(5000, 'shape')));
      const docs = new Map<string, number>();
      for (const spark of bundle.sparks ?? []) {
        for (const word of new Set(`${spark.title} ${spark.summary ?? ''}`.toLowerCase().match(/[a-z-]+/g))) docs.set(word, (docs.get(word) ?? 0) + 1);
      }
      const counts = [...docs.entries()].filter(([word]) => !['for', 'with'].includes(word)).map(([, n]) => n).sort((a, b) => a - b);
      expect(counts.length).toBeGreaterThan(1500);
      expect(counts[Math.floor(counts.length / 2)]).toBeLessThanOrEqual(10);
      expect(counts[counts.length - 1]).toBeGreaterThan(5000 / 3);
      const small = vocabulary(5000, 'shape').words;
      const large = vocabulary(500_000, 'shape').words;
      expect(large.length).toBeGreaterThan(3 * small.length);
      expect(large.slice(0, small.length)).toEqual(small);
      expect(new Set(large).size).toBe(large.length);
    });

    it('rejects a missing or invalid --sparks', async () => {
      await expect(runContentCli(['generate'], capture().io)).rejects.toThrow(/--sparks/);
      await expect(runContentCli(['generate', '--sparks', '0'], capture().io)).rejects.toThrow(/--sparks/);
    });
  });

  describe('against a database', () => {
    let db: TestDatabase;
    let dir: string;
    const connect = async (): Promise<Connection> => openConnection(db.url);
    const run = async (...args: string[]) => {
      const c = capture();
      const code = await runContentCli(args, c.io, connect);
      return { code, out: c.out(), err: c.err() };
    };
    const file = async (name: string, content: unknown) => {
      const target = path.join(dir, name);
      await writeFile(target, typeof content === 'string' ? content : JSON.stringify(content));
      return target;
    };
    beforeAll(async () => {
      db = await createTestDatabase();
      dir = await mkdtemp(path.join(os.tmpdir(), 'content-cli-'));
    });
    afterAll(() => db.drop());

    it('imports, promotes, rolls back and lists snapshots', async () => {
      const first = await run('import', await file('a.json', smallBundle({ name: 'A', version_label: 'a' })), '--promote', '--json');
      expect(first.code).toBe(0);
      const a = JSON.parse(first.out);
      expect(a).toMatchObject({ status: 'succeeded', snapshot_status: 'published', counts: { sparks: 6, spark_links: 3 } });

      const second = await run('import', await file('b.json', smallBundle({ extraSparks: 3 })), '--name', 'B', '--version-label', 'b', '--json');
      const b = JSON.parse(second.out);
      expect(b).toMatchObject({ status: 'succeeded', snapshot_status: 'draft', parent_snapshot_id: a.snapshot_id });
      const [draft] = await db.sql`select name, version_label, status from app.snapshots where id = ${b.snapshot_id}`;
      expect(draft).toEqual({ name: 'B', version_label: 'b', status: 'draft' });

      const promoted = await run('promote', '--import', b.import_id, b.snapshot_id);
      expect(promoted.code).toBe(0);
      expect(promoted.out).toContain(`promoted ${b.snapshot_id}`);
      expect(promoted.out).toContain(`archived ${a.snapshot_id}`);

      const rolled = await run('rollback');
      expect(rolled.out).toContain(`rolled back to ${a.snapshot_id}`);
      const statuses = await db.sql`select id, status from app.snapshots order by created_at`;
      expect(statuses).toEqual([
        { id: a.snapshot_id, status: 'published' },
        { id: b.snapshot_id, status: 'archived' },
      ]);

      const listing = JSON.parse((await run('list', '--json')).out);
      expect(listing.snapshots.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
        [b.snapshot_id, 'archived'],
        [a.snapshot_id, 'published'],
      ]);
      expect(listing.snapshots[0].entity_counts.sparks).toBe(9);
      expect(listing.imports[0]).toMatchObject({ id: b.import_id, status: 'succeeded', version_label: 'b' });
      const text = (await run('list')).out;
      expect(text).toContain(`${a.snapshot_id}  published`);
    });

    it('streams the bundle and reports every phase as one JSON line with its figures when not on a terminal', async () => {
      const result = await run('import', await file('phases.json', smallBundle({ name: 'Phases', version_label: 'p' })), '--promote');
      expect(result.code).toBe(0);
      const phases = result.err.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
      expect(phases.map((p) => [p.phase, p.state])).toEqual([
        ['read', 'finished'], ['validate', 'finished'], ['write', 'finished'], ['derive', 'finished'], ['promote', 'finished'],
      ]);
      const [read, validate, write, derive] = phases;
      expect(read).toMatchObject({ items: validate.items, problems: 0, counts: { sparks: 6, spark_links: 3, snapshot: 1 } });
      expect(read.characters).toBeGreaterThan(100);
      expect(write.counts).toMatchObject({ sparks: 6, spark_links: 3, concept_sparks: 6 });
      expect(derive.rounds).toBeGreaterThan(1);
      for (const phase of phases) expect(phase.ms).toBeGreaterThanOrEqual(0);
    });

    it('vacuums every table an import writes after a large import, the derived ones included, and not the learners\' enrollments', async () => {
      await vacuumContent(db.sql);
      const rows = await db.sql<{ relname: string }[]>`
        select relname from pg_stat_user_tables where schemaname = 'app' and last_analyze is not null`;
      const analyzed = rows.map((r) => r.relname);
      expect(analyzed).toEqual(expect.arrayContaining(['sparks', 'spark_links', 'trail_spark_positions', 'search_lexicon', 'discovery_items', 'content_entity_digests', 'trail_entity_digests', 'release_changes']));
      expect(analyzed).not.toContain('enrollments');
      expect(analyzed).not.toContain('learning_events');
    });

    it('records a bundle that fails the schema check as a failed import, lists every problem and writes nothing', async () => {
      const before = await db.sql`select count(*)::int as n from app.snapshots`;
      const bundle = smallBundle({ name: 'Broken' });
      (bundle.sparks[0] as Record<string, unknown>).difficulty = 'impossible';
      (bundle.sparks[1] as Record<string, unknown>).estimated_mins = 0;
      (bundle.domains[0] as Record<string, unknown>).color = 'teal';
      const result = await run('import', await file('broken.json', bundle));
      expect(result.code).toBe(1);
      expect(result.out).toMatch(/failed: the content bundle has 3 problems/);
      expect(result.err).toContain('$.domains[0].color');
      expect(result.err).toContain('$.sparks[0].difficulty');
      expect(result.err).toContain('$.sparks[1].estimated_mins');
      const [after] = await db.sql`select count(*)::int as n from app.snapshots`;
      expect(after.n).toBe(before[0].n);
      const [record] = await db.sql`select status, name, error from app.content_imports order by started_at desc limit 1`;
      expect(record).toMatchObject({ status: 'failed', name: 'Broken' });
      expect(record.error.problems).toHaveLength(3);
    });

    it('reports database-side problems (unknown references, cycles) with their paths', async () => {
      const bundle = smallBundle({ name: 'Cyclic' });
      bundle.spark_links.push({ source: 'inner-join', target: 'select-star' });
      bundle.trails[0].domain = 'nowhere';
      const result = await run('import', await file('cyclic.json', bundle));
      expect(result.code).toBe(1);
      expect(result.err).toContain('$.trails[0].domain: unknown domain \'nowhere\'');
      expect(result.err).toMatch(/\$\.spark_links: prerequisite cycle: (select-star -> where -> inner-join -> select-star|where -> inner-join -> select-star -> where|inner-join -> select-star -> where -> inner-join)/);
    });

    it('rejects malformed JSON with its position and records the attempt', async () => {
      const result = await run('import', await file('bad.json', '{"sparks": [ {"slug": "a",, } ]}'));
      expect(result.code).toBe(1);
      expect(result.err).toMatch(/Invalid bundle JSON/);
    });

    it('imports a generated catalog and keeps entity ids when the same slugs are imported again', async () => {
      const bundle = await file('gen.json', await generate(1500, 'ids'));
      const one = JSON.parse((await run('import', bundle, '--json')).out);
      const two = JSON.parse((await run('import', bundle, '--json')).out);
      expect(one.counts.sparks).toBe(1500);
      const [diff] = await db.sql`
        select count(*)::int as n from app.sparks x join app.sparks y on y.slug = x.slug
        where x.snapshot_id = ${one.snapshot_id} and y.snapshot_id = ${two.snapshot_id} and x.id <> y.id`;
      expect(diff.n).toBe(0);
    });

    it('serialises concurrent promotes: exactly one current snapshot afterwards', async () => {
      const drafts = [];
      for (const name of ['P1', 'P2']) drafts.push(JSON.parse((await run('import', await file(`${name}.json`, smallBundle({ name })), '--json')).out).snapshot_id as string);
      const results = await Promise.allSettled([run('promote', drafts[0]), run('promote', drafts[1]), run('promote', drafts[0])]);
      const [current] = await db.sql`select count(*)::int as n from app.snapshots where status = 'published'`;
      expect(current.n).toBe(1);
      // The repeated promote of the same draft waits, then finds it already current or archived.
      expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
      const rows = await db.sql`select id, status from app.snapshots where id in ${db.sql(drafts)}`;
      expect(rows.map((r) => r.status).sort()).toEqual(['archived', 'published']);
    });
  });

  it('derives entity ids as UUID v3 of "<kind>:<slug>" in the Sparkpath namespace', async () => {
    const db = await createTestDatabase();
    try {
      const [row] = await db.sql`select private.content_entity_id('spark', 'intro-to-sql')::text as id`;
      const digest = createHash('md5')
        .update(Buffer.concat([Buffer.from('5b0a2f3e9c7d4e1a8f6b2c4d3e5f7a91', 'hex'), Buffer.from('spark:intro-to-sql')]))
        .digest();
      digest[6] = (digest[6] & 0x0f) | 0x30;
      digest[8] = (digest[8] & 0x3f) | 0x80;
      const hex = digest.toString('hex');
      expect(row.id).toBe(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
    } finally {
      await db.drop();
    }
  });
});
