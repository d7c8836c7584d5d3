import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { postJson } from '../helpers/requests.js';
import { insertCatalog, type CatalogSpec } from '../helpers/content.js';
import { signToken, testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

type User = Awaited<ReturnType<typeof testUser>>;

const CATALOG: CatalogSpec = {
  domains: [
    {
      slug: 'data',
      trails: [
        {
          slug: 'sql-basics',
          title: 'SQL Basics',
          difficulty_level: 'intermediate',
          concepts: [
            { slug: 'select', title: 'Selecting rows', sparks: ['select-star', 'where'] },
            { slug: 'joins', title: 'Joining tables', sparks: ['inner-join', 'select-star'] },
          ],
        },
        { slug: 'python-intro', title: 'Python Intro', difficulty_level: null, concepts: [{ slug: 'variables', sparks: ['assign'] }] },
        { slug: 'shell', title: 'Shell', difficulty_level: 'advanced', concepts: [{ slug: 'pipes', sparks: ['pipe', 'redirect'] }] },
      ],
    },
  ],
};

const iso = (value: string | null) => (value === null ? null : new Date(value).toISOString());

describe('journeys routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const get = (path: string, user?: User) => t.app.request(path, { headers: user?.headers ?? {} });
  const post = (path: string, user: User, body: unknown, headers: Record<string, string> = {}) => postJson(t, path, user, body, headers);
  const enroll = async (user: User, trailId: string) => {
    const res = await post('/user/me/journeys', user, { trail_id: trailId });
    if (![200, 201].includes(res.status)) throw new Error(`enroll ${trailId}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string; started_at: string };
  };
  const event = async (user: User, sparkId: string, verb: string, occurredAt: string) => {
    const res = await post('/user/me/events', user, { spark_id: sparkId, verb, occurred_at: occurredAt });
    expect(res.status).toBe(201);
  };

  it('GET /user/me/journeys returns 401 UNAUTHORIZED without a bearer token', async () => {
    const res = await get('/user/me/journeys');
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('UNAUTHORIZED');
    expect(res.headers.get('cache-control')).toContain('no-store');
  });

  it('GET /user/me/journeys returns 401 for an expired or badly signed token', async () => {
    const expired = await signToken({ expiresInSeconds: -60 });
    const forged = await signToken({ secret: 'not-the-secret-not-the-secret-not-the-secret' });
    for (const token of [expired, forged, 'not-a-jwt']) {
      const res = await t.app.request('/user/me/journeys', { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('UNAUTHORIZED');
    }
  });

  it('every /user/me route returns 401 to anonymous callers', async () => {
    const id = randomUUID();
    const requests = [
      t.app.request(`/user/me/journeys/${id}`),
      t.app.request('/user/me/journeys', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ trail_id: id }) }),
      t.app.request('/user/me/events', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ spark_id: id, verb: 'started' }),
      }),
    ];
    for (const res of await Promise.all(requests)) {
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('UNAUTHORIZED');
    }
  });

  it('every /user/me route returns 403 FORBIDDEN to service callers', async () => {
    const headers = { 'X-Service-Auth': TEST_SERVICE_SECRET, 'Content-Type': 'application/json' };
    const id = randomUUID();
    const requests = [
      t.app.request('/user/me/journeys', { headers }),
      t.app.request(`/user/me/journeys/${id}`, { headers }),
      t.app.request('/user/me/journeys', { method: 'POST', headers, body: JSON.stringify({ trail_id: id }) }),
      t.app.request('/user/me/events', { method: 'POST', headers, body: JSON.stringify({ spark_id: id, verb: 'started' }) }),
    ];
    for (const res of await Promise.all(requests)) {
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe('FORBIDDEN');
    }
  });

  it('GET /user/me/journeys returns every field of a fresh enrollment, not cacheable', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    const enrolled = await enroll(user, content.id('trail', 'sql-basics'));

    const res = await get('/user/me/journeys', user);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const body = await res.json();
    expect(body).toEqual({
      data: [
        {
          id: enrolled.id,
          user_id: user.id,
          trail_id: content.id('trail', 'sql-basics'),
          status: 'not_started',
          progress_percent: 0,
          started_at: enrolled.started_at,
          completed_at: null,
          last_activity_at: enrolled.started_at,
          completed_sparks: 0,
          total_sparks: 3,
          trail: { id: content.id('trail', 'sql-basics'), title: 'SQL Basics', slug: 'sql-basics', difficulty_level: 'intermediate' },
          content_changed_since_enrollment: false,
          content_changes_url: null,
        },
      ],
    });
    const [row] = await t.db.sql`select started_at from app.enrollments where id = ${enrolled.id}`;
    expect(iso(body.data[0].started_at)).toBe((row.started_at as Date).toISOString());
  });

  it('GET /user/me/journeys/{id} returns the detail with current_concept and spark_progress in trail order', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    const enrolled = await enroll(user, content.id('trail', 'sql-basics'));
    await event(user, content.id('spark', 'select-star'), 'completed', '2026-03-01T10:00:00Z');

    const res = await get(`/user/me/journeys/${enrolled.id}`, user);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const body = await res.json();
    expect(body).toMatchObject({
      id: enrolled.id,
      user_id: user.id,
      trail_id: content.id('trail', 'sql-basics'),
      status: 'in_progress',
      progress_percent: 33,
      started_at: enrolled.started_at,
      completed_at: null,
      completed_sparks: 1,
      total_sparks: 3,
      trail: { id: content.id('trail', 'sql-basics'), title: 'SQL Basics', slug: 'sql-basics', difficulty_level: 'intermediate' },
      current_concept: { id: content.id('concept', 'select'), title: 'Selecting rows', slug: 'select' },
    });
    expect(iso(body.last_activity_at)).toBe('2026-03-01T10:00:00.000Z');
    expect(body.spark_progress.map((s: { completed_at: string | null }) => ({ ...s, completed_at: iso(s.completed_at) }))).toEqual([
      { spark_id: content.id('spark', 'select-star'), title: 'Select Star', status: 'completed', completed_at: '2026-03-01T10:00:00.000Z' },
      { spark_id: content.id('spark', 'where'), title: 'Where', status: 'not_started', completed_at: null },
      { spark_id: content.id('spark', 'inner-join'), title: 'Inner Join', status: 'not_started', completed_at: null },
    ]);
    expect(Object.keys(body).sort()).toEqual(
      ['id', 'user_id', 'trail_id', 'status', 'progress_percent', 'started_at', 'completed_at', 'last_activity_at',
        'completed_sparks', 'total_sparks', 'trail', 'current_concept', 'spark_progress',
        'content_changed_since_enrollment', 'content_changes_url'].sort(),
    );
  });

  it('GET /user/me/journeys/{id} returns 404 for an unknown id and 400 for a malformed one', async () => {
    const user = await testUser();
    const unknown = await get(`/user/me/journeys/${randomUUID()}`, user);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('NOT_FOUND');
    const malformed = await get('/user/me/journeys/not-a-uuid', user);
    expect(malformed.status).toBe(400);
    const body = await malformed.json();
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.issues[0].field).toBe('id');
  });

  it('two users never see each other\'s journeys', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const alice = await testUser();
    const bob = await testUser();
    const aliceJourney = await enroll(alice, content.id('trail', 'sql-basics'));
    await event(alice, content.id('spark', 'where'), 'completed', '2026-03-01T10:00:00Z');
    const bobJourney = await enroll(bob, content.id('trail', 'sql-basics'));
    expect(bobJourney.id).not.toBe(aliceJourney.id);

    const bobList = await (await get('/user/me/journeys', bob)).json();
    expect(bobList.data.map((j: { id: string }) => j.id)).toEqual([bobJourney.id]);
    expect(bobList.data[0]).toMatchObject({ user_id: bob.id, completed_sparks: 0, status: 'not_started' });

    const aliceList = await (await get('/user/me/journeys', alice)).json();
    expect(aliceList.data.map((j: { id: string }) => j.id)).toEqual([aliceJourney.id]);
    expect(aliceList.data[0]).toMatchObject({ user_id: alice.id, completed_sparks: 1 });

    const peek = await get(`/user/me/journeys/${aliceJourney.id}`, bob);
    expect(peek.status).toBe(404);
    expect((await peek.json()).error.code).toBe('NOT_FOUND');
  });

  it('GET /user/me/journeys?status= filters by each derived status', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    const fresh = await enroll(user, content.id('trail', 'sql-basics'));
    const going = await enroll(user, content.id('trail', 'shell'));
    const done = await enroll(user, content.id('trail', 'python-intro'));
    await event(user, content.id('spark', 'pipe'), 'started', '2026-03-01T10:00:00Z');
    await event(user, content.id('spark', 'assign'), 'mastered', '2026-03-01T11:00:00Z');

    const ids = async (query: string) => {
      const res = await get(`/user/me/journeys${query}`, user);
      expect(res.status).toBe(200);
      return (await res.json()).data.map((j: { id: string; status: string }) => [j.id, j.status]);
    };
    expect(await ids('?status=not_started')).toEqual([[fresh.id, 'not_started']]);
    expect(await ids('?status=in_progress')).toEqual([[going.id, 'in_progress']]);
    expect(await ids('?status=completed')).toEqual([[done.id, 'completed']]);
    expect((await ids('')).length).toBe(3);
  });

  it('GET /user/me/journeys returns 400 VALIDATION_ERROR for an unknown status or sort', async () => {
    const user = await testUser();
    for (const query of ['?status=paused', '?status=', '?sort=alphabetical', '?sort=']) {
      const res = await get(`/user/me/journeys${query}`, user);
      expect(res.status, query).toBe(400);
      const body = await res.json();
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.issues[0].field).toBe(query.slice(1, query.indexOf('=')));
    }
  });

  it('GET /user/me/journeys sorts by recent (default), progress and started', async () => {
    const content = await insertCatalog(t.db.sql, CATALOG);
    const user = await testUser();
    // Enrollment order: sql, shell, python (started_at ascending).
    const sql = await enroll(user, content.id('trail', 'sql-basics'));
    const shell = await enroll(user, content.id('trail', 'shell'));
    const python = await enroll(user, content.id('trail', 'python-intro'));
    await t.db.sql`update app.enrollments set started_at = case id
        when ${sql.id}::uuid then '2026-01-01T00:00:00Z'::timestamptz
        when ${shell.id}::uuid then '2026-01-02T00:00:00Z'::timestamptz
        else '2026-01-03T00:00:00Z'::timestamptz end
      where id in (${sql.id}, ${shell.id}, ${python.id})`;
    // Activity: sql most recent; shell 50 %; sql 1/3; python none.
    await event(user, content.id('spark', 'pipe'), 'completed', '2026-02-01T00:00:00Z');
    await event(user, content.id('spark', 'where'), 'completed', '2026-02-05T00:00:00Z');

    const order = async (query: string) =>
      (await (await get(`/user/me/journeys${query}`, user)).json()).data.map((j: { trail: { slug: string } }) => j.trail.slug);
    expect(await order('')).toEqual(['sql-basics', 'shell', 'python-intro']);
    expect(await order('?sort=recent')).toEqual(['sql-basics', 'shell', 'python-intro']);
    expect(await order('?sort=progress')).toEqual(['shell', 'sql-basics', 'python-intro']);
    expect(await order('?sort=started')).toEqual(['python-intro', 'shell', 'sql-basics']);
  });
});
