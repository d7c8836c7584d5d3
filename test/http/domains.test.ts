import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { requestJson } from '../helpers/requests.js';
import { insertCatalog, type CatalogSpec, type InsertedCatalog } from '../helpers/content.js';

const CATALOG: CatalogSpec = {
  categories: [{ slug: 'tech' }, { slug: 'arts' }, { slug: 'lonely' }],
  domains: [
    {
      slug: 'data',
      name: 'Data',
      description: 'All about data',
      icon: 'db',
      color: '#0A0B0C',
      category: 'tech',
      learning_outcomes: ['Query tables', 'Model data'],
      trails: [
        { slug: 't-one', title: 'One', concepts: [{ slug: 'c1', sparks: [{ slug: 's1', estimated_mins: 4 }] }, { slug: 'c2' }] },
        { slug: 't-two', title: 'Two', concepts: [{ slug: 'c3', sparks: [{ slug: 's2', estimated_mins: 6 }, 's1'] }] },
        { slug: 't-three', title: 'Three', concepts: [] },
      ],
    },
    { slug: 'web', name: 'Web', category: 'tech' },
    { slug: 'cloud', name: 'Cloud', category: 'tech' },
    { slug: 'secret-tech', name: 'Secret Tech', category: 'tech', is_published: false },
    { slug: 'music', name: 'Music', category: 'arts' },
    { slug: 'solo', name: 'Solo', category: 'lonely' },
    { slug: 'loose', name: 'Loose' },
  ],
};

