import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * Two transactions record completions of one learner on one spark at once. The review card,
 * derived from the pair's history, must count both: the second writer's recompute waits for the
 * first (private.lock_learner_sparks) and reads its event. Without the lock it computed from its
 * own snapshot and overwrote the first writer's card. (pgTAP 61 and 63 check the cards and the
 * locks in one session.)
 */
describe('review cards under concurrent writes', () => {
  let db: TestDatabase;
  const spark = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase();
    const snapshot = randomUUID();
    await db.sql`update app.snapshots set status = 'archived' where status = 'published'`;
    await db.sql`insert into app.snapshots (id, name, version_label, status, published_at) values (${snapshot}, 'concurrent', 'v1', 'published', now())`;
    await db.sql`insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values (${snapshot}, ${spark}, 'one', 'One', 'beginner', 5)`;
  });
  afterAll(() => db?.drop());

  /** Records `a` in one transaction and, while it is open, `b` in another; commits both. */
  async function concurrently(learner: string, a: { verb: string; at: Date }, b: { verb: string; at: Date }) {
    const first = await db.sql.reserve();
    const second = await db.sql.reserve();
    try {
      await first`begin`;
      await first`insert into app.learning_events (user_id, spark_id, verb, occurred_at) values (${learner}, ${spark}, ${a.verb}, ${a.at})`;
      const [{ pid }] = await second<{ pid: number }[]>`select pg_backend_pid() as pid`;
      await second`begin`;
      const writing = second`insert into app.learning_events (user_id, spark_id, verb, occurred_at) values (${learner}, ${spark}, ${b.verb}, ${b.at})`.execute();
      // The second insert is under way and waits for the first transaction.
      let waiting = false;
      for (let i = 0; i < 100 && !waiting; i++) {
        const [row] = await db.sql<{ waiting: boolean }[]>`select wait_event_type = 'Lock' as waiting from pg_stat_activity where pid = ${pid}`;
        waiting = row?.waiting ?? false;
        if (!waiting) await sleep(20);
      }
      expect(waiting).toBe(true);
      await first`commit`;
      await writing;
      await second`commit`;
    } finally {
      first.release();
      second.release();
    }
  }

  const mastered = new Date('2026-05-01T10:00:00Z');
  const later = new Date('2026-05-02T10:00:00Z');

  it('review card: a later completion recorded meanwhile leaves the first completion as its history', async () => {
    const learner = randomUUID();
    await concurrently(learner, { verb: 'mastered', at: mastered }, { verb: 'completed', at: later });
    // The card's history is the first completion, the mastered one (rated easy), whatever came later.
    const [card] = await db.sql`select last_review_at, reps from app.review_cards where user_id = ${learner} and spark_id = ${spark}`;
    expect(card).toEqual({ last_review_at: mastered, reps: 1 });
  });
});
