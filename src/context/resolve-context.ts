import { createHash, timingSafeEqual } from 'node:crypto';
import { unauthorized } from '../http/api-error.js';
import type { JwtVerifier } from './jwt.js';
import { ANONYMOUS, type RequestContext } from './request-context.js';
import { roleFromClaims, SUBSCRIPTION_PLANS, USER_ROLES, type SubscriptionPlan, type UserRoleClaim } from './permissions.js';

export const ACCESS_COOKIE = 'svc-access-token';
export const REFRESH_COOKIE = 'svc-refresh-token';

export interface ContextResolverOptions {
  verifier: JwtVerifier;
  serviceSecret?: string;
  devBypass?: { userId: string };
}

/** What resolution needs to know about one request, independent of the HTTP framework. */
export interface CallerCredentials {
  authorization?: string;
  accessCookie?: string;
  serviceHeader?: string;
  remoteAddress?: string;
  /** True when a proxy header says the request was forwarded from elsewhere. */
  forwarded: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Resolves the caller in the spec's order: dev bypass, then JWT, then service secret.
 * A bearer token that fails verification is a 401, never a silent downgrade to anonymous; an
 * invalid *cookie* is ignored instead, so a stale cookie never locks a browser out of the
 * public catalog.
 */
export function createContextResolver(options: ContextResolverOptions) {
  const serviceDigest = options.serviceSecret ? sha256(options.serviceSecret) : undefined;

  return async function resolveContext(credentials: CallerCredentials): Promise<RequestContext> {
    if (options.devBypass && isLoopback(credentials.remoteAddress) && !credentials.forwarded) {
      return devContext(options.devBypass.userId);
    }

    const bearer = parseBearer(credentials.authorization);
    if (bearer !== undefined) {
      const context = await userContext(bearer, options.verifier, 'bearer');
      if (context.kind === 'user') return context;
    } else if (credentials.accessCookie) {
      const context = await userContext(credentials.accessCookie, options.verifier, 'cookie').catch(() => ANONYMOUS);
      if (context.kind === 'user') return context;
    }

    if (serviceDigest && credentials.serviceHeader && timingSafeEqual(sha256(credentials.serviceHeader), serviceDigest)) {
      return {
        kind: 'service',
        role: 'SERVICE',
        userId: 'service',
        sessionId: null,
        via: 'service-header',
        // No Authorization is forwarded: service callers get exactly the anon policies. The
        // header is, as PostgREST forwards it: the database checks it against its own digest.
        db: { role: 'anon', claims: null, headers: { 'x-service-auth': credentials.serviceHeader } },
      };
    }
    return ANONYMOUS;
  };
}

function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)$/i.exec(header.trim());
  if (!match) throw unauthorized('Malformed Authorization header; expected "Bearer <token>"');
  return match[1];
}

async function userContext(token: string, verifier: JwtVerifier, via: 'bearer' | 'cookie'): Promise<RequestContext> {
  let verified;
  try {
    verified = await verifier.verify(token);
  } catch {
    throw unauthorized('Invalid or expired access token');
  }
  const { payload } = verified;
  // A Supabase anon-key token identifies no user: the caller stays anonymous.
  if (payload.role === 'anon') return ANONYMOUS;
  if (payload.role !== 'authenticated' || typeof payload.sub !== 'string' || !UUID.test(payload.sub)) {
    throw unauthorized('Access token does not identify an authenticated user');
  }
  const userRole = payload.user_role ?? 'learner';
  const plan = payload.subscription_plan ?? 'free';
  if (!USER_ROLES.includes(userRole as UserRoleClaim) || !SUBSCRIPTION_PLANS.includes(plan as SubscriptionPlan)) {
    throw unauthorized('Access token carries an unknown user_role or subscription_plan');
  }
  // A session-bound token names its session by UUID; anything else is not a token we issued.
  if (payload.session_id !== undefined && (typeof payload.session_id !== 'string' || !UUID.test(payload.session_id))) {
    throw unauthorized('Access token carries a malformed session_id');
  }
  const { userId, sessionId, claimsJson } = canonicalIds(payload as typeof payload & { sub: string; session_id?: string }, verified.claimsJson);
  return {
    kind: 'user',
    role: roleFromClaims(userRole as UserRoleClaim, plan as SubscriptionPlan),
    userId,
    sessionId,
    via,
    db: { role: 'authenticated', claims: claimsJson, token },
  };
}

/**
 * UUIDs compare case-insensitively in the database but not as text: the one place where a
 * token's `sub` and `session_id` become lower case, for the rate-limit key, the logs and the
 * claims the database sees alike.
 */
function canonicalIds(payload: { sub: string; session_id?: string }, claimsJson: string) {
  const userId = payload.sub.toLowerCase();
  const sessionId = payload.session_id?.toLowerCase() ?? null;
  if (userId === payload.sub && sessionId === (payload.session_id ?? null)) return { userId, sessionId, claimsJson };
  const canonical = { ...payload, sub: userId, ...(sessionId === null ? {} : { session_id: sessionId }) };
  return { userId, sessionId, claimsJson: JSON.stringify(canonical) };
}

function devContext(userId: string): RequestContext {
  const claims = { sub: userId, role: 'authenticated', user_role: 'admin', subscription_plan: 'premium', aud: 'authenticated' };
  return {
    kind: 'dev',
    role: 'ADMIN',
    userId,
    sessionId: null,
    via: 'dev-bypass',
    db: { role: 'authenticated', claims: JSON.stringify(claims) },
  };
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();
