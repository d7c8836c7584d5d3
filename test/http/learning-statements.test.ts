import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog, type CatalogSpec } from '../helpers/content.js';
import { postJson } from '../helpers/requests.js';
import { testUser } from '../helpers/tokens.js';
import { xapiStatementResultProblems } from '../helpers/xapi.js';

type User = Awaited<ReturnType<typeof testUser>>;
interface Statement {
  id: string;
  actor: { objectType: string; account: { homePage: string; name: string } };
  verb: { id: string; display: Record<string, string> };
  object: { objectType: string; id: string; definition?: { type: string; name?: Record<string, string> } };
  timestamp: string;
  stored: string;
  version: string;
}

const CATALOG: CatalogSpec = {
  domains: [{ slug: 'data', trails: [{ slug: 'sql', concepts: [{ slug: 'basics', sparks: [{ slug: 'select', title: 'SELECT & FROM' }, 'filter', 'join'] }] }] }],
};
const HOME = 'https://learn.example.org';

/** RFC 4122 version-5 UUID, the statement ids the export makes up (private.xapi_uuid). */
function uuidV5(name: string): string {
  const namespace = Buffer.from('8b1f4c1e5d2a4f0e9c3b7a6d5e4f3c2b', 'hex');
  const bytes = createHash('sha1').update(Buffer.concat([namespace, Buffer.from(name, 'utf8')])).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('learning routes: xAPI statements and voiding', () => {
  let t: TestApp;
  let content: Awaited<ReturnType<typeof insertCatalog>>;
  beforeAll(async () => {
    // With a trailing slash, which the home page drops.
    t = await createTestApp({ PUBLIC_BASE_URL: `${HOME}/` });
    content = await insertCatalog(t.db.sql, CATALOG);
  });
  afterAll(() => t.close());

  const get = (path: string, user: User) => t.app.request(path, { headers: user.headers });
  const post = (path: string, user: User, body: unknown, headers: Record<string, string> = {}) => postJson(t, path, user, body, headers);
  const record = async (user: User, slug: string, verb: string, occurredAt: string, key?: string) => {
    const res = await post('/user/me/events', user, { spark_id: content.id('spark', slug), verb, occurred_at: occurredAt }, key ? { 'Idempotency-Key': key } : {});
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; recorded_at: string; occurred_at: string };
  };
  const statements = async (user: User, query = '') => {
    const res = await get(`/user/me/statements${query}`, user);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { statements: Statement[]; more: string };
    expect(xapiStatementResultProblems(body)).toEqual([]);
    return { res, body };
  };

  it('GET /user/me/statements exports each event as a valid xAPI 1.0.3 statement, newest stored first', async () => {
    const user = await testUser();
    const uuidKey = '6F1C2D4E-5B6A-4C7D-8E9F-0A1B2C3D4E5F';
    const started = await record(user, 'select', 'started', '2026-03-01T10:00:00Z', uuidKey);
    const completed = await record(user, 'select', 'completed', '2026-03-01T10:05:00.123Z', 'lesson-7-done');
    const bookmarked = await record(user, 'filter', 'bookmarked', '2026-03-01T10:06:00Z');
    const mastered = await record(user, 'filter', 'mastered', '2026-03-01T10:07:00Z');

    const { res, body } = await statements(user);
    expect(res.headers.get('x-experience-api-version')).toBe('1.0.3');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(body.more).toBe('');
    expect(body.statements.map((s) => s.id)).toEqual([mastered.id, bookmarked.id, uuidV5(`${user.id}:lesson-7-done`), uuidKey.toLowerCase()]);

    const actor = { objectType: 'Agent', account: { homePage: HOME, name: user.id } };
    const select = `${HOME}/activities/sparks/${content.id('spark', 'select')}`;
    expect(body.statements[2]).toEqual({
      id: uuidV5(`${user.id}:lesson-7-done`),
      actor,
      verb: { id: 'http://adlnet.gov/expapi/verbs/completed', display: { 'en-US': 'completed' } },
      object: { objectType: 'Activity', id: select, definition: { type: 'http://adlnet.gov/expapi/activities/lesson', name: { 'en-US': 'SELECT & FROM' } } },
      timestamp: '2026-03-01T10:05:00.123000Z',
      stored: body.statements[2].stored,
      version: '1.0.3',
    });
    expect(new Date(body.statements[2].stored).getTime()).toBe(new Date(completed.recorded_at).getTime());
    expect(body.statements.map((s) => s.verb.id)).toEqual([
      'http://adlnet.gov/expapi/verbs/mastered',
      'http://id.tincanapi.com/verb/bookmarked',
      'http://adlnet.gov/expapi/verbs/completed',
      'http://adlnet.gov/expapi/verbs/attempted',
    ]);
    expect(body.statements[3].timestamp).toBe('2026-03-01T10:00:00.000000Z');
    expect(started.id).not.toBe(body.statements[3].id); // a UUID key names the statement, not the event id
  });

  it('GET /user/me/statements pages with xAPI more links and filters on stored with since and until', async () => {
    const user = await testUser();
    for (let i = 0; i < 5; i++) await record(user, 'join', 'started', `2026-03-0${i + 1}T10:00:00Z`);
    const all = (await statements(user)).body.statements;
    expect(all).toHaveLength(5);

    const seen: string[] = [];
    let next = '/user/me/statements?limit=2';
    let pages = 0;
    while (next !== '') {
      const page = await statements(user, next.slice('/user/me/statements'.length));
      expect(page.body.statements.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.statements.map((s) => s.id));
      next = page.body.more;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(all.map((s) => s.id));

    // since is exclusive, until inclusive, both on stored.
    const since = encodeURIComponent(all[3].stored);
    const until = encodeURIComponent(all[1].stored);
    const window = (await statements(user, `?since=${since}&until=${until}`)).body.statements;
    expect(window.map((s) => s.id)).toEqual(all.slice(1, 3).map((s) => s.id));
    const paged = (await statements(user, `?since=${since}&limit=1`)).body;
    expect(paged.more).toContain(`since=${since.replace(/%3A/g, ':')}`);
  });

  it('POST /user/me/events/{id}/void takes an event out of progress and exports a voiding statement', async () => {
    const user = await testUser();
    const journey = await (await post('/user/me/journeys', user, { trail_id: content.id('trail', 'sql') })).json();
    const completed = await record(user, 'select', 'completed', '2026-03-01T10:00:00Z', 'select-done');
    expect((await (await get(`/user/me/journeys/${journey.id}`, user)).json()).completed_sparks).toBe(1);

    const res = await post(`/user/me/events/${completed.id}/void`, user, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const voided = await res.json();
    expect(voided).toMatchObject({ id: completed.id, verb: 'completed', idempotency_key: 'select-done', created: false });
    expect(voided.voided_at).toEqual(expect.any(String));
    expect((await (await get(`/user/me/journeys/${journey.id}`, user)).json()).completed_sparks).toBe(0);

    const again = await (await post(`/user/me/events/${completed.id}/void`, user, {})).json();
    expect(again.voided_at).toBe(voided.voided_at);
    // A retry of the original event returns it, still voided.
    const retry = await post('/user/me/events', user, { spark_id: content.id('spark', 'select'), verb: 'completed', occurred_at: '2026-03-01T10:00:00Z' }, { 'Idempotency-Key': 'select-done' });
    expect(retry.status).toBe(200);
    expect((await retry.json()).voided_at).toBe(voided.voided_at);

    const original = uuidV5(`${user.id}:select-done`);
    const { body } = await statements(user);
    expect(body.statements).toHaveLength(1);
    expect(body.statements[0]).toMatchObject({
      id: uuidV5(`voided:${original}`),
      verb: { id: 'http://adlnet.gov/expapi/verbs/voided', display: { 'en-US': 'voided' } },
      object: { objectType: 'StatementRef', id: original },
    });
    expect(new Date(body.statements[0].stored).getTime()).toBe(new Date(voided.voided_at).getTime());
    expect(body.statements[0].timestamp).toBe(body.statements[0].stored);
  });

  it('learners export and void only their own events', async () => {
    const alice = await testUser();
    const bob = await testUser();
    const event = await record(alice, 'select', 'started', '2026-03-01T10:00:00Z');
    expect((await statements(bob)).body).toEqual({ statements: [], more: '' });
    const steal = await post(`/user/me/events/${event.id}/void`, bob, {});
    expect(steal.status).toBe(404);
    expect((await steal.json()).error).toMatchObject({ code: 'NOT_FOUND', details: { id: event.id } });
    expect((await statements(alice)).body.statements.map((s) => s.id)).toEqual([event.id]);
    const [row] = await t.db.sql`select voided_at from app.learning_events where id = ${event.id}`;
    expect(row.voided_at).toBeNull();
  });

  it('returns 400 VALIDATION_ERROR for a bad limit, time or cursor, and for a malformed event id', async () => {
    const user = await testUser();
    for (const [query, field] of [['?limit=501', 'limit'], ['?limit=-1', 'limit'], ['?since=yesterday', 'since'], ['?cursor=abc', 'cursor']]) {
      const res = await get(`/user/me/statements${query}`, user);
      expect(res.status, query).toBe(400);
      const error = (await res.json()).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.issues.map((i: { field: string }) => i.field)).toContain(field);
    }
    const malformed = await post('/user/me/events/not-a-uuid/void', user, {});
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.details.issues[0].field).toBe('id');
    expect((await post(`/user/me/events/${randomUUID()}/void`, user, {})).status).toBe(404);
  });
});
