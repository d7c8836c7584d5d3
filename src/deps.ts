import type { JSONWebKeySet } from 'jose';
import { createAuthService, type AuthService } from './auth/auth-service.js';
import type { DevSignInClient } from './auth/dev-identity-provider.js';
import { createProviders } from './auth/providers.js';
import { createSessionStore, type SessionStore } from './auth/session-store.js';
import { parseSigningKey, publicJwks } from './auth/signing-key.js';
import { createSupabaseAuth, type SupabaseAuth } from './auth/supabase-auth.js';
import { TOKEN_ISSUER_DEFAULT, type Config } from './config.js';
import { createJwtVerifier, type JwtVerifier } from './context/jwt.js';
import { connectionMode, type ConnectionMode } from './db/connection-mode.js';
import { createDataApiRpc } from './db/data-api-rpc.js';
import { createDatabasePool, type DatabasePool } from './db/pool.js';
import { createPostgresRpc } from './db/postgres-rpc.js';
import { createPostgresRateLimitStore, type RateLimitStore } from './db/rate-limit-store.js';
import type { Rpc } from './db/rpc.js';
import { SnapshotCache } from './db/snapshot-cache.js';
import { createMemoryRateLimitStore } from './http/rate-limit.js';

/** Everything the application talks to, built once from the configuration. */
export interface Dependencies {
  config: Config;
  /** The one owner of the database connections; everything below reaches Postgres through it. */
  pool: DatabasePool;
  /** The read replica's pool (DATABASE_READ_URL), used by the rpc for reads only. */
  readPool?: DatabasePool;
  rpc: Rpc;
  sessionStore: SessionStore;
  auth: AuthService;
  /** Sign-in delegated to Supabase Auth, when AUTH_PROVIDER=supabase. */
  supabaseAuth?: SupabaseAuth;
  /** How the pool talks to the database: prepared statements or not, behind a transaction pooler or not. */
  connection: ConnectionMode;
  verifier: JwtVerifier;
  rateLimitStore: RateLimitStore;
  /** Bodies of snapshot reads (SNAPSHOT_CACHE_MB), shared by every route through the rpc. */
  snapshotCache: SnapshotCache;
  /** The periodic housekeeping: ended sessions and old rate-limit windows. */
  cleanup(): Promise<{ sessions_deactivated: number; oauth_attempts_deleted: number; rate_limit_windows_purged: number }>;
  close(): Promise<void>;
}

/**
 * Config → the dependencies, in one place for the server, the tests, the reliability suite and
 * the bench, so they all run what production runs. `databaseUrl` is DATABASE_URL or the
 * embedded database's (src/db/database.ts); `devSignIn` is the local OpenID provider
 * `npm start` runs in development (src/auth/dev-identity-provider.ts), sign-in provider `dev`.
 *
 * @example
 *   const deps = createDependencies(config, database.url);
 *   const app = createApp({ ...deps, logger });
 *   // …
 *   await deps.close();
 */
