import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signToken } from '../helpers/tokens.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
let t: TestApp;

beforeAll(async () => {
  // One line with \n escapes, as it would sit in an env file.
  t = await createTestApp({ JWT_SIGNING_KEY: PEM.replace(/\n/g, '\\n'), JWT_SIGNING_KEY_ID: 'k1' });
});
afterAll(async () => {
  await t?.close();
});

describe('auth routes: ES256 access tokens', () => {
  it('signs ES256 access tokens that /auth/jwks.json verifies and the API accepts', async () => {
    const { auth } = t.deps;
    const { tokens } = await auth.signIn(
      { provider: 'google', providerUserId: randomUUID(), email: 'es@example.com', displayName: 'Es', avatarUrl: null },
      { userAgent: null, ipAddress: null },
    );
    expect(decodeProtectedHeader(tokens.access_token)).toEqual({ alg: 'ES256', typ: 'JWT', kid: 'k1' });
    const jwks = await (await t.app.request('/auth/jwks.json')).json();
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: 'k1' })]);
    expect(jwks.keys[0].d).toBeUndefined();
    const { payload } = await jwtVerify(tokens.access_token, createLocalJWKSet(jwks), { audience: 'authenticated' });
    expect(payload.email).toBe('es@example.com');

    const state = await (await t.app.request('/auth/session', { headers: { Authorization: `Bearer ${tokens.access_token}` } })).json();
    expect(state.authenticated).toBe(true);
    // HS256 tokens from the Supabase project keep working next to ES256.
    expect((await t.app.request('/metadata', { headers: { Authorization: `Bearer ${await signToken()}` } })).status).toBe(200);
  });

  it('refuses an HS256 token keyed with the public key (algorithm confusion)', async () => {
    const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const forged = await new SignJWT({ role: 'authenticated', sub: randomUUID(), aud: 'authenticated' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(publicPem));
    expect((await t.app.request('/metadata', { headers: { Authorization: `Bearer ${forged}` } })).status).toBe(401);
  });

  it('a key that is not P-256 stops start-up naming JWT_SIGNING_KEY', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => loadConfig({ JWT_SIGNING_KEY: rsa })).toThrow(/^Invalid configuration: JWT_SIGNING_KEY /);
    expect(() => loadConfig({ JWT_SIGNING_KEY: 'not a key' })).toThrow(/JWT_SIGNING_KEY/);
  });

  it('publishes an empty key set when tokens are HS256 only', async () => {
    const plain = await createTestApp();
    try {
      expect(await (await plain.app.request('/auth/jwks.json')).json()).toEqual({ keys: [] });
    } finally {
      await plain.close();
    }
  });
});
