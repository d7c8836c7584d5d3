import { randomUUID } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDependencies, type Dependencies } from '../../src/deps.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_JWT_SECRET } from '../helpers/tokens.js';

// The defects these reproduce came from answers kept in memory and from charging the rate limit
// before the session check (issue 16, "Measured defects"); the app runs with production defaults.
let t: TestApp;
let other: Dependencies; // sign-ins happen at "another instance" on the same database

beforeAll(async () => {
  t = await createTestApp({
    RATE_LIMIT_FREE_USER: '3',
    RATE_LIMIT_ANONYMOUS: '3',
    RATE_LIMIT_WINDOW_S: '3600', // long windows: no test straddles a window boundary
    RATE_LIMIT_TRUST_PROXY: 'true',
  });
  other = createDependencies(t.config, t.apiUrl);
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

/** Two sessions of one user, as from two devices. */
async function userWithTwoSessions() {
  const identity = { provider: 'github', providerUserId: randomUUID(), email: `${randomUUID()}@example.com`, displayName: 'Vic', avatarUrl: null };
  const meta = { userAgent: 'vitest', ipAddress: null };
  const first = await other.auth.signIn(identity, meta);
  const second = await other.auth.signIn(identity, meta);
  expect(second.result.user.id).toBe(first.result.user.id);
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  return {
    userId: first.result.user.id,
    stolen: bearer(first.tokens.access_token),
    stolenToken: first.tokens.access_token,
    live: bearer(second.tokens.access_token),
    liveSessionId: second.result.session_id,
  };
}

const get = (path: string, headers: Record<string, string>) => t.app.request(path, { headers });

describe('revoked tokens', () => {
  it('20 requests with a logged-out token cost the user\'s live session nothing', async () => {
    const victim = await userWithTwoSessions();
    expect((await t.app.request('/auth/logout', { method: 'POST', headers: victim.stolen })).status).toBe(200);
    for (let i = 0; i < 20; i += 1) {
      const refused = await get('/user/me/journeys', { ...victim.stolen, 'x-forwarded-for': `198.51.100.${i}` });
      expect(refused.status).toBe(401);
    }
    const live = await get('/user/me/journeys', victim.live);
    expect(live.status).toBe(200);
    expect(live.headers.get('RateLimit-Remaining')).toBe('2');
  });

  it('a refused token counts against its address as an anonymous request would', async () => {
    const victim = await userWithTwoSessions();
    await t.app.request('/auth/logout', { method: 'POST', headers: victim.stolen });
    const address = { 'x-forwarded-for': '203.0.113.150' };
    for (let i = 0; i < 3; i += 1) expect((await get('/metadata', { ...victim.stolen, ...address })).status).toBe(401);
    const anonymous = await get('/metadata', address);
    expect(anonymous.status).toBe(429);
    expect((await get('/metadata', victim.live)).status).toBe(200);
  });

  it('POST /auth/logout answers even when the user\'s budget is spent', async () => {
    const user = await userWithTwoSessions();
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await get('/metadata', user.live)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const logout = await t.app.request('/auth/logout', { method: 'POST', headers: user.live });
    expect(logout.status).toBe(200);
    expect(logout.headers.get('RateLimit-Limit')).toBeNull();
    const [session] = await t.db.sql`select active from app.sessions where id = ${user.liveSessionId}`;
    expect(session.active).toBe(false);
  });

  it('a token whose sub and session_id are written in upper case is refused at once after logout', async () => {
    const user = await userWithTwoSessions();
    const claims = decodeJwt(user.stolenToken);
    const shouting = await new SignJWT({ ...claims, sub: String(claims.sub).toUpperCase(), session_id: String(claims.session_id).toUpperCase() })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const headers = { Authorization: `Bearer ${shouting}` };
    const before = await get('/auth/session', headers);
    expect(before.status).toBe(200);
    const session = await before.json();
    expect(session).toMatchObject({ authenticated: true, user: { id: user.userId } });
    // The request above was charged to the lower-case user id: one budget per user.
    expect((await get('/metadata', user.stolen)).headers.get('RateLimit-Remaining')).toBe('1');
    expect((await t.app.request('/auth/logout', { method: 'POST', headers: user.stolen })).status).toBe(200);
    expect((await get('/metadata', headers)).status).toBe(401);
    expect((await get('/user/me/journeys', headers)).status).toBe(401);
  });
});
