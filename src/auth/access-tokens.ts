import { SignJWT } from 'jose';
import type { SigningKey } from './signing-key.js';

/** The claims the database computes for a session (private.token_claims). */
export interface SessionClaims {
  sub: string;
  email: string;
  user_role: string;
  subscription_plan: string;
  session_id: string;
}

export interface AccessTokenSigner {
  /** `issuedAt` defaults to now; pass the database's issue time so `exp - iat` is the exact lifetime. */
  sign(claims: SessionClaims, expiresAt: number, issuedAt?: number): Promise<string>;
}

/**
 * Signs access tokens a Supabase project also accepts: HS256 with SUPABASE_JWT_SECRET (or ES256
 * with JWT_SIGNING_KEY, once its public key is imported into the project),
 * role `authenticated`, aud from JWT_AUDIENCE, iss from JWT_ISSUER (default "sparkpath").
 *
 * @example
 *   const signer = createAccessTokenSigner({ secret, audience: 'authenticated', issuer: 'sparkpath' });
 *   const jwt = await signer.sign(claims, Math.floor(Date.now() / 1000) + 3600);
 */
export function createAccessTokenSigner(
  options: { secret?: string; signingKey?: SigningKey; audience: string; issuer: string },
): AccessTokenSigner {
  // ES256 when a signing key is configured (its public key is served at /auth/jwks.json), else HS256.
  const key = options.signingKey?.privateKey ?? new TextEncoder().encode(options.secret);
  const header = options.signingKey
    ? { alg: 'ES256', typ: 'JWT', kid: options.signingKey.kid }
    : { alg: 'HS256', typ: 'JWT' };
  return {
    sign(claims, expiresAt, issuedAt) {
      const { sub, ...rest } = claims;
      return new SignJWT({ ...rest, role: 'authenticated' })
        .setProtectedHeader(header)
        .setSubject(sub)
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setIssuedAt(issuedAt)
        .setExpirationTime(expiresAt)
        .sign(key);
    },
  };
}
