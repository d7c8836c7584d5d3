import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey, createMemoryRateLimitStore, storeKey } from '../../src/http/rate-limit.js';
import { createApp } from '../../src/app.js';
import { createDependencies } from '../../src/deps.js';
import { createLogger } from '../../src/logger.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SERVICE_SECRET, testUser } from '../helpers/tokens.js';

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

  it('keys anonymous callers by the rightmost X-Forwarded-For entry, which the trusted proxy appended', async () => {
    // The client controls everything left of the proxy's own entry: a fresh spoofed hop per
    // request must not buy a fresh budget.
    const statuses = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await get(t, { 'x-forwarded-for': `10.9.${i}.1, 203.0.113.99` })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    // Two X-Forwarded-For header lines are joined in order: the last one still wins.
    const joined = new Headers([['x-forwarded-for', '10.0.0.1'], ['x-forwarded-for', '203.0.113.99']]);
    expect((await t.app.request('/metadata', { headers: joined })).status).toBe(429);
  });

  it('counts every IPv6 address of one /64 against one budget', async () => {
    const statuses = [];
    for (let i = 1; i <= 4; i += 1) statuses.push((await get(t, { 'x-forwarded-for': `2001:db8:7:9:${i}::${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await get(t, { 'x-forwarded-for': '2001:db8:7:a::1' })).status).toBe(200);
    expect(addressKey('2001:DB8:0007:0009:1:2:3:4')).toBe('2001:db8:7:9::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('not an address')).toBe('not an address');
  });

  it('stores long or unusual caller keys as a fixed-length hash', () => {
    expect(storeKey('ip:203.0.113.7')).toBe('ip:203.0.113.7');
    expect(storeKey('user:3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f')).toBe('user:3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f');
    const long = storeKey(`ip:${'z'.repeat(5000)}`);
    expect(long).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
    expect(storeKey(`ip:${'z'.repeat(5000)}`)).toBe(long);
    expect(storeKey(`ip:${'z'.repeat(4999)}`)).not.toBe(long);
    expect(storeKey('ip:a b')).toMatch(/^sha256:/);
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
    // A second instance on the same database, composed as `npm start` composes it.
    const secondDeps = createDependencies(shared.config, shared.apiUrl);
    try {
      const second = createApp({ ...secondDeps, logger: createLogger('silent') });
      const ip = { 'x-forwarded-for': '192.0.2.77' };
      expect((await shared.app.request('/metadata', { headers: ip })).status).toBe(200);
      expect((await second.request('/metadata', { headers: ip })).status).toBe(200);
      const third = await shared.app.request('/metadata', { headers: ip });
      expect(third.status).toBe(429);
      expect(third.headers.get('Retry-After')).toMatch(/^\d+$/);
      const [row] = await shared.db.sql`select count from app.rate_limit_counters where key = 'ip:192.0.2.77'`;
      expect(row.count).toBe(3);
      // A forwarded address longer than the key column allows is hashed, not refused with the
      // database's constraint text.
      const long = { 'x-forwarded-for': 'z'.repeat(300) };
      const res = await shared.app.request('/metadata', { headers: long });
      expect(res.status).toBe(200);
      const keys = await shared.db.sql<{ key: string }[]>`select key from app.rate_limit_counters where key <> 'ip:192.0.2.77'`;
      expect(keys.map((k) => k.key)).toEqual([storeKey(`ip:${'z'.repeat(300)}`)]);
      expect(keys[0].key.length).toBeLessThanOrEqual(64);
    } finally {
      await secondDeps.close();
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

  it('the in-memory store holds at most maxKeys keys, dropping ended windows first, then the oldest', () => {
    let now = 0;
    const store = createMemoryRateLimitStore(() => now, 3);
    store.hit('a', 1000);
    now = 2500; // 'a' ended; 'b' and 'c' live in the window ending at 3000
    store.hit('b', 1000);
    store.hit('c', 1000);
    store.hit('d', 1000); // full (a, b, c): the ended 'a' is swept
    expect(store.size()).toBe(3);
    expect(store.hit('b', 1000)).toMatchObject({ count: 2 });
    for (let i = 0; i < 1000; i += 1) store.hit(`spray-${i}`, 1000);
    expect(store.size()).toBe(3);
    // The newest keys survive; the oldest were evicted.
    expect(store.hit('spray-999', 1000)).toMatchObject({ count: 2 });
    expect(store.hit('b', 1000)).toMatchObject({ count: 1 });
  });
});
