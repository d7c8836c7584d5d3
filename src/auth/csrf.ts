import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { forbidden } from '../http/api-error.js';
import type { AppEnv } from '../http/env.js';
import { ACCESS_COOKIE, REFRESH_COOKIE } from '../context/resolve-context.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence for cookie-authenticated writes (app-wide). A state-changing request that
 * carries our session cookies and no Authorization header is refused when the browser says it
 * is cross-site: Sec-Fetch-Site `cross-site`, or an Origin that is neither this API's own nor
 * on the allow-list (the front ends we serve: AUTH_ALLOWED_REDIRECT_ORIGINS and
 * CORS_ALLOWED_ORIGINS). Bearer requests are not exposed to CSRF (a browser never attaches the
 * header by itself) and pass.
 */
export function crossSiteGuard(allowedOrigins: ReadonlySet<string>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method) || c.req.header('authorization')) return next();
    if (getCookie(c, ACCESS_COOKIE) === undefined && getCookie(c, REFRESH_COOKIE) === undefined) return next();
    const origin = c.req.header('origin');
    const site = c.req.header('sec-fetch-site');
    const ownOrigin = new URL(c.req.url).origin;
    const originAllowed = origin !== undefined && origin !== 'null' && (origin === ownOrigin || allowedOrigins.has(origin));
    if (origin !== undefined && !originAllowed) {
      throw forbidden('Cross-site request refused for cookie-authenticated write', { reason: 'cross_site_request', origin });
    }
    if (origin === undefined && site === 'cross-site') {
      throw forbidden('Cross-site request refused for cookie-authenticated write', { reason: 'cross_site_request' });
    }
    return next();
  };
}
