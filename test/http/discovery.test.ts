import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, healthyChecks, type TestApp } from '../helpers/app.js';
import { requestJson } from '../helpers/requests.js';
import { insertCatalog, type CatalogSpec, type InsertedCatalog } from '../helpers/content.js';
import { signToken } from '../helpers/tokens.js';

/**
 * A small catalog whose derived figures are easy to check by hand:
 *   data: sql-basics (beginner; select: select-star 5 + where 10, joins: inner-join 7 + where again)
 *         advanced-sql (advanced; window-functions: window-rank 12)
 *   web:  html-intro (beginner; tags: tag-basics 3)
 *   hidden (unpublished)
 */
const CATALOG: CatalogSpec = {
  categories: [{ slug: 'tech' }],
  domains: [
    {
      slug: 'data',
      name: 'Data',
      description: 'Data things',
      icon: 'db',
      color: '#112233',
      category: 'tech',
      trails: [
        {
          slug: 'sql-basics',
          title: 'SQL Basics',
          description: 'Start here',
          difficulty_level: 'beginner',
          concepts: [
            { slug: 'select', title: 'Select', sparks: [{ slug: 'select-star', estimated_mins: 5 }, { slug: 'where', estimated_mins: 10, difficulty: 'intermediate' }] },
            { slug: 'joins', title: 'Joins', sparks: [{ slug: 'inner-join', estimated_mins: 7 }, 'where'] },
          ],
        },
        {
          slug: 'advanced-sql',
          title: 'Advanced SQL',
          difficulty_level: 'advanced',
          concepts: [{ slug: 'window-functions', title: 'Window Functions', sparks: [{ slug: 'window-rank', estimated_mins: 12, difficulty: 'advanced' }] }],
        },
      ],
    },
    {
      slug: 'web',
      name: 'Web',
      category: 'tech',
      trails: [{ slug: 'html-intro', title: 'HTML Intro', difficulty_level: 'beginner', concepts: [{ slug: 'tags', title: 'Tags', sparks: [{ slug: 'tag-basics', estimated_mins: 3 }] }] }],
    },
    { slug: 'hidden', name: 'Hidden', is_published: false, trails: [] },
  ],
};

const keys = (value: object) => Object.keys(value).sort();

