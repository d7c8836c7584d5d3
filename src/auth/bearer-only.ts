import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/env.js';
import { unauthorized } from '../http/api-error.js';

/**
 * Route guard for areas the spec reserves for `Authorization: Bearer <ACCESS_TOKEN>` (/user):
 * a caller identified only by the `svc-access-token` cookie gets 401, as if it had sent nothing.
 * A browser app keeps the access token from the callback's or refresh's JSON body in memory and
 * sends it as a header; the HttpOnly refresh cookie gets it a new one (docs/auth.md).
 */
export function requireBearerToken(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.get('context').via === 'cookie') {
      throw unauthorized('This endpoint needs an Authorization: Bearer <access token> header; the access-token cookie is not accepted here', {
        reason: 'bearer_required',
      });
    }
    await next();
  };
}
