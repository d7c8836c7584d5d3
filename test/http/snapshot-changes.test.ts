import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type CatalogSpec, type InsertedCatalog } from '../helpers/content.js';
import { postJson } from '../helpers/requests.js';
import { testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

type User = Awaited<ReturnType<typeof testUser>>;

const BEFORE: CatalogSpec = {
  domains: [
    {
      slug: 'data',
      trails: [
        { slug: 'sql', concepts: [{ slug: 'basics', sparks: ['select', 'filter'] }, { slug: 'joins', sparks: ['join'] }] },
        { slug: 'python', concepts: [{ slug: 'py', sparks: ['loops'] }] },
      ],
    },
  ],
  spark_links: [{ source: 'select', target: 'filter' }],
};
// The next version: select renamed, filter gone (from the trail and the catalog), window new,
// join now requires select; python untouched.
const AFTER: CatalogSpec = {
  domains: [
    {
      slug: 'data',
      trails: [
        { slug: 'sql', concepts: [{ slug: 'basics', sparks: [{ slug: 'select', title: 'SELECT, properly' }] }, { slug: 'joins', sparks: ['join', 'window'] }] },
        { slug: 'python', concepts: [{ slug: 'py', sparks: ['loops'] }] },
      ],
    },
  ],
  spark_links: [{ source: 'select', target: 'join' }],
};

interface Change {
  type: string;
  id: string;
  slug: string;
  title: string;
  change: string;
  fields: string[] | null;
}

describe('snapshot changes', () => {
  let t: TestApp;
  let before: InsertedCatalog;
  let after: InsertedCatalog;
  let user: User;
  let journeys: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    user = await testUser();
    before = await insertCatalog(t.db.sql, BEFORE);
    journeys = {};
    for (const slug of ['sql', 'python']) {
      const res = await postJson(t, '/user/me/journeys', user, { trail_id: before.id('trail', slug) });
      journeys[slug] = (await res.json()).id;
    }
    after = await insertCatalog(t.db.sql, AFTER, { ids: before.ids, parent_snapshot_id: before.snapshotId });
  });
  afterAll(() => t.close());

  const get = (path: string, headers: Record<string, string> = user.headers) => t.app.request(path, { headers });
  const changes = async (path: string) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    return (await res.json()) as { snapshot_id: string; since: string; trail_id: string | null; data: Change[]; meta: Record<string, unknown> };
  };
  const byTypeThenId = (a: Change, b: Change) => {
    const order = ['category', 'domain', 'trail', 'concept', 'spark', 'beacon'];
    return order.indexOf(a.type) - order.indexOf(b.type) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  };

  it('GET /snapshots/{id}/changes lists every entity added, removed or changed, by stable id, with the changed fields', async () => {
    const body = await changes(`/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}`);
    const expected: Change[] = [
      { type: 'concept', id: before.id('concept', 'basics'), slug: 'basics', title: 'Basics', change: 'changed', fields: ['sparks'] },
      { type: 'concept', id: before.id('concept', 'joins'), slug: 'joins', title: 'Joins', change: 'changed', fields: ['sparks'] },
      { type: 'spark', id: before.id('spark', 'select'), slug: 'select', title: 'SELECT, properly', change: 'changed', fields: ['title'] },
      { type: 'spark', id: before.id('spark', 'filter'), slug: 'filter', title: 'Filter', change: 'removed', fields: null },
      { type: 'spark', id: before.id('spark', 'join'), slug: 'join', title: 'Join', change: 'changed', fields: ['prerequisites'] },
      { type: 'spark', id: after.id('spark', 'window'), slug: 'window', title: 'Window', change: 'added', fields: null },
    ].sort(byTypeThenId);
    expect(body).toEqual({
      snapshot_id: after.snapshotId,
      since: before.snapshotId,
      trail_id: null,
      data: expected,
      meta: { total: 6, page: 1, per_page: 20, total_pages: 1, has_next: false, has_prev: false },
    });

    // Pages cut the same order; the other direction swaps added and removed.
    const second = await changes(`/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}&page=2&per_page=4`);
    expect(second.data).toEqual(expected.slice(4));
    expect(second.meta).toMatchObject({ total: 6, total_pages: 2, has_prev: true, has_next: false });
    const back = await changes(`/snapshots/${before.snapshotId}/changes?since=${after.snapshotId}`);
    expect(back.data.find((c) => c.slug === 'window')?.change).toBe('removed');
    expect(back.data.find((c) => c.slug === 'filter')?.change).toBe('added');
    expect((await changes(`/snapshots/${after.snapshotId}/changes?since=${after.snapshotId}`)).data).toEqual([]);
  });

  it('GET /snapshots/{id}/changes?trail= keeps the trail’s own entities, by slug or id', async () => {
    const python = await changes(`/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}&trail=python`);
    expect(python).toMatchObject({ trail_id: before.id('trail', 'python'), data: [], meta: { total: 0 } });
    const sql = await changes(`/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}&trail=${before.id('trail', 'sql')}`);
    expect(sql.data.map((c) => `${c.type}:${c.slug}:${c.change}`).sort()).toEqual(
      ['concept:basics:changed', 'concept:joins:changed', 'spark:filter:removed', 'spark:join:changed', 'spark:select:changed', 'spark:window:added'].sort(),
    );
    const unknown = await get(`/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}&trail=rust`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: 'NOT_FOUND', details: { trail: 'rust' } });
  });

  it('journeys say whether their trail changed since enrollment and link to that trail’s change list', async () => {
    const list = await (await get('/user/me/journeys')).json();
    const bySlug = Object.fromEntries(list.data.map((j: { trail: { slug: string } }) => [j.trail.slug, j]));
    const url = `/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}&trail=${before.id('trail', 'sql')}`;
    expect(bySlug.sql).toMatchObject({ content_changed_since_enrollment: true, content_changes_url: url });
    expect(bySlug.python).toMatchObject({ content_changed_since_enrollment: false, content_changes_url: null });
    const detail = await (await get(`/user/me/journeys/${journeys.sql}`)).json();
    expect(detail).toMatchObject({ content_changed_since_enrollment: true, content_changes_url: url });
    expect((await changes(url)).meta.total).toBe(6);

    // Enrolling now: nothing has changed since.
    const fresh = await testUser();
    const enrolled = await (await postJson(t, '/user/me/journeys', fresh, { trail_id: after.id('trail', 'sql') })).json();
    expect(enrolled).toMatchObject({ content_changed_since_enrollment: false, content_changes_url: null });
  });

  it('answers with an ETag, 304 on If-None-Match, and to service callers; 401 without credentials', async () => {
    const path = `/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}`;
    const first = await get(path);
    expect(first.headers.get('cache-control')).toBe('private, max-age=3600');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(new RegExp(`^"${after.snapshotId}\\.`));
    expect((await get(path, { ...user.headers, 'If-None-Match': etag })).status).toBe(304);
    const service = await get(path, { 'X-Service-Auth': TEST_SERVICE_SECRET });
    expect(service.status).toBe(200);
    expect((await service.json()).meta.total).toBe(6);
    const anonymous = await get(path, {});
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe('UNAUTHORIZED');
  });

  it('returns 400 VALIDATION_ERROR for a missing or malformed since, id or page, 404 for an unknown snapshot', async () => {
    for (const [path, field] of [
      [`/snapshots/${after.snapshotId}/changes`, 'since'],
      [`/snapshots/${after.snapshotId}/changes?since=yesterday`, 'since'],
      [`/snapshots/not-a-uuid/changes?since=${before.snapshotId}`, 'id'],
      [`/snapshots/${after.snapshotId}/changes?since=${before.snapshotId}&per_page=101`, 'per_page'],
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      const error = (await res.json()).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.issues.map((i: { field: string }) => i.field)).toContain(field);
    }
    const unknownSince = await get(`/snapshots/${after.snapshotId}/changes?since=${randomUUID()}`);
    expect(unknownSince.status).toBe(404);
    expect((await unknownSince.json()).error.code).toBe('NOT_FOUND');
    expect((await get(`/snapshots/${randomUUID()}/changes?since=${before.snapshotId}`)).status).toBe(404);
  });
});
