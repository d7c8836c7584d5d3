import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** SHA-256 as lowercase hex: how tokens are looked up in the database (never in plain text). */
export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** An opaque secret of `bytes` random bytes from the CSPRNG, base64url (32 bytes = 256 bits). */
export const randomSecret = (bytes = 32) => randomBytes(bytes).toString('base64url');

// A key only the holder of `secret` can derive. The database stores SHA-256(secret), never
// HKDF output, so reading the database does not give the key.
const holderKey = (secret: string) => Buffer.from(hkdfSync('sha256', secret, '', 'sparkpath sealed refresh successor v1', 32));

/**
 * AES-256-GCM seals `plaintext` for whoever holds `secret` (a refresh token): iv.tag.ciphertext,
 * base64url. `context` is bound as additional data (e.g. the token's hash), so a sealed value
 * moved to another row does not open.
 *
 * @example
 *   const sealed = sealFor(refreshToken, JSON.stringify(successor), sha256Hex(refreshToken));
 *   openWith(refreshToken, sealed, sha256Hex(refreshToken)); // the JSON, or undefined
 */
export function sealFor(secret: string, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', holderKey(secret), iv).setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
}

/** The plaintext `sealFor(secret, …, context)` sealed, or undefined when it does not open. */
export function openWith(secret: string, sealed: string, context: string): string | undefined {
  const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !tag || !body || iv.length !== 12 || tag.length !== 16) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', holderKey(secret), iv).setAAD(Buffer.from(context));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
