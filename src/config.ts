import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseSigningKey } from './auth/signing-key.js';

/**
 * The only reader of process.env. Every variable is documented in docs/configuration.md and
 * .env.example (test/docs/configuration-doc.test.ts keeps both in step with this schema).
 * A bad value stops start-up with one line naming the variable.
 */
const booleanFlag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');

/** On unless `false`; any other word stops start-up rather than guess which was meant. */
const trueUnlessFalse = z
  .enum(['true', 'false'])
  .default('true')
  .transform((v) => v === 'true');

const integer = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/**
 * How long after its access token expires a session may still be refreshed when
 * SESSION_IDLE_TIMEOUT_S is not set: a client refreshing "at expiry" over a slow network or
 * with a clock a little behind is not signed out. Short, because the spec's state table ends
 * the session when the access token expires (clients refresh ahead of expiry).
 */
export const SESSION_IDLE_CLOCK_SKEW_S = 10;

/** The `iss` of the tokens this API signs when JWT_ISSUER is not set. */
export const TOKEN_ISSUER_DEFAULT = 'sparkpath';
/** The home page the database names when it is given none (private.xapi_home_page). */
export const PUBLIC_BASE_URL_DEFAULT = 'http://localhost:3000';

/** The inactivity limit: as configured, else the access-token lifetime plus the clock skew. */
const idleTimeout = (env: { SESSION_IDLE_TIMEOUT_S?: number; ACCESS_TOKEN_TTL_S: number }) =>
  env.SESSION_IDLE_TIMEOUT_S ?? env.ACCESS_TOKEN_TTL_S + SESSION_IDLE_CLOCK_SKEW_S;

/**
 * Where the front-end dev servers people start next to the API listen (Vite's dev server and
 * its preview), on both loopback names: CORS_ALLOWED_ORIGINS outside production when unset.
 */
export const DEV_FRONTEND_ORIGINS = ['http://localhost:5173', 'http://127.0.0.1:5173', 'http://localhost:4173', 'http://127.0.0.1:4173'] as const;

/** The explorer's page the identity providers send the browser back to (AUTH_CALLBACK_URL's default path). */
export const EXPLORER_CALLBACK_PATH = '/explore/callback';