describe('discovery routes', () => {
  let t: TestApp;
  let catalog: InsertedCatalog;
  beforeAll(async () => {
    t = await createTestApp();
    catalog = await insertCatalog(t.db.sql, CATALOG);
  });
  afterAll(() => t.close());

  const get = (path: string, init?: RequestInit) => requestJson(t, path, init);

  describe('GET /discovery/domains', () => {
    it('returns published domains in name order with derived counts and trail previews', async () => {
      const { res, body } = await get('/discovery/domains');
      expect(res.status).toBe(200);
      expect(body.data.map((d: { slug: string }) => d.slug)).toEqual(['data', 'web']);
      expect(body.data[0]).toEqual({
        id: catalog.id('domain', 'data'),
        slug: 'data',
        name: 'Data',
        description: 'Data things',
        icon: 'db',
        color: '#112233',
        trail_count: 2,
        concept_count: 3,
        // where appears twice in the domain and counts once: select-star, where, inner-join, window-rank
        spark_count: 4,
        estimated_mins: 5 + 10 + 7 + 12,
        trails: [
          { id: catalog.id('trail', 'sql-basics'), slug: 'sql-basics', title: 'SQL Basics', estimated_mins: 22 },
          { id: catalog.id('trail', 'advanced-sql'), slug: 'advanced-sql', title: 'Advanced SQL', estimated_mins: 12 },
        ],
      });
      expect(body.meta).toEqual({ total: 2, page: 1, per_page: 20, total_pages: 1, has_next: false, has_prev: false });
    });

    it('previews at most trail_limit trails per domain (default 5)', async () => {
      const { body } = await get('/discovery/domains?trail_limit=1&per_page=1&page=1');
      expect(body.data).toHaveLength(1);
      expect(body.data[0].trails.map((x: { slug: string }) => x.slug)).toEqual(['sql-basics']);
      expect(body.meta).toEqual({ total: 2, page: 1, per_page: 1, total_pages: 2, has_next: true, has_prev: false });
    });

    it('GET /discovery/domains/ (trailing slash) is the plain domains list: exactly id, slug, name, description, icon, color, trail_count', async () => {
      const { res, body } = await get('/discovery/domains/');
      expect(res.status).toBe(200);
      expect(body.data.map((d: { slug: string }) => d.slug)).toEqual(['data', 'web']);
      expect(keys(body.data[0])).toEqual(['color', 'description', 'icon', 'id', 'name', 'slug', 'trail_count']);
      expect(body.data[1]).toMatchObject({ slug: 'web', trail_count: 1 });
    });
  });

  describe('GET /discovery/trails', () => {
    it('returns trails in title order with exactly the trail fields and concept previews', async () => {
      const { res, body } = await get('/discovery/trails');
      expect(res.status).toBe(200);
      expect(body.data.map((x: { slug: string }) => x.slug)).toEqual(['advanced-sql', 'html-intro', 'sql-basics']);
      const sql = body.data[2];
      expect(sql).toEqual({
        id: catalog.id('trail', 'sql-basics'),
        slug: 'sql-basics',
        title: 'SQL Basics',
        description: 'Start here',
        difficulty_level: 'beginner',
        concept_count: 2,
        spark_count: 3,
        estimated_mins: 22,
        concepts: [
          { id: catalog.id('concept', 'select'), slug: 'select', title: 'Select', estimated_mins: 15 },
          { id: catalog.id('concept', 'joins'), slug: 'joins', title: 'Joins', estimated_mins: 17 },
        ],
      });
    });

    it('filters by domain slug and difficulty, and honours concept_limit', async () => {
      const { body } = await get('/discovery/trails?domain=data&difficulty=beginner&concept_limit=1');
      expect(body.data.map((x: { slug: string }) => x.slug)).toEqual(['sql-basics']);
      expect(body.data[0].concepts).toHaveLength(1);
      expect(body.meta.total).toBe(1);
    });

    it('returns 404 for an unknown domain slug', async () => {
      const { res, body } = await get('/discovery/trails?domain=nope');
      expect(res.status).toBe(404);
      expect(body.error).toMatchObject({ code: 'NOT_FOUND', details: { domain: 'nope' } });
    });
  });

  describe('GET /discovery/concepts', () => {
    it('returns the concepts of a trail in position order with exactly the concept fields and spark previews', async () => {
      const { res, body } = await get('/discovery/concepts?trail=sql-basics&spark_limit=1');
      expect(res.status).toBe(200);
      expect(body.data).toEqual([
        {
          id: catalog.id('concept', 'select'),
          slug: 'select',
          title: 'Select',
          description: '',
          order_index: 0,
          spark_count: 2,
          estimated_mins: 15,
          sparks: [{ id: catalog.id('spark', 'select-star'), slug: 'select-star', title: 'Select Star', estimated_mins: 5 }],
        },
        {
          id: catalog.id('concept', 'joins'),
          slug: 'joins',
          title: 'Joins',
          description: '',
          order_index: 1,
          spark_count: 2,
          estimated_mins: 17,
          sparks: [{ id: catalog.id('spark', 'inner-join'), slug: 'inner-join', title: 'Inner Join', estimated_mins: 7 }],
        },
      ]);
    });

    it('without a trail lists every concept in title order with spark_limit default 3', async () => {
      const { body } = await get('/discovery/concepts');
      expect(body.data.map((x: { slug: string }) => x.slug)).toEqual(['joins', 'select', 'tags', 'window-functions']);
      expect(body.meta.total).toBe(4);
    });

    it('returns 404 for an unknown trail slug', async () => {
      const { res, body } = await get('/discovery/concepts?trail=nope');
      expect(res.status).toBe(404);
      expect(body.error).toMatchObject({ code: 'NOT_FOUND', details: { trail: 'nope' } });
    });
  });

  describe('GET /discovery/sparks', () => {
    it('returns the sparks of a concept in position order with exactly the spark fields', async () => {
      const { body } = await get('/discovery/sparks?concept=select');
      expect(body.data).toEqual([
        { id: catalog.id('spark', 'select-star'), slug: 'select-star', title: 'Select Star', summary: 'About select-star', difficulty: 'beginner', estimated_mins: 5 },
        { id: catalog.id('spark', 'where'), slug: 'where', title: 'Where', summary: 'About where', difficulty: 'intermediate', estimated_mins: 10 },
      ]);
    });

    it('filters by difficulty, alone or within a concept', async () => {
      const all = await get('/discovery/sparks?difficulty=beginner');
      expect(all.body.data.map((x: { slug: string }) => x.slug)).toEqual(['inner-join', 'select-star', 'tag-basics']);
      const inConcept = await get('/discovery/sparks?concept=select&difficulty=intermediate');
      expect(inConcept.body.data.map((x: { slug: string }) => x.slug)).toEqual(['where']);
      expect(inConcept.body.meta.total).toBe(1);
    });

    it('returns 404 for an unknown concept slug', async () => {
      const { res } = await get('/discovery/sparks?concept=nope');
      expect(res.status).toBe(404);
    });
  });

  describe('GET /discovery/facets', () => {
    it('counts domains, tracks, difficulties (trails) and types over the whole catalog', async () => {
      const { res, body } = await get('/discovery/facets');
      expect(res.status).toBe(200);
      expect(body.types).toEqual([
        { type: 'DOMAIN', count: 2 },
        { type: 'TRAIL', count: 3 },
        { type: 'CONCEPT', count: 4 },
      ]);
      // data: itself + 2 trails + 3 concepts; web: itself + 1 trail + 1 concept
      expect(body.domains).toEqual([
        { slug: 'data', name: 'Data', count: 6 },
        { slug: 'web', name: 'Web', count: 3 },
      ]);
      expect(body.tracks).toEqual([
        { slug: 'advanced-sql', name: 'Advanced SQL', count: 2 },
        { slug: 'html-intro', name: 'HTML Intro', count: 2 },
        { slug: 'sql-basics', name: 'SQL Basics', count: 3 },
      ]);
      expect(body.difficulties).toEqual([
        { level: 'beginner', count: 2 },
        { level: 'intermediate', count: 0 },
        { level: 'advanced', count: 1 },
        { level: 'expert', count: 0 },
      ]);
    });

    it('lists only published domains in the domain facet', async () => {
      await t.db.sql`insert into app.trails (snapshot_id, id, domain_id, slug, title, difficulty_level)
                     values (${catalog.snapshotId}, gen_random_uuid(), ${catalog.id('domain', 'hidden')}, 'hidden-trail', 'Hidden Trail', 'expert')`;
      // Content written directly gets its derived rows (rollups, stored items and facets) as the import's would.
      await t.db.sql`select private.refresh_content_rollups(${catalog.snapshotId})`;
      try {
        const { body } = await get('/discovery/facets?difficulty=expert');
        expect(body.domains).toEqual([]);
        expect(body.types).toContainEqual({ type: 'TRAIL', count: 1 });
      } finally {
        await t.db.sql`delete from app.trails where slug = 'hidden-trail'`;
        await t.db.sql`select private.refresh_content_rollups(${catalog.snapshotId})`;
      }
    });

    it('scopes the facets by domain, track and difficulty', async () => {
      const byDomain = await get('/discovery/facets?domain=web');
      expect(byDomain.body.types).toEqual([
        { type: 'DOMAIN', count: 1 },
        { type: 'TRAIL', count: 1 },
        { type: 'CONCEPT', count: 1 },
      ]);
      const byTrack = await get('/discovery/facets?track=sql-basics');
      expect(byTrack.body.types.map((x: { count: number }) => x.count)).toEqual([0, 0, 2]);
      expect(byTrack.body.tracks).toEqual([{ slug: 'sql-basics', name: 'SQL Basics', count: 2 }]);
      const byDifficulty = await get('/discovery/facets?difficulty=advanced');
      expect(byDifficulty.body.types.map((x: { count: number }) => x.count)).toEqual([0, 1, 0]);
      expect(byDifficulty.body.domains).toEqual([{ slug: 'data', name: 'Data', count: 1 }]);
    });

    it('returns 404 for an unknown track slug', async () => {
      const { res, body } = await get('/discovery/facets?track=nope');
      expect(res.status).toBe(404);
      expect(body.error.details).toEqual({ track: 'nope' });
    });
  });

  describe('GET /discovery/browse', () => {
    it('returns the domain -> trail -> concept tree with counts at every level', async () => {
      const { res, body } = await get('/discovery/browse');
      expect(res.status).toBe(200);
      expect(body.meta).toEqual({ total: 2, page: 1, per_page: 20, total_pages: 1, has_next: false, has_prev: false });
      const data = body.data[0];
      expect(keys(data)).toEqual(['color', 'concept_count', 'description', 'estimated_mins', 'icon', 'id', 'name', 'slug', 'spark_count', 'trail_count', 'trails']);
      expect(data.trails[0]).toEqual({
        id: catalog.id('trail', 'sql-basics'),
        slug: 'sql-basics',
        title: 'SQL Basics',
        difficulty_level: 'beginner',
        concept_count: 2,
        spark_count: 3,
        estimated_mins: 22,
        concepts: [
          { id: catalog.id('concept', 'select'), slug: 'select', title: 'Select', order_index: 0, spark_count: 2, estimated_mins: 15 },
          { id: catalog.id('concept', 'joins'), slug: 'joins', title: 'Joins', order_index: 1, spark_count: 2, estimated_mins: 17 },
        ],
      });
    });

    it('filters by difficulty (trails of that level, domains that have one) and limits trails and concepts', async () => {
      const { body } = await get('/discovery/browse?difficulty=advanced&concept_limit=0');
      expect(body.data.map((d: { slug: string }) => d.slug)).toEqual(['data']);
      expect(body.data[0].trails.map((x: { slug: string; concepts: unknown[] }) => [x.slug, x.concepts.length])).toEqual([['advanced-sql', 0]]);
      expect(body.meta.total).toBe(1);
      const limited = await get('/discovery/browse?domain=data&trail_limit=1');
      expect(limited.body.data[0].trails.map((x: { slug: string }) => x.slug)).toEqual(['sql-basics']);
    });
  });

  describe('snapshot selection', () => {
    it('snapshot_id selects a draft snapshot; without it the current snapshot answers', async () => {
      const draft = await insertCatalog(t.db.sql, { domains: [{ slug: 'draft-only', name: 'Draft Only' }] }, { status: 'draft' });
      const current = await get('/discovery/domains/');
      expect(current.body.data.map((d: { slug: string }) => d.slug)).toEqual(['data', 'web']);
      const drafted = await get(`/discovery/domains/?snapshot_id=${draft.snapshotId}`);
      expect(drafted.body.data.map((d: { slug: string }) => d.slug)).toEqual(['draft-only']);
      const detail = await get(`/discovery/domains/draft-only?snapshot_id=${draft.snapshotId}`);
      expect(detail.res.status).toBe(200);
      expect((await get('/discovery/domains/draft-only')).res.status).toBe(404);
    });

    it('snapshot_id selects an archived snapshot', async () => {
      const archived = await insertCatalog(t.db.sql, { domains: [{ slug: 'old-days', name: 'Old Days', trails: [{ slug: 'old-trail' }] }] }, { status: 'archived' });
      const { res, body } = await get(`/discovery/trails?snapshot_id=${archived.snapshotId}`);
      expect(res.status).toBe(200);
      expect(body.data.map((x: { slug: string }) => x.slug)).toEqual(['old-trail']);
    });

    it('an unknown snapshot_id is 404 and a malformed one is 400 naming snapshot_id', async () => {
      const unknown = await get('/discovery/all?snapshot_id=00000000-0000-4000-8000-000000000000');
      expect(unknown.res.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
      const malformed = await get('/discovery/sparks?snapshot_id=not-a-uuid');
      expect(malformed.res.status).toBe(400);
      expect(malformed.body.error.details.issues[0].field).toBe('snapshot_id');
    });
  });

  describe('caching', () => {
    it('public responses carry an ETag and Cache-Control; If-None-Match answers 304 with no body', async () => {
      const first = await t.app.request('/discovery/trails?domain=data');
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[0-9a-f-]{36}\.[A-Za-z0-9_-]{32}"$/); // snapshot version in clear . call digest
      expect(first.headers.get('cache-control')).toBe('public, max-age=60');
      const again = await t.app.request('/discovery/trails?domain=data', { headers: { 'If-None-Match': etag! } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      const weak = await t.app.request('/discovery/trails?domain=data', { headers: { 'If-None-Match': `"other", W/${etag}` } });
      expect(weak.status).toBe(304);
      const stale = await t.app.request('/discovery/trails?domain=data', { headers: { 'If-None-Match': '"stale"' } });
      expect(stale.status).toBe(200);
    });

    it('the ETag depends on the normalised query: defaults spelled out give the same tag, other params another', async () => {
      const plain = (await t.app.request('/discovery/concepts')).headers.get('etag');
      const spelled = (await t.app.request('/discovery/concepts?page=1&per_page=20&spark_limit=3')).headers.get('etag');
      const other = (await t.app.request('/discovery/concepts?spark_limit=2')).headers.get('etag');
      expect(spelled).toBe(plain);
      expect(other).not.toBe(plain);
    });

    it('a pinned snapshot_id read is cacheable for longer', async () => {
      const res = await t.app.request(`/discovery/sparks?snapshot_id=${catalog.snapshotId}`);
      expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    });

    it('304 revalidation does not run the content query', async () => {
      const res = await t.app.request('/discovery/facets?domain=data');
      const etag = res.headers.get('etag')!;
      // With the content function unavailable to anon, only a response that skips it can succeed.
      await t.db.sql`revoke execute on function api.get_discovery_facets(text, text, text, uuid) from anon`;
      try {
        const revalidated = await t.app.request('/discovery/facets?domain=data', { headers: { 'If-None-Match': etag } });
        expect(revalidated.status).toBe(304);
      } finally {
        await t.db.sql`grant execute on function api.get_discovery_facets(text, text, text, uuid) to anon`;
      }
    });
  });

  describe('input validation', () => {
    const cases: [string, string][] = [
      ['/discovery/trails?difficulty=hard', 'difficulty'],
      ['/discovery/sparks?difficulty=EASY', 'difficulty'],
      ['/discovery/trails?page=0', 'page'],
      ['/discovery/trails?page=-1', 'page'],
      ['/discovery/concepts?per_page=101', 'per_page'],
      ['/discovery/browse?per_page=51', 'per_page'],
      ['/discovery/sparks?per_page=2.5', 'per_page'],
      ['/discovery/sparks?page=abc', 'page'],
      ['/discovery/trails?concept_limit=51', 'concept_limit'],
      ['/discovery/concepts?spark_limit=x', 'spark_limit'],
      ['/discovery/domains?trail_limit=101', 'trail_limit'],
      ['/discovery/domains/?per_page=101', 'per_page'],
      ['/discovery/browse?trail_limit=21', 'trail_limit'],
      ['/discovery/all?types=domain,sparks', 'types'],
      ['/discovery/all?types=', 'types'],
      ['/discovery/all?nested_limit=11', 'nested_limit'],
      ['/discovery/all?nested_limit=-1', 'nested_limit'],
      ['/discovery/all?include_facets=yes', 'include_facets'],
      ['/discovery/all?q=', 'q'],
      ['/discovery/all?q=a%00b', 'q'],
      ['/discovery/domains/a%00b', 'slug'],
      ['/discovery/domains/a%20b/related', 'slug'],
      ['/discovery/all?domain=Not%20A%20Slug', 'domain'],
      ['/discovery/facets?difficulty=easy', 'difficulty'],
      ['/discovery/facets?snapshot_id=123', 'snapshot_id'],
    ];
    it.each(cases)('GET %s is 400 VALIDATION_ERROR naming %s', async (path, field) => {
      const { res, body } = await get(path);
      expect(res.status).toBe(400);
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.issues.map((i: { field: string }) => i.field)).toContain(field);
    });

    it('the SQL functions validate too (defence for direct callers): 22023 names the field', async () => {
      await expect(t.db.sql`select api.list_discovery_items(per_page => 0)`).rejects.toMatchObject({ code: '22023' });
      await expect(t.db.sql`select api.list_discovery_items(types => 'domain,spark')`).rejects.toMatchObject({ code: '22023' });
      await expect(t.db.sql`select api.list_discovery_trails(difficulty => 'hard')`).rejects.toMatchObject({ code: '22023' });
    });
  });

  it('a signed-in user reads the same catalog as an anonymous caller', async () => {
    const token = await signToken();
    const signedIn = await get('/discovery/concepts?trail=sql-basics', { headers: { Authorization: `Bearer ${token}` } });
    const anonymous = await get('/discovery/concepts?trail=sql-basics');
    expect(signedIn.res.status).toBe(200);
    expect(signedIn.body).toEqual(anonymous.body);
  });

  it('needs no authentication, but a present invalid bearer token is 401', async () => {
    const bad = await get('/discovery/trails', { headers: { Authorization: 'Bearer not-a-token' } });
    expect(bad.res.status).toBe(401);
    expect(bad.body.error.code).toBe('UNAUTHORIZED');
  });

  it('GET /discovery/health answers ok with the database check', async () => {
    const res = await t.app.request('/discovery/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', checks: healthyChecks(t) });
  });
});

describe('discovery routes without a published snapshot', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('applies no snapshot filter when nothing is published (selection rule 3)', async () => {
    await insertCatalog(t.db.sql, { domains: [{ slug: 'first-draft', trails: [{ slug: 'draft-trail' }] }] }, { status: 'draft' });
    const res = await t.app.request('/discovery/trails');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.data.map((x: { slug: string }) => x.slug)).toEqual(['draft-trail']);
  });

  it('the ETag of unfiltered reads changes when a snapshot is added', async () => {
    const before = (await t.app.request('/discovery/domains/')).headers.get('etag');
    await insertCatalog(t.db.sql, { domains: [{ slug: 'second-draft' }] }, { status: 'draft' });
    const after = await t.app.request('/discovery/domains/');
    expect(after.headers.get('etag')).not.toBe(before);
    expect((await after.json()).data.map((d: { slug: string }) => d.slug)).toEqual(['first-draft', 'second-draft']);
  });
});
