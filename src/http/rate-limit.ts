import type { MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { AppEnv } from './env.js';
import { ApiError } from './api-error.js';
import { hasPermission, type Role } from '../context/permissions.js';

/**
 * Where request counts live. The in-memory store (default) is per process; several API
 * instances share budgets by plugging in a shared store (e.g. Redis INCR+EXPIRE, or a Postgres
 * upsert on (key, window) — see docs/auth.md).
 */
export interface RateLimitStore {
  /** Counts one request for `key` in the fixed window of `windowMs`; returns the new count and window end. */
  hit(key: string, windowMs: number): Promise<{ count: number; resetAt: number }> | { count: number; resetAt: number };
}

/** Fixed-window counters in a Map, swept once per window so memory stays bounded. */
export function createMemoryRateLimitStore(now: () => number = Date.now): RateLimitStore {
  const counters = new Map<string, { count: number; resetAt: number }>();
  let nextSweep = 0;
  return {
    hit(key, windowMs) {
      const t = now();
      if (t >= nextSweep) {
        for (const [k, v] of counters) if (v.resetAt <= t) counters.delete(k);
        nextSweep = t + windowMs;
      }
      let entry = counters.get(key);
      if (!entry || entry.resetAt <= t) {
        entry = { count: 0, resetAt: (Math.floor(t / windowMs) + 1) * windowMs };
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
  store?: RateLimitStore;
}

/**
 * Per-caller budgets: anonymous callers by IP address, users by id. Every limited response
 * carries RateLimit-Limit/Remaining/Reset and RateLimit-Policy; a 429 adds Retry-After.
 */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<AppEnv> {
  const store = options.store ?? createMemoryRateLimitStore();
  const windowMs = options.windowSeconds * 1000;
  return async (c, next) => {
    const context = c.get('context');
    if (!options.enabled || hasPermission(context.role, 'BYPASS_RATE_LIMITS')) return next();
    const limit = options.budgets[context.role] ?? 0;
    if (limit <= 0) return next();
    const key = context.userId && context.kind !== 'anonymous' ? `user:${context.userId}` : `ip:${clientIp(c, options.trustProxy)}`;
    const { count, resetAt } = await store.hit(key, windowMs);
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
    await next();
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
  };
}

function clientIp(c: Parameters<MiddlewareHandler<AppEnv>>[0], trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
    if (forwarded) return forwarded;
  }
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
