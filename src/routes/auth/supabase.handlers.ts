import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { PROVIDER_LABELS } from '../../auth/providers.js';
import { SUPABASE_PROVIDERS, type SupabaseAuth } from '../../auth/supabase-auth.js';
import { ACCESS_COOKIE } from '../../context/resolve-context.js';
import { ANONYMOUS } from '../../context/request-context.js';
import type { AppEnv } from '../../http/env.js';
import * as builtin from './auth.handlers.js';
import type * as routes from './auth.routes.js';

/**
 * /auth with AUTH_PROVIDER=supabase: the same contracts, answered by Supabase Auth
 * (src/auth/supabase-auth.ts). Whatever this API keeps itself (the session check of every
 * request, the record of a signed-out token, the cookies, the answers' shapes) goes through the
 * built-in handlers, so the two modes differ only where Supabase Auth decides.
 */
export const login: RouteHandler<typeof routes.login, AppEnv> = async (c) => {
  const { provider, redirect } = c.req.valid('query');
  const location = await supabaseAuth(c).login(c, provider, redirect);
  c.header('Cache-Control', 'no-store');
  return c.redirect(location, 302);
};

/** Which of them a project enables is Supabase Auth's setting; this API offers the spec's two. */
export const listProviders: RouteHandler<typeof routes.listProviders, AppEnv> = async (c) =>
  c.json({ providers: SUPABASE_PROVIDERS.map((id) => ({ id, name: PROVIDER_LABELS[id] })) }, 200, { 'Cache-Control': 'public, max-age=60' });

export const callback: RouteHandler<typeof routes.callback, AppEnv> = async (c) =>
  builtin.answerSignIn(c, await supabaseAuth(c).callback(c));

export const refresh: RouteHandler<typeof routes.refresh, AppEnv> = async (c) =>
  builtin.rotate(c, c.req.valid('json').refresh_token, (token) => supabaseAuth(c).refresh(c, token));

/** Supabase Auth says first whether the session still exists; a caller whose session is gone there is anonymous. */
export const getSession: RouteHandler<typeof routes.getSession, AppEnv> = async (c) => {
  const token = presentedToken(c);
  if (token && !(await supabaseAuth(c).sessionAlive(c, token))) c.set('context', ANONYMOUS);
  return builtin.answerSession(c);
};

/** The session ends at Supabase Auth, then the token is refused here as every signed-out token is. */
export const logout: RouteHandler<typeof routes.logout, AppEnv> = async (c, next) => {
  const token = c.var.context.via === 'bearer' ? presentedToken(c) : undefined;
  if (token) await supabaseAuth(c).logout(c, token);
  return builtin.logout(c, next);
};

function supabaseAuth(c: Context<AppEnv>): SupabaseAuth {
  const auth = c.var.services.supabaseAuth;
  if (!auth) throw new Error('AUTH_PROVIDER=supabase, but no Supabase Auth client was built');
  return auth;
}

/** The access token a signed-in caller presented: the bearer token, else the access-token cookie. */
function presentedToken(c: Context<AppEnv>): string | undefined {
  const { kind, via } = c.var.context;
  if (kind !== 'user') return undefined;
  if (via === 'bearer') return c.req.header('authorization')?.trim().replace(/^Bearer +/i, '');
  return getCookie(c, ACCESS_COOKIE);
}
