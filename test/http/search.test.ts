import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, healthyChecks, type TestApp } from '../helpers/app.js';
import { insertCatalog, type InsertedCatalog } from '../helpers/content.js';
import { testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';
import { SearchResultSchema, SuggestionsSchema } from '../../src/routes/search/search.routes.js';

interface SearchBody {
  data: { type: string; id: string; slug: string; title: string; summary: string; score: number }[];
  meta: { total: number; page: number; per_page: number; total_pages: number; has_next: boolean; has_prev: boolean };
  facets: { types: Record<string, number>; difficulties: Record<string, number> };
}

describe('search routes', () => {
  let t: TestApp;
  let catalog: InsertedCatalog;
  let headers: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp();
    headers = (await testUser()).headers;
    catalog = await insertCatalog(t.db.sql, {
      domains: [
        {
          slug: 'data-engineering',
          name: 'Data Engineering',
          description: 'Pipelines, warehouses and SQL at scale',
          trails: [
            {
              slug: 'sql-foundations',
              title: 'SQL Foundations',
              description: 'Query relational databases with confidence',
              difficulty_level: 'beginner',
              concepts: [
                {
                  slug: 'joining-tables',
                  title: 'Joining Tables',
                  description: 'Inner, outer and cross joins',
                  sparks: [
                    { slug: 'inner-joins', title: 'Inner Joins', summary: 'Match rows in two tables with SQL', difficulty: 'beginner' },
                    { slug: 'outer-joins', title: 'Outer Joins', summary: 'Keep unmatched rows with SQL', difficulty: 'intermediate' },
                  ],
                },
              ],
            },
            {
              slug: 'query-tuning',
              title: 'Query Tuning',
              description: 'Make SQL fast with indexes and plans',
              difficulty_level: 'advanced',
              concepts: [
                {
                  slug: 'indexes',
                  title: 'Indexes',
                  description: 'How databases find rows quickly',
                  sparks: [
                    { slug: 'btree-indexes', title: 'B-tree Indexes', summary: 'The default index behind most SQL lookups', difficulty: 'advanced' },
                    { slug: 'explain-plans', title: 'Reading Query Plans', summary: 'EXPLAIN shows how SQL runs', difficulty: 'expert' },
                  ],
                },
              ],
            },
          ],
        },
        {
          slug: 'cooking',
          name: 'Pâtisserie',
          description: 'French pastry from crème to croissant',
          trails: [
            {
              slug: 'custards',
              title: 'Custards',
              description: 'Eggs, cream and sugar',
              difficulty_level: null,
              concepts: [{ slug: 'baked-custards', title: 'Baked Custards', sparks: [{ slug: 'creme-brulee', title: 'Crème Brûlée', summary: 'Caramelised sugar over a baked custard' }] }],
            },
          ],
        },
      ],
    });
  });
  afterAll(() => t.close());

  const search = async (query: string, h: Record<string, string> = headers) => {
    const res = await t.app.request(`/search/?${query}`, { headers: h });
    return { res, body: (await res.json()) as SearchBody };
  };

  it('GET /search/ returns ranked items with the item fields, meta and facets', async () => {
    const { res, body } = await search('q=sql');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect(res.headers.get('etag')).toBeTruthy();
    expect(SearchResultSchema.parse(body)).toBeTruthy();
    // Title matches (weight A) rank above summary/description-only matches.
    expect(body.data[0]).toMatchObject({ type: 'trail', slug: 'sql-foundations', title: 'SQL Foundations', summary: 'Query relational databases with confidence' });
    expect(body.data[0].id).toBe(catalog.id('trail', 'sql-foundations'));
    expect(body.data.map((d) => d.slug).sort()).toEqual(
      ['btree-indexes', 'data-engineering', 'explain-plans', 'inner-joins', 'outer-joins', 'query-tuning', 'sql-foundations'].sort(),
    );
    const scores = body.data.map((d) => d.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(body.meta).toEqual({ total: 7, page: 1, per_page: 20, total_pages: 1, has_next: false, has_prev: false });
    expect(body.facets).toEqual({
      types: { spark: 4, concept: 0, trail: 2, domain: 1 },
      difficulties: { beginner: 2, intermediate: 1, advanced: 2, expert: 1 },
    });
  });

  it('GET /search works with and without the trailing slash', async () => {
    const a = await t.app.request('/search?q=joins', { headers });
    const b = await t.app.request('/search/?q=joins', { headers });
    expect(a.status).toBe(200);
    expect(await a.json()).toEqual(await b.json());
  });

  it('GET /search/ filters by type and keeps the type facet over all types', async () => {
    const { body } = await search('q=sql&type=spark');
    expect(body.data.every((d) => d.type === 'spark')).toBe(true);
    expect(body.meta.total).toBe(4);
    expect(body.facets.types).toEqual({ spark: 4, concept: 0, trail: 2, domain: 1 });
    expect(body.facets.difficulties).toEqual({ beginner: 1, intermediate: 1, advanced: 1, expert: 1 });
  });

  it('GET /search/ filters by difficulty: sparks by difficulty, trails by difficulty_level', async () => {
    const { body } = await search('q=sql&difficulty=advanced');
    expect(body.data.map((d) => `${d.type}:${d.slug}`).sort()).toEqual(['spark:btree-indexes', 'trail:query-tuning']);
    expect(body.facets.types).toEqual({ spark: 1, concept: 0, trail: 1, domain: 0 });
    expect(body.facets.difficulties).toEqual({ beginner: 2, intermediate: 1, advanced: 2, expert: 1 });
  });

  it('GET /search/ paginates, counting facets over every match rather than the page', async () => {
    const first = await search('q=sql&per_page=2');
    const second = await search('q=sql&per_page=2&page=2');
    const last = await search('q=sql&per_page=2&page=4');
    expect(first.body.meta).toEqual({ total: 7, page: 1, per_page: 2, total_pages: 4, has_next: true, has_prev: false });
    expect(second.body.meta).toMatchObject({ page: 2, has_next: true, has_prev: true });
    expect(last.body.data).toHaveLength(1);
    expect(last.body.meta.has_next).toBe(false);
    expect(first.body.facets).toEqual(last.body.facets);
    const all = (await search('q=sql')).body.data.map((d) => d.id);
    const paged = [first, second, await search('q=sql&per_page=2&page=3'), last].flatMap((p) => p.body.data.map((d) => d.id));
    expect(paged).toEqual(all);
  });

  it('GET /search/ is accent-insensitive in both directions and exposes domain names as titles', async () => {
    const plain = await search('q=creme%20brulee');
    expect(plain.body.data[0]).toMatchObject({ slug: 'creme-brulee', title: 'Crème Brûlée' });
    const accented = await search(`q=${encodeURIComponent('pâtisserie')}`);
    expect(accented.body.data[0]).toMatchObject({ type: 'domain', slug: 'cooking', title: 'Pâtisserie' });
    const unaccented = await search('q=patisserie');
    expect(unaccented.body.data[0].slug).toBe('cooking');
  });

  it('GET /search/ answers an empty page for no match or only stop words', async () => {
    for (const q of ['zzzqqq', 'the of and']) {
      const { res, body } = await search(`q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(body.data).toEqual([]);
      expect(body.meta.total).toBe(0);
      expect(body.facets.types).toEqual({ spark: 0, concept: 0, trail: 0, domain: 0 });
    }
  });

  it('GET /search/ rejects a missing q, bad type, bad difficulty and out-of-range paging with 400', async () => {
    for (const query of ['', 'q=', 'q=sql&type=beacon', 'q=sql&difficulty=easy', 'q=sql&page=0', 'q=sql&per_page=51', 'q=sql&per_page=abc', `q=${'a'.repeat(201)}`, 'q=sql&snapshot_id=nope']) {
      const { res, body } = await search(query);
      expect(res.status, query).toBe(400);
      expect((body as unknown as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('GET /search/ selects the snapshot: current by default, an explicit draft by id, 404 for an unknown id', async () => {
    const draft = await insertCatalog(t.db.sql, { sparks: [{ slug: 'draft-only', title: 'Quantum Teleportation' }] }, { status: 'draft' });
    expect((await search('q=quantum')).body.data).toEqual([]);
    const { body } = await search(`q=quantum&snapshot_id=${draft.snapshotId}`);
    expect(body.data.map((d) => d.slug)).toEqual(['draft-only']);
    const missing = await search('q=quantum&snapshot_id=3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f');
    expect(missing.res.status).toBe(404);
  });

  it('GET /search/ requires a JWT (401) and lets service callers in', async () => {
    const anonymous = await t.app.request('/search/?q=sql');
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe('UNAUTHORIZED');
    const service = await search('q=sql', { 'X-Service-Auth': TEST_SERVICE_SECRET });
    expect(service.res.status).toBe(200);
    expect(service.body.meta.total).toBe(7);
  });

  it('GET /search/autocomplete puts prefix matches before word-prefix and typo matches, default limit 5', async () => {
    const res = await t.app.request('/search/autocomplete?q=jo', { headers });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(SuggestionsSchema.parse(body)).toBeTruthy();
    expect(body.suggestions).toEqual([
      { text: 'Joining Tables', type: 'concept' },
      { text: 'Inner Joins', type: 'spark' },
      { text: 'Outer Joins', type: 'spark' },
    ]);
    const typo = await (await t.app.request('/search/autocomplete?q=custrds', { headers })).json();
    expect(typo.suggestions[0]).toEqual({ text: 'Custards', type: 'trail' });
    const accent = await (await t.app.request('/search/autocomplete?q=creme', { headers })).json();
    expect(accent.suggestions).toEqual([{ text: 'Crème Brûlée', type: 'spark' }]);
  });

  it('GET /search/autocomplete honours limit, de-duplicates {text,type} and caps limit at 20', async () => {
    await insertCatalog(t.db.sql, {
      sparks: Array.from({ length: 8 }, (_, i) => ({ slug: `graph-${i}`, title: i < 2 ? 'Graph Basics' : `Graph Topic ${i}` })),
    });
    const body = await (await t.app.request('/search/autocomplete?q=graph', { headers })).json();
    expect(body.suggestions).toHaveLength(5);
    expect(body.suggestions[0]).toEqual({ text: 'Graph Basics', type: 'spark' });
    expect(body.suggestions.filter((s: { text: string }) => s.text === 'Graph Basics')).toHaveLength(1);
    const two = await (await t.app.request('/search/autocomplete?q=graph&limit=2', { headers })).json();
    expect(two.suggestions).toHaveLength(2);
    const twenty = await (await t.app.request('/search/autocomplete?q=graph&limit=20', { headers })).json();
    expect(twenty.suggestions).toHaveLength(7);
  });

  it('GET /search/autocomplete reads the snapshot named by snapshot_id and answers 404 for an unknown one', async () => {
    const draft = await insertCatalog(t.db.sql, { sparks: [{ slug: 'draft-suggestion', title: 'Zeppelin Navigation' }] }, { status: 'draft' });
    const current = await (await t.app.request('/search/autocomplete?q=zepp', { headers })).json();
    expect(current.suggestions).toEqual([]);
    const drafted = await (await t.app.request(`/search/autocomplete?q=zepp&snapshot_id=${draft.snapshotId}`, { headers })).json();
    expect(drafted.suggestions).toEqual([{ text: 'Zeppelin Navigation', type: 'spark' }]);
    const missing = await t.app.request('/search/autocomplete?q=zepp&snapshot_id=3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f', { headers });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('NOT_FOUND');
  });

  it('GET /search/autocomplete rejects q shorter than 2 characters and limits outside 1..20', async () => {
    for (const query of ['q=a', 'q=', '', 'q=%20a%20', 'q=sql&limit=0', 'q=sql&limit=21', 'q=sql&limit=x']) {
      const res = await t.app.request(`/search/autocomplete?${query}`, { headers });
      expect(res.status, query).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
    expect((await t.app.request('/search/autocomplete?q=sq')).status).toBe(401);
  });

  it('search and autocomplete are snapshot content: ETag and 304, the body kept in memory, still a signed-in route', async () => {
    for (const path of ['/search/?q=sql&per_page=5', '/search/autocomplete?q=sq']) {
      const first = await t.app.request(path, { headers });
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      const body = await first.text();
      expect((await t.app.request(path, { headers: { ...headers, 'If-None-Match': etag } })).status).toBe(304);
      await t.db.sql`revoke execute on function api.search_content, api.list_search_suggestions from anon, authenticated`;
      try {
        const again = await t.app.request(path, { headers });
        expect(again.status).toBe(200);
        expect(await again.text()).toBe(body);
      } finally {
        await t.db.sql`grant execute on function api.search_content, api.list_search_suggestions to anon, authenticated`;
      }
      expect((await t.app.request(path)).status).toBe(401);
    }
  });

  it('GET /search/health answers ok without credentials', async () => {
    const res = await t.app.request('/search/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', checks: healthyChecks(t) });
  });
});
