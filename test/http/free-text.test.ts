import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { postJson } from '../helpers/requests.js';
import { insertCatalog } from '../helpers/content.js';
import { testUser } from '../helpers/tokens.js';

let t: TestApp;
let user: Awaited<ReturnType<typeof testUser>>;
let sparkId: string;

beforeAll(async () => {
  t = await createTestApp();
  user = await testUser();
  const content = await insertCatalog(t.db.sql, {
    domains: [{ slug: 'data', trails: [{ slug: 'sql-basics', concepts: [{ slug: 'select', sparks: ['select-star'] }] }] }],
  });
  sparkId = content.id('spark', 'select-star');
});
afterAll(() => t?.close());

/** Expects 400 VALIDATION_ERROR naming `field` as the failing input. */
async function expectRejected(res: Response, field: string) {
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body.error.code).toBe('VALIDATION_ERROR');
  expect(JSON.stringify(body.error.details)).toContain(field);
  expect(JSON.stringify(body.error.details)).toContain('must not contain control characters');
}

const CONTROL = ['\u0000', '\u0001', '\t', '\n', '\u001f', '\u007f', '\u0085'];
const QUERY_TEXT = [
  ['/search', 'q'],
  ['/search/autocomplete', 'q'],
  ['/discovery/all', 'q'],
  ['/auth/callback', 'code'],
  ['/auth/callback', 'state'],
  ['/auth/callback', 'iss'],
  ['/auth/callback', 'error'],
  ['/auth/callback', 'error_description'],
] as const;

describe('free-text inputs', () => {
  it.each(QUERY_TEXT)('GET %s?%s= with a NUL (or any control character) answers 400 VALIDATION_ERROR', async (path, param) => {
    for (const ch of CONTROL) {
      const res = await t.app.request(`${path}?${param}=${encodeURIComponent(`ab${ch}cd`)}`, { headers: user.headers });
      await expectRejected(res, param);
    }
  });

  it('GET /search still accepts ordinary text, trimmed, with accents and punctuation', async () => {
    const res = await t.app.request(`/search?q=${encodeURIComponent('  Sélect * ')}`, { headers: user.headers });
    expect(res.status).toBe(200);
    const auto = await t.app.request(`/search/autocomplete?q=${encodeURIComponent(' se ')}`, { headers: user.headers });
    expect(auto.status).toBe(200);
    expect((await auto.json()).suggestions.map((s: { text: string }) => s.text)).toContain('Select Star');
  });

  it('POST /user/me/events with a NUL in verb answers 400 VALIDATION_ERROR and records nothing', async () => {
    const res = await postJson(t, '/user/me/events', user, { spark_id: sparkId, verb: 'a\u0000b' });
    await expectRejected(res, 'verb');
    const [row] = await t.db.sql`select count(*)::int as n from app.learning_events`;
    expect(row.n).toBe(0);
  });

  it('POST /user/me/events with a control character in Idempotency-Key answers 400 VALIDATION_ERROR', async () => {
    const res = await postJson(t, '/user/me/events', user, { spark_id: sparkId, verb: 'started' }, { 'Idempotency-Key': `key\u0001${randomUUID()}` });
    await expectRejected(res, 'idempotency-key');
  });

  it('POST /auth/refresh with a NUL in refresh_token answers 400 VALIDATION_ERROR', async () => {
    const res = await t.app.request('/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: 'abc\u0000def' }),
    });
    await expectRejected(res, 'refresh_token');
  });
});