describe('domains routes', () => {
  let t: TestApp;
  let catalog: InsertedCatalog;
  beforeAll(async () => {
    t = await createTestApp();
    catalog = await insertCatalog(t.db.sql, CATALOG);
  });
  afterAll(() => t.close());

  const get = (path: string, init?: RequestInit) => requestJson(t, path, init);

  describe('GET /discovery/domains/', () => {
    it('lists published domains only, paginated with the six meta fields (per_page max 100)', async () => {
      const { res, body } = await get('/discovery/domains/?per_page=4&page=2');
      expect(res.status).toBe(200);
      // published in name order: Cloud, Data, Loose, Music, Solo, Web
      expect(body.data.map((d: { slug: string }) => d.slug)).toEqual(['solo', 'web']);
      expect(body.meta).toEqual({ total: 6, page: 2, per_page: 4, total_pages: 2, has_next: false, has_prev: true });
      expect((await get('/discovery/domains/?per_page=101')).res.status).toBe(400);
    });
  });

  describe('GET /discovery/domains/{slug}', () => {
    it('returns exactly the domain detail fields', async () => {
      const { res, body } = await get('/discovery/domains/data');
      expect(res.status).toBe(200);
      expect(body).toEqual({
        id: catalog.id('domain', 'data'),
        slug: 'data',
        name: 'Data',
        description: 'All about data',
        icon: 'db',
        color: '#0A0B0C',
        is_published: true,
        trail_count: 3,
        category_id: catalog.id('category', 'tech'),
        learning_outcomes: ['Query tables', 'Model data'],
      });
    });

    it('accepts a UUID as well as a slug, with the same body and ETag', async () => {
      const bySlug = await t.app.request('/discovery/domains/data');
      const byId = await t.app.request(`/discovery/domains/${catalog.id('domain', 'data')}`);
      expect(byId.status).toBe(200);
      expect(await byId.json()).toEqual(await bySlug.json());
      const trailsBySlug = await get('/discovery/domains/data/trails');
      const trailsById = await get(`/discovery/domains/${catalog.id('domain', 'data').toUpperCase()}/trails`);
      expect(trailsById.body).toEqual(trailsBySlug.body);
    });

    it('returns an unpublished domain with is_published false and a null category when it has none', async () => {
      expect((await get('/discovery/domains/secret-tech')).body.is_published).toBe(false);
      expect((await get('/discovery/domains/loose')).body.category_id).toBeNull();
    });

    it('returns 404 NOT_FOUND for an unknown slug or UUID', async () => {
      for (const path of ['/discovery/domains/nope', '/discovery/domains/00000000-0000-4000-8000-000000000000', '/discovery/domains/nope/trails', '/discovery/domains/nope/related']) {
        const { res, body } = await get(path);
        expect(res.status).toBe(404);
        expect(body.error.code).toBe('NOT_FOUND');
      }
    });
  });

  describe('GET /discovery/domains/{slug}/trails', () => {
    it('returns the domain fields, a page of trails and trail_meta with total_concept_count', async () => {
      const { res, body } = await get('/discovery/domains/data/trails?trail_limit=2');
      expect(res.status).toBe(200);
      expect(Object.keys(body).sort()).toEqual(['color', 'description', 'icon', 'id', 'name', 'slug', 'trail_count', 'trail_meta', 'trails']);
      expect(body.trails).toEqual([
        { id: catalog.id('trail', 't-one'), title: 'One', slug: 't-one', estimated_mins: 4 },
        { id: catalog.id('trail', 't-two'), title: 'Two', slug: 't-two', estimated_mins: 10 },
      ]);
      expect(body.trail_meta).toEqual({ total: 3, page: 1, per_page: 2, total_pages: 2, has_next: true, has_prev: false, total_concept_count: 3 });
    });

    it('page applies to the trails; trail_limit defaults to 5 and is at most 100', async () => {
      const second = await get('/discovery/domains/data/trails?trail_limit=2&page=2');
      expect(second.body.trails.map((x: { slug: string }) => x.slug)).toEqual(['t-three']);
      expect(second.body.trail_meta).toMatchObject({ page: 2, has_next: false, has_prev: true });
      expect((await get('/discovery/domains/data/trails')).body.trail_meta.per_page).toBe(5);
      const tooMany = await get('/discovery/domains/data/trails?trail_limit=101');
      expect(tooMany.res.status).toBe(400);
      expect(tooMany.body.error.details.issues[0].field).toBe('trail_limit');
      expect((await get('/discovery/domains/data/trails?page=0')).res.status).toBe(400);
    });
  });

  describe('GET /discovery/domains/{slug}/related', () => {
    it('rule 1 and 2: returns published domains of the same category, the requested one excluded', async () => {
      const { res, body } = await get('/discovery/domains/data/related');
      expect(res.status).toBe(200);
      expect(body.data.map((d: { slug: string }) => d.slug)).toEqual(['cloud', 'web']);
      expect(Object.keys(body.data[0]).sort()).toEqual(['color', 'description', 'icon', 'id', 'name', 'slug', 'trail_count']);
      expect(body.meta).toEqual({ total: 2, page: 1, per_page: 4 });
    });

    it('limit bounds the related domains (default 4, max 10)', async () => {
      const one = await get('/discovery/domains/web/related?limit=1');
      expect(one.body.data.map((d: { slug: string }) => d.slug)).toEqual(['cloud']);
      expect(one.body.meta).toEqual({ total: 2, page: 1, per_page: 1 });
      const bad = await get('/discovery/domains/web/related?limit=11');
      expect(bad.res.status).toBe(400);
      expect(bad.body.error.details.issues[0].field).toBe('limit');
    });

    it('rule 3: a domain without a category gets other published domains instead', async () => {
      const { body } = await get('/discovery/domains/loose/related?limit=10');
      const slugs = body.data.map((d: { slug: string }) => d.slug);
      expect(slugs.sort()).toEqual(['cloud', 'data', 'music', 'solo', 'web']);
      expect(body.meta).toEqual({ total: 5, page: 1, per_page: 10 });
    });

    it('rule 3: a domain whose category has no other domain gets other published domains instead', async () => {
      const { body } = await get('/discovery/domains/solo/related');
      expect(body.data).toHaveLength(4);
      const slugs = body.data.map((d: { slug: string }) => d.slug);
      expect(slugs).not.toContain('solo');
      expect(slugs).not.toContain('secret-tech');
      // The shuffle is seeded by the domain: the same request gives the same (cacheable) answer.
      expect((await get('/discovery/domains/solo/related')).body).toEqual(body);
    });
  });

  describe('caching across promote and rollback', () => {
    it('a promote changes the ETag of current-snapshot reads; a rollback brings the old one back', async () => {
      const path = '/discovery/domains/data';
      const before = await t.app.request(path);
      const etag = before.headers.get('etag')!;
      expect(before.headers.get('cache-control')).toBe('public, max-age=60');
      expect((await t.app.request(path, { headers: { 'If-None-Match': etag } })).status).toBe(304);

      // Promote (the content lifecycle's own function): a new draft becomes current.
      const next = await insertCatalog(t.db.sql, { domains: [{ slug: 'data', name: 'Data v2' }] }, { ids: catalog.ids, status: 'draft' });
      const unchanged = await t.app.request(path, { headers: { 'If-None-Match': etag } });
      expect(unchanged.status).toBe(304); // a draft does not change current reads
      await t.db.sql`select private.promote_snapshot(${next.snapshotId}::uuid)`;
      const after = await t.app.request(path, { headers: { 'If-None-Match': etag } });
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).not.toBe(etag);
      expect((await after.json()).name).toBe('Data v2');

      // Rollback: the earlier snapshot is current again, and so is its ETag.
      await t.db.sql`select private.rollback_snapshot(${catalog.snapshotId}::uuid)`;
      const rolledBack = await t.app.request(path, { headers: { 'If-None-Match': etag } });
      expect(rolledBack.status).toBe(304);
      expect((await (await t.app.request(path)).json()).name).toBe('Data');
    });
  });
});
