import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWK, type JWTPayload, type KeyObject } from 'jose';
import type postgres from 'postgres';

/**
 * A stand-in for Supabase Auth (GoTrue), which cannot run here, written from its documented REST
 * API (supabase/auth openapi.yaml: /authorize, /callback, /token with grant_type pkce, refresh_token
 * and password, /logout?scope, /user, /.well-known/jwks.json; errors {code, error_code, msg}) and
 * its documented custom access token hook. It serves over real HTTP at `<url>/auth/v1`, and like
 * the real one it keeps its users in the project's database:
 *
 *  - `installSchema` is its own migration: an `auth.users` table shaped as GoTrue's, created
 *    before the project's migrations, as on a Supabase project;
 *  - users are written as `supabase_auth_admin`, so the project's trigger on auth.users runs as it
 *    would there, and every access token's claims go through the project's hook function
 *    (`private.custom_access_token_hook`), called as `supabase_auth_admin` with the documented
 *    event {user_id, claims, authentication_method};
 *  - tokens are ES256 with a key published at the JWKS endpoint, or HS256 with the project's
 *    legacy JWT secret.
 *
 * Sessions, refresh tokens, PKCE flow states and passwords live in memory. The external provider
 * (Google, GitHub) is simulated by `<url>/provider/<name>/authorize`, which signs in `nextIdentity`
 * at once (or refuses, when `deny` is set). What it does not model: email confirmation, MFA,
 * rate limits, the refresh-token reuse interval (0 here: a second use is always reuse), and
 * Supabase's API gateway beyond the `apikey` check.
 */
export interface ProviderIdentity {
  /** The provider's user id. */
  sub: string;
  email: string;
  name: string;
  avatarUrl?: string;
}

export interface SupabaseAuthDouble {
  /** The project URL (SUPABASE_URL); Supabase Auth answers at `${url}/auth/v1`. */
  url: string;
  anonKey: string;
  /** The `iss` of its access tokens. */
  issuer: string;
  /** Who signs in at the simulated provider next. */
  nextIdentity: ProviderIdentity;
  /** Set to refuse the next consent at the simulated provider (the user cancels). */
  deny: boolean;
  /** Every request it received: method, path with query, and whether the apikey matched. */
  requests: { method: string; path: string; apikey: boolean; bearer: boolean }[];
  /** An email/password user (for grant_type=password), created as a sign-up would. */
  createPasswordUser(email: string, password: string, name: string): Promise<string>;
  close(): Promise<void>;
}

export interface DoubleOptions {
  /** The project database, reached as a superuser (the double takes supabase_auth_admin's role). */
  sql: postgres.Sql;
  signing: { alg: 'ES256' } | { alg: 'HS256'; secret: string };
  /** Where /authorize may send the browser back (GoTrue's uri allow list); else `siteUrl`. */
  redirectAllowList: string[];
  siteUrl: string;
  accessTokenTtlSeconds?: number;
}

const ANON_KEY = 'anon-key-of-the-supabase-auth-double';
const PROVIDERS = new Set(['google', 'github']);

/** GoTrue's own migration, reduced to what a project's database sees of it: auth.users. */
export async function installSchema(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`
    do $$ begin
      if not exists (select from pg_catalog.pg_roles where rolname = 'supabase_auth_admin') then
        create role supabase_auth_admin nologin noinherit;
      end if;
    end $$;
    create schema if not exists auth;
    create table auth.users (
      instance_id uuid,
      id uuid not null primary key,
      aud varchar(255),
      role varchar(255),
      email varchar(255),
      encrypted_password varchar(255),
      email_confirmed_at timestamptz,
      invited_at timestamptz,
      confirmation_token varchar(255),
      recovery_token varchar(255),
      last_sign_in_at timestamptz,
      raw_app_meta_data jsonb,
      raw_user_meta_data jsonb,
      is_super_admin boolean,
      created_at timestamptz,
      updated_at timestamptz,
      phone text unique default null,
      phone_confirmed_at timestamptz,
      banned_until timestamptz,
      is_sso_user boolean not null default false,
      deleted_at timestamptz,
      is_anonymous boolean not null default false
    );
    grant usage on schema auth to supabase_auth_admin;
    grant select, insert, update, delete on auth.users to supabase_auth_admin;
  `);
}

