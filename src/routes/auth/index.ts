import { createRouter } from '../../http/router.js';
import * as handlers from './auth.handlers.js';
import * as routes from './auth.routes.js';

/** /auth: OAuth sign-in and its providers, the session, token refresh and the public keys. */
export function authRouter() {
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
