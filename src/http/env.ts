import type { RequestContext } from '../context/request-context.js';

/** Hono's per-request variables, shared by every router. */
export interface AppEnv {
  Variables: {
    requestId: string;
    context: RequestContext;
  };
}
