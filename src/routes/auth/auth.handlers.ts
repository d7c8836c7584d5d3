import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Config } from '../../config.js';
import type { Rpc } from '../../db/rpc.js';
import type { AppEnv } from '../../http/env.js';
import { ApiError, unauthorized } from '../../http/api-error.js';
import { sendJsonText } from '../../http/respond.js';
import { REFRESH_COOKIE } from '../../context/resolve-context.js';
import type { AuthService } from '../../auth/auth-service.js';
import type { ProviderName } from '../../auth/providers.js';
import { BINDING_COOKIE, clearSessionCookies, setBindingCookie, setSessionCookies } from '../../auth/cookies.js';

const NO_STORE = { 'Cache-Control': 'no-store' };
const ANONYMOUS_BODY = '{"authenticated":false,"user":null,"session":null}';

export const authHandlers = (auth: AuthService, rpc: Rpc, config: Config) => ({
  getJwks: async (c: Context<AppEnv>) => sendJsonText(c, auth.jwks, 200, { 'Cache-Control': 'public, max-age=300' }),

  login: async (c: Context<AppEnv>) => {
    const provider = c.req.query('provider') as ProviderName;
    const redirects = c.req.queries('redirect');
    const redirect = redirects && redirects.length > 1 ? redirects : redirects?.[0];
    const { location, binding } = await auth.login(provider, redirect, getCookie(c, BINDING_COOKIE));
    setBindingCookie(c, binding, config.OAUTH_ATTEMPT_TTL_S);
    c.header('Cache-Control', 'no-store');
    return c.redirect(location, 302) as never;
  },

  callback: async (c: Context<AppEnv>) => {
    const { body, tokens } = await auth.callback({
      query: new URL(c.req.url).searchParams,
      browserBinding: getCookie(c, BINDING_COOKIE),
      userAgent: c.req.header('user-agent') ?? null,
      ipAddress: clientAddress(c),
    });
    setSessionCookies(c, tokens, config.SESSION_MAX_LIFETIME_S);
    return sendJsonText(c, JSON.stringify(body), 200, NO_STORE);
  },

  getSession: async (c: Context<AppEnv>) => {
    const context = c.get('context');
    if (context.kind !== 'user' && context.kind !== 'dev') return sendJsonText(c, ANONYMOUS_BODY, 200, NO_STORE);
    try {
      // The dispatcher refuses a token whose session is no longer live (28000).
      return sendJsonText(c, await rpc.call('get_session', {}, context.db), 200, NO_STORE);
    } catch (error) {
      if ((error as { code?: string }).code === '28000') return sendJsonText(c, ANONYMOUS_BODY, 200, NO_STORE);
      throw error;
    }
  },

  logout: async (c: Context<AppEnv>) => {
    const context = c.get('context');
    if (context.kind !== 'user' || context.via !== 'bearer' || !context.db.claims) throw unauthorized('A bearer access token is required to sign out');
    // Every token we accept can be signed out: a session of ours ends; any other token is
    // recorded until it expires and refused by the same session check (private.sign_out).
    await auth.logout(context.db.claims);
    clearSessionCookies(c);
    return sendJsonText(c, JSON.stringify({ success: true, message: 'Signed out' }), 200, NO_STORE);
  },

  refresh: async (c: Context<AppEnv>) => {
    let fromBody: string | undefined;
    if ((c.req.header('content-type') ?? '').includes('application/json')) {
      fromBody = (c.req.valid('json' as never) as { refresh_token?: string } | undefined)?.refresh_token;
    }
    const token = fromBody ?? getCookie(c, REFRESH_COOKIE);
    if (!token) throw new ApiError('MISSING_REFRESH_TOKEN', 'A refresh token is required (JSON body refresh_token or the svc-refresh-token cookie)');
    try {
      const tokens = await auth.refresh(token);
      setSessionCookies(c, tokens, config.SESSION_MAX_LIFETIME_S);
      return sendJsonText(c, JSON.stringify(tokens), 200, NO_STORE);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'UNAUTHORIZED') clearSessionCookies(c);
      throw error;
    }
  },
});

function clientAddress(c: Context<AppEnv>): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}
