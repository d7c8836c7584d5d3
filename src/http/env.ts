import type { RequestContext } from '../context/request-context.js';
import type { RouteServices } from './services.js';

/** Hono's per-request variables, shared by every router. */
export interface AppEnv {
  Variables: {
    requestId: string;
    context: RequestContext;
    /** The handlers' dependencies (rpc, auth, snapshot readers): built by createRouteServices (services.ts), set in app.ts. */
    services: RouteServices;
  };
}
