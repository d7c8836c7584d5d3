import type { Config } from '../../config.js';
import type { Rpc } from '../../db/rpc.js';
import type { AuthService } from '../../auth/auth-service.js';
import { createRouter } from '../../http/router.js';
import { authHandlers } from './auth.handlers.js';
import { callback, getJwks, getSession, login, logout, refresh } from './auth.routes.js';

export function authRouter(auth: AuthService, rpc: Rpc, config: Config) {
  const handlers = authHandlers(auth, rpc, config);
  const router = createRouter();
  router.openapi(login, handlers.login);
  router.openapi(callback, handlers.callback);
  router.openapi(getSession, handlers.getSession);
  router.openapi(logout, handlers.logout);
  router.openapi(refresh, handlers.refresh);
  router.openapi(getJwks, handlers.getJwks);
  return router;
}
