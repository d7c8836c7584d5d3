import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForChanges, type ChangeFeed } from '../../src/db/change-feed.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog } from '../helpers/content.js';
import { signIn } from '../helpers/sessions.js';
import { signToken } from '../helpers/tokens.js';

/** Polls `probe` until it returns true, for at most `ms`; the notification takes a moment. */
async function eventually(probe: () => Promise<boolean> | boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await sleep(20);
  }
  return false;
}

/**
 * True once `check` passes while no request role may execute `fn`: the answer came from memory.
 * A notification of an earlier test may still land and empty the cache once, hence the retries
 * (each warms the cache first).
 */
async function answeredWithout(t: TestApp, fn: string, check: () => Promise<boolean>): Promise<boolean> {
  return eventually(async () => {
    await check(); // warm
    await t.db.sql.unsafe(`revoke execute on function ${fn} from anon, authenticated`);
    try {
      return await check();
    } catch {
      return false; // went to the database: 403, which the contract checker rejects
    } finally {
      await t.db.sql.unsafe(`grant execute on function ${fn} to anon, authenticated`);
    }
  });
}

describe('content change feed and the public reads answered from memory', () => {
  let t: TestApp;
  let feed: ChangeFeed;
  beforeAll(async () => {
    t = await createTestApp({ DB_LISTEN_CHANGES: 'true' });
    await insertCatalog(t.db.sql, { domains: [{ slug: 'data' }] });
    feed = listenForChanges({ url: t.db.url, connectTimeoutSeconds: 2, retryMs: 100 });
    expect(await eventually(() => feed.epoch() !== null)).toBe(true);
    // The app's own feed (created with its rpc adapter) has run its LISTEN too.
    const listening = async () =>
      (await t.db.sql`select count(*)::int as n from pg_stat_activity
        where application_name = 'sparkpath-api-listen' and datname = current_database()
          and query = 'listen sparkpath_sessions'`)[0].n === 2;
    expect(await eventually(listening)).toBe(true);
  });
  afterAll(async () => {
    await feed.close();
    await t.close();
  });

  it('every write to a notifying table starts a new epoch; other tables do not', async () => {
    const writes = [
      t.db.sql`update app.difficulty_levels set label = label where value = 'beginner'`,
      t.db.sql`update app.journey_statuses set label = label where value = 'paused'`,
      t.db.sql`update app.learning_verbs set label = label where value = 'started'`,
      t.db.sql`update app.snapshots set description = description`,
      t.db.sql`update app.snapshot_rollups set facets = facets`,
    ];
    for (const write of writes) {
      const before = feed.epoch();
      await write;
      expect(await eventually(() => feed.epoch() !== before && feed.epoch() !== null)).toBe(true);
    }
    const before = feed.epoch();
    await t.db.sql`update app.domains set name = name`;
    await sleep(300);
    expect(feed.epoch()).toBe(before);
  });

  const read = async (path: string) => {
    const response = await t.app.request(path);
    return response.status === 200 ? response.text() : `status ${response.status}`;
  };

  it('answers a repeated anonymous metadata read without the database, and a change as soon as it is notified', async () => {
    const first = await t.app.request('/metadata/difficulty-levels');
    expect(first.status).toBe(200);
    const body = await first.text();
    expect(await answeredWithout(t, 'api.list_difficulty_levels()', async () => (await read('/metadata/difficulty-levels')) === body)).toBe(true);

    await t.db.sql`update app.difficulty_levels set label = 'Newcomer' where value = 'beginner'`;
    try {
      const label = async () => (await (await t.app.request('/metadata/difficulty-levels')).json()).data[0].label;
      expect(await eventually(async () => (await label()) === 'Newcomer')).toBe(true);
      const metadata = await (await t.app.request('/metadata')).json();
      expect(metadata.difficulty_levels[0].label).toBe('Newcomer');
    } finally {
      await t.db.sql`update app.difficulty_levels set label = 'Beginner' where value = 'beginner'`;
    }
  });

  it('a promote shows in the catalog as soon as it is notified, although which snapshot answers is kept in memory', async () => {
    const slugs = async () => ((await (await t.app.request('/discovery/domains/')).json()).data as { slug: string }[]).map((d) => d.slug);
    expect(await slugs()).toEqual(['data']);
    expect(await answeredWithout(t, 'api.resolve_snapshot(uuid)', async () => (await slugs()).join() === 'data')).toBe(true);
    await insertCatalog(t.db.sql, { domains: [{ slug: 'data' }, { slug: 'web' }] });
    expect(await eventually(async () => (await slugs()).join() === 'data,web')).toBe(true);
  });

  it('a caller whose session the database refuses is refused, although the answer is in memory', async () => {
    expect((await t.app.request('/metadata')).status).toBe(200);
    expect((await t.app.request('/metadata')).status).toBe(200);
    // A token of this API naming a session that does not exist (signed out, or never was).
    const token = await signToken({ extra: { iss: 'sparkpath' }, session_id: crypto.randomUUID() });
    const refused = await t.app.request('/metadata', { headers: { Authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
  });

  const currentSnapshot = (headers: Record<string, string>) => t.app.request('/snapshots/current', { headers });

  it('a signed-in caller reads from memory while its session is vouched for; a logout here refuses the token at once', async () => {
    const session = await signIn(t);
    const current = await currentSnapshot(session.bearer);
    expect(current.status).toBe(200);
    const body = await current.text();
    const fromMemory = async () => {
      const again = await currentSnapshot(session.bearer);
      return again.status === 200 && (await again.text()) === body;
    };
    expect(await answeredWithout(t, 'api.get_current_snapshot()', fromMemory)).toBe(true);

    const logout = await t.app.request('/auth/logout', { method: 'POST', headers: session.bearer });
    expect(logout.status).toBe(200);
    expect((await currentSnapshot(session.bearer)).status).toBe(401);
    expect((await t.app.request('/metadata', { headers: session.bearer })).status).toBe(401);
  });

  it('a session ended elsewhere is refused as soon as the notice arrives, well before a vouch runs out (5 s)', async () => {
    const session = await signIn(t);
    const other = await signIn(t);
    expect((await currentSnapshot(session.bearer)).status).toBe(200);
    expect((await currentSnapshot(other.bearer)).status).toBe(200);
    const heard: string[] = [];
    feed.onSessionChange((sessionId) => heard.push(sessionId));

    // Another instance, the cleanup routine or an operator ends it.
    await t.db.sql`update app.sessions set active = false, ended_at = now(), end_reason = 'logout' where id = ${session.sessionId}`;
    expect(await eventually(async () => (await currentSnapshot(session.bearer)).status === 401, 1500)).toBe(true);
    expect(heard).toContain(session.sessionId);
    expect((await currentSnapshot(other.bearer)).status).toBe(200);
  });

  it('GET /auth/session is kept per token: a profile change shows once notified, a logout here at once', async () => {
    const session = await signIn(t);
    const state = async () => (await (await t.app.request('/auth/session', { headers: session.bearer })).json()) as { authenticated: boolean; user: { display_name: string } | null };
    expect((await state()).user?.display_name).toBe('Tess');
    expect(await answeredWithout(t, 'api.get_session()', async () => (await state()).user?.display_name === 'Tess')).toBe(true);

    // A sign-in elsewhere (or an operator) changes the profile.
    await t.db.sql`update app.users set display_name = 'Tess Renamed' where id = ${session.userId}`;
    expect(await eventually(async () => (await state()).user?.display_name === 'Tess Renamed', 1500)).toBe(true);

    expect((await t.app.request('/auth/logout', { method: 'POST', headers: session.bearer })).status).toBe(200);
    expect(await state()).toEqual({ authenticated: false, user: null, session: null });
  });

  it('listens again with a new epoch when its connection is killed', async () => {
    const before = feed.epoch();
    const killed = await t.db.sql`
      select pg_terminate_backend(pid) as ok from pg_stat_activity
      where application_name = 'sparkpath-api-listen' and datname = current_database()`;
    expect(killed.length).toBeGreaterThan(0);
    expect(await eventually(() => feed.epoch() !== null && feed.epoch() !== before)).toBe(true);
  });

  it('a caller\'s journeys and path are kept; its own write here shows at once, one made elsewhere once notified', async () => {
    const catalog = await insertCatalog(t.db.sql, {
      domains: [{ slug: 'data', trails: [{ slug: 'sql', concepts: [{ slug: 'select', sparks: ['select-star', 'where'] }] }] }],
    });
    const session = await signIn(t);
    const json = { ...session.bearer, 'content-type': 'application/json' };
    // The promote above is notified; until then the journeys route may still see the old snapshot.
    const enrolled = await t.app.request('/user/me/journeys', { method: 'POST', headers: json, body: JSON.stringify({ trail_id: catalog.id('trail', 'sql') }) });
    expect(enrolled.status).toBe(201);
    const journeyId = ((await enrolled.json()) as { id: string }).id;
    const completed = async () => {
      const response = await t.app.request(`/user/me/journeys/${journeyId}`, { headers: session.bearer });
      return ((await response.json()) as { completed_sparks: number }).completed_sparks;
    };
    expect(await completed()).toBe(0);
    expect(await answeredWithout(t, 'api.get_user_journey(uuid)', async () => (await completed()) === 0)).toBe(true);
    const path = async () => ((await (await t.app.request('/graph/path?target=select-star', { headers: session.bearer })).json()) as { skipped_count: number }).skipped_count;
    expect(await path()).toBe(0);

    // Through this instance: the next read sees it, no waiting.
    const event = { spark_id: catalog.id('spark', 'select-star'), verb: 'mastered' };
    expect((await t.app.request('/user/me/events', { method: 'POST', headers: json, body: JSON.stringify(event) })).status).toBe(201);
    expect(await completed()).toBe(1);
    expect(await path()).toBe(1);

    // Elsewhere (another instance, an import of events): once the notice arrives.
    await t.db.sql`insert into app.learning_events (user_id, spark_id, verb) values (${session.userId}, ${catalog.id('spark', 'where')}, 'mastered')`;
    expect(await eventually(async () => (await completed()) === 2, 1500)).toBe(true);
  });

  it('does not vouch while it cannot listen', async () => {
    const unreachable = listenForChanges({ url: 'postgres://nobody@127.0.0.1:1/none', connectTimeoutSeconds: 1, retryMs: 50 });
    try {
      await sleep(300);
      expect(unreachable.epoch()).toBeNull();
    } finally {
      await unreachable.close();
    }
  });
});
