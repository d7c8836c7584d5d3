import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { AppEnv } from '../../http/env.js';
import { ApiError, unauthorized } from '../../http/api-error.js';
import { sendJsonText } from '../../http/respond.js';
import { REFRESH_COOKIE } from '../../context/resolve-context.js';
import { BINDING_COOKIE, clearSessionCookies, setBindingCookie, setSessionCookies } from '../../auth/cookies.js';
import type { CallbackResult, TokenSet } from '../../auth/auth-service.js';
import { PROVIDER_LABELS } from '../../auth/providers.js';
import type * as routes from './auth.routes.js';

const NO_STORE = { 'Cache-Control': 'no-store' };
const ANONYMOUS_BODY = '{"authenticated":false,"user":null,"session":null}';

export const getJwks: RouteHandler<typeof routes.getJwks, AppEnv> = async (c) =>
  sendJsonText(c, c.var.services.auth.jwks, 200, { 'Cache-Control': 'public, max-age=300' });

export const listProviders: RouteHandler<typeof routes.listProviders, AppEnv> = async (c) => {
  const providers = c.var.services.auth.configuredProviders.map((id) => ({ id, name: PROVIDER_LABELS[id] }));
  // Fixed for the life of the process: a short cache keeps a restart with other providers visible.
  return c.json({ providers }, 200, { 'Cache-Control': 'public, max-age=60' });
};

export const login: RouteHandler<typeof routes.login, AppEnv> = async (c) => {
  const { auth, config } = c.var.services;
  // A repeated `redirect` arrives as an array, which falls back to the default target.
  const { provider, redirect } = c.req.valid('query');
  const { location, binding } = await auth.login(provider, redirect, getCookie(c, BINDING_COOKIE));
  setBindingCookie(c, binding, config.OAUTH_ATTEMPT_TTL_S);
  c.header('Cache-Control', 'no-store');
  return c.redirect(location, 302);
};

export const callback: RouteHandler<typeof routes.callback, AppEnv> = async (c) => {
  const signedIn = await c.var.services.auth.callback({
    query: new URL(c.req.url).searchParams,
    browserBinding: getCookie(c, BINDING_COOKIE),
    userAgent: c.req.header('user-agent') ?? null,
    ipAddress: clientAddress(c),
  });
  return answerSignIn(c, signedIn);
};

/** The callback's answer, whoever signed the user in: both cookies and the sign-in body. */
export function answerSignIn(c: Context<AppEnv>, { body, tokens }: { body: CallbackResult; tokens: TokenSet }) {
  setSessionCookies(c, tokens, c.var.services.config.SESSION_MAX_LIFETIME_S);
  return sendJsonText(c, JSON.stringify(body), 200, NO_STORE);
}

export const getSession: RouteHandler<typeof routes.getSession, AppEnv> = async (c) => answerSession(c);

/** GET /auth/session's answer for the caller as resolved: its session as the database sees it. */
export async function answerSession(c: Context<AppEnv>) {
  const context = c.var.context;
  if (context.kind !== 'user' && context.kind !== 'dev') return sendJsonText(c, ANONYMOUS_BODY, 200, NO_STORE);
  // A token whose session is over reads as "not signed in" in the database (api.get_session).
  return sendJsonText(c, await c.var.services.rpc.call('get_session', {}, context.db), 200, NO_STORE);
}

export const logout: RouteHandler<typeof routes.logout, AppEnv> = async (c) => {
  const context = c.var.context;
  if (context.kind !== 'user' || context.via !== 'bearer' || !context.db.claims) throw unauthorized('A bearer access token is required to sign out');
  // Every token we accept can be signed out: a session of ours ends; any other token is
  // recorded until it expires and refused by the same session check (private.sign_out).
  await c.var.services.auth.logout(context.db.claims);
  clearSessionCookies(c);
  return sendJsonText(c, JSON.stringify({ success: true, message: 'Signed out' }), 200, NO_STORE);
};

export const refresh: RouteHandler<typeof routes.refresh, AppEnv> = async (c) =>
  rotate(c, c.req.valid('json').refresh_token, (token) => c.var.services.auth.refresh(token));

/**
 * POST /auth/refresh, whoever rotates the token: it comes from the body or the refresh cookie
 * (401 MISSING_REFRESH_TOKEN without either); both cookies are set again, or cleared when the
 * token is refused.
 */
export async function rotate(c: Context<AppEnv>, fromBody: string | undefined, rotateToken: (token: string) => Promise<TokenSet>) {
  // The body is optional: without a JSON content type the validator hands over {}.
  const token = fromBody ?? getCookie(c, REFRESH_COOKIE);
  if (!token) throw new ApiError('MISSING_REFRESH_TOKEN', 'A refresh token is required (JSON body refresh_token or the svc-refresh-token cookie)');
  try {
    const tokens = await rotateToken(token);
    setSessionCookies(c, tokens, c.var.services.config.SESSION_MAX_LIFETIME_S);
    return sendJsonText(c, JSON.stringify(tokens), 200, NO_STORE);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'UNAUTHORIZED') clearSessionCookies(c);
    throw error;
  }
}

function clientAddress(c: Context<AppEnv>): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}
