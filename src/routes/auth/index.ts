import type { Config } from '../../config.js';
import { createRouter } from '../../http/router.js';
import * as builtin from './auth.handlers.js';
import * as routes from './auth.routes.js';
import * as supabase from './supabase.handlers.js';

/**
 * /auth: OAuth sign-in and its providers, the session, token refresh and the public keys.
 * Sign-in, refresh, logout and the session are answered by this API (`builtin`) or by Supabase
 * Auth (`supabase`).
 */
export function authRouter(provider: Config['AUTH_PROVIDER'] = 'builtin') {
  const handlers = provider === 'supabase' ? { ...builtin, ...supabase } : builtin;
  const router = createRouter();
  router.openapi(routes.login, handlers.login);
  router.openapi(routes.callback, handlers.callback);
  router.openapi(routes.getSession, handlers.getSession);
  router.openapi(routes.logout, handlers.logout);
  router.openapi(routes.refresh, handlers.refresh);
  router.openapi(routes.listProviders, handlers.listProviders);
  router.openapi(routes.getJwks, handlers.getJwks);
  return router;
}