/** The first entry of a comma-separated list that is not a bare http(s) origin, if any. */
function malformedOrigin(list: string): string | undefined {
  return list
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .find((origin) => {
      try {
        const parsed = new URL(origin);
        return parsed.origin !== origin || !['http:', 'https:'].includes(parsed.protocol);
      } catch {
        return true;
      }
    });
}

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: integer(3000, 0, 65535),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

    // The owner connection: migrations, the seed, the content CLI, start-up writes.
    DATABASE_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    // The API's own connections: the least-privilege login role (sparkpath_api), which can only
    // become a request role. Unset: the embedded database's, or DATABASE_URL, which the server
    // refuses in production (src/server.ts); the CLIs use the owner connection anyway.
    DATABASE_API_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    // A read replica (a streaming standby; on Supabase a read replica's connection string): reads
    // go there, writes and everything about sign-in never (docs/architecture.md, "Beyond one machine").
    DATABASE_READ_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    EMBEDDED_PG_DATA_DIR: z.string().min(1).default('.data/postgres'),
    EMBEDDED_PG_PORT: integer(54329, 1024, 65535),
    // (2 × cores): on the 2-core bench machine (2026-11-22) pools of 2-4 gave the best p95; more
    // backends than that only queue for the CPU.
    DB_POOL_MAX: integer(Math.min(20, 2 * availableParallelism()), 1, 200),
    // Calls pipelined per pooled connection (postgres.js max_pipeline; 1 = never pipeline): 2 took
    // most of the throughput of 4 while a short call waits behind at most one other.
    DB_PIPELINE_DEPTH: integer(2, 1, 100),
    DB_STATEMENT_TIMEOUT_MS: integer(5000, 100, 600_000),
    DB_CONNECT_TIMEOUT_S: integer(3, 1, 60),
    // Named prepared statements: `auto` is on, except on port 6543, Supavisor's transaction
    // pooler, which cannot keep them (src/db/connection-mode.ts, docs/supabase.md).
    DB_PREPARE: z.enum(['auto', 'true', 'false']).default('auto'),
    // The one in-memory cache: bodies of immutable snapshot content (src/db/snapshot-cache.ts).
    // Under the 128 MB heap npm start sets; 0 keeps nothing (every read runs its query).
    SNAPSHOT_CACHE_MB: integer(32, 0, 1024),
    SEED_DEMO_CONTENT: trueUnlessFalse,

    SUPABASE_JWT_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
    JWT_JWKS_URL: optionalText.pipe(z.url().optional()),
    JWT_AUDIENCE: z.string().min(1).default('authenticated'),
    JWT_ISSUER: optionalText,
    // Optional ES256 signing key for access tokens (PKCS#8 PEM; `\n` escapes allowed).
    JWT_SIGNING_KEY: optionalText,
    JWT_SIGNING_KEY_ID: optionalText,

    // Issuers whose tokens are accepted (comma-separated); unset: derived below.
    JWT_ACCEPTED_ISSUERS: optionalText,

    SERVICE_AUTH_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters').optional()),

    DEV_BYPASS_AUTH: booleanFlag,
    DEV_USER_ID: optionalText.pipe(z.uuid().optional()),

    BODY_LIMIT_BYTES: integer(64 * 1024, 1024, 10 * 1024 * 1024),
    // The service's public home page: the xAPI export's account homePage and activity ids
    // (docs/learning.md), passed to the database as the connection setting sparkpath.home_page.
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).transform((url) => url.replace(/\/+$/, '')).default(PUBLIC_BASE_URL_DEFAULT),

    // Front ends that may call the API from a browser page of another origin (docs/api.md, CORS).
    // Unset: the local dev servers outside production (DEV_FRONTEND_ORIGINS), none in production.
    CORS_ALLOWED_ORIGINS: z.string().optional(),

    // Sign-in and sessions (docs/auth.md). Provider endpoints default to the real providers.
    // Unset, the three below name this server on localhost:PORT (filled in below), so the
    // explorer's sign-in works on whichever port `npm start` serves.
    AUTH_CALLBACK_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    AUTH_ALLOWED_REDIRECT_ORIGINS: z.string().optional(),
    AUTH_DEFAULT_REDIRECT_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    ACCESS_TOKEN_TTL_S: integer(3600, 30, 86_400),
    // Default: ACCESS_TOKEN_TTL_S + SESSION_IDLE_CLOCK_SKEW_S (filled in below), the spec's state
    // table: a session whose access token expired without a refresh is ended by the cleanup.
    SESSION_IDLE_TIMEOUT_S: z.coerce.number().int().min(60).max(365 * 86_400).optional(),
    SESSION_MAX_LIFETIME_S: integer(30 * 86_400, 60, 365 * 86_400),
    REFRESH_REUSE_GRACE_S: integer(10, 0, 300),
    OAUTH_ATTEMPT_TTL_S: integer(600, 30, 3600),
    SESSION_CLEANUP_INTERVAL_S: integer(300, 0, 86_400),
    OAUTH_ALLOW_INSECURE_HTTP: booleanFlag,
    OAUTH_HTTP_TIMEOUT_S: integer(10, 1, 60),

    // The local OpenID provider of `npm start` (src/auth/dev-identity-provider.ts), provider `dev`.
    // auto: on in development when neither Google nor GitHub is configured.
    DEV_SIGN_IN: z.enum(['auto', 'true', 'false']).default('auto'),

    GOOGLE_CLIENT_ID: optionalText,
    GOOGLE_CLIENT_SECRET: optionalText,
    GOOGLE_ISSUER: z.url().default('https://accounts.google.com'),
    GOOGLE_AUTHORIZATION_URL: z.url().default('https://accounts.google.com/o/oauth2/v2/auth'),
    GOOGLE_TOKEN_URL: z.url().default('https://oauth2.googleapis.com/token'),
    GOOGLE_JWKS_URL: z.url().default('https://www.googleapis.com/oauth2/v3/certs'),
    GOOGLE_SCOPES: z.string().min(1).default('openid email profile'),

    GITHUB_CLIENT_ID: optionalText,
    GITHUB_CLIENT_SECRET: optionalText,
    GITHUB_ISSUER: z.url().default('https://github.com/login/oauth'),
    GITHUB_AUTHORIZATION_URL: z.url().default('https://github.com/login/oauth/authorize'),
    GITHUB_TOKEN_URL: z.url().default('https://github.com/login/oauth/access_token'),
    GITHUB_API_URL: z.url().default('https://api.github.com'),
    GITHUB_SCOPES: z.string().min(1).default('read:user user:email'),

    // A Supabase project (docs/supabase.md): its URL and anon (publishable) key; who owns sign-in.
    SUPABASE_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    SUPABASE_ANON_KEY: optionalText,
    // How requests reach the api functions: `postgres`, the login role's connection and the
    // dispatcher; `supabase`, the project's Data API (PostgREST) as the caller, through
    // supabase-js (src/db/data-api-rpc.ts). Sign-in, sessions and migrations keep the connection.
    DATA_API: z.enum(['postgres', 'supabase']).default('postgres'),
    // Where the Data API answers (its /rest/v1); unset: SUPABASE_URL (filled in below).
    DATA_API_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    AUTH_PROVIDER: z.enum(['builtin', 'supabase']).default('builtin'),
    SUPABASE_AUTH_LOGOUT_SCOPE: z.enum(['local', 'global']).default('local'),

    // Rate limits: requests per window per caller; 0 means unlimited for that role.
    RATE_LIMITS_ENABLED: trueUnlessFalse,
    RATE_LIMIT_WINDOW_S: integer(60, 1, 3600),
    RATE_LIMIT_ANONYMOUS: integer(300, 0, 1_000_000),
    RATE_LIMIT_FREE_USER: integer(600, 0, 1_000_000),
    RATE_LIMIT_PREMIUM_USER: integer(1200, 0, 1_000_000),
    RATE_LIMIT_TRUST_PROXY: booleanFlag,
    RATE_LIMIT_STORE: z.enum(['memory', 'postgres']).default('memory'),
  })
  .superRefine((env, ctx) => {
    if (env.DEV_BYPASS_AUTH && env.NODE_ENV === 'production') {
      ctx.addIssue({ code: 'custom', path: ['DEV_BYPASS_AUTH'], message: 'must not be true when NODE_ENV=production' });
    }
    if (env.DEV_BYPASS_AUTH && !env.DEV_USER_ID) {
      ctx.addIssue({ code: 'custom', path: ['DEV_USER_ID'], message: 'is required when DEV_BYPASS_AUTH=true' });
    }
    if (env.OAUTH_ALLOW_INSECURE_HTTP && env.NODE_ENV === 'production') {
      ctx.addIssue({ code: 'custom', path: ['OAUTH_ALLOW_INSECURE_HTTP'], message: 'must not be true when NODE_ENV=production' });
    }
    for (const name of ['AUTH_ALLOWED_REDIRECT_ORIGINS', 'CORS_ALLOWED_ORIGINS'] as const) {
      const malformed = malformedOrigin(env[name] ?? '');
      if (malformed !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `must list origins like https://app.example.com (got ${malformed})` });
    }
    if (env.DEV_SIGN_IN === 'true' && env.NODE_ENV === 'production') {
      ctx.addIssue({ code: 'custom', path: ['DEV_SIGN_IN'], message: 'must not be true when NODE_ENV=production' });
    }
    if (env.SESSION_IDLE_TIMEOUT_S !== undefined && env.SESSION_IDLE_TIMEOUT_S < env.ACCESS_TOKEN_TTL_S) {
      ctx.addIssue({ code: 'custom', path: ['SESSION_IDLE_TIMEOUT_S'], message: 'must be at least ACCESS_TOKEN_TTL_S (activity is recorded at refresh)' });
    }
    if (idleTimeout(env) > env.SESSION_MAX_LIFETIME_S) {
      ctx.addIssue({ code: 'custom', path: ['SESSION_IDLE_TIMEOUT_S'], message: 'must not exceed SESSION_MAX_LIFETIME_S' });
    }
    if (env.JWT_SIGNING_KEY) {
      try {
        parseSigningKey(env.JWT_SIGNING_KEY);
      } catch {
        ctx.addIssue({ code: 'custom', path: ['JWT_SIGNING_KEY'], message: 'must be a P-256 (ES256) private key in PKCS#8 PEM' });
      }
    }
    if (env.DATABASE_API_URL && !env.DATABASE_URL) {
      ctx.addIssue({ code: 'custom', path: ['DATABASE_API_URL'], message: 'needs DATABASE_URL too (the owner connection that migrates the database it names)' });
    }
    if (env.NODE_ENV === 'production' && !env.SUPABASE_JWT_SECRET && !env.JWT_JWKS_URL && !env.JWT_SIGNING_KEY && !env.SUPABASE_URL) {
      ctx.addIssue({ code: 'custom', path: ['SUPABASE_JWT_SECRET'], message: 'or JWT_JWKS_URL (or JWT_SIGNING_KEY, or SUPABASE_URL) is required when NODE_ENV=production' });
    }
    if (env.AUTH_PROVIDER === 'supabase') {
      for (const name of ['SUPABASE_URL', 'SUPABASE_ANON_KEY'] as const) {
        if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is required when AUTH_PROVIDER=supabase' });
      }
    }
    for (const name of ['SUPABASE_URL', 'DATA_API_URL'] as const) {
      if (env[name] && /\/(auth|rest)\/v1\/?$/.test(env[name])) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is the project URL (https://<project>.supabase.co), without /auth/v1 or /rest/v1' });
      }
    }
    if (env.DATA_API === 'supabase') {
      if (!env.SUPABASE_URL && !env.DATA_API_URL) ctx.addIssue({ code: 'custom', path: ['SUPABASE_URL'], message: '(or DATA_API_URL) is required when DATA_API=supabase' });
      if (!env.SUPABASE_ANON_KEY) ctx.addIssue({ code: 'custom', path: ['SUPABASE_ANON_KEY'], message: 'is required when DATA_API=supabase' });
      // The Data API acts as the caller's token, and the bypass has none (npm run token makes one).
      if (env.DEV_BYPASS_AUTH) ctx.addIssue({ code: 'custom', path: ['DEV_BYPASS_AUTH'], message: 'needs DATA_API=postgres (the Data API acts as a caller\'s token; the bypass has none)' });
      // Reads through the Data API reach a replica through the project's API load balancer instead.
      if (env.DATABASE_READ_URL) ctx.addIssue({ code: 'custom', path: ['DATABASE_READ_URL'], message: 'needs DATA_API=postgres (with DATA_API=supabase, point DATA_API_URL at the project\'s API load balancer)' });
    }
  })
  .transform((env) => {
    const supabaseAuthUrl = env.SUPABASE_URL && `${env.SUPABASE_URL.replace(/\/+$/, '')}/auth/v1`;
    const here = `http://localhost:${env.PORT}`;
    return {
      ...env,
      SESSION_IDLE_TIMEOUT_S: idleTimeout(env),
      // A Supabase project publishes its signing keys at its Auth URL.
      JWT_JWKS_URL: env.JWT_JWKS_URL ?? (supabaseAuthUrl && `${supabaseAuthUrl}/.well-known/jwks.json`),
      JWT_ACCEPTED_ISSUERS: acceptedIssuers(env.JWT_ACCEPTED_ISSUERS, env.JWT_ISSUER, supabaseAuthUrl),
      DATA_API_URL: env.DATA_API_URL ?? env.SUPABASE_URL,
      CORS_ALLOWED_ORIGINS: env.CORS_ALLOWED_ORIGINS ?? (env.NODE_ENV === 'production' ? '' : DEV_FRONTEND_ORIGINS.join(',')),
      AUTH_CALLBACK_URL: env.AUTH_CALLBACK_URL ?? `${here}${EXPLORER_CALLBACK_PATH}`,
      AUTH_ALLOWED_REDIRECT_ORIGINS: env.AUTH_ALLOWED_REDIRECT_ORIGINS ?? here,
      AUTH_DEFAULT_REDIRECT_URL: env.AUTH_DEFAULT_REDIRECT_URL ?? `${here}/explore`,
      DEV_SIGN_IN: env.DEV_SIGN_IN === 'auto' ? env.NODE_ENV === 'development' && env.AUTH_PROVIDER === 'builtin' && !env.GOOGLE_CLIENT_ID && !env.GITHUB_CLIENT_ID : env.DEV_SIGN_IN === 'true',
    };
  });

/**
 * The issuers whose tokens are accepted: as listed, or, unset, this API's own (JWT_ISSUER, else
 * `sparkpath`) and the Supabase project's Auth (its URL + /auth/v1, the `iss` of its tokens)
 * once either is configured. undefined (any issuer) only when neither is: local development,
 * where tokens are minted by hand.
 */
function acceptedIssuers(listed: string | undefined, ownIssuer: string | undefined, supabaseAuthUrl: string | undefined): string[] | undefined {
  if (listed) return listed.split(',').map((issuer) => issuer.trim()).filter(Boolean);
  if (!ownIssuer && !supabaseAuthUrl) return undefined;
  return [ownIssuer ?? TOKEN_ISSUER_DEFAULT, ...(supabaseAuthUrl ? [supabaseAuthUrl] : [])];
}

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Parses an environment; throws ConfigError whose message is one line naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue.path.join('.') || 'environment';
  throw new ConfigError(`Invalid configuration: ${name} ${issue.message}`);
}
