import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';

export const TEST_JWT_SECRET = 'test-secret-for-sparkpath-vitest-runs-0123456789';
export const TEST_SERVICE_SECRET = 'service-secret-for-sparkpath-tests-0123456789abcdef';

export interface TokenOptions {
  sub?: string;
  role?: string;
  user_role?: string;
  subscription_plan?: string;
  session_id?: string;
  email?: string;
  expiresInSeconds?: number;
  audience?: string;
  secret?: string;
  extra?: Record<string, unknown>;
}

/** An HS256 access token as the API (and a Supabase project) would accept it. */
export async function signToken(options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    role: options.role ?? 'authenticated',
    user_role: options.user_role ?? 'learner',
    subscription_plan: options.subscription_plan ?? 'free',
    email: options.email ?? 'learner@example.com',
    ...options.extra,
  };
  if (options.session_id) claims.session_id = options.session_id;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.sub ?? randomUUID())
    .setAudience(options.audience ?? 'authenticated')
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresInSeconds ?? 3600))
    .sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

/** A signed-in test user: its id and ready-made Authorization header. */
export async function testUser(options: TokenOptions = {}) {
  const id = options.sub ?? randomUUID();
  const token = await signToken({ ...options, sub: id });
  return { id, token, headers: { Authorization: `Bearer ${token}` } };
}
