import type { AuthService } from '../auth/auth-service.js';
import type { SupabaseAuth } from '../auth/supabase-auth.js';
import type { Config } from '../config.js';
import type { Rpc } from '../db/rpc.js';
import { createSnapshotReader, type SnapshotReader } from './cache.js';

/**
 * What route handlers use besides the request itself. Built once when the app is composed and
 * handed to every request as `c.var.services` by one middleware, so every handler is a plain
 * top-level `RouteHandler<typeof route, AppEnv>` const and every area reaches its dependencies
 * the same way.
 */
export interface RouteServices {
  rpc: Rpc;
  auth: AuthService;
  /** Sign-in delegated to Supabase Auth (AUTH_PROVIDER=supabase); unset otherwise. */
  supabaseAuth?: SupabaseAuth;
  config: Config;
  /** Snapshot content of the open catalog: ETag, 304, the body cache, public Cache-Control. */
  readSnapshot: SnapshotReader;
  /** Snapshot content behind a token (search, graph): the same, with private Cache-Control. */
  readPrivateSnapshot: SnapshotReader;
}

/**
 * The route services. Both readers go through the rpc, which owns the one snapshot cache (a body
 * is the same whoever asked; only Cache-Control differs, and that is decided per request).
 *
 * @example
 *   const services = createRouteServices({ rpc, auth, config });
 *   app.use((c, next) => { c.set('services', services); return next(); });
 */
export function createRouteServices(deps: { rpc: Rpc; auth: AuthService; supabaseAuth?: SupabaseAuth; config: Config }): RouteServices {
  return {
    rpc: deps.rpc,
    auth: deps.auth,
    supabaseAuth: deps.supabaseAuth,
    config: deps.config,
    readSnapshot: createSnapshotReader(deps.rpc),
    readPrivateSnapshot: createSnapshotReader(deps.rpc, { privateToCaller: true }),
  };
}
