import type { Session } from '@supabase/supabase-js';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Config } from '../config.js';
import type { JwtVerifier } from '../context/jwt.js';
import type { Rpc } from '../db/rpc.js';
import { ApiError, unauthorized, validationError } from '../http/api-error.js';
import { supabaseClientOptions } from '../supabase/client-options.js';
import { refreshRefused, refuseProviderError, single, type CallbackResult, type TokenSet } from './auth-service.js';
import { clearCallbackCookie, setCallbackCookie } from './cookies.js';
import type { ProviderName } from './providers.js';
import { redirectPolicyFromConfig, resolveRedirect } from './redirect.js';

/** The sign-in providers /auth/login hands to Supabase Auth: the spec's two. */
export const SUPABASE_PROVIDERS = ['google', 'github'] as const satisfies readonly ProviderName[];
const isSupabaseProvider = (name: ProviderName): name is (typeof SUPABASE_PROVIDERS)[number] => (SUPABASE_PROVIDERS as readonly string[]).includes(name);

/**
 * The name @supabase/ssr gives its storage: its PKCE code verifiers travel in cookies named
 * `svc-sb-auth-code-verifier` (and, from auth-js 2.119, `svc-sb-auth-flow-<id>-code-verifier` with
 * the index `svc-sb-auth-flows-code-verifier`).
 */
export const SUPABASE_STORAGE_KEY = 'svc-sb-auth';
/** Where the browser returns to and when the attempt began (for is_new_user); callback path only. */
export const RETURN_COOKIE = 'svc-oauth-return';

/**
 * Sign-in and sessions delegated to Supabase Auth (AUTH_PROVIDER=supabase), through
 * @supabase/ssr's createServerClient with cookie methods over Hono's helpers: the PKCE flow,
 * `exchangeCodeForSession`, the refresh grant, `signOut` with a scope and `getUser`. The answers
 * keep the spec's shapes, and the session travels in the spec's two cookies (set by the handlers),
 * so a front end cannot tell the modes apart. What Supabase Auth decides here (rotation, reuse,
 * lifetimes) is its own; docs/supabase.md lists the differences.
 */
