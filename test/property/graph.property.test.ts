import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog } from '../helpers/content.js';
import { testUser } from '../helpers/tokens.js';

/**
 * Random DAGs: node i may only point to a node j > i in a hidden order, so there is never a
 * cycle; titles repeat on purpose so the title/id tie-break is exercised.
 */
const dagArbitrary = fc
  .integer({ min: 1, max: 9 })
  .chain((n) =>
    fc.record({
      n: fc.constant(n),
      titles: fc.array(fc.constantFrom('Alpha', 'Beta', 'Gamma'), { minLength: n, maxLength: n }),
      mins: fc.array(fc.integer({ min: 1, max: 60 }), { minLength: n, maxLength: n }),
      // Pairs are oriented low -> high in the hidden order; self-pairs and repeats are dropped
      // (a filter on the pair itself could never be satisfied with a single node).
      edges: fc
        .array(fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 0, max: n - 1 })), { maxLength: n * 2 })
        .map((pairs) => {
          const unique = new Map<string, [number, number]>();
          for (const [x, y] of pairs) if (x !== y) unique.set(`${Math.min(x, y)}>${Math.max(x, y)}`, [Math.min(x, y), Math.max(x, y)]);
          return [...unique.values()];
        }),
      target: fc.integer({ min: 0, max: n - 1 }),
    }),
  );

type Dag = { n: number; titles: string[]; mins: number[]; edges: [number, number][]; target: number };

function closure(dag: Dag, start: number, follow: 'up' | 'down'): Map<number, number> {
  const depth = new Map([[start, 0]]);
  let frontier = [start];
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const node of frontier) {
      for (const [a, b] of dag.edges) {
        const neighbour = follow === 'up' ? (b === node ? a : -1) : a === node ? b : -1;
        if (neighbour >= 0 && !depth.has(neighbour)) {
          depth.set(neighbour, depth.get(node)! + 1);
          next.push(neighbour);
        }
      }
    }
    frontier = next;
  }
  return depth;
}

describe('graph properties', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    headers = (await testUser()).headers;
  });
  afterAll(() => t.close());

  const load = async (dag: Dag) => {
    // Slugs are shuffled against the hidden order so that neither slug nor title reveals it.
    const slug = (i: number) => `s${(i * 7 + 3) % 11}-${i}`;
    const catalog = await insertCatalog(
      t.db.sql,
      {
        sparks: dag.titles.map((title, i) => ({ slug: slug(i), title, estimated_mins: dag.mins[i] })),
        spark_links: dag.edges.map(([a, b]) => ({ source: slug(a), target: slug(b) })),
      },
      { status: 'draft' },
    );
    const index = new Map(dag.titles.map((_, i) => [slug(i), i]));
    return { snapshot: catalog.snapshotId, slug, index };
  };

  const request = async (path: string) => {
    const res = await t.app.request(path, { headers });
    expect(res.status).toBe(200);
    return res.json();
  };

  it('every learning path is a topological order of exactly the target’s ancestor closure', async () => {
    await fc.assert(
      fc.asyncProperty(dagArbitrary, async (dag) => {
        const { snapshot, slug, index } = await load(dag);
        const body = await request(`/graph/path?target=${slug(dag.target)}&skip_mastered=false&snapshot_id=${snapshot}`);
        const order: number[] = body.path.map((step: { slug: string }) => index.get(step.slug)!);
        const expected = [...closure(dag, dag.target, 'up').keys()].sort((a, b) => a - b);
        expect([...order].sort((a, b) => a - b)).toEqual(expected);
        expect(order.at(-1)).toBe(dag.target);
        const position = new Map(order.map((node, i) => [node, i]));
        for (const [a, b] of dag.edges) {
          if (position.has(a) && position.has(b)) expect(position.get(a)!).toBeLessThan(position.get(b)!);
        }
        expect(body.total_mins).toBe(order.reduce((sum, node) => sum + dag.mins[node], 0));
        expect(body.skipped_count).toBe(0);
      }),
      { numRuns: 20 },
    );
  }, 120_000);

  it('ancestors and descendants are inverse relations with BFS shortest depths', async () => {
    await fc.assert(
      fc.asyncProperty(dagArbitrary, async (dag) => {
        const { snapshot, slug, index } = await load(dag);
        const ancestors = new Map<number, Map<number, number>>();
        const descendants = new Map<number, Map<number, number>>();
        for (let node = 0; node < dag.n; node++) {
          for (const [direction, into] of [['ancestors', ancestors], ['descendants', descendants]] as const) {
            const body = await request(`/graph/sparks/${slug(node)}?direction=${direction}&max_depth=10&snapshot_id=${snapshot}`);
            into.set(node, new Map(body.nodes.map((n: { slug: string; depth: number }) => [index.get(n.slug)!, n.depth])));
            expect(body.nodes.length).toBe(into.get(node)!.size); // each node once
          }
        }
        for (let u = 0; u < dag.n; u++) {
          expect(ancestors.get(u)).toEqual(closure(dag, u, 'up'));
          expect(descendants.get(u)).toEqual(closure(dag, u, 'down'));
          for (let v = 0; v < dag.n; v++) {
            expect(ancestors.get(u)!.has(v)).toBe(descendants.get(v)!.has(u));
            if (ancestors.get(u)!.has(v)) expect(ancestors.get(u)!.get(v)).toBe(descendants.get(v)!.get(u));
          }
        }
      }),
      { numRuns: 10 },
    );
  }, 120_000);
});
