import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { postJson } from '../helpers/requests.js';
import { insertCatalog, type CatalogSpec, type TrailSpec } from '../helpers/content.js';
import { testUser } from '../helpers/tokens.js';

type User = Awaited<ReturnType<typeof testUser>>;

const trail = (concepts: TrailSpec['concepts']): CatalogSpec => ({
  domains: [{ slug: 'data', trails: [{ slug: 'sql-basics', title: 'SQL Basics', concepts }, { slug: 'other', concepts: [{ slug: 'misc', sparks: ['misc-spark'] }] }] }],
});
const BASE = trail([
  { slug: 'select', sparks: ['select-star', 'where'] },
  { slug: 'joins', sparks: ['inner-join', 'outer-join'] },
]);

const iso = (value: string | null) => (value === null ? null : new Date(value).toISOString());

describe('journeys routes (writes and derived progress)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const post = (path: string, user: User, body: unknown, headers: Record<string, string> = {}) => postJson(t, path, user, body, headers);
  const detail = async (user: User, id: string) => {
    const res = await t.app.request(`/user/me/journeys/${id}`, { headers: user.headers });
    expect(res.status).toBe(200);
    return res.json();
  };
  const enroll = async (user: User, trailId: string) => {
    const res = await post('/user/me/journeys', user, { trail_id: trailId });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; started_at: string };
  };
  const event = async (user: User, sparkId: string, verb: string, occurredAt: string) => {
    const res = await post('/user/me/events', user, { spark_id: sparkId, verb, occurred_at: occurredAt });
    expect(res.status).toBe(201);
    return res.json();
  };

  it('POST /user/me/journeys enrolls with 201, then returns the same journey with 200', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const first = await post('/user/me/journeys', user, { trail_id: content.id('trail', 'sql-basics') });
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('private, no-store');
    const created = await first.json();
    expect(created).toMatchObject({
      created: true,
      user_id: user.id,
      trail_id: content.id('trail', 'sql-basics'),
      status: 'not_started',
      progress_percent: 0,
      completed_sparks: 0,
      total_sparks: 4,
      completed_at: null,
      current_concept: { id: content.id('concept', 'select'), slug: 'select', title: 'Select' },
      trail: { id: content.id('trail', 'sql-basics'), slug: 'sql-basics', title: 'SQL Basics', difficulty_level: 'beginner' },
    });
    expect(created.spark_progress).toHaveLength(4);

    const again = await post('/user/me/journeys', user, { trail_id: content.id('trail', 'sql-basics') });
    expect(again.status).toBe(200);
    const existing = await again.json();
    expect(existing).toEqual({ ...created, created: false });
    const [{ count }] = await t.db.sql`select count(*)::int as count from app.enrollments where user_id = ${user.id}`;
    expect(count).toBe(1);
  });

  it('POST /user/me/journeys returns 404 for a trail outside the current snapshot and 400 for a bad body', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const draft = await insertCatalog(t.db.sql, trail([{ slug: 'draft-only', sparks: ['draft-spark'] }]), { status: 'draft' });
    const user = await testUser();
    for (const trailId of [randomUUID(), draft.id('trail', 'sql-basics')]) {
      const res = await post('/user/me/journeys', user, { trail_id: trailId });
      expect(res.status).toBe(404);
      const body = await res.json();
      expect(body.error).toMatchObject({ code: 'NOT_FOUND', details: { trail_id: trailId } });
    }
    expect(content.id('trail', 'sql-basics')).not.toBe(draft.id('trail', 'sql-basics'));
    for (const body of [{}, { trail_id: 'nope' }, { trail_id: 42 }]) {
      const res = await post('/user/me/journeys', user, body);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
    const [{ count }] = await t.db.sql`select count(*)::int as count from app.enrollments where user_id = ${user.id}`;
    expect(count).toBe(0);
  });

  it('POST /user/me/events records an event with 201 and every field', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const res = await post('/user/me/events', user, { spark_id: content.id('spark', 'where'), verb: 'started', occurred_at: '2026-04-01T08:30:00Z' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const body = await res.json();
    expect({ ...body, occurred_at: iso(body.occurred_at) }).toEqual({
      id: expect.any(String),
      user_id: user.id,
      spark_id: content.id('spark', 'where'),
      verb: 'started',
      occurred_at: '2026-04-01T08:30:00.000Z',
      recorded_at: expect.any(String),
      idempotency_key: null,
      voided_at: null,
      created: true,
    });
    const [row] = await t.db.sql`select user_id, verb from app.learning_events where id = ${body.id}`;
    expect(row).toEqual({ user_id: user.id, verb: 'started' });
  });

  it('POST /user/me/events without occurred_at stamps the server time', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const before = Date.now();
    const res = await post('/user/me/events', user, { spark_id: content.id('spark', 'where'), verb: 'bookmarked' });
    expect(res.status).toBe(201);
    const occurred = new Date((await res.json()).occurred_at).getTime();
    expect(occurred).toBeGreaterThanOrEqual(before - 5_000);
    expect(occurred).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it('POST /user/me/events with the same Idempotency-Key returns the original event and records it once', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const payload = { spark_id: content.id('spark', 'where'), verb: 'completed' };
    const first = await post('/user/me/events', user, payload, { 'Idempotency-Key': 'retry-1' });
    expect(first.status).toBe(201);
    const original = await first.json();
    expect(original).toMatchObject({ idempotency_key: 'retry-1', created: true });

    const retry = await post('/user/me/events', user, payload, { 'Idempotency-Key': 'retry-1' });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ ...original, created: false });

    const conflict = await post('/user/me/events', user, { ...payload, verb: 'mastered' }, { 'Idempotency-Key': 'retry-1' });
    expect(conflict.status).toBe(409);
    expect((await conflict.json()).error).toMatchObject({ code: 'CONFLICT', details: { idempotency_key: 'retry-1', event_id: original.id } });

    const [{ count }] = await t.db.sql`select count(*)::int as count from app.learning_events where user_id = ${user.id}`;
    expect(count).toBe(1);

    const otherUser = await testUser();
    const sameKeyOtherUser = await post('/user/me/events', otherUser, payload, { 'Idempotency-Key': 'retry-1' });
    expect(sameKeyOtherUser.status).toBe(201);
    expect((await sameKeyOtherUser.json()).id).not.toBe(original.id);
  });

  it('POST /user/me/events with the same spark, verb and occurred_at returns the original (natural key)', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const payload = { spark_id: content.id('spark', 'inner-join'), verb: 'started', occurred_at: '2026-04-02T09:00:00.123Z' };
    const first = await post('/user/me/events', user, payload);
    expect(first.status).toBe(201);
    const original = await first.json();
    const repeat = await post('/user/me/events', user, payload);
    expect(repeat.status).toBe(200);
    expect(await repeat.json()).toEqual({ ...original, created: false });
    const [{ count }] = await t.db.sql`select count(*)::int as count from app.learning_events where user_id = ${user.id}`;
    expect(count).toBe(1);
  });

  it('POST /user/me/events returns 400 for a future occurred_at beyond 5 minutes of skew', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const spark_id = content.id('spark', 'where');
    const far = await post('/user/me/events', user, { spark_id, verb: 'started', occurred_at: new Date(Date.now() + 10 * 60_000).toISOString() });
    expect(far.status).toBe(400);
    expect((await far.json()).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'occurred_at' } });
    const near = await post('/user/me/events', user, { spark_id, verb: 'started', occurred_at: new Date(Date.now() + 60_000).toISOString() });
    expect(near.status).toBe(201);
  });

  it('POST /user/me/events returns 400 for an occurred_at before 2000-01-01T00:00:00Z', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const spark_id = content.id('spark', 'where');
    for (const occurred_at of ['1999-12-31T23:59:59.999Z', '2000-01-01T00:30:00+01:00', '0001-01-01T00:00:00Z']) {
      const old = await post('/user/me/events', user, { spark_id, verb: 'started', occurred_at });
      expect(old.status, occurred_at).toBe(400);
      expect((await old.json()).error).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'occurred_at must not be before 2000-01-01T00:00:00Z',
        details: { field: 'occurred_at', value: expect.any(String), min: '2000-01-01T00:00:00+00:00' },
      });
    }
    const [row] = await t.db.sql`select count(*)::int as n from app.learning_events where user_id = ${user.id}`;
    expect(row.n).toBe(0);
    const edge = await post('/user/me/events', user, { spark_id, verb: 'started', occurred_at: '2000-01-01T00:00:00Z' });
    expect(edge.status).toBe(201);
    expect(iso((await edge.json()).occurred_at)).toBe('2000-01-01T00:00:00.000Z');
  });

  it('POST /user/me/events returns 404 for an unknown spark and 400 for an unknown verb or malformed input', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const unknownSpark = randomUUID();
    const missing = await post('/user/me/events', user, { spark_id: unknownSpark, verb: 'started' });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toMatchObject({ code: 'NOT_FOUND', details: { spark_id: unknownSpark } });

    const badVerb = await post('/user/me/events', user, { spark_id: content.id('spark', 'where'), verb: 'liked' });
    expect(badVerb.status).toBe(400);
    expect((await badVerb.json()).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'verb', allowed: ['started', 'completed', 'mastered', 'bookmarked'] },
    });

    for (const body of [
      { verb: 'started' },
      { spark_id: 'not-a-uuid', verb: 'started' },
      { spark_id: content.id('spark', 'where') },
      { spark_id: content.id('spark', 'where'), verb: 'started', occurred_at: 'yesterday' },
    ]) {
      const res = await post('/user/me/events', user, body);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
    const tooLong = await post('/user/me/events', user, { spark_id: content.id('spark', 'where'), verb: 'started' }, { 'Idempotency-Key': 'k'.repeat(201) });
    expect(tooLong.status).toBe(400);
    const [{ count }] = await t.db.sql`select count(*)::int as count from app.learning_events where user_id = ${user.id}`;
    expect(count).toBe(0);
  });

  it('progress follows started, completed, mastered and bookmarked events', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    const journey = await enroll(user, content.id('trail', 'sql-basics'));
    const spark = (slug: string) => content.id('spark', slug);
    const statuses = (d: { spark_progress: { status: string }[] }) => d.spark_progress.map((s) => s.status);

    await event(user, spark('outer-join'), 'bookmarked', '2026-05-01T09:00:00Z');
    let d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'not_started', completed_sparks: 0, progress_percent: 0 });
    expect(iso(d.last_activity_at)).toBe('2026-05-01T09:00:00.000Z');

    await event(user, spark('select-star'), 'started', '2026-05-01T10:00:00Z');
    d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'in_progress', completed_sparks: 0, progress_percent: 0, completed_at: null });
    expect(statuses(d)).toEqual(['in_progress', 'not_started', 'not_started', 'not_started']);

    await event(user, spark('select-star'), 'completed', '2026-05-01T10:05:00Z');
    await event(user, spark('where'), 'mastered', '2026-05-01T10:10:00Z');
    d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'in_progress', completed_sparks: 2, total_sparks: 4, progress_percent: 50 });
    expect(d.current_concept).toEqual({ id: content.id('concept', 'joins'), title: 'Joins', slug: 'joins' });
    expect(statuses(d)).toEqual(['completed', 'completed', 'not_started', 'not_started']);
    expect(iso(d.spark_progress[1].completed_at)).toBe('2026-05-01T10:10:00.000Z');

    await event(user, spark('inner-join'), 'completed', '2026-05-01T11:00:00Z');
    d = await detail(user, journey.id);
    expect(d.progress_percent).toBe(75);

    await event(user, spark('outer-join'), 'mastered', '2026-05-01T12:00:00Z');
    d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'completed', completed_sparks: 4, progress_percent: 100, current_concept: null });
    expect(iso(d.completed_at)).toBe('2026-05-01T12:00:00.000Z');
    expect(iso(d.last_activity_at)).toBe('2026-05-01T12:00:00.000Z');

    const list = await (await t.app.request('/user/me/journeys?status=completed', { headers: user.headers })).json();
    expect(list.data.map((j: { id: string }) => j.id)).toEqual([journey.id]);
  });

  it('progress survives a snapshot promote and reflects sparks added in the new snapshot', async () => {
    const first = await insertCatalog(t.db.sql, trail([{ slug: 'select', sparks: ['select-star', 'where'] }]));
    const user = await testUser();
    const journey = await enroll(user, first.id('trail', 'sql-basics'));
    await event(user, first.id('spark', 'select-star'), 'completed', '2026-06-01T10:00:00Z');
    await event(user, first.id('spark', 'where'), 'completed', '2026-06-01T11:00:00Z');
    let d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'completed', completed_sparks: 2, total_sparks: 2, progress_percent: 100 });

    // Same content, promoted again: entity ids are stable, so nothing changes.
    await insertCatalog(t.db.sql, trail([{ slug: 'select', sparks: ['select-star', 'where'] }]), { ids: first.ids });
    d = await detail(user, journey.id);
    expect(d).toMatchObject({ id: journey.id, status: 'completed', completed_sparks: 2, total_sparks: 2, progress_percent: 100 });

    // A new snapshot adds a concept with a spark, renames the trail: progress reopens.
    const second = await insertCatalog(
      t.db.sql,
      {
        domains: [{
          slug: 'data',
          trails: [
            { slug: 'sql-basics', title: 'SQL Basics Revised', concepts: [{ slug: 'select', sparks: ['select-star', 'where'] }, { slug: 'group-by', sparks: ['having'] }] },
            { slug: 'other', concepts: [{ slug: 'misc', sparks: ['misc-spark'] }] },
          ],
        }],
      },
      { ids: first.ids },
    );
    expect(second.id('trail', 'sql-basics')).toBe(first.id('trail', 'sql-basics'));
    d = await detail(user, journey.id);
    expect(d).toMatchObject({
      status: 'in_progress',
      completed_sparks: 2,
      total_sparks: 3,
      progress_percent: 66,
      completed_at: null,
      current_concept: { id: second.id('concept', 'group-by'), slug: 'group-by', title: 'Group By' },
      trail: { title: 'SQL Basics Revised' },
    });
    expect(d.spark_progress.map((s: { spark_id: string; status: string }) => [s.spark_id, s.status])).toEqual([
      [first.id('spark', 'select-star'), 'completed'],
      [first.id('spark', 'where'), 'completed'],
      [second.id('spark', 'having'), 'not_started'],
    ]);
    await event(user, second.id('spark', 'having'), 'completed', '2026-06-02T09:00:00Z');
    d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'completed', progress_percent: 100 });
    expect(iso(d.completed_at)).toBe('2026-06-02T09:00:00.000Z');
  });

  it('a journey whose trail left the current snapshot is still shown as the trail last was', async () => {
    const first = await insertCatalog(t.db.sql, trail([{ slug: 'select', sparks: ['select-star', 'where'] }]));
    const user = await testUser();
    const journey = await enroll(user, first.id('trail', 'sql-basics'));
    await event(user, first.id('spark', 'where'), 'completed', '2026-06-01T10:00:00Z');

    // The next snapshot keeps only the other trail.
    await insertCatalog(
      t.db.sql,
      { domains: [{ slug: 'data', trails: [{ slug: 'other', concepts: [{ slug: 'misc', sparks: ['misc-spark'] }] }] }] },
      { ids: first.ids },
    );
    const list = await (await t.app.request('/user/me/journeys', { headers: user.headers })).json();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({
      id: journey.id,
      status: 'in_progress',
      completed_sparks: 1,
      total_sparks: 2,
      progress_percent: 50,
      trail: { id: first.id('trail', 'sql-basics'), slug: 'sql-basics', title: 'SQL Basics' },
    });
    // Re-enrolling is refused (the trail is not in the current snapshot); recording on its sparks too.
    const again = await post('/user/me/journeys', user, { trail_id: first.id('trail', 'sql-basics') });
    expect(again.status).toBe(404);
    const ev = await post('/user/me/events', user, { spark_id: first.id('spark', 'select-star'), verb: 'started' });
    expect(ev.status).toBe(404);
  });

  it('a trail with no sparks stays not_started with no current concept', async () => {
    const content = await insertCatalog(t.db.sql, trail([{ slug: 'empty-concept', sparks: [] }]));
    const user = await testUser();
    const journey = await enroll(user, content.id('trail', 'sql-basics'));
    const d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'not_started', total_sparks: 0, completed_sparks: 0, progress_percent: 0, completed_at: null, current_concept: null, spark_progress: [] });
  });

  it('events recorded before enrolling count toward the new journey', async () => {
    const content = await insertCatalog(t.db.sql, BASE);
    const user = await testUser();
    await event(user, content.id('spark', 'select-star'), 'completed', '2026-01-01T00:00:00Z');
    const journey = await enroll(user, content.id('trail', 'sql-basics'));
    const d = await detail(user, journey.id);
    expect(d).toMatchObject({ status: 'in_progress', completed_sparks: 1, progress_percent: 25 });
    expect(iso(d.last_activity_at)).toBe('2026-01-01T00:00:00.000Z');
  });
});
