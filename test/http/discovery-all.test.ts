import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type DomainSpec } from '../helpers/content.js';

/**
 * 4 domains × 3 trails (12 trails) and 50 concepts (4 or 5 per trail), with names that do not
 * sort in insertion order, so "alphabetical within type" is observable.
 */
const WORDS = ['kiwi', 'apple', 'mango', 'fig', 'lemon', 'banana', 'cherry', 'grape', 'pear', 'date', 'olive', 'quince', 'nectarine', 'elder', 'honeydew', 'jujube'];
const LEVELS = ['beginner', 'intermediate', 'advanced', 'expert'] as const;

function buildDomains(): DomainSpec[] {
  let concept = 0;
  return ['delta', 'alpha', 'charlie', 'bravo'].map((name, d) => ({
    slug: `dom-${name}`,
    name: `${name[0].toUpperCase()}${name.slice(1)} Domain`,
    trails: [0, 1, 2].map((k) => {
      const t = d * 3 + k;
      const count = t < 2 ? 5 : 4; // 2×5 + 10×4 = 50 concepts
      return {
        slug: `trail-${t}`,
        title: `${WORDS[(t * 7) % 16]} trail ${t}`,
        difficulty_level: LEVELS[t % 4],
        concepts: Array.from({ length: count }, () => {
          const c = concept++;
          return {
            slug: `concept-${c}`,
            title: `${WORDS[(c * 5) % 16]} concept ${String(c).padStart(2, '0')}`,
            sparks: [{ slug: `spark-${c}-a`, estimated_mins: 2 }, { slug: `spark-${c}-b`, estimated_mins: 3 }, { slug: `spark-${c}-c`, estimated_mins: 4 }, { slug: `spark-${c}-d`, estimated_mins: 5 }],
          };
        }),
      };
    }),
  }));
}

interface Item {
  type: 'DOMAIN' | 'TRAIL' | 'CONCEPT';
  id: string;
  slug: string;
  name?: string;
  title?: string;
  concepts?: unknown[];
  sparks?: unknown[];
}

