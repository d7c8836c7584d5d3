import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { importBundle, smallBundle } from '../helpers/bundle.js';
import { testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('snapshots routes', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    headers = (await testUser()).headers;
  });
  afterAll(() => t.close());

  describe('on an empty database', () => {
    it('GET /snapshots/current returns 404 NOT_FOUND saying no snapshot has been published', async () => {
      const res = await t.app.request('/snapshots/current', { headers });
      expect(res.status).toBe(404);
      const body = await res.json();
      expect(body.error.code).toBe('NOT_FOUND');
      expect(body.error.message).toMatch(/no snapshot has been published/i);
    });

    it('GET /snapshots returns an empty page with all six meta fields', async () => {
      const res = await t.app.request('/snapshots', { headers });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        data: [],
        meta: { total: 0, page: 1, per_page: 20, total_pages: 0, has_next: false, has_prev: false },
      });
    });
  });

  describe('with an archived, a current and a draft snapshot', () => {
    let archived: string;
    let current: string;
    let draft: string;
    beforeAll(async () => {
      archived = (await importBundle(t.db.sql, smallBundle({ name: 'First', version_label: '1.0' }), { promote: true })).snapshot_id!;
      current = (await importBundle(t.db.sql, smallBundle({ name: 'Second', version_label: '2.0', extraSparks: 2 }), { promote: true })).snapshot_id!;
      draft = (await importBundle(t.db.sql, smallBundle({ name: 'Third', version_label: '3.0', extraSparks: 5 }))).snapshot_id!;
    });

    it('GET /snapshots returns every field of each snapshot, newest first, with default pagination', async () => {
      const res = await t.app.request('/snapshots', { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.json();
      expect(body.meta).toEqual({ total: 3, page: 1, per_page: 20, total_pages: 1, has_next: false, has_prev: false });
      expect(body.data.map((s: { id: string }) => s.id)).toEqual([draft, current, archived]);
      const [third, second] = body.data;
      expect(Object.keys(third).sort()).toEqual(
        ['created_at', 'description', 'entity_counts', 'id', 'name', 'published_at', 'status', 'version_label'],
      );
      expect(third).toMatchObject({ name: 'Third', version_label: '3.0', description: 'For tests', status: 'draft', published_at: null });
      expect(third.entity_counts).toEqual({ domains: 2, trails: 3, concepts: 4, sparks: 11 });
      expect(third.created_at).toMatch(ISO);
      expect(second).toMatchObject({ name: 'Second', status: 'published' });
      expect(second.entity_counts).toEqual({ domains: 2, trails: 3, concepts: 4, sparks: 8 });
      expect(second.published_at).toMatch(ISO);
      expect(body.data[2].status).toBe('archived');
    });

    it('GET /snapshots pages with per_page and reports has_next and has_prev', async () => {
      const first = await (await t.app.request('/snapshots?per_page=2', { headers })).json();
      expect(first.meta).toEqual({ total: 3, page: 1, per_page: 2, total_pages: 2, has_next: true, has_prev: false });
      expect(first.data).toHaveLength(2);
      const second = await (await t.app.request('/snapshots?per_page=2&page=2', { headers })).json();
      expect(second.meta).toEqual({ total: 3, page: 2, per_page: 2, total_pages: 2, has_next: false, has_prev: true });
      expect(second.data.map((s: { id: string }) => s.id)).toEqual([archived]);
      const beyond = await (await t.app.request('/snapshots?per_page=2&page=5', { headers })).json();
      expect(beyond.data).toEqual([]);
      expect(beyond.meta).toMatchObject({ page: 5, has_next: false, has_prev: true });
    });

    it('GET /snapshots?status=archived returns only archived snapshots', async () => {
      const body = await (await t.app.request('/snapshots?status=archived', { headers })).json();
      expect(body.data.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([[archived, 'archived']]);
      expect(body.meta.total).toBe(1);
      const drafts = await (await t.app.request('/snapshots?status=draft', { headers })).json();
      expect(drafts.data.map((s: { id: string }) => s.id)).toEqual([draft]);
    });

    it('GET /snapshots returns 400 for a bad status, per_page above 100 and page 0', async () => {
      for (const query of ['status=live', 'per_page=101', 'per_page=0', 'page=0', 'page=abc']) {
        const res = await t.app.request(`/snapshots?${query}`, { headers });
        expect(res.status, query).toBe(400);
        const body = await res.json();
        expect(body.error.code).toBe('VALIDATION_ERROR');
        expect(body.error.details.issues[0].field).toBe(query.split('=')[0]);
      }
      const max = await t.app.request('/snapshots?per_page=100', { headers });
      expect(max.status).toBe(200);
      expect((await max.json()).meta.per_page).toBe(100);
    });

    it('GET /snapshots/current returns the published snapshot with all eight counts and its parent', async () => {
      const res = await t.app.request('/snapshots/current', { headers });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ id: current, name: 'Second', version_label: '2.0', status: 'published', parent_snapshot_id: archived });
      expect(body.entity_counts).toEqual({
        domains: 2, trails: 3, concepts: 4, sparks: 8, beacons: 1, concept_sparks: 8, spark_links: 3, concept_links: 1,
      });
      expect(body.published_at).toMatch(ISO);
      expect(body.created_at).toMatch(ISO);
    });

    it('GET /snapshots/{id} returns a draft with its parent and the four counts', async () => {
      const res = await t.app.request(`/snapshots/${draft}`, { headers });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toEqual({
        id: draft,
        name: 'Third',
        version_label: '3.0',
        description: 'For tests',
        status: 'draft',
        entity_counts: { domains: 2, trails: 3, concepts: 4, sparks: 11 },
        created_at: expect.stringMatching(ISO),
        published_at: null,
        parent_snapshot_id: current,
      });
      const first = await (await t.app.request(`/snapshots/${archived}`, { headers })).json();
      expect(first).toMatchObject({ status: 'archived', parent_snapshot_id: null });
    });

    it('GET /snapshots/{id} returns 404 for an unknown id and 400 for a malformed one', async () => {
      const unknown = await t.app.request('/snapshots/7b0c7d0e-9a3f-4a56-8c1e-2f3a4b5c6d7e', { headers });
      expect(unknown.status).toBe(404);
      expect((await unknown.json()).error.code).toBe('NOT_FOUND');
      const malformed = await t.app.request('/snapshots/not-a-uuid', { headers });
      expect(malformed.status).toBe(400);
      const body = await malformed.json();
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.issues[0].field).toBe('id');
    });

    it('answers 401 UNAUTHORIZED without a token and lets a service caller read', async () => {
      for (const path of ['/snapshots', '/snapshots/current', `/snapshots/${current}`]) {
        const res = await t.app.request(path);
        expect(res.status, path).toBe(401);
        expect((await res.json()).error.code).toBe('UNAUTHORIZED');
      }
      const service = await t.app.request('/snapshots/current', { headers: { 'X-Service-Auth': TEST_SERVICE_SECRET } });
      expect(service.status).toBe(200);
      expect((await service.json()).id).toBe(current);
    });
  });
});
