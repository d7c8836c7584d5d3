import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { AppEnv } from '../http/env.js';
import { forbidden, unauthorized } from '../http/api-error.js';
import { hasPermission, type Permission } from './permissions.js';
import { ACCESS_COOKIE, type createContextResolver } from './resolve-context.js';
import { ANONYMOUS } from './request-context.js';

type Resolver = ReturnType<typeof createContextResolver>;

/**
 * Resolves who is calling once per request and stores it as `context`. On `lenientPaths`
 * (GET /auth/session: "never an error for anonymous") bad credentials resolve to anonymous
 * instead of 401.
 */
export function contextMiddleware(resolve: Resolver, options: { lenientPaths?: ReadonlySet<string> } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let remoteAddress: string | undefined;
    try {
      remoteAddress = getConnInfo(c).remote.address;
    } catch {
      remoteAddress = undefined; // not served by a node socket (e.g. app.request in tests)
    }
    const resolving = resolve({
      authorization: c.req.header('authorization'),
      accessCookie: getCookie(c, ACCESS_COOKIE),
      serviceHeader: c.req.header('x-service-auth'),
      remoteAddress,
      forwarded: ['forwarded', 'x-forwarded-for', 'x-real-ip'].some((h) => c.req.header(h) !== undefined),
    });
    c.set('context', options.lenientPaths?.has(c.req.path) ? await resolving.catch(() => ANONYMOUS) : await resolving);
    await next();
  };
}

export interface GuardOptions {
  /** Service callers (X-Service-Auth) may pass when they hold the permission. */
  allowService?: boolean;
}

/**
 * Route guard: a signed-in user (or, where allowed, a service caller) holding `permission`.
 * Anonymous callers get 401; authenticated callers without the permission get 403.
 */
export function requirePermission(permission: Permission, options: GuardOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const context = c.get('context');
    if (context.kind === 'anonymous') throw unauthorized();
    if (context.kind === 'service' && !options.allowService) {
      throw forbidden('Service callers cannot use this endpoint', { permission });
    }
    if (!hasPermission(context.role, permission)) throw forbidden(`Missing permission ${permission}`, { permission });
    await next();
  };
}