export function createSupabaseAuth(config: Config, deps: { rpc: Rpc; verifier: JwtVerifier }) {
  const { SUPABASE_URL: url, SUPABASE_ANON_KEY: anonKey } = config;
  if (!url || !anonKey) throw new Error('AUTH_PROVIDER=supabase needs SUPABASE_URL and SUPABASE_ANON_KEY');
  const redirectPolicy = redirectPolicyFromConfig(config);
  const loaded = Promise.all([import('@supabase/ssr'), import('@supabase/supabase-js'), supabaseClientOptions(config.OAUTH_HTTP_TIMEOUT_S)]);
  // Unhandled until first use: a failure to load surfaces in the request that needs it.
  loaded.catch(() => undefined);

  /**
   * What a supabase-js error says: Supabase Auth answered (`status`, `code`), or it no longer has
   * the session (supabase-js turns `session_not_found` into its own error), or it could not be
   * reached (network, 5xx).
   */
  async function kindOf(error: unknown) {
    const [, sdk] = await loaded;
    const unreachable = sdk.isAuthRetryableFetchError(error);
    return {
      unreachable,
      sessionGone: sdk.isAuthSessionMissingError(error),
      verifierMissing: sdk.isAuthPKCECodeVerifierMissingError(error),
      status: sdk.isAuthError(error) && !unreachable ? error.status : undefined,
      code: sdk.isAuthApiError(error) ? error.code : undefined,
    };
  }

  /** A client for one request: its storage is this request's PKCE cookies, and only those. */
  async function client(c: Context) {
    const [{ createServerClient }, , options] = await loaded;
    return createServerClient(url!, anonKey!, {
      ...options,
      cookieOptions: { name: SUPABASE_STORAGE_KEY },
      cookies: {
        getAll: () =>
          Object.entries(getCookie(c))
            .filter(([name]) => isVerifierCookie(name))
            .map(([name, value]) => ({ name, value })),
        // The session is never kept in Supabase's own cookie: the handlers put it in the
        // spec's cookies (svc-access-token, svc-refresh-token) from the token set.
        setAll: (cookies) => {
          for (const { name, value } of cookies.filter((cookie) => isVerifierCookie(cookie.name))) {
            if (value) setCallbackCookie(c, name, value, config.OAUTH_ATTEMPT_TTL_S);
            else clearCallbackCookie(c, name);
          }
        },
      },
    });
  }

  function tokenSet(session: Session): TokenSet {
    const expiresAt = session.expires_at ?? Math.floor(Date.now() / 1000) + session.expires_in;
    return {
      access_token: session.access_token,
      refresh_token: session.refresh_token,
      expires_at: new Date(expiresAt * 1000).toISOString(),
      expires_in: session.expires_in,
    };
  }

  return {
    /** Starts the PKCE flow at Supabase Auth; returns where to send the browser. */
    async login(c: Context, provider: ProviderName, redirect: string | string[] | undefined): Promise<string> {
      // The local dev provider belongs to this API's own sign-in; Supabase Auth knows the spec's two.
      if (!isSupabaseProvider(provider)) throw validationError(`Sign-in with ${provider} is not available with Supabase Auth`, { reason: 'provider_not_configured', provider });
      const { data, error } = await (await client(c)).auth.signInWithOAuth({
        provider,
        options: { redirectTo: config.AUTH_CALLBACK_URL, skipBrowserRedirect: true },
      });
      if (error || !data.url) throw unavailable('Supabase Auth could not start the sign-in');
      const returnTo = resolveRedirect(redirect, redirectPolicy);
      setCallbackCookie(c, RETURN_COOKIE, `${Date.now()}.${Buffer.from(returnTo).toString('base64url')}`, config.OAUTH_ATTEMPT_TTL_S);
      return data.url;
    },

    /**
     * Exchanges the code Supabase Auth sent back (with the verifier cookie of the browser that
     * started the flow) and answers as the built-in callback does; the user comes from the
     * profile the auth.users trigger keeps, read through the dispatcher like every request.
     */
    async callback(c: Context): Promise<{ body: CallbackResult; tokens: TokenSet }> {
      const query = new URL(c.req.url).searchParams;
      const [startedAt, returnTo] = parseReturnCookie(getCookie(c, RETURN_COOKIE));
      clearCallbackCookie(c, RETURN_COOKIE);
      refuseProviderError(query);
      const code = single(query, 'code');
      if (!code) throw validationError('The code parameter is missing', { reason: 'missing_code' });
      const { data, error } = await (await client(c)).auth.exchangeCodeForSession(code);
      if (error || !data.session) {
        const kind = await kindOf(error);
        if (kind.verifierMissing) throw validationError('This sign-in attempt was started in another browser', { reason: 'browser_mismatch' });
        if (kind.unreachable) throw unavailable('Supabase Auth could not be reached');
        throw unauthorized('Supabase Auth refused the authorization code', { reason: 'code_exchange_failed' });
      }
      const tokens = tokenSet(data.session);
      const claims = await deps.verifier.verify(tokens.access_token).then(
        (verified) => verified.claimsJson,
        (failure: unknown) => {
          throw new Error(`Supabase Auth issued an access token this API refuses (check SUPABASE_JWT_SECRET, JWT_JWKS_URL, JWT_ACCEPTED_ISSUERS): ${String(failure)}`);
        },
      );
      const state = JSON.parse(await deps.rpc.call('get_session', {}, { role: 'authenticated', claims, token: tokens.access_token })) as SessionState;
      return {
        tokens,
        body: {
          user: {
            id: state.user.id,
            email: state.user.email ?? '',
            display_name: state.user.display_name,
            provider: state.user.provider ?? state.session.provider,
          },
          session: tokens,
          is_new_user: startedAt !== undefined && Date.parse(data.user.created_at) >= startedAt,
          redirect_url: resolveRedirect(returnTo, redirectPolicy),
        },
      };
    },

    /** The refresh grant; Supabase Auth rotates the token and judges reuse. */
    async refresh(c: Context, refreshToken: string): Promise<TokenSet> {
      const { data, error } = await (await client(c)).auth.refreshSession({ refresh_token: refreshToken });
      if (data.session && !error) return tokenSet(data.session);
      const { unreachable, sessionGone, code } = await kindOf(error);
      if (unreachable) throw unavailable('Supabase Auth could not be reached');
      if (code === 'refresh_token_already_used') throw refreshRefused('revoked', 'refresh_token_reuse');
      if (sessionGone) throw refreshRefused('revoked');
      if (code === 'session_expired') throw refreshRefused('expired');
      throw refreshRefused('invalid');
    },

    /**
     * Ends the access token's session at Supabase Auth (`signOut` with SUPABASE_AUTH_LOGOUT_SCOPE:
     * local, this session; global, all the user's), which revokes the refresh tokens. Supabase
     * Auth's answer that the session or user is already gone counts as done, as supabase-js
     * counts it. An access token stays valid at Supabase until it expires: the handler then
     * records the presented one here too (private.sign_out). Other devices' access tokens (global)
     * are refused by GET /auth/session at once, by the rest of the API when they expire.
     */
    async logout(c: Context, accessToken: string): Promise<void> {
      const { error } = await (await client(c)).auth.admin.signOut(accessToken, config.SUPABASE_AUTH_LOGOUT_SCOPE);
      if (!error) return;
      const { sessionGone, status } = await kindOf(error);
      if (sessionGone || status === 401 || status === 403 || status === 404) return;
      throw unavailable('Supabase Auth could not end the session');
    },

    /** Whether Supabase Auth still has the session and the user of this access token (`getUser`). */
    async sessionAlive(c: Context, accessToken: string): Promise<boolean> {
      const { error } = await (await client(c)).auth.getUser(accessToken);
      if (!error) return true;
      const { sessionGone, status } = await kindOf(error);
      if (sessionGone || (status !== undefined && status >= 400 && status < 500)) return false;
      throw unavailable('Supabase Auth could not be reached');
    },
  };
}

export type SupabaseAuth = ReturnType<typeof createSupabaseAuth>;

/** The body of api.get_session for an authenticated caller. */
interface SessionState {
  user: { id: string; email: string | null; display_name: string; provider: string | null };
  session: { provider: string };
}

const unavailable = (message: string) => new ApiError('SERVICE_UNAVAILABLE', message, { reason: 'auth_unavailable' }, { 'Retry-After': '5' });

const isVerifierCookie = (name: string) => name.startsWith(`${SUPABASE_STORAGE_KEY}-`) && /-code-verifier(\.\d+)?$/.test(name);

/** `<epoch milliseconds>.<base64url redirect>`; a missing or mangled cookie gives nothing. */
function parseReturnCookie(value: string | undefined): [number | undefined, string | undefined] {
  const match = /^(\d{1,15})\.([A-Za-z0-9_-]*)$/.exec(value ?? '');
  if (!match) return [undefined, undefined];
  return [Number(match[1]), Buffer.from(match[2], 'base64url').toString('utf8')];
}