const byType = (items: Item[], type: Item['type']) => items.filter((i) => i.type === type);
const label = (i: Item) => (i.type === 'DOMAIN' ? i.name! : i.title!);
const sortedLabels = (items: Item[]) => items.map(label).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('discovery routes: GET /discovery/all', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await insertCatalog(t.db.sql, { domains: buildDomains() });
  });
  afterAll(() => t.close());

  const page = async (query: string) => {
    const res = await t.app.request(`/discovery/all?${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as { data: Item[]; meta: Record<string, number | boolean>; facets?: Record<string, unknown> };
  };
  const counts = (items: Item[]) => [byType(items, 'DOMAIN').length, byType(items, 'TRAIL').length, byType(items, 'CONCEPT').length];

  async function walk(query: string, perPage: number) {
    const seen: Item[] = [];
    for (let p = 1; ; p++) {
      const body = await page(`${query}&per_page=${perPage}&page=${p}`);
      seen.push(...body.data);
      if (!body.meta.has_next) return { seen, pages: p, meta: body.meta };
      expect(body.data).toHaveLength(perPage);
    }
  }

  it('rule 1: a page is split by share, per_page 20 gives 2 domains, 5 trails, 13 concepts', async () => {
    const body = await page('per_page=20');
    expect(counts(body.data)).toEqual([2, 5, 13]);
    expect(body.data.map((i) => i.type)).toEqual([...Array(2).fill('DOMAIN'), ...Array(5).fill('TRAIL'), ...Array(13).fill('CONCEPT')]);
    expect(body.meta).toEqual({ total: 66, page: 1, per_page: 20, total_pages: 4, has_next: true, has_prev: false });
  });

  it('rule 1 (general share rule): per_page 10 gives 1/3/6, 7 gives 1/2/4, 1 gives a concept', async () => {
    expect(counts((await page('per_page=10')).data)).toEqual([1, 3, 6]);
    expect(counts((await page('per_page=7')).data)).toEqual([1, 2, 4]);
    expect(counts((await page('per_page=1')).data)).toEqual([0, 0, 1]);
  });

  it('rule 2: each later page continues where each type stopped', async () => {
    const first = await page('per_page=20&page=1');
    const second = await page('per_page=20&page=2');
    expect(counts(second.data)).toEqual([2, 5, 13]);
    const all = await walk('nested_limit=0', 100);
    const domains = byType(all.seen, 'DOMAIN').map((i) => i.slug);
    const trails = byType(all.seen, 'TRAIL').map((i) => i.slug);
    const concepts = byType(all.seen, 'CONCEPT').map((i) => i.slug);
    expect(byType([...first.data, ...second.data], 'DOMAIN').map((i) => i.slug)).toEqual(domains.slice(0, 4));
    expect(byType([...first.data, ...second.data], 'TRAIL').map((i) => i.slug)).toEqual(trails.slice(0, 10));
    expect(byType(second.data, 'CONCEPT').map((i) => i.slug)).toEqual(concepts.slice(13, 26));
  });

  it('rule 2: the slots of an exhausted type go to the other types', async () => {
    // After two pages the 4 domains are exhausted: page 3 has 2 trails left and 18 concepts.
    const third = await page('per_page=20&page=3');
    expect(counts(third.data)).toEqual([0, 2, 18]);
    const fourth = await page('per_page=20&page=4');
    expect(counts(fourth.data)).toEqual([0, 0, 6]);
    expect(fourth.meta).toMatchObject({ has_next: false, has_prev: true, total_pages: 4 });
    expect((await page('per_page=20&page=5')).data).toEqual([]);
  });

  it('rule 3: items are sorted alphabetically within each type across all pages', async () => {
    const { seen } = await walk('nested_limit=0', 7);
    for (const type of ['DOMAIN', 'TRAIL', 'CONCEPT'] as const) {
      const items = byType(seen, type);
      expect(items.map(label)).toEqual(sortedLabels(items));
    }
    expect(byType(seen, 'DOMAIN').map(label)).toEqual(['Alpha Domain', 'Bravo Domain', 'Charlie Domain', 'Delta Domain']);
  });

  it('rule 4: the domain filter keeps only content within that domain', async () => {
    const { seen, meta } = await walk('domain=dom-alpha', 20);
    expect(meta.total).toBe(1 + 3 + 12);
    expect(byType(seen, 'DOMAIN').map((i) => i.slug)).toEqual(['dom-alpha']);
    expect(byType(seen, 'TRAIL').map((i) => i.slug).sort()).toEqual(['trail-3', 'trail-4', 'trail-5']);
    expect(byType(seen, 'CONCEPT').map((i) => i.slug).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `concept-${14 + i}`).sort(),
    );
  });

  it('rule 5: the track filter keeps only the concepts of that trail', async () => {
    const body = await page('track=trail-0&per_page=20');
    expect(body.data.map((i) => i.type)).toEqual(Array(5).fill('CONCEPT'));
    expect(body.data.map((i) => i.slug).sort()).toEqual(['concept-0', 'concept-1', 'concept-2', 'concept-3', 'concept-4']);
    expect(body.meta.total).toBe(5);
  });

  it('rule 6: the difficulty filter applies to trails only; domains and concepts are excluded', async () => {
    const body = await page('difficulty=advanced&per_page=20');
    expect(body.data.map((i) => i.slug).sort()).toEqual(['trail-10', 'trail-2', 'trail-6']);
    expect(body.data.every((i) => i.type === 'TRAIL' && (i as unknown as { difficulty_level: string }).difficulty_level === 'advanced')).toBe(true);
  });

  it('rule 7: types without domain excludes domains, and the shares are renormalised over the types asked for', async () => {
    const body = await page('types=trail,concept&per_page=20');
    expect(counts(body.data)).toEqual([0, 6, 14]);
    expect(body.meta.total).toBe(62);
    const onlyDomains = await page('types=DOMAIN&per_page=20');
    expect(counts(onlyDomains.data)).toEqual([4, 0, 0]);
  });

  it('rule 8: facet counts reflect all matching items, not just the current page', async () => {
    const body = await page('per_page=3&include_facets=true');
    expect(body.data).toHaveLength(3);
    expect(body.facets!.types).toEqual([
      { type: 'DOMAIN', count: 4 },
      { type: 'TRAIL', count: 12 },
      { type: 'CONCEPT', count: 50 },
    ]);
    expect(body.facets!.domains).toContainEqual({ slug: 'dom-alpha', name: 'Alpha Domain', count: 16 });
    expect(body.facets!.difficulties).toEqual([
      { level: 'beginner', count: 3 },
      { level: 'intermediate', count: 3 },
      { level: 'advanced', count: 3 },
      { level: 'expert', count: 3 },
    ]);
    expect((await page('per_page=3')).facets).toBeUndefined();
  });

  it('q keeps items whose name or title contains the text, case-insensitively', async () => {
    const { seen } = await walk('q=APPLE', 5);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((i) => label(i).toLowerCase().includes('apple'))).toBe(true);
    const none = await page('q=%25');
    expect(none.data).toEqual([]);
  });

  it('nested_limit bounds the nested items (default 3) and 0 omits them', async () => {
    const body = await page('per_page=20');
    const trail = byType(body.data, 'TRAIL')[0];
    const concept = byType(body.data, 'CONCEPT')[0];
    expect(trail.concepts).toHaveLength(3);
    expect(concept.sparks).toHaveLength(3);
    expect(Object.keys(concept).sort()).toEqual(['description', 'estimated_mins', 'id', 'order_index', 'slug', 'spark_count', 'sparks', 'title', 'type']);
    expect(Object.keys(byType(body.data, 'DOMAIN')[0]).sort()).toEqual(
      ['color', 'concept_count', 'description', 'estimated_mins', 'icon', 'id', 'name', 'slug', 'spark_count', 'trail_count', 'type'],
    );
    const two = await page('per_page=20&nested_limit=2');
    expect(byType(two.data, 'CONCEPT')[0].sparks).toHaveLength(2);
    const none = await page('per_page=20&nested_limit=0');
    expect(byType(none.data, 'TRAIL')[0]).not.toHaveProperty('concepts');
    expect(byType(none.data, 'CONCEPT')[0]).not.toHaveProperty('sparks');
    expect(Object.keys(byType(none.data, 'TRAIL')[0]).sort()).toEqual(
      ['concept_count', 'description', 'difficulty_level', 'estimated_mins', 'id', 'slug', 'spark_count', 'title', 'type'],
    );
  });

  for (const perPage of [1, 2, 3, 7, 13, 20, 33, 100]) {
    it(`walking every page with per_page ${perPage} returns every matching item exactly once`, async () => {
      const { seen, pages, meta } = await walk('nested_limit=0', perPage);
      const keys = seen.map((i) => `${i.type}:${i.id}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys).toHaveLength(66);
      expect(counts(seen)).toEqual([4, 12, 50]);
      expect(pages).toBe(Math.ceil(66 / perPage));
      expect(meta.total_pages).toBe(pages);
    });
  }

  it('walking filtered results (types=domain,concept and domain=dom-bravo) also returns each item exactly once', async () => {
    for (const [query, total] of [['types=domain,concept&nested_limit=0', 54], ['domain=dom-bravo&nested_limit=0', 16]] as const) {
      for (const perPage of [3, 8]) {
        const { seen } = await walk(query, perPage);
        expect(new Set(seen.map((i) => `${i.type}:${i.id}`)).size).toBe(total);
        expect(seen).toHaveLength(total);
      }
    }
  });

  it('track and difficulty together match nothing (concepts only ∩ trails only)', async () => {
    const body = await page('track=trail-0&difficulty=beginner');
    expect(body.data).toEqual([]);
    expect(body.meta.total).toBe(0);
  });

  it('returns 404 for an unknown domain or track slug', async () => {
    const res = await t.app.request('/discovery/all?track=no-such-trail');
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: 'NOT_FOUND', details: { track: 'no-such-trail' } });
    expect((await t.app.request('/discovery/all?domain=no-such-domain')).status).toBe(404);
  });
});
