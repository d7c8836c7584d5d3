import type { DbCaller } from '../db/rpc.js';
import type { Role } from './permissions.js';

/** Who is calling, resolved once per request (dev bypass → JWT → service secret). */
export interface RequestContext {
  kind: 'anonymous' | 'user' | 'service' | 'dev';
  role: Role;
  /** The user id (JWT `sub`), "service" for service callers, null for anonymous. */
  userId: string | null;
  /** The session a session-bound access token belongs to. */
  sessionId: string | null;
  /** How the credentials arrived, for CSRF checks on cookie-authenticated writes. */
  via: 'bearer' | 'cookie' | 'service-header' | 'dev-bypass' | 'none';
  /** What the database sees: PostgREST's role and claims. */
  db: DbCaller;
}

export const ANONYMOUS: RequestContext = Object.freeze({
  kind: 'anonymous',
  role: 'ANONYMOUS',
  userId: null,
  sessionId: null,
  via: 'none',
  db: Object.freeze({ role: 'anon', claims: null }),
}) as RequestContext;
