import type { TestApp } from './app.js';

/**
 * A request through the app, with its JSON body parsed (null for a 304, which has none).
 *
 * @example
 *   const { res, body } = await requestJson(t, '/discovery/domains', { headers: user.headers });
 */
export async function requestJson(t: TestApp, path: string, init?: RequestInit) {
  const res = await t.app.request(path, init);
  return { res, body: res.status === 304 ? null : await res.json() };
}

/**
 * POSTs `body` as JSON with the caller's headers (a test user's bearer token) and any extra ones.
 *
 * @example
 *   await postJson(t, '/user/me/events', user, { spark_id, verb: 'completed' }, { 'Idempotency-Key': 'k1' });
 */
export function postJson(t: TestApp, path: string, caller: { headers: Record<string, string> }, body: unknown, headers: Record<string, string> = {}) {
  return t.app.request(path, {
    method: 'POST',
    headers: { ...caller.headers, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}
