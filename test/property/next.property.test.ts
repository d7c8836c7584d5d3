import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type CatalogSpec } from '../helpers/content.js';
import { postJson } from '../helpers/requests.js';
import { testUser } from '../helpers/tokens.js';

/**
 * Random catalogs of 1-12 sparks over three trails of two concepts each (a spark may sit in two
 * trails), a random prerequisite DAG (edges only go forward in a hidden order), a random
 * learner (enrolled in some trails; each spark untouched, started, completed, mastered, or
 * completed and then voided). What next must list exactly the ready sparks of the enrolled
 * trails: not done, every prerequisite done.
 */
const TRAILS = ['t0', 't1', 't2'];
const scenario = fc.integer({ min: 1, max: 12 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    // Each spark's place: trail and concept (0/1) and, sometimes, a second trail.
    places: fc.array(fc.record({ trail: fc.integer({ min: 0, max: 2 }), concept: fc.integer({ min: 0, max: 1 }), also: fc.option(fc.integer({ min: 0, max: 2 })) }), { minLength: n, maxLength: n }),
    edges: fc.array(fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 0, max: n - 1 })), { maxLength: n * 2 }),
    progress: fc.array(fc.constantFrom('none', 'started', 'completed', 'mastered', 'voided'), { minLength: n, maxLength: n }),
    enrolled: fc.subarray([0, 1, 2], { minLength: 1 }),
  }),
);
type Scenario = { n: number; places: { trail: number; concept: number; also: number | null }[]; edges: [number, number][]; progress: string[]; enrolled: number[] };

function catalogOf(s: Scenario): { spec: CatalogSpec; concepts: string[][][]; prerequisites: Map<number, Set<number>>; trailsOf: Map<number, Set<number>> } {
  const slug = (i: number) => `s${i}`;
  const trailsOf = new Map<number, Set<number>>();
  const concepts = TRAILS.map(() => [[], []] as string[][]);
  s.places.forEach((p, i) => {
    const trails = new Set([p.trail, ...(p.also === null ? [] : [p.also])]);
    trailsOf.set(i, trails);
    for (const trail of trails) concepts[trail][p.concept].push(slug(i));
  });
  const prerequisites = new Map<number, Set<number>>(Array.from({ length: s.n }, (_, i) => [i, new Set<number>()]));
  const links: { source: string; target: string }[] = [];
  for (const [a, b] of s.edges) {
    const [from, to] = [Math.min(a, b), Math.max(a, b)];
    if (from === to || prerequisites.get(to)!.has(from)) continue;
    prerequisites.get(to)!.add(from);
    links.push({ source: slug(from), target: slug(to) });
  }
  const spec: CatalogSpec = {
    domains: [
      {
        slug: 'd',
        trails: TRAILS.map((trail, t) => ({ slug: trail, concepts: concepts[t].map((sparks, c) => ({ slug: `${trail}-c${c}`, sparks })) })),
      },
    ],
    // Every spark exists even when no concept holds it (a prerequisite may live outside the trails).
    sparks: Array.from({ length: s.n }, (_, i) => ({ slug: slug(i) })),
    spark_links: links,
  };
  return { spec, concepts, prerequisites, trailsOf };
}

describe('what next property', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists every ready spark of the enrolled trails, once, and nothing else; each trail’s in its order', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { spec, concepts, prerequisites, trailsOf } = catalogOf(s);
        const content = await insertCatalog(t.db.sql, spec);
        const user = await testUser();
        for (const trail of s.enrolled) {
          expect((await postJson(t, '/user/me/journeys', user, { trail_id: content.id('trail', TRAILS[trail]) })).status).toBe(201);
        }
        const done = new Set<number>();
        for (const [i, state] of s.progress.entries()) {
          if (state === 'none') continue;
          const verb = state === 'voided' ? 'completed' : state;
          const res = await postJson(t, '/user/me/events', user, { spark_id: content.id('spark', `s${i}`), verb, occurred_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() });
          expect(res.status).toBe(201);
          if (state === 'voided') expect((await postJson(t, `/user/me/events/${(await res.json()).id}/void`, user, {})).status).toBe(200);
          if (state === 'completed' || state === 'mastered') done.add(i);
        }

        const res = await t.app.request('/user/me/next?limit=100', { headers: user.headers });
        expect(res.status).toBe(200);
        const items = (await res.json()).data as { slug: string; trail: { slug: string }; builds_on: { slug: string }[] }[];
        const index = (slug: string) => Number(slug.slice(1));
        const returned = items.map((item) => index(item.slug));

        const ready = [...trailsOf.keys()].filter(
          (i) => !done.has(i) && [...prerequisites.get(i)!].every((p) => done.has(p)) && s.enrolled.some((trail) => trailsOf.get(i)!.has(trail)),
        );
        // Each returned spark: not done, every prerequisite done (and named), in an enrolled trail that holds it.
        for (const item of items) {
          const i = index(item.slug);
          expect(done.has(i)).toBe(false);
          expect(item.builds_on.map((b) => index(b.slug)).sort((a, b) => a - b)).toEqual([...prerequisites.get(i)!].sort((a, b) => a - b));
          expect([...prerequisites.get(i)!].every((p) => done.has(p))).toBe(true);
          const trail = TRAILS.indexOf(item.trail.slug);
          expect(s.enrolled).toContain(trail);
          expect(trailsOf.get(i)!.has(trail)).toBe(true);
        }
        // Nothing ready is missing, nothing is listed twice.
        expect([...returned].sort((a, b) => a - b)).toEqual(ready.sort((a, b) => a - b));
        // Trails come one after the other, each in its own order (concept, then position).
        const trailOrder = items.map((item) => item.trail.slug).filter((slug, i, all) => all.indexOf(slug) === i);
        expect(items.map((item) => item.trail.slug)).toEqual(trailOrder.flatMap((slug) => items.filter((item) => item.trail.slug === slug).map(() => slug)));
        for (const trail of trailOrder) {
          // A spark sits in the same concept (0 or 1) of each of its trails.
          const position = (i: number) => s.places[i].concept * 100 + concepts[TRAILS.indexOf(trail)][s.places[i].concept].indexOf(`s${i}`);
          const mine = items.filter((item) => item.trail.slug === trail).map((item) => position(index(item.slug)));
          expect(mine).toEqual([...mine].sort((a, b) => a - b));
        }
      }),
      { numRuns: 30 },
    );
  }, 300_000);
});
