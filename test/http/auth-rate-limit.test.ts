import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRateLimitStore } from '../../src/http/rate-limit.js';
import { createApp } from '../../src/app.js';
import { createJwtVerifier } from '../../src/context/jwt.js';
import { createPostgresRpc } from '../../src/db/postgres-rpc.js';
import { createLogger } from '../../src/logger.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_JWT_SECRET, TEST_SERVICE_SECRET, testUser } from '../helpers/tokens.js';

let t: TestApp;
let off: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    RATE_LIMITS_ENABLED: 'true',
    RATE_LIMIT_ANONYMOUS: '3',
    RATE_LIMIT_FREE_USER: '2',
    RATE_LIMIT_PREMIUM_USER: '4',
    RATE_LIMIT_WINDOW_S: '3600', // long windows: no test straddles a window boundary
    RATE_LIMIT_TRUST_PROXY: 'true',
  });
  off = await createTestApp({ RATE_LIMIT_ANONYMOUS: '1', RATE_LIMITS_ENABLED: 'false' });
});
afterAll(async () => {
  await t?.close();
  await off?.close();
});

const get = (app: TestApp, headers: Record<string, string>) => app.app.request('/metadata', { headers });

describe('auth routes: rate limits', () => {
  it('limits anonymous callers per IP address with 429, Retry-After and RateLimit headers', async () => {
    const ip = { 'x-forwarded-for': '203.0.113.7' };
    const first = await get(t, ip);
    expect(first.status).toBe(200);
    expect(first.headers.get('RateLimit-Limit')).toBe('3');
    expect(first.headers.get('RateLimit-Remaining')).toBe('2');
    expect(first.headers.get('RateLimit-Policy')).toBe('3;w=3600');
    expect(Number(first.headers.get('RateLimit-Reset'))).toBeLessThanOrEqual(3600);
    await get(t, ip);
    expect((await get(t, ip)).headers.get('RateLimit-Remaining')).toBe('0');
    const limited = await get(t, ip);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(limited.headers.get('RateLimit-Remaining')).toBe('0');
    const body = await limited.json();
    expect(body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 3, window_seconds: 3600 } });
    // Another address has its own budget.
    expect((await get(t, { 'x-forwarded-for': '203.0.113.8' })).status).toBe(200);
  });

  it('limits users by id with their role budget, whatever their address', async () => {
    const free = await testUser();
    const other = await testUser();
    expect((await get(t, { ...free.headers, 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
    expect((await get(t, { ...free.headers, 'x-forwarded-for': '198.51.100.2' })).status).toBe(200);
    expect((await get(t, { ...free.headers, 'x-forwarded-for': '198.51.100.3' })).status).toBe(429);
    expect((await get(t, other.headers)).status).toBe(200);
    const premium = await testUser({ subscription_plan: 'premium' });
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await get(t, premium.headers)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });

  it('exempts service callers and roles holding BYPASS_RATE_LIMITS', async () => {
    const admin = await testUser({ user_role: 'admin' });
    const service = { 'x-service-auth': TEST_SERVICE_SECRET, 'x-forwarded-for': '192.0.2.50' };
    for (let i = 0; i < 6; i += 1) {
      const a = await get(t, admin.headers);
      const s = await get(t, service);
      expect([a.status, s.status]).toEqual([200, 200]);
      expect(s.headers.get('RateLimit-Limit')).toBeNull();
    }
  });

  it('can be switched off', async () => {
    for (let i = 0; i < 3; i += 1) expect((await get(off, {})).status).toBe(200);
  });

  it('the postgres store shares one budget between API instances on the same database', async () => {
    const shared = await createTestApp({ RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_WINDOW_S: '3600', RATE_LIMIT_ANONYMOUS: '2', RATE_LIMIT_TRUST_PROXY: 'true' });
    const rpc = createPostgresRpc({ url: shared.db.url, poolMax: 2, statementTimeoutMs: 5000, connectTimeoutSeconds: 3 });
    try {
      const second = createApp({
        config: shared.config,
        rpc,
        logger: createLogger('silent'),
        verifier: createJwtVerifier({ secret: TEST_JWT_SECRET, audience: 'authenticated' }),
      });
      const ip = { 'x-forwarded-for': '192.0.2.77' };
      expect((await shared.app.request('/metadata', { headers: ip })).status).toBe(200);
      expect((await second.request('/metadata', { headers: ip })).status).toBe(200);
      const third = await shared.app.request('/metadata', { headers: ip });
      expect(third.status).toBe(429);
      expect(third.headers.get('Retry-After')).toMatch(/^\d+$/);
      const [row] = await shared.db.sql`select count from app.rate_limit_counters where key = 'ip:192.0.2.77'`;
      expect(row.count).toBe(3);
    } finally {
      await rpc.close();
      await shared.close();
    }
  });

  it('the in-memory store counts per fixed window and forgets old windows', () => {
    let now = 1_000_000;
    const store = createMemoryRateLimitStore(() => now);
    expect(store.hit('k', 1000)).toMatchObject({ count: 1, resetAt: 1_001_000 });
    expect(store.hit('k', 1000)).toMatchObject({ count: 2 });
    now += 1000;
    expect(store.hit('k', 1000)).toMatchObject({ count: 1, resetAt: 1_002_000 });
  });
});
