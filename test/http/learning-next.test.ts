import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type CatalogSpec } from '../helpers/content.js';
import { postJson } from '../helpers/requests.js';
import { signToken, testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

type User = Awaited<ReturnType<typeof testUser>>;

// Two trails sharing "select"; "join" needs "select" and "filter"; "window" needs "join" and
// "python-basics", which lives in the other trail.
const CATALOG: CatalogSpec = {
  domains: [
    {
      slug: 'data',
      trails: [
        {
          slug: 'sql',
          title: 'SQL',
          concepts: [
            { slug: 'basics', title: 'Basics', sparks: [{ slug: 'select', estimated_mins: 4 }, { slug: 'filter', difficulty: 'intermediate', estimated_mins: 6 }] },
            { slug: 'joins', title: 'Joins', sparks: [{ slug: 'join', difficulty: 'advanced', estimated_mins: 9 }, 'window'] },
          ],
        },
        { slug: 'python', title: 'Python', concepts: [{ slug: 'py', title: 'Py', sparks: ['python-basics', 'loops', 'select'] }] },
      ],
    },
  ],
  spark_links: [
    { source: 'select', target: 'join' },
    { source: 'filter', target: 'join' },
    { source: 'join', target: 'window' },
    { source: 'python-basics', target: 'window' },
    { source: 'python-basics', target: 'loops' },
    { source: 'select', target: 'filter', type: 'related' },
  ],
};

describe('learning routes: what next and access', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const get = (path: string, user?: User) => t.app.request(path, { headers: user?.headers ?? {} });
  const post = (path: string, user: User, body: unknown) => postJson(t, path, user, body);
  const enroll = async (user: User, trailId: string) => expect((await post('/user/me/journeys', user, { trail_id: trailId })).status).toBe(201);
  const event = async (user: User, sparkId: string, verb: string, occurredAt: string) => {
    const res = await post('/user/me/events', user, { spark_id: sparkId, verb, occurred_at: occurredAt });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string };
  };
  const next = async (user: User, query = '') => {
    const res = await get(`/user/me/next${query}`, user);
    expect(res.status).toBe(200);
    return (await res.json()).data as { slug: string; trail: { slug: string } }[];
  };
  const nextSlugs = async (user: User, query = '') => (await next(user, query)).map((s) => s.slug);

  const id = randomUUID();
  const learnerRoutes: [string, string, unknown?][] = [
    ['GET', '/user/me/next'],
    ['GET', '/user/me/reviews'],
    ['POST', '/user/me/reviews', { spark_id: id, rating: 'good' }],
    ['GET', '/user/me/statements'],
    ['POST', `/user/me/events/${id}/void`, {}],
  ];
  const request = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    t.app.request(path, { method, headers: { ...headers, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  it('every learner route returns 401 UNAUTHORIZED to anonymous callers and to a bad or cookie-only token', async () => {
    const expired = await signToken({ expiresInSeconds: -60 });
    const credentials: Record<string, string>[] = [{}, { Authorization: `Bearer ${expired}` }, { Cookie: `svc-access-token=${await signToken()}` }];
    for (const [method, path, body] of learnerRoutes) {
      for (const headers of credentials) {
        const res = await request(method, path, headers, body);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect((await res.json()).error.code).toBe('UNAUTHORIZED');
        expect(res.headers.get('cache-control')).toContain('no-store');
      }
    }
  });

  it('every learner route returns 403 FORBIDDEN to service callers', async () => {
    for (const [method, path, body] of learnerRoutes) {
      const res = await request(method, path, { 'X-Service-Auth': TEST_SERVICE_SECRET }, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await res.json()).error).toMatchObject({ code: 'FORBIDDEN', details: { permission: 'TRACK_PROGRESS' } });
    }
  });

  it('GET /user/me/next lists the ready sparks of the enrolled trails with what they build on, not cacheable', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    await enroll(user, content.id('trail', 'sql'));

    const first = await get('/user/me/next', user);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('private, no-store');
    expect(await first.json()).toEqual({
      data: [
        {
          id: content.id('spark', 'select'),
          slug: 'select',
          title: 'Select',
          difficulty: 'beginner',
          estimated_mins: 4,
          trail: { id: content.id('trail', 'sql'), slug: 'sql', title: 'SQL' },
          concept: { id: content.id('concept', 'basics'), slug: 'basics', title: 'Basics' },
          builds_on: [],
        },
        {
          id: content.id('spark', 'filter'),
          slug: 'filter',
          title: 'Filter',
          difficulty: 'intermediate',
          estimated_mins: 6,
          trail: { id: content.id('trail', 'sql'), slug: 'sql', title: 'SQL' },
          concept: { id: content.id('concept', 'basics'), slug: 'basics', title: 'Basics' },
          builds_on: [],
        },
      ],
      meta: { limit: 10, recent_level: 1 },
    });

    await event(user, content.id('spark', 'select'), 'completed', '2026-03-01T10:00:00Z');
    await event(user, content.id('spark', 'filter'), 'started', '2026-03-01T10:05:00Z');
    expect(await nextSlugs(user)).toEqual(['filter']); // started is not done: join still waits
    await event(user, content.id('spark', 'filter'), 'mastered', '2026-03-01T10:10:00Z');
    const body = await (await get('/user/me/next', user)).json();
    expect(body.data.map((s: { slug: string }) => s.slug)).toEqual(['join']);
    expect(body.data[0].builds_on).toEqual([
      { id: content.id('spark', 'filter'), slug: 'filter', title: 'Filter' },
      { id: content.id('spark', 'select'), slug: 'select', title: 'Select' },
    ]);
    expect(body.data[0].concept.slug).toBe('joins');
    expect(body.meta.recent_level).toBe(1.5); // beginner (1) and intermediate (2)

    // window also needs python-basics, from a trail the learner is not enrolled in.
    await event(user, content.id('spark', 'join'), 'completed', '2026-03-01T10:20:00Z');
    expect(await nextSlugs(user)).toEqual([]);
    await event(user, content.id('spark', 'python-basics'), 'completed', '2026-03-01T10:30:00Z');
    expect(await nextSlugs(user)).toEqual(['window']);
  });

  it('GET /user/me/next puts the trail with the most recent activity first and lists a shared spark once', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    await enroll(user, content.id('trail', 'sql'));
    await enroll(user, content.id('trail', 'python'));
    // No events yet: a journey's last activity is its enrollment, and python's is the later one.
    expect((await next(user)).map((s) => `${s.trail.slug}/${s.slug}`)).toEqual(['python/python-basics', 'python/select', 'sql/filter']);
    const started = await post('/user/me/events', user, { spark_id: content.id('spark', 'filter'), verb: 'started' });
    expect(started.status).toBe(201);
    expect((await next(user)).map((s) => `${s.trail.slug}/${s.slug}`)).toEqual(['sql/select', 'sql/filter', 'python/python-basics']);
    expect(await nextSlugs(user, '?limit=2')).toEqual(['select', 'filter']);
  });

  it('GET /user/me/next?trail= reads one trail of the current snapshot, enrolled or not', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    expect(await nextSlugs(user)).toEqual([]); // no enrollment
    expect(await nextSlugs(user, '?trail=python')).toEqual(['python-basics', 'select']);
    await event(user, content.id('spark', 'python-basics'), 'completed', '2026-03-01T10:00:00Z');
    expect(await nextSlugs(user, '?trail=python')).toEqual(['loops', 'select']);

    const unknown = await get('/user/me/next?trail=no-such-trail', user);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: 'NOT_FOUND', details: { trail: 'no-such-trail' } });
  });

  it('GET /user/me/next shows each learner only their own progress', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const alice = await testUser();
    const bob = await testUser();
    await enroll(alice, content.id('trail', 'sql'));
    await enroll(bob, content.id('trail', 'sql'));
    await event(alice, content.id('spark', 'select'), 'completed', '2026-03-01T10:00:00Z');
    await event(alice, content.id('spark', 'filter'), 'completed', '2026-03-01T10:01:00Z');
    expect(await nextSlugs(alice)).toEqual(['join']);
    expect(await nextSlugs(bob)).toEqual(['select', 'filter']);
  });

  it('GET /user/me/next forgets a voided completion', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    await enroll(user, content.id('trail', 'sql'));
    await event(user, content.id('spark', 'select'), 'completed', '2026-03-01T10:00:00Z');
    const filter = await event(user, content.id('spark', 'filter'), 'completed', '2026-03-01T10:01:00Z');
    expect(await nextSlugs(user)).toEqual(['join']);
    expect((await post(`/user/me/events/${filter.id}/void`, user, {})).status).toBe(200);
    expect(await nextSlugs(user)).toEqual(['filter']);
  });

  it('GET /user/me/next returns 400 VALIDATION_ERROR naming a bad limit or trail', async () => {
    const user = await testUser();
    for (const [query, field] of [['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?limit=ten', 'limit'], ['?trail=Not%20A%20Slug', 'trail']]) {
      const res = await get(`/user/me/next${query}`, user);
      expect(res.status, query).toBe(400);
      const body = await res.json();
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.issues.map((i: { field: string }) => i.field)).toContain(field);
    }
  });
});
