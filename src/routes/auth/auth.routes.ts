import { createRoute, z } from '@hono/zod-openapi';
import { PROVIDERS } from '../../auth/providers.js';
import { commonErrors, errorResponse, jsonContent, Text, Uuid } from '../../http/schemas.js';

const User = z
  .object({ id: Uuid, email: z.string(), display_name: z.string(), provider: z.string() })
  .openapi('AuthUser');

const TokenSet = z
  .object({
    access_token: z.string().openapi({ description: 'JWT (HS256), also accepted by the Supabase project' }),
    refresh_token: z.string().openapi({ description: 'Opaque, 256 bits; single use (rotated at every refresh)' }),
    expires_at: z.string().openapi({ format: 'date-time', description: 'When the access token expires' }),
    expires_in: z.number().int().openapi({ description: 'Seconds until the access token expires' }),
  })
  .openapi('TokenSet');

const SessionState = z
  .object({
    authenticated: z.boolean(),
    user: z.union([
      z.object({
        id: Uuid,
        email: z.string().nullable(),
        display_name: z.string(),
        provider: z.string().nullable(),
        avatar_url: z.string().nullable(),
      }),
      z.null(),
    ]),
    session: z
      .union([
        z.object({
          id: Uuid,
          provider: z.string(),
          // null only for the development bypass, which has no token.
          expires_at: z.string().nullable(),
          created_at: z.string().nullable(),
        }),
        z.null(),
      ])
      .openapi({
        description:
          'null exactly when anonymous. The session row of a session-bound token (expires_at = access token expiry); for a token without a session here, built from its claims (id = session_id or a digest-derived uuid, provider = app_metadata.provider, expires_at = exp, created_at = iat).',
      }),
  })
  .openapi('SessionState');

/** OAuth callback parameters: opaque provider text (RFC 6749 allows no control characters). */
const rawQuery = Text(0, 4096).optional();

export const login = createRoute({
  method: 'get',
  path: '/login',
  tags: ['Auth'],
  summary: 'Start the OAuth sign-in',
  description:
    'Records a single-use attempt (state, PKCE S256 verifier, nonce for OIDC, validated redirect, 10-minute expiry) bound to this browser by the `svc-oauth-binding` cookie, then redirects to the provider. A `redirect` whose origin is not on the allow-list falls back to the default target. With AUTH_PROVIDER=supabase, Supabase Auth runs the provider round trip (PKCE verifier in the `svc-sb-auth-code-verifier` cookie); every answer keeps these shapes (docs/supabase.md).',
  request: {
    query: z.object({
      provider: z.enum(PROVIDERS).openapi({ description: 'Identity provider: google, github, or dev (the local OpenID provider of development; 400 provider_not_configured elsewhere)' }),
      redirect: z.union([z.string(), z.array(z.string())]).optional().openapi({ type: 'string', description: 'Absolute URL to return to; must be on the allow-list' }),
    }),
  },
  responses: {
    302: { description: 'Redirect to the identity provider (Location)' },
    ...commonErrors,
  },
});

export const callback = createRoute({
  method: 'get',
  path: '/callback',
  tags: ['Auth'],
  summary: 'Finish the OAuth sign-in',
  description:
    'Validates state (single use, unexpired, same browser), the RFC 9207 `iss` when present, exchanges the code with PKCE, verifies the ID token and nonce (OIDC), creates or updates the profile and opens a session. Sets `svc-access-token` and `svc-refresh-token` (HttpOnly, Secure, SameSite=Lax). Failures carry `details.reason` (see docs/auth.md) and create no session.',
  request: {
    query: z.object({
      code: rawQuery.openapi({ description: 'Authorization code (required unless the provider answered with error)' }),
      state: rawQuery.openapi({ description: 'The state issued at /auth/login' }),
      iss: rawQuery.openapi({ description: 'RFC 9207 issuer identifier' }),
      error: rawQuery,
      error_description: rawQuery,
    }),
  },
  responses: {
    200: jsonContent(
      z.object({ user: User, session: TokenSet, is_new_user: z.boolean(), redirect_url: z.string() }).openapi('SignInResult'),
      'Signed in',
    ),
    ...commonErrors,
    401: errorResponse('UNAUTHORIZED: access_denied, issuer_mismatch, code_exchange_failed, id_token_invalid, no_verified_email'),
  },
});

export const getSession = createRoute({
  method: 'get',
  path: '/session',
  tags: ['Auth'],
  summary: 'Current sign-in state',
  description:
    'Cookie or bearer. Anonymous callers (no token, or an expired, invalid or revoked one) get 200 with authenticated false.',
  security: [{ bearerAuth: [] }, { cookieAuth: [] }, {}],
  responses: { 200: jsonContent(SessionState, 'The sign-in state'), ...commonErrors },
});

export const logout = createRoute({
  method: 'post',
  path: '/logout',
  tags: ['Auth'],
  summary: 'End the session',
  description:
    'Bearer required. Deactivates the session (its access token is refused from now on), revokes its refresh tokens and clears both cookies. A token without a session here (another issuer\'s, e.g. Supabase Auth) is recorded until it expires and refused from now on; with AUTH_PROVIDER=supabase its session at Supabase Auth is ended first.',
  security: [{ bearerAuth: [] }],
  responses: {
    200: jsonContent(z.object({ success: z.boolean(), message: z.string() }), 'Signed out'),
    ...commonErrors,
    401: errorResponse('UNAUTHORIZED: no bearer token, or its session has already ended (or it was already signed out)'),
  },
});

export const refresh = createRoute({
  method: 'post',
  path: '/refresh',
  tags: ['Auth'],
  summary: 'Rotate the tokens',
  description:
    'Takes the refresh token from the JSON body or the `svc-refresh-token` cookie, returns a new access and refresh token and sets both cookies again. Each refresh token has one successor: a retry inside the grace window (REFRESH_REUSE_GRACE_S, a lost response or another tab) returns that same token set; any later use revokes the whole session.',
  request: {
    body: {
      required: false,
      content: { 'application/json': { schema: z.object({ refresh_token: Text(1, 512).optional() }) } },
    },
  },
  responses: {
    200: jsonContent(TokenSet, 'New tokens'),
    ...commonErrors,
    401: errorResponse('MISSING_REFRESH_TOKEN when none was sent; UNAUTHORIZED when it is invalid, expired or revoked'),
    403: errorResponse('FORBIDDEN: cookie-authenticated request from another site'),
  },
});

export const listProviders = createRoute({
  method: 'get',
  path: '/providers',
  tags: ['Auth'],
  summary: 'Sign-in providers of this server',
  description:
    'The providers `/auth/login` accepts on this server (the others answer 400 provider_not_configured), for a front end to show its sign-in buttons: `dev` is the local OpenID provider of development.',
  responses: {
    200: jsonContent(
      z.object({ providers: z.array(z.object({ id: z.enum(PROVIDERS), name: z.string() })) }).openapi('SignInProviders'),
      'The configured providers, possibly none',
    ),
    ...commonErrors,
  },
});

export const getJwks = createRoute({
  method: 'get',
  path: '/jwks.json',
  tags: ['Auth'],
  summary: 'Public keys of ES256 access tokens',
  description:
    'The JSON Web Key Set of JWT_SIGNING_KEY (for a Supabase project or another verifier). Empty `keys` when access tokens are HS256 only.',
  responses: {
    200: jsonContent(z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).openapi('Jwks'), 'The key set'),
    ...commonErrors,
  },
});
