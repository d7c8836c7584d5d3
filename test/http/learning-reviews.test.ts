import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type CatalogSpec } from '../helpers/content.js';
import { postJson } from '../helpers/requests.js';
import { testUser } from '../helpers/tokens.js';

type User = Awaited<ReturnType<typeof testUser>>;

const CATALOG: CatalogSpec = {
  domains: [{ slug: 'data', trails: [{ slug: 'sql', concepts: [{ slug: 'basics', sparks: [{ slug: 'select', estimated_mins: 4 }, 'filter', 'join'] }] }] }],
};
const DAY = 86_400_000;
const ms = (iso: string) => new Date(iso).getTime();

describe('learning routes: spaced review', () => {
  let t: TestApp;
  let content: Awaited<ReturnType<typeof insertCatalog>>;
  beforeAll(async () => {
    t = await createTestApp();
    content = await insertCatalog(t.db.sql, CATALOG);
  });
  afterAll(() => t.close());

  const get = (path: string, user: User) => t.app.request(path, { headers: user.headers });
  const post = (path: string, user: User, body: unknown, headers: Record<string, string> = {}) => postJson(t, path, user, body, headers);
  const complete = async (user: User, slug: string, verb: string, occurredAt: string) =>
    expect((await post('/user/me/events', user, { spark_id: content.id('spark', slug), verb, occurred_at: occurredAt })).status).toBe(201);
  const due = async (user: User, before: string) => {
    const res = await get(`/user/me/reviews?due_before=${encodeURIComponent(before)}`, user);
    expect(res.status).toBe(200);
    return res.json();
  };

  it('completing a spark schedules its first review three days later (FSRS-6 good), mastering it eight (easy)', async () => {
    const user = await testUser();
    await complete(user, 'select', 'completed', '2026-03-01T10:00:00Z');
    await complete(user, 'filter', 'mastered', '2026-03-01T11:00:00Z');
    await complete(user, 'join', 'started', '2026-03-01T12:00:00Z');

    const res = await get('/user/me/reviews?due_before=2026-03-04T10:00:00Z', user);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const body = await res.json();
    expect(body.meta).toMatchObject({ limit: 20, total: 1 });
    expect(ms(body.meta.due_before)).toBe(ms('2026-03-04T10:00:00Z'));
    expect(body.data).toHaveLength(1);
    expect(body.data[0].spark).toEqual({ id: content.id('spark', 'select'), slug: 'select', title: 'Select', estimated_mins: 4 });
    expect(body.data[0].card).toMatchObject({ stability: 2.3065, difficulty: 2.11810397, scheduled_days: 3, reps: 1, lapses: 0 });
    expect(ms(body.data[0].card.due_at)).toBe(ms('2026-03-04T10:00:00Z'));
    expect(ms(body.data[0].card.last_review_at)).toBe(ms('2026-03-01T10:00:00Z'));
    expect(body.data[0].card.retrievability).toBeGreaterThan(0);
    expect(body.data[0].card.retrievability).toBeLessThan(0.9); // months overdue by now

    const later = await due(user, '2026-03-20T00:00:00Z');
    expect(later.data.map((r: { spark: { slug: string } }) => r.spark.slug)).toEqual(['select', 'filter']);
    expect(later.data[1].card).toMatchObject({ stability: 8.2956, difficulty: 1, scheduled_days: 8 });
    expect(ms(later.data[1].card.due_at)).toBe(ms('2026-03-01T11:00:00Z') + 8 * DAY);
  });

  it('POST /user/me/reviews reschedules the card: 201, then 200 for a retry, 409 for a different review under the same key', async () => {
    const user = await testUser();
    await complete(user, 'select', 'completed', '2026-03-01T10:00:00Z');
    const review = { spark_id: content.id('spark', 'select'), rating: 'good', reviewed_at: '2026-03-04T10:00:00Z' };

    const res = await post('/user/me/reviews', user, review, { 'Idempotency-Key': 'review-1' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const body = await res.json();
    expect(body).toMatchObject({ spark_id: review.spark_id, rating: 'good', idempotency_key: 'review-1', created: true });
    expect(ms(body.reviewed_at)).toBe(ms(review.reviewed_at));
    // FSRS-6 after good (day 0) and good three days later: what ts-fsrs 5.4.2 computes.
    expect(body.card).toMatchObject({ stability: 13.82690327, difficulty: 2.11121424, scheduled_days: 14, reps: 2, lapses: 0 });
    expect(ms(body.card.due_at)).toBe(ms('2026-03-18T10:00:00Z'));

    const retry = await post('/user/me/reviews', user, review, { 'Idempotency-Key': 'review-1' });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ id: body.id, created: false, card: { reps: 2 } });
    const sameTime = await post('/user/me/reviews', user, review);
    expect(sameTime.status).toBe(200);
    expect((await sameTime.json()).id).toBe(body.id);

    const conflict = await post('/user/me/reviews', user, { ...review, rating: 'again' }, { 'Idempotency-Key': 'review-1' });
    expect(conflict.status).toBe(409);
    expect((await conflict.json()).error).toMatchObject({ code: 'CONFLICT', details: { idempotency_key: 'review-1', review_id: body.id } });
    const otherRatingSameTime = await post('/user/me/reviews', user, { ...review, rating: 'easy' });
    expect(otherRatingSameTime.status).toBe(409);

    const [{ count }] = await t.db.sql`select count(*)::int as count from app.spark_reviews where user_id = ${user.id}`;
    expect(count).toBe(1);
  });

  it('a review of a spark never completed starts its card; again after a lapse shortens the interval', async () => {
    const user = await testUser();
    const spark_id = content.id('spark', 'join');
    const first = await (await post('/user/me/reviews', user, { spark_id, rating: 'hard', reviewed_at: '2026-01-01T08:00:00Z' })).json();
    expect(first.card).toMatchObject({ stability: 1.2931, difficulty: 5.11217071, scheduled_days: 2, reps: 1, lapses: 0 });
    const again = await (await post('/user/me/reviews', user, { spark_id, rating: 'again', reviewed_at: '2026-01-20T08:00:00Z' })).json();
    expect(again.card).toMatchObject({ stability: 0.57694036, difficulty: 8.37863212, scheduled_days: 1, reps: 2, lapses: 1 });
  });

  it('a review recorded out of order replays the whole history', async () => {
    const user = await testUser();
    const spark_id = content.id('spark', 'filter');
    await complete(user, 'filter', 'completed', '2026-02-01T10:00:00Z');
    await post('/user/me/reviews', user, { spark_id, rating: 'good', reviewed_at: '2026-02-20T10:00:00Z' });
    const late = await (await post('/user/me/reviews', user, { spark_id, rating: 'again', reviewed_at: '2026-02-05T10:00:00Z' })).json();
    // The card's last review is still 02-20; three reviews in all.
    expect(late.card.reps).toBe(3);
    expect(ms(late.card.last_review_at)).toBe(ms('2026-02-20T10:00:00Z'));
    expect(late.card.lapses).toBe(1);
  });

  it('voiding the completion that started a card removes the card', async () => {
    const user = await testUser();
    const event = await (await post('/user/me/events', user, { spark_id: content.id('spark', 'select'), verb: 'completed', occurred_at: '2026-03-01T10:00:00Z' })).json();
    expect((await due(user, '2026-12-31T00:00:00Z')).meta.total).toBe(1);
    expect((await post(`/user/me/events/${event.id}/void`, user, {})).status).toBe(200);
    expect(await due(user, '2026-12-31T00:00:00Z')).toMatchObject({ data: [], meta: { total: 0 } });
  });

  it('each learner sees and reschedules only their own cards', async () => {
    const alice = await testUser();
    const bob = await testUser();
    await complete(alice, 'select', 'completed', '2026-03-01T10:00:00Z');
    expect((await due(alice, '2026-12-31T00:00:00Z')).meta.total).toBe(1);
    expect(await due(bob, '2026-12-31T00:00:00Z')).toMatchObject({ data: [], meta: { total: 0 } });
    const bobs = await (await post('/user/me/reviews', bob, { spark_id: content.id('spark', 'select'), rating: 'easy', reviewed_at: '2026-03-02T10:00:00Z' }, { 'Idempotency-Key': 'shared-key' })).json();
    expect(bobs.card.reps).toBe(1); // alice's completion is not bob's history
    const alices = await post('/user/me/reviews', alice, { spark_id: content.id('spark', 'select'), rating: 'good', reviewed_at: '2026-03-04T10:00:00Z' }, { 'Idempotency-Key': 'shared-key' });
    expect(alices.status).toBe(201); // keys are per learner
    expect((await alices.json()).card.reps).toBe(2);
  });

  it('returns 400 VALIDATION_ERROR for a bad rating, time, limit or key, and 404 for a spark not in the current snapshot', async () => {
    const user = await testUser();
    const spark_id = content.id('spark', 'select');
    const cases: [unknown, Record<string, string>, string][] = [
      [{ spark_id, rating: 'perfect' }, {}, 'rating'],
      [{ spark_id: 'nope', rating: 'good' }, {}, 'spark_id'],
      [{ spark_id, rating: 'good', reviewed_at: 'yesterday' }, {}, 'reviewed_at'],
      [{ spark_id, rating: 'good' }, { 'Idempotency-Key': 'x'.repeat(201) }, 'idempotency-key'],
    ];
    for (const [body, headers, field] of cases) {
      const res = await post('/user/me/reviews', user, body, headers);
      expect(res.status, field).toBe(400);
      const error = (await res.json()).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.issues.map((i: { field: string }) => i.field)).toContain(field);
    }
    const future = await post('/user/me/reviews', user, { spark_id, rating: 'good', reviewed_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect(future.status).toBe(400);
    expect((await future.json()).error.details).toMatchObject({ field: 'reviewed_at' });
    const ancient = await post('/user/me/reviews', user, { spark_id, rating: 'good', reviewed_at: '1999-12-31T23:59:59Z' });
    expect(ancient.status).toBe(400);
    expect((await ancient.json()).error.details).toMatchObject({ field: 'reviewed_at', min: '2000-01-01T00:00:00+00:00' });
    for (const query of ['?limit=0', '?limit=101', '?due_before=tomorrow']) {
      const res = await get(`/user/me/reviews${query}`, user);
      expect(res.status, query).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
    const unknown = await post('/user/me/reviews', user, { spark_id: randomUUID(), rating: 'good' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('NOT_FOUND');
  });
});
