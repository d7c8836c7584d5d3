/**
 * Open-redirect defence for `?redirect=`: the target must parse as an absolute URL whose origin
 * is exactly one on the allow-list. Anything doubtful falls back to the default target, and
 * the result is always the re-serialised URL, never the caller's text.
 */
import type { Config } from '../config.js';

export interface RedirectPolicy {
  allowedOrigins: ReadonlySet<string>;
  defaultUrl: string;
  /** http is accepted only for loopback hosts, and only outside production. */
  allowLoopbackHttp: boolean;
}

/** The policy of the configured front ends (frontEndOrigins) plus the default target's origin. */
export function redirectPolicyFromConfig(config: Config): RedirectPolicy {
  return {
    allowedOrigins: new Set([...frontEndOrigins(config), new URL(config.AUTH_DEFAULT_REDIRECT_URL).origin]),
    defaultUrl: new URL(config.AUTH_DEFAULT_REDIRECT_URL).href,
    allowLoopbackHttp: config.NODE_ENV !== 'production',
  };
}

// C0 controls, DEL, whitespace and backslashes never belong in a redirect target.
const SUSPICIOUS = /[\u0000-\u0020\u007f\\]/;

export function resolveRedirect(raw: string | string[] | undefined, policy: RedirectPolicy): string {
  if (typeof raw !== 'string' || raw === '') return policy.defaultUrl;
  if (SUSPICIOUS.test(raw)) return policy.defaultUrl;
  // Percent-encoded separators hide `//host` and `\host` from naive checks: refuse them.
  if (/%(2f|5c|00|0[9ad])/i.test(raw)) return policy.defaultUrl;
  // Absolute URLs only (scheme://...): no scheme-relative, no `http:host`, no relative paths.
  if (!/^https?:\/\/[^/]/i.test(raw)) return policy.defaultUrl;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return policy.defaultUrl;
  }
  if (url.username !== '' || url.password !== '') return policy.defaultUrl;
  if (url.protocol === 'http:' && !(policy.allowLoopbackHttp && isLoopbackHost(url.hostname))) return policy.defaultUrl;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return policy.defaultUrl;
  if (!policy.allowedOrigins.has(url.origin)) return policy.defaultUrl;
  const keys = [...url.searchParams.keys()];
  if (new Set(keys).size !== keys.length) return policy.defaultUrl;
  return url.href;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The origins of a comma-separated list (AUTH_ALLOWED_REDIRECT_ORIGINS, CORS_ALLOWED_ORIGINS). */
export function parseOrigins(list: string): Set<string> {
  return new Set(list.split(',').map((o) => o.trim()).filter(Boolean).map((o) => new URL(o).origin));
}

/**
 * The front ends this API serves: the redirect allow-list plus the CORS origins (a page trusted
 * to read signed-in answers is trusted to be sent back to, and to send cookie-authenticated writes).
 */
export function frontEndOrigins(config: { AUTH_ALLOWED_REDIRECT_ORIGINS: string; CORS_ALLOWED_ORIGINS: string }): Set<string> {
  return new Set([...parseOrigins(config.AUTH_ALLOWED_REDIRECT_ORIGINS), ...parseOrigins(config.CORS_ALLOWED_ORIGINS)]);
}
