import { createVerifier } from 'fast-jwt';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';

export interface JwtVerifierOptions {
  /** HS256 shared secret (Supabase's JWT secret). */
  secret?: string;
  /** JWKS endpoint for asymmetric keys (ES256, RS256). */
  jwksUrl?: string;
  /** Public keys known locally: this API's own ES256 key (JWT_SIGNING_KEY), tried before jwksUrl. */
  localJwks?: JSONWebKeySet;
  audience: string;
  /** The accepted `iss` values; unset: any issuer. */
  issuer?: string | string[];
}

export interface VerifiedToken {
  payload: JWTPayload & Record<string, unknown>;
  /** The payload as JSON text, forwarded to the database as `request.jwt.claims`. */
  claimsJson: string;
}

export interface JwtVerifier {
  verify(token: string): Promise<VerifiedToken>;
}

const ASYMMETRIC_ALGORITHMS = ['ES256', 'RS256', 'EdDSA'];

/**
 * Verifies access tokens: HS256 with fast-jwt, asymmetric ones with jose. The algorithm decides
 * the key, never the other way round, so an HS256 token can never be checked against a public
 * key (algorithm confusion), and `alg: none` is refused by both.
 *
 * @example
 *   const verifier = createJwtVerifier({ secret, audience: 'authenticated' });
 *   const { payload } = await verifier.verify(token);
 */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  // HS256 (Supabase's shared secret; this API's own tokens) is every signed-in request's check.
  // fast-jwt computes the HMAC with node:crypto in the request's own turn; jose's WebCrypto HMAC
  // is an asynchronous job per token, about 90 µs of CPU against 17 µs (docs/auth.md). Its `iss`
  // check passes a token without `iss`, so `iss` is required whenever issuers are configured.
  const verifyHs256 = options.secret
    ? createVerifier({
        key: options.secret,
        algorithms: ['HS256'],
        allowedIss: options.issuer,
        requiredClaims: options.issuer === undefined ? ['exp'] : ['exp', 'iss'],
      })
    : undefined;
  const remote = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : undefined;
  const local = options.localJwks?.keys.length ? createLocalJWKSet(options.localJwks) : undefined;
  type KeyResolver = NonNullable<typeof remote>;
  const jwks: KeyResolver | undefined =
    local && remote
      ? (async (header, token) => {
          try {
            return await local(header, token);
          } catch {
            return remote(header, token);
          }
        }) as KeyResolver
      : ((local ?? remote) as KeyResolver | undefined);
  // The audience is checked below: Supabase's API keys (the anon and service_role keys) carry none.

  async function verify(token: string): Promise<VerifiedToken> {
    const { alg } = decodeProtectedHeader(token);
    let payload: JWTPayload;
    if (alg === 'HS256' && verifyHs256) {
      payload = verifyHs256(token) as JWTPayload;
    } else if (alg && ASYMMETRIC_ALGORITHMS.includes(alg) && jwks) {
      ({ payload } = await jwtVerify(token, jwks, { issuer: options.issuer, requiredClaims: ['exp'], algorithms: ASYMMETRIC_ALGORITHMS }));
    } else {
      throw new Error(`unsupported token algorithm ${String(alg)}`);
    }
    if (!isSupabaseKey(payload) && !hasAudience(payload, options.audience)) throw new Error('unexpected "aud" claim value');
    return { payload: payload as VerifiedToken['payload'], claimsJson: JSON.stringify(payload) };
  }

  // Verified on every request: nothing about a token is kept between requests (the keys are).
  return { verify };
}

/**
 * A Supabase API key (the anon or service_role key): signed with the project's secret, with a
 * `role` claim and no audience. The anon key is an anonymous caller, as PostgREST reads it; the
 * service_role key is refused later (it is not a caller of this API).
 */
const isSupabaseKey = (payload: JWTPayload) => payload.aud === undefined && (payload.role === 'anon' || payload.role === 'service_role');

const hasAudience = (payload: JWTPayload, audience: string) =>
  Array.isArray(payload.aud) ? payload.aud.includes(audience) : payload.aud === audience;
