import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { forbidden } from './api-error.js';
import type { AppEnv } from './env.js';

/** Request headers a browser page may send: the ones the API reads (docs/api.md#cors). */
export const CORS_ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match', 'X-Request-Id', 'X-Service-Auth'];
/** Response headers a page may read beyond the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = ['ETag', 'X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'Retry-After'];
export const CORS_ALLOW_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** How long a browser may reuse a preflight answer (Chromium caps it at 2 hours). */
export const CORS_MAX_AGE_S = 600;

/**
 * CORS for the listed front-end origins, with Hono's own middleware. A listed origin gets its
 * own origin back, credentials (cookies) and the headers above; any other origin gets no CORS
 * header at all, so the browser keeps the response from the page, and its preflight is a 403.
 * Every response says `Vary: Origin`, so a shared cache never hands one origin's answer to
 * another. With no origin listed (the production default) this adds nothing.
 */
export function corsPolicy(allowedOrigins: ReadonlySet<string>): MiddlewareHandler<AppEnv> {
  const allowed = cors({
    origin: (origin) => (allowedOrigins.has(origin) ? origin : null),
    credentials: true,
    allowMethods: CORS_ALLOW_METHODS,
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: CORS_MAX_AGE_S,
  });
  return async (c, next) => {
    if (allowedOrigins.size === 0) return next();
    const origin = c.req.header('origin');
    if (origin !== undefined && allowedOrigins.has(origin)) return allowed(c, next);
    if (origin !== undefined && c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
      throw forbidden('This origin may not call the API from a browser page (CORS_ALLOWED_ORIGINS)', { reason: 'origin_not_allowed', origin });
    }
    // Before next(): a header added to a finished response makes Hono copy it.
    c.header('Vary', 'Origin', { append: true });
    return next();
  };
}
