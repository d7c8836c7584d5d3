import { SignJWT } from 'jose';

/** The claims the database computes for a session (private.token_claims). */
export interface SessionClaims {
  sub: string;
  email: string;
  user_role: string;
  subscription_plan: string;
  session_id: string;
}

export interface AccessTokenSigner {
  sign(claims: SessionClaims, expiresAt: number): Promise<string>;
}

/**
 * Signs access tokens a Supabase project also accepts: HS256 with SUPABASE_JWT_SECRET,
 * role `authenticated`, aud from JWT_AUDIENCE, iss from JWT_ISSUER (default "sparkpath").
 *
 * @example
 *   const signer = createAccessTokenSigner({ secret, audience: 'authenticated', issuer: 'sparkpath' });
 *   const jwt = await signer.sign(claims, Math.floor(Date.now() / 1000) + 3600);
 */
export function createAccessTokenSigner(options: { secret: string; audience: string; issuer: string }): AccessTokenSigner {
  const key = new TextEncoder().encode(options.secret);
  return {
    sign(claims, expiresAt) {
      const { sub, ...rest } = claims;
      return new SignJWT({ ...rest, role: 'authenticated' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(sub)
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setIssuedAt()
        .setExpirationTime(expiresAt)
        .sign(key);
    },
  };
}
