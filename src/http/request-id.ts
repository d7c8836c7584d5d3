import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { AppEnv } from './env.js';

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accepts a sane X-Request-Id or makes one, echoes it, and logs one JSON line per request. */
export function requestLogging(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', requestId);
    // Set before the response exists: a header added afterwards makes Hono clone the response.
    c.header('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      // Path only, never the query string: OAuth codes and states travel there. The level check
      // first: with request logs off (LOG_LEVEL=warn) the line is not even assembled.
      if (logger.isLevelEnabled('info')) logger.info({
        req_id: requestId,
        method: c.req.method,
        route: c.req.routePath,
        path: c.req.path,
        status: c.res.status,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
        role: c.get('context')?.role ?? 'ANONYMOUS',
      });
    }
  };
}
