import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { ACCESS_COOKIE, REFRESH_COOKIE } from '../context/resolve-context.js';
import type { TokenSet } from './auth-service.js';

/** Binds an OAuth attempt to the browser that started it; only ever sent to the callback. */
export const BINDING_COOKIE = 'svc-oauth-binding';
export const CALLBACK_PATH = '/auth/callback';
// The refresh token only travels to /auth (refresh, logout, session), never to the catalog.
const REFRESH_PATH = '/auth';

const base = { httpOnly: true, secure: true, sameSite: 'Lax' } as const;

export function setSessionCookies(c: Context, tokens: TokenSet, refreshMaxAgeSeconds: number) {
  setCookie(c, ACCESS_COOKIE, tokens.access_token, { ...base, path: '/', maxAge: tokens.expires_in });
  setCookie(c, REFRESH_COOKIE, tokens.refresh_token, { ...base, path: REFRESH_PATH, maxAge: refreshMaxAgeSeconds });
}

export function clearSessionCookies(c: Context) {
  deleteCookie(c, ACCESS_COOKIE, { ...base, path: '/' });
  deleteCookie(c, REFRESH_COOKIE, { ...base, path: REFRESH_PATH });
}

export function setBindingCookie(c: Context, value: string, maxAgeSeconds: number) {
  setCallbackCookie(c, BINDING_COOKIE, value, maxAgeSeconds);
}

/** A cookie of a sign-in attempt: only ever sent to the callback, gone after `maxAgeSeconds`. */
export function setCallbackCookie(c: Context, name: string, value: string, maxAgeSeconds: number) {
  setCookie(c, name, value, { ...base, path: CALLBACK_PATH, maxAge: maxAgeSeconds });
}

export function clearCallbackCookie(c: Context, name: string) {
  deleteCookie(c, name, { ...base, path: CALLBACK_PATH });
}
