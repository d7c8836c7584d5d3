import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { AppEnv } from './env.js';
import { ApiError } from './api-error.js';
import { hasPermission, type Role } from '../context/permissions.js';
import type { RateLimitCount, RateLimitStore } from '../db/rate-limit-store.js';

/** Most keys the in-memory store holds at once (see createMemoryRateLimitStore). */
export const MEMORY_STORE_MAX_KEYS = 100_000;

/**
 * Fixed-window counters in a Map. Ended windows are swept once per window, and whenever the map
 * is full; if it is still full (more than `maxKeys` callers in one window) the oldest entries are
 * evicted, so memory stays bounded whatever the callers send.
 */
export function createMemoryRateLimitStore(now: () => number = Date.now, maxKeys = MEMORY_STORE_MAX_KEYS): RateLimitStore & { size(): number } {
  const counters = new Map<string, { count: number; resetAt: number }>();
  let nextSweep = 0;
  const sweep = (t: number) => {
    for (const [k, v] of counters) if (v.resetAt <= t) counters.delete(k);
  };
  const windowEnd = (t: number, windowMs: number) => (Math.floor(t / windowMs) + 1) * windowMs;
  return {
    size: () => counters.size,
    peek(key, windowMs): RateLimitCount {
      const t = now();
      const entry = counters.get(key);
      return entry && entry.resetAt > t ? { ...entry } : { count: 0, resetAt: windowEnd(t, windowMs) };
    },
    hit(key, windowMs) {
      const t = now();
      if (t >= nextSweep) {
        sweep(t);
        nextSweep = t + windowMs;
      }
      let entry = counters.get(key);
      if (!entry || entry.resetAt <= t) {
        if (!entry && counters.size >= maxKeys) {
          sweep(t);
          // Maps iterate in insertion order: the first keys are the oldest.
          for (const k of counters.keys()) {
            if (counters.size < maxKeys) break;
            counters.delete(k);
          }
        }
        entry = { count: 0, resetAt: windowEnd(t, windowMs) };
        counters.set(key, entry);
      }
      entry.count += 1;
      return entry;
    },
  };
}

export interface RateLimitOptions {
  enabled: boolean;
  windowSeconds: number;
  /** Requests per window by role; 0 = unlimited. SERVICE and BYPASS_RATE_LIMITS holders are exempt. */
  budgets: Partial<Record<Role, number>>;
  trustProxy: boolean;
  store: RateLimitStore;
  /** Paths never limited (POST /auth/logout: ending a session must always be possible). */
  exempt?: (method: string, path: string) => boolean;
}

/**
 * Per-caller budgets: anonymous callers by IP address, users by id. Every limited response
 * carries RateLimit-Limit/Remaining/Reset and RateLimit-Policy; a 429 adds Retry-After.
 *
 * A signed-in caller is charged only after its session check passed (the database runs it in
 * the request's own statement): before the handler the budget is only looked at, after it the
 * request is counted, unless the token was refused (401). A refused token is counted as an
 * anonymous request of its address instead, so a stolen or logged-out token costs the user's
 * live sessions nothing. Anonymous callers are counted up front, as there is nothing to check.
 * Concurrent requests of one user may overshoot the budget by the requests in flight, and a
 * token whose user has spent the budget gets 429 before its session is checked.
 */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<AppEnv> {
  const { store } = options;
  const windowMs = options.windowSeconds * 1000;
  return async (c, next) => {
    const context = c.get('context');
    if (!options.enabled || hasPermission(context.role, 'BYPASS_RATE_LIMITS') || options.exempt?.(c.req.method, c.req.path)) return next();
    const limit = options.budgets[context.role] ?? 0;
    if (limit <= 0) return next();
    const addressStoreKey = () => storeKey(`ip:${addressKey(clientIp(c, options.trustProxy))}`);
    const signedIn = context.userId !== null && context.kind !== 'anonymous';
    const key = signedIn ? storeKey(`user:${context.userId}`) : addressStoreKey();
    // This request counted: the anonymous one now, a signed-in one as if it will pass.
    const { count: used, resetAt } = signedIn ? await store.peek(key, windowMs) : await store.hit(key, windowMs);
    const count = signedIn ? used + 1 : used;
    const resetSeconds = Math.max(Math.ceil((resetAt - Date.now()) / 1000), 0);
    const headers = {
      'RateLimit-Limit': String(limit),
      'RateLimit-Remaining': String(Math.max(limit - count, 0)),
      'RateLimit-Reset': String(resetSeconds),
      'RateLimit-Policy': `${limit};w=${options.windowSeconds}`,
    };
    if (count > limit) {
      throw new ApiError('RATE_LIMITED', `Rate limit of ${limit} requests per ${options.windowSeconds} s exceeded`, { limit, window_seconds: options.windowSeconds, retry_after: resetSeconds }, { ...headers, 'Retry-After': String(Math.max(resetSeconds, 1)) });
    }
    // Prepared before the handler runs, so they land on the response as it is built.
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    await next();
    if (!signedIn) return;
    try {
      await store.hit(c.res.status === 401 ? addressStoreKey() : key, windowMs);
    } catch {
      // The shared store is unreachable (so is the database the request needed): not counted.
    }
  };
}

/** Keys longer than this (or with characters outside printable ASCII) are stored as a hash. */
export const MAX_PLAIN_KEY_LENGTH = 64;

/** Bounded store keys: a caller cannot bloat the store with a long or odd forwarded address. */
export function storeKey(key: string): string {
  if (key.length <= MAX_PLAIN_KEY_LENGTH && /^[\x21-\x7e]*$/.test(key)) return key;
  return `sha256:${createHash('sha256').update(key).digest('base64url')}`;
}

/**
 * The budget an address draws from. One IPv6 subscriber usually holds a whole /64, so IPv6
 * addresses share one budget per /64 (otherwise rotating the interface id buys a fresh budget
 * per request); IPv4-mapped IPv6 addresses count as their IPv4 address.
 *
 * @example addressKey('2001:db8:1:2:aaaa::1') === '2001:db8:1:2::/64'
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  // An embedded IPv4 tail (a.b.c.d) is two groups; it only matters past the first four.
  const groups = [...left, ...Array(Math.max(8 - left.length - right.length, 0)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/**
 * The caller's address. Behind a trusted proxy, the RIGHTMOST X-Forwarded-For entry: the one
 * our proxy appended from the connection it accepted. Entries to its left come from the client
 * and can be anything, so keying on them would let every request pick a fresh budget.
 */
export function clientIp(c: Parameters<MiddlewareHandler<AppEnv>>[0], trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
