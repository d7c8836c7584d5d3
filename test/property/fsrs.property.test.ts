import fc from 'fast-check';
import { createEmptyCard, default_w, fsrs, generatorParameters, type Card, type Grade } from 'ts-fsrs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog } from '../helpers/content.js';
import { postJson } from '../helpers/requests.js';
import { testUser } from '../helpers/tokens.js';

/**
 * The FSRS oracle: ts-fsrs 5.4.2 (a devDependency, never used by the service) schedules the same
 * review histories as the SQL (private.fsrs_review through POST /user/me/reviews). Its
 * configuration is the service's: FSRS-6 default weights, retention 0.9, maximum interval 36500
 * days, no fuzz, the long-term scheduler (enable_short_term = false).
 *
 * Tolerance: due dates equal to the millisecond; stability and difficulty within 1e-8 relative
 * (ts-fsrs rounds both to 8 decimals; a last-bit difference between V8's and glibc's exp/pow
 * could move one rounding step).
 */
const scheduler = fsrs(generatorParameters({ enable_short_term: false, enable_fuzz: false }));
const RATINGS = ['again', 'hard', 'good', 'easy'] as const;
const MINUTE = 60_000;
const DAY = 86_400_000;

const history = fc.record({
  start: fc.date({ min: new Date('2005-01-01T00:00:00Z'), max: new Date('2012-01-01T00:00:00Z'), noInvalidDate: true }),
  firstVerb: fc.constantFrom('completed', 'mastered'),
  reviews: fc.array(
    fc.record({
      rating: fc.constantFrom(...RATINGS),
      // Same-day reviews (minutes apart) as well as long gaps (up to 400 days).
      gap: fc.oneof(fc.integer({ min: 1, max: 600 }).map((m) => m * MINUTE), fc.integer({ min: 1, max: 400 }).map((d) => d * DAY + 7 * MINUTE)),
    }),
    { maxLength: 8 },
  ),
});

type History = { start: Date; firstVerb: string; reviews: { rating: (typeof RATINGS)[number]; gap: number }[] };
type Step = { at: Date; grade: Grade };
function stepsOf(h: History): Step[] {
  const steps: Step[] = [{ at: new Date(Math.floor(h.start.getTime() / 1000) * 1000), grade: (h.firstVerb === 'mastered' ? 4 : 3) as Grade }];
  for (const r of h.reviews) steps.push({ at: new Date(steps.at(-1)!.at.getTime() + r.gap), grade: (RATINGS.indexOf(r.rating) + 1) as Grade });
  return steps;
}

function expectSameCard(sql: { stability: number; difficulty: number; due_at: string; reps: number; lapses: number; scheduled_days: number }, card: Card) {
  expect(new Date(sql.due_at).getTime()).toBe(card.due.getTime());
  expect(Math.abs(sql.stability - card.stability)).toBeLessThanOrEqual(1e-8 * Math.max(1, card.stability));
  expect(Math.abs(sql.difficulty - card.difficulty)).toBeLessThanOrEqual(1e-8 * Math.max(1, card.difficulty));
  expect({ reps: sql.reps, lapses: sql.lapses, scheduled_days: sql.scheduled_days }).toEqual({ reps: card.reps, lapses: card.lapses, scheduled_days: card.scheduled_days });
}

describe('FSRS scheduling property (ts-fsrs oracle)', () => {
  let t: TestApp;
  let sparkId: string;
  beforeAll(async () => {
    t = await createTestApp();
    const content = await insertCatalog(t.db.sql, { sparks: [{ slug: 'recall-me' }] });
    sparkId = content.id('spark', 'recall-me');
  });
  afterAll(() => t.close());

  it('uses exactly the default weights of ts-fsrs', async () => {
    const [{ w }] = await t.db.sql<{ w: number[] }[]>`select private.fsrs_weights() as w`;
    expect(w).toEqual([...default_w]);
  });

  it('every review history gets the due dates and memory states ts-fsrs computes, review by review', async () => {
    await fc.assert(
      fc.asyncProperty(history, async (h) => {
        const user = await testUser();
        const steps = stepsOf(h);
        const first = await postJson(t, '/user/me/events', user, { spark_id: sparkId, verb: h.firstVerb, occurred_at: steps[0].at.toISOString() });
        expect(first.status).toBe(201);
        let card = scheduler.next(createEmptyCard(steps[0].at), steps[0].at, steps[0].grade).card;
        const scheduled = await (await t.app.request('/user/me/reviews?due_before=2100-01-01T00:00:00Z', { headers: user.headers })).json();
        expectSameCard(scheduled.data[0].card, card);
        for (const step of steps.slice(1)) {
          const res = await postJson(t, '/user/me/reviews', user, { spark_id: sparkId, rating: RATINGS[step.grade - 1], reviewed_at: step.at.toISOString() });
          expect(res.status).toBe(201);
          card = scheduler.next(card, step.at, step.grade).card;
          expectSameCard((await res.json()).card, card);
        }
      }),
      { numRuns: 40 },
    );
  }, 240_000);

  it('reviews recorded in any order give the card of the history in time order', async () => {
    await fc.assert(
      fc.asyncProperty(history, fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (h, seed) => {
        const user = await testUser();
        const steps = stepsOf(h);
        // A deterministic shuffle of the reviews (the completion is recorded first).
        const shuffled = steps.slice(1).map((s, i) => ({ s, k: (seed * (i + 7)) % 1009 })).sort((a, b) => a.k - b.k).map((x) => x.s);
        await postJson(t, '/user/me/events', user, { spark_id: sparkId, verb: h.firstVerb, occurred_at: steps[0].at.toISOString() });
        for (const step of shuffled) {
          await postJson(t, '/user/me/reviews', user, { spark_id: sparkId, rating: RATINGS[step.grade - 1], reviewed_at: step.at.toISOString() });
        }
        let card = createEmptyCard(steps[0].at);
        for (const step of steps) card = scheduler.next(card, step.at, step.grade).card;
        const body = await (await t.app.request('/user/me/reviews?due_before=2100-01-01T00:00:00Z', { headers: user.headers })).json();
        expect(body.data).toHaveLength(1);
        expectSameCard(body.data[0].card, card);
      }),
      { numRuns: 25 },
    );
  }, 240_000);
});