export function createDependencies(config: Config, databaseUrl: string, options: { devSignIn?: DevSignInClient } = {}): Dependencies {
  // Each URL on its own: a replica may sit behind another pooler than the primary.
  const openPool = (url: string, applicationName?: string) =>
    createDatabasePool({
      url,
      poolMax: config.DB_POOL_MAX,
      pipelineDepth: config.DB_PIPELINE_DEPTH,
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
      connectTimeoutSeconds: config.DB_CONNECT_TIMEOUT_S,
      tokenIssuer: config.JWT_ISSUER ?? TOKEN_ISSUER_DEFAULT,
      homePage: config.PUBLIC_BASE_URL,
      prepare: connectionMode(url, config.DB_PREPARE).prepare,
      applicationName,
    });
  const connection = connectionMode(databaseUrl, config.DB_PREPARE);
  const pool = openPool(databaseUrl);
  const readPool = config.DATABASE_READ_URL ? openPool(config.DATABASE_READ_URL, 'sparkpath-api-read') : undefined;
  const snapshotCache = new SnapshotCache(config.SNAPSHOT_CACHE_MB * 1024 * 1024);
  const sessionStore = createSessionStore(pool);
  const auth = createAuthService(config, sessionStore, createProviders(config, options.devSignIn));
  const verifier = createVerifierFromConfig(config, JSON.parse(auth.jwks) as JSONWebKeySet);
  const postgresRateLimits = config.RATE_LIMIT_STORE === 'postgres' ? createPostgresRateLimitStore(pool) : undefined;
  // How requests reach the api functions (DATA_API): the login role's connection and the
  // dispatcher, or the project's Data API as the caller. Sign-in, sessions, the rate-limit store
  // and the cleanup keep the connection either way (docs/supabase.md, section 7).
  const dataApi =
    config.DATA_API === 'supabase'
      ? createDataApiRpc({
          url: config.DATA_API_URL!,
          anonKey: config.SUPABASE_ANON_KEY!,
          pool,
          snapshotCache,
          // As long as a direct call may take: a connect plus the longest statement (src/db/pool.ts).
          timeoutMs: config.DB_CONNECT_TIMEOUT_S * 1000 + config.DB_STATEMENT_TIMEOUT_MS + 1000,
        })
      : undefined;
  const { call, readSnapshot } = dataApi ?? createPostgresRpc({ pool, readPool, snapshotCache });
  const rpc: Rpc = {
    call,
    readSnapshot,
    // One statement when healthy: the session functions answering means the database does too.
    // The replica is reported but never makes the instance unhealthy: the primary answers reads
    // while it is away. The Data API does: every request goes through it.
    async health() {
      const replica = readPool?.ping().then(() => ({ read_replica: 'ok' as const }), () => ({ read_replica: 'unavailable' as const }));
      const api = dataApi?.ping().then(() => ({ data_api: 'ok' as const }), () => ({ data_api: 'unavailable' as const }));
      try {
        await sessionStore.ready();
        return { database: 'ok', sessions: 'ok', ...(await replica), ...(await api) };
      } catch {
        const database = await pool.ping().then(() => 'ok' as const, () => 'unavailable' as const);
        return { database, sessions: 'unavailable', ...(await replica), ...(await api) };
      }
    },
  };
  return {
    config,
    pool,
    readPool,
    rpc,
    sessionStore,
    auth,
    supabaseAuth: config.AUTH_PROVIDER === 'supabase' ? createSupabaseAuth(config, { rpc, verifier }) : undefined,
    connection,
    verifier,
    rateLimitStore: postgresRateLimits ?? createMemoryRateLimitStore(),
    snapshotCache,
    async cleanup() {
      const [sessions, purged] = await Promise.all([auth.cleanup(), postgresRateLimits?.purge() ?? 0]);
      return { ...sessions, rate_limit_windows_purged: purged };
    },
    close: async () => {
      await Promise.all([pool.close(), readPool?.close()]);
    },
  };
}

/**
 * Verifies access tokens: HS256 with the secret, JWKS_URL keys (a Supabase project's by default),
 * and our own ES256 key if any; of the accepted issuers (JWT_ACCEPTED_ISSUERS).
 */
export function createVerifierFromConfig(config: Config, localJwks?: JSONWebKeySet) {
  const signingKey = config.JWT_SIGNING_KEY ? parseSigningKey(config.JWT_SIGNING_KEY, config.JWT_SIGNING_KEY_ID) : undefined;
  return createJwtVerifier({
    localJwks: localJwks ?? publicJwks(signingKey),
    secret: config.SUPABASE_JWT_SECRET,
    jwksUrl: config.JWT_JWKS_URL,
    audience: config.JWT_AUDIENCE,
    issuer: config.JWT_ACCEPTED_ISSUERS,
  });
}