interface Flow {
  provider: string;
  challenge: string;
  method: 's256' | 'plain';
  redirectTo: string;
  userId?: string;
  authCode?: string;
}

interface AuthSession {
  id: string;
  userId: string;
  method: string;
  /** The refresh token that is current; earlier ones are in `used`. */
  refreshToken: string;
}

export async function startSupabaseAuthDouble(options: DoubleOptions): Promise<SupabaseAuthDouble> {
  const { sql } = options;
  const ttl = options.accessTokenTtlSeconds ?? 3600;
  const keys = options.signing.alg === 'ES256' ? await generateKeyPair('ES256', { extractable: true }) : undefined;
  const kid = randomUUID();
  const publicJwk: JWK | undefined = keys && { ...(await exportJWK(keys.publicKey)), kid, alg: 'ES256', use: 'sig' };
  const signingKey: KeyObject | Uint8Array = keys ? (keys.privateKey as KeyObject) : new TextEncoder().encode((options.signing as { secret: string }).secret);
  const verifyKey: KeyObject | Uint8Array = keys ? (keys.publicKey as KeyObject) : signingKey;

  const flows = new Map<string, Flow>();
  const sessions = new Map<string, AuthSession>();
  const refreshTokens = new Map<string, { sessionId: string; used: boolean }>();
  const identities = new Map<string, string>(); // provider:sub -> user id
  const passwords = new Map<string, { userId: string; hash: string }>();

  const app = new Hono();
  const server: ServerType = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${url}/auth/v1`;

  const double: SupabaseAuthDouble = {
    url,
    anonKey: ANON_KEY,
    issuer,
    nextIdentity: { sub: '1001', email: 'someone@example.com', name: 'Someone' },
    deny: false,
    requests: [],
    async createPasswordUser(email, password, name) {
      const id = randomUUID();
      await asAuthAdmin((tx) => tx`
        insert into auth.users (id, aud, role, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
        values (${id}, 'authenticated', 'authenticated', ${email}, now(), ${tx.json({ provider: 'email', providers: ['email'] })},
                ${tx.json({ full_name: name })}, now(), now())`);
      passwords.set(email.toLowerCase(), { userId: id, hash: sha256(password) });
      return id;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  /** GoTrue writes auth.users as supabase_auth_admin, in a transaction of its own. */
  function asAuthAdmin<T>(work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
    return sql.begin(async (tx) => {
      await tx`set local role supabase_auth_admin`;
      return work(tx);
    }) as Promise<T>;
  }

  const error = (c: Context, status: 400 | 401 | 403 | 404 | 422, errorCode: string, msg: string) =>
    c.json({ code: status, error_code: errorCode, msg }, status);

  async function userRow(id: string) {
    const [row] = await sql<{ id: string; email: string | null; raw_app_meta_data: Record<string, unknown>; raw_user_meta_data: Record<string, unknown>; created_at: Date; updated_at: Date; last_sign_in_at: Date | null }[]>`
      select id, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, last_sign_in_at from auth.users where id = ${id}`;
    return row;
  }

  /** UserSchema of the openapi document. */
  async function userJson(id: string) {
    const row = await userRow(id);
    if (!row) return undefined;
    return {
      id: row.id,
      aud: 'authenticated',
      role: 'authenticated',
      email: row.email,
      email_confirmed_at: row.created_at.toISOString(),
      phone: '',
      confirmed_at: row.created_at.toISOString(),
      last_sign_in_at: row.last_sign_in_at?.toISOString(),
      app_metadata: row.raw_app_meta_data,
      user_metadata: row.raw_user_meta_data,
      identities: [],
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      is_anonymous: false,
    };
  }

  /** The access token: standard claims, then the project's hook, then the signature. */
  async function accessToken(session: AuthSession) {
    const row = await userRow(session.userId);
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: issuer,
      sub: session.userId,
      aud: 'authenticated',
      exp: now + ttl,
      iat: now,
      email: row.email ?? '',
      phone: '',
      app_metadata: row.raw_app_meta_data,
      user_metadata: row.raw_user_meta_data,
      role: 'authenticated',
      aal: 'aal1',
      amr: [{ method: session.method, timestamp: now }],
      session_id: session.id,
      is_anonymous: false,
    };
    const event = { user_id: session.userId, claims, authentication_method: session.method };
    const [{ output }] = await asAuthAdmin((tx) => tx<{ output: { claims: JWTPayload } }[]>`
      select private.custom_access_token_hook(${JSON.stringify(event)}::text::jsonb) as output`);
    const header = keys ? { alg: 'ES256', typ: 'JWT', kid } : { alg: 'HS256', typ: 'JWT' };
    return { token: await new SignJWT(output.claims).setProtectedHeader(header).sign(signingKey), expiresAt: claims.exp };
  }

  /** AccessTokenResponseSchema; rotates the session's refresh token. */
  async function tokenResponse(c: Context, session: AuthSession) {
    const refreshToken = randomBytes(12).toString('base64url');
    refreshTokens.set(refreshToken, { sessionId: session.id, used: false });
    session.refreshToken = refreshToken;
    const { token, expiresAt } = await accessToken(session);
    return c.json({ access_token: token, token_type: 'bearer', expires_in: ttl, expires_at: expiresAt, refresh_token: refreshToken, user: await userJson(session.userId) });
  }

  async function signIn(c: Context, userId: string, method: string) {
    await asAuthAdmin((tx) => tx`update auth.users set last_sign_in_at = now(), updated_at = now() where id = ${userId}`);
    const session: AuthSession = { id: randomUUID(), userId, method, refreshToken: '' };
    sessions.set(session.id, session);
    return tokenResponse(c, session);
  }

  /** requireAuthentication: a valid JWT of this issuer whose session and user still exist. */
  async function authenticated(c: Context): Promise<{ session: AuthSession } | Response> {
    const header = c.req.header('authorization');
    if (!header?.startsWith('Bearer ')) return error(c, 401, 'no_authorization', 'This endpoint requires a valid Bearer token');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(header.slice(7), verifyKey, { issuer, audience: 'authenticated' }));
    } catch {
      return error(c, 403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature');
    }
    const session = sessions.get(String(payload.session_id));
    if (!session) return error(c, 403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
    if (!(await userRow(session.userId))) return error(c, 403, 'user_not_found', 'User from sub claim in JWT does not exist');
    return { session };
  }

  app.use('*', async (c, next) => {
    const apikey = c.req.header('apikey') === ANON_KEY;
    double.requests.push({ method: c.req.method, path: c.req.path + new URL(c.req.url).search, apikey, bearer: c.req.header('authorization') !== undefined });
    // Supabase's gateway: every Auth call needs the project's key, except the browser's
    // redirects and the public signing keys.
    const open = c.req.path.startsWith('/provider/') || ['/auth/v1/callback', '/auth/v1/authorize', '/auth/v1/.well-known/jwks.json'].includes(c.req.path);
    if (!apikey && !open) return c.json({ message: 'Invalid API key' }, 401);
    await next();
  });

  app.get('/auth/v1/.well-known/jwks.json', (c) => c.json({ keys: publicJwk ? [publicJwk] : [] }));

  app.get('/auth/v1/authorize', (c) => {
    const provider = c.req.query('provider') ?? '';
    if (!PROVIDERS.has(provider)) return error(c, 400, 'validation_failed', 'Unsupported provider: provider is not enabled');
    const challenge = c.req.query('code_challenge') ?? '';
    const method = (c.req.query('code_challenge_method') ?? '').toLowerCase();
    if (!challenge || !['s256', 'plain'].includes(method)) return error(c, 400, 'validation_failed', 'PKCE flow requires code_challenge_method and code_challenge');
    if (challenge.length < 43 || challenge.length > 128) return error(c, 400, 'validation_failed', 'code challenge has to be between 43 and 128 characters');
    const requested = c.req.query('redirect_to') ?? '';
    const state = randomUUID();
    flows.set(state, { provider, challenge, method: method as Flow['method'], redirectTo: options.redirectAllowList.includes(requested) ? requested : options.siteUrl });
    return c.redirect(`${url}/provider/${provider}/authorize?state=${state}`, 302);
  });

  // The external provider: consents at once for nextIdentity, or the user cancels.
  app.get('/provider/:provider/authorize', (c) => {
    const state = c.req.query('state') ?? '';
    const outcome = double.deny ? 'error=access_denied' : `code=${randomUUID()}`;
    double.deny = false;
    return c.redirect(`${url}/auth/v1/callback?state=${state}&${outcome}`, 302);
  });

  app.get('/auth/v1/callback', async (c) => {
    const flow = flows.get(c.req.query('state') ?? '');
    if (!flow) return error(c, 404, 'flow_state_not_found', 'invalid flow state, no valid flow state found');
    const back = new URL(flow.redirectTo);
    if (c.req.query('error')) {
      flows.delete(c.req.query('state')!);
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_code', 'provider_error');
      back.searchParams.set('error_description', 'The user cancelled the sign-in');
      return c.redirect(back.href, 302);
    }
    const identity = double.nextIdentity;
    const key = `${flow.provider}:${identity.sub}`;
    const metadata = { full_name: identity.name, name: identity.name, avatar_url: identity.avatarUrl ?? null, email: identity.email, provider_id: identity.sub, sub: identity.sub };
    let userId = identities.get(key);
    if (userId) {
      const id = userId;
      await asAuthAdmin((tx) => tx`update auth.users set raw_user_meta_data = ${tx.json(metadata)}, updated_at = now() where id = ${id}`);
    } else {
      userId = randomUUID();
      const id = userId;
      await asAuthAdmin((tx) => tx`
        insert into auth.users (id, aud, role, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
        values (${id}, 'authenticated', 'authenticated', ${identity.email}, now(),
                ${tx.json({ provider: flow.provider, providers: [flow.provider] })}, ${tx.json(metadata)}, now(), now())`);
      identities.set(key, userId);
    }
    flow.userId = userId;
    flow.authCode = randomUUID();
    back.searchParams.set('code', flow.authCode);
    return c.redirect(back.href, 302);
  });

  app.post('/auth/v1/token', async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as Record<string, string | undefined>;
    switch (c.req.query('grant_type')) {
      case 'pkce': {
        if (!body.auth_code || !body.code_verifier) return error(c, 400, 'validation_failed', 'invalid request: both auth code and code verifier should be non-empty');
        const entry = [...flows.entries()].find(([, flow]) => flow.authCode === body.auth_code);
        if (!entry) return error(c, 404, 'flow_state_not_found', 'invalid flow state, no valid flow state found');
        const [state, flow] = entry;
        flows.delete(state);
        const computed = flow.method === 's256' ? createHash('sha256').update(body.code_verifier).digest('base64url') : body.code_verifier;
        if (computed !== flow.challenge) return error(c, 400, 'bad_code_verifier', 'code challenge does not match previously saved code verifier');
        return signIn(c, flow.userId!, 'oauth');
      }
      case 'password': {
        const user = passwords.get((body.email ?? '').toLowerCase());
        if (!user || user.hash !== sha256(body.password ?? '')) return error(c, 400, 'invalid_credentials', 'Invalid login credentials');
        return signIn(c, user.userId, 'password');
      }
      case 'refresh_token': {
        const token = refreshTokens.get(body.refresh_token ?? '');
        if (!token) return error(c, 400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
        const session = sessions.get(token.sessionId);
        if (!session) return error(c, 400, 'session_not_found', 'Invalid Refresh Token: No Valid Session Found');
        if (token.used) {
          sessions.delete(session.id); // reuse: the session is terminated
          return error(c, 400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
        }
        token.used = true;
        return tokenResponse(c, session);
      }
      default:
        return error(c, 400, 'invalid_credentials', 'unsupported_grant_type');
    }
  });

  app.post('/auth/v1/logout', async (c) => {
    const scope = c.req.query('scope') ?? 'global';
    if (!['global', 'local', 'others'].includes(scope)) return error(c, 400, 'validation_failed', `Unsupported logout scope "${scope}"`);
    const auth = await authenticated(c);
    if (auth instanceof Response) return auth;
    const { session } = auth;
    for (const other of [...sessions.values()]) {
      const mine = other.id === session.id;
      if (other.userId === session.userId && (scope === 'global' || (scope === 'local' && mine) || (scope === 'others' && !mine))) sessions.delete(other.id);
    }
    return c.body(null, 204);
  });

  app.get('/auth/v1/user', async (c) => {
    const auth = await authenticated(c);
    if (auth instanceof Response) return auth;
    return c.json(await userJson(auth.session.userId));
  });

  return double;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
