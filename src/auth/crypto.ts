import { createHash, randomBytes } from 'node:crypto';

/** SHA-256 as lowercase hex: the only form in which tokens reach the database. */
export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** An opaque secret of `bytes` random bytes from the CSPRNG, base64url (32 bytes = 256 bits). */
export const randomSecret = (bytes = 32) => randomBytes(bytes).toString('base64url');
