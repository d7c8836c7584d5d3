import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { AppEnv } from '../../http/env.js';
import { ApiError, unauthorized } from '../../http/api-error.js';
import { sendJsonText } from '../../http/respond.js';
import { REFRESH_COOKIE } from '../../context/resolve-context.js';
import { BINDING_COOKIE, clearSessionCookies, setBindingCookie, setSessionCookies } from '../../auth/cookies.js';
import type * as routes from './auth.routes.js';

const NO_STORE = { 'Cache-Control': 'no-store' };
const ANONYMOUS_BODY = '{"authenticated":false,"user":null,"session":null}';

export const getJwks: RouteHandler<typeof routes.getJwks, AppEnv> = async (c) =>
  sendJsonText(c, c.var.services.auth.jwks, 200, { 'Cache-Control': 'public, max-age=300' });

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
  const { auth, config } = c.var.services;
  const { body, tokens } = await auth.callback({
    query: new URL(c.req.url).searchParams,
    browserBinding: getCookie(c, BINDING_COOKIE),
    userAgent: c.req.header('user-agent') ?? null,
    ipAddress: clientAddress(c),
  });
  setSessionCookies(c, tokens, config.SESSION_MAX_LIFETIME_S);
  return sendJsonText(c, JSON.stringify(body), 200, NO_STORE);
};

export const getSession: RouteHandler<typeof routes.getSession, AppEnv> = async (c) => {
  const context = c.var.context;
  if (context.kind !== 'user' && context.kind !== 'dev') return sendJsonText(c, ANONYMOUS_BODY, 200, NO_STORE);
  // A token whose session is over reads as "not signed in" in the database (api.get_session).
  return sendJsonText(c, await c.var.services.rpc.call('get_session', {}, context.db), 200, NO_STORE);
};

export const logout: RouteHandler<typeof routes.logout, AppEnv> = async (c) => {
  const context = c.var.context;
  if (context.kind !== 'user' || context.via !== 'bearer' || !context.db.claims) throw unauthorized('A bearer access token is required to sign out');
  // Every token we accept can be signed out: a session of ours ends; any other token is
  // recorded until it expires and refused by the same session check (private.sign_out).
  await c.var.services.auth.logout(context.db.claims);
  clearSessionCookies(c);
  return sendJsonText(c, JSON.stringify({ success: true, message: 'Signed out' }), 200, NO_STORE);
};

export const refresh: RouteHandler<typeof routes.refresh, AppEnv> = async (c) => {
  const { auth, config } = c.var.services;
  // The body is optional: without a JSON content type the validator hands over {}.
  const token = c.req.valid('json').refresh_token ?? getCookie(c, REFRESH_COOKIE);
  if (!token) throw new ApiError('MISSING_REFRESH_TOKEN', 'A refresh token is required (JSON body refresh_token or the svc-refresh-token cookie)');
  try {
    const tokens = await auth.refresh(token);
    setSessionCookies(c, tokens, config.SESSION_MAX_LIFETIME_S);
    return sendJsonText(c, JSON.stringify(tokens), 200, NO_STORE);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'UNAUTHORIZED') clearSessionCookies(c);
    throw error;
  }
};

function clientAddress(c: Context<AppEnv>): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}
