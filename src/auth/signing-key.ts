import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { JSONWebKeySet, JWK } from 'jose';

export interface SigningKey {
  privateKey: KeyObject;
  kid: string;
  publicJwk: JWK;
}

/**
 * The optional ES256 signing key (JWT_SIGNING_KEY, PKCS#8 PEM of a P-256 key; `\n` escapes are
 * accepted so it fits on one line of an env file). Synchronous: no I/O, only parsing.
 * Throws when the text is not a P-256 private key.
 */
export function parseSigningKey(pem: string, kid?: string): SigningKey {
  const privateKey = createPrivateKey(pem.replace(/\\n/g, '\n'));
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('must be a P-256 (ES256) private key in PEM');
  }
  const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const publicJwk: JWK = { kty, crv, x, y, alg: 'ES256', use: 'sig' };
  return { privateKey, kid: kid ?? thumbprintSync(publicJwk), publicJwk };
}

/** The public JWKS to publish (GET /auth/jwks.json) and to verify our own ES256 tokens with. */
export function publicJwks(key: SigningKey | undefined): JSONWebKeySet {
  return { keys: key ? [{ ...key.publicJwk, kid: key.kid }] : [] };
}

// RFC 7638 thumbprint of an EC key, computed synchronously (jose's helper is async).
function thumbprintSync(jwk: JWK): string {
  const json = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHashBase64url(json);
}

const createHashBase64url = (text: string) => createHash('sha256').update(text).digest('base64url');
