import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** Every named schema of the API (`Schemas['Spark']`, `Schemas['UserJourneyDetail']`, …). */
export type Schemas = components['schemas'];
export type TokenSet = Schemas['TokenSet'];
export type SignInResult = Schemas['SignInResult'];
export type ProviderName = NonNullable<paths['/auth/login']['get']['parameters']['query']>['provider'];
/** The error envelope every failure answers with. */
export type ApiErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };

/** The claims of this API's access tokens a front end may show (never trust them for access: the API decides). */
export interface AccessClaims {
  sub: string;
  email?: string;
  user_role?: 'learner' | 'admin';
  subscription_plan?: 'free' | 'premium';
  session_id?: string;
  exp: number;
}

export interface ClientSession {
  accessToken: string;
  expiresAt: Date;
  claims: AccessClaims;
}

export interface SparkpathClientOptions {
  /** The API's origin, e.g. `https://api.example.com`; empty (the default) for the page's own origin. */
  baseUrl?: string;
  fetch?: typeof globalThis.fetch;
  /** Called when the session starts, is refreshed or ends. */
  onSessionChange?: (session: ClientSession | undefined) => void;
  /** Refresh this long before the access token expires (default 60 s). */
  refreshAheadMs?: number;
}

/** A failed call: the status and the API's error envelope. */
export class SparkpathError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'SparkpathError';
  }
}

/**
 * The data of a successful call, or a SparkpathError with the API's envelope.
 *
 * @example
 *   const domains = unwrap(await sparkpath.api.GET('/discovery/domains', { params: { query: { trail_limit: 3 } } }));
 */
export function unwrap<D>(result: { data?: D; error?: unknown; response: Response }): D {
  if (result.response.ok && result.error === undefined) return result.data as D;
  const envelope = result.error as Partial<ApiErrorBody> | undefined;
  throw new SparkpathError(
    result.response.status,
    envelope?.error?.code ?? 'HTTP_ERROR',
    envelope?.error?.message ?? `The API answered ${result.response.status}`,
    envelope?.error?.details ?? {},
  );
}

/** Routes that must not carry the bearer header: the callback and refresh work from cookies (an expired bearer would be a 401). */
const COOKIE_ROUTES = new Set(['/auth/callback', '/auth/refresh', '/auth/login']);

/**
 * A client of the Sparkpath API that signs in the way the API expects a browser front end to
 * (docs/auth.md#browser-front-ends): the refresh token stays in its HttpOnly cookie, the access
 * token is kept in memory only, from the callback's and refresh's bodies, and sent as
 * `Authorization: Bearer` on every call. `api` is an openapi-fetch client typed by the generated
 * `paths`: every path, parameter and body is checked against the OpenAPI document.
 *
 * @example
 *   const sparkpath = createSparkpathClient({ baseUrl: 'http://localhost:3000' });
 *   await sparkpath.restore();                                  // signed in from an earlier visit?
 *   location.assign(sparkpath.signInUrl('dev', location.href)); // or start a sign-in
 *   // …on the callback page (AUTH_CALLBACK_URL):
 *   const { redirect_url } = await sparkpath.completeSignIn(location.search);
 *   const journeys = unwrap(await sparkpath.api.GET('/user/me/journeys'));
 */
export function createSparkpathClient(options: SparkpathClientOptions = {}) {
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
  const refreshAheadMs = options.refreshAheadMs ?? 60_000;
  let session: ClientSession | undefined;
  let refreshing: Promise<ClientSession | undefined> | undefined;
  // Copies of requests sent with a bearer token, to send once more after a refresh answers a 401.
  const sent = new Map<string, Request>();

  const api: Client<paths> = createClient<paths>({ baseUrl, credentials: 'include', ...(options.fetch ? { fetch: options.fetch } : {}) });

  function setSession(tokens: TokenSet | undefined) {
    session = tokens && { accessToken: tokens.access_token, expiresAt: new Date(tokens.expires_at), claims: decodeClaims(tokens.access_token) };
    options.onSessionChange?.(session);
    return session;
  }

  /** One refresh at a time: concurrent callers share it (the API would answer them alike anyway). */
  function refresh(): Promise<ClientSession | undefined> {
    refreshing ??= (async () => {
      try {
        const { data, response } = await api.POST('/auth/refresh', {});
        if (data) return setSession(data);
        if (response.status === 401) return setSession(undefined);
        throw new SparkpathError(response.status, 'HTTP_ERROR', `Refreshing the session answered ${response.status}`);
      } finally {
        refreshing = undefined;
      }
    })();
    return refreshing;
  }

  api.use({
    async onRequest({ request, schemaPath, id }) {
      if (COOKIE_ROUTES.has(schemaPath)) return undefined;
      if (session && session.expiresAt.getTime() - Date.now() < refreshAheadMs) await refresh();
      if (!session) return undefined;
      request.headers.set('Authorization', `Bearer ${session.accessToken}`);
      sent.set(id, request.clone());
      return request;
    },
    async onResponse({ response, id }) {
      const original = sent.get(id);
      sent.delete(id);
      // The token was refused (signed out elsewhere, or a clock far off): refresh once, try again.
      if (response.status !== 401 || !original || !session) return undefined;
      const renewed = await refresh();
      if (!renewed) return undefined;
      original.headers.set('Authorization', `Bearer ${renewed.accessToken}`);
      return (options.fetch ?? globalThis.fetch)(original);
    },
    onError({ id }) {
      sent.delete(id);
    },
  });

  return {
    /** The typed openapi-fetch client; the bearer header is added while signed in. */
    api,
    /** The current session (access token in memory), if signed in. */
    get session() {
      return session;
    },
    /** Where to send the window to sign in; the provider then sends it to AUTH_CALLBACK_URL. */
    signInUrl(provider: ProviderName, redirect?: string): string {
      const query = new URLSearchParams({ provider });
      if (redirect) query.set('redirect', redirect);
      return `${baseUrl}/auth/login?${query}`;
    },
    /** On the callback page: hands `code` and `state` (the page's query string) to the API and keeps the access token. */
    async completeSignIn(search: string | URLSearchParams): Promise<SignInResult> {
      const given = new URLSearchParams(search);
      const query = Object.fromEntries(['code', 'state', 'iss', 'error', 'error_description'].flatMap((name) => (given.has(name) ? [[name, given.get(name)!]] : [])));
      const result = unwrap(await api.GET('/auth/callback', { params: { query } }));
      setSession(result.session);
      return result;
    },
    /** After a reload: a session from the refresh cookie, or undefined when signed out. */
    restore: refresh,
    refresh,
    /** Ends the session at the API (its cookies are cleared) and forgets the token. */
    async signOut(): Promise<void> {
      if (session) {
        const { response, error } = await api.POST('/auth/logout');
        // 401: it had already ended; either way nothing is left to sign out.
        if (!response.ok && response.status !== 401) unwrap({ response, error });
      }
      setSession(undefined);
    },
  };
}

export type SparkpathClient = ReturnType<typeof createSparkpathClient>;

/** The payload of a JWT, unverified: for display only. */
function decodeClaims(token: string): AccessClaims {
  const payload = token.split('.')[1] ?? '';
  const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(payload.length / 4) * 4, '='));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as AccessClaims;
}
