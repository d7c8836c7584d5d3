import type { JSONWebKeySet } from 'jose';
import { parseSigningKey, publicJwks } from './auth/signing-key.js';
import type { Config } from './config.js';
import { createJwtVerifier } from './context/jwt.js';
import { cachePublicCalls } from './db/cached-rpc.js';
import { listenForChanges } from './db/change-feed.js';
import { createPostgresRpc } from './db/postgres-rpc.js';

/**
 * Config → the rpc adapter and the token verifier, in one place for the server and the tests,
 * so an option added here reaches both (the database's token issuer once reached only one).
 */
export function createRpcFromConfig(
  config: Config,
  url: string,
  overrides: { poolMax?: number; onListenError?: (error: unknown) => void } = {},
) {
  const rpc = createPostgresRpc({
    url,
    poolMax: overrides.poolMax ?? config.DB_POOL_MAX,
    pipelineDepth: config.DB_PIPELINE_DEPTH,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutSeconds: config.DB_CONNECT_TIMEOUT_S,
    tokenIssuer: config.JWT_ISSUER ?? 'sparkpath',
  });
  if (!config.DB_LISTEN_CHANGES) return rpc;
  const feed = listenForChanges({ url, connectTimeoutSeconds: config.DB_CONNECT_TIMEOUT_S, onError: overrides.onListenError });
  return Object.assign(cachePublicCalls(rpc, feed, { sessionCheck: (claims) => rpc.liveFor(claims) }), {
    close: async () => {
      await feed.close();
      await rpc.close();
    },
  });
}

/** Verifies access tokens: HS256 with the secret, JWKS_URL keys, and our own ES256 key if any. */
export function createVerifierFromConfig(config: Config, localJwks?: JSONWebKeySet) {
  const signingKey = config.JWT_SIGNING_KEY ? parseSigningKey(config.JWT_SIGNING_KEY, config.JWT_SIGNING_KEY_ID) : undefined;
  return createJwtVerifier({
    localJwks: localJwks ?? publicJwks(signingKey),
    secret: config.SUPABASE_JWT_SECRET,
    jwksUrl: config.JWT_JWKS_URL,
    audience: config.JWT_AUDIENCE,
    issuer: config.JWT_ISSUER,
  });
}
