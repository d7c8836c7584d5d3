import * as client from 'openid-client';
import type { Config } from '../config.js';
import { SUBSCRIPTION_PLANS, USER_ROLES, type SubscriptionPlan, type UserRoleClaim } from '../context/permissions.js';
import type { DevSignInClient } from './dev-identity-provider.js';

/** The spec's two providers, and `dev`: the local OpenID provider of development (DEV_SIGN_IN). */
export const PROVIDERS = ['google', 'github', 'dev'] as const;
export type ProviderName = (typeof PROVIDERS)[number];
/** What a sign-in button says. */
export const PROVIDER_LABELS: Record<ProviderName, string> = { google: 'Google', github: 'GitHub', dev: 'Dev provider' };

/** Role and plan a provider vouches for (only `dev`, for its demo learners); null keeps the profile's. */
export interface ProviderAccess {
  role: UserRoleClaim | null;
  plan: SubscriptionPlan | null;
}

/** Who the provider says signed in. */
export interface ProviderIdentity {
  provider: ProviderName;
  providerUserId: string;
  email: string;
  displayName: string;
  avatarUrl: string | null;
  access?: ProviderAccess;
}

export interface AttemptSecrets {
  state: string;
  codeVerifier: string;
  nonce: string | null;
}

/** Why a callback failed, in terms the API documents (details.reason). */
export class OAuthFailure extends Error {
  constructor(
    readonly reason: 'access_denied' | 'issuer_mismatch' | 'code_exchange_failed' | 'id_token_invalid' | 'no_verified_email' | 'provider_unavailable' | 'provider_not_configured',
    message: string,
  ) {
    super(message);
  }
}

export interface OAuthProvider {
  name: ProviderName;
  configured: boolean;
  /** OpenID Connect: an ID token is expected, so the attempt carries a nonce. */
  oidc: boolean;
  authorizationUrl(secrets: AttemptSecrets): Promise<URL>;
  /** Validates the authorization response (state, iss), exchanges the code with PKCE, reads the identity. */
  complete(callbackUrl: URL, secrets: AttemptSecrets): Promise<ProviderIdentity>;
}

/**
 * The providers, built from configuration only (static metadata, no discovery round trip on the
 * login path). `google` is OpenID Connect: the ID token is verified, nonce included. `github` is
 * plain OAuth 2.0: identity comes from its user and emails API. `dev` is OpenID Connect like
 * `google`, against the local provider `npm start` runs in development (`devSignIn`, from
 * src/auth/dev-identity-provider.ts); without it, `dev` is not configured.
 */
export function createProviders(config: Config, devSignIn?: DevSignInClient): Record<ProviderName, OAuthProvider> {
  const timeoutSeconds = config.OAUTH_HTTP_TIMEOUT_S;

  function configuration(server: client.ServerMetadata, id: string | undefined, secret: string | undefined, insecure = config.OAUTH_ALLOW_INSECURE_HTTP) {
    const configuration = new client.Configuration(server, id ?? 'unconfigured', secret ?? '');
    configuration.timeout = timeoutSeconds;
    if (insecure) client.allowInsecureRequests(configuration);
    return configuration;
  }

  const google = configuration(
    {
      issuer: config.GOOGLE_ISSUER,
      authorization_endpoint: config.GOOGLE_AUTHORIZATION_URL,
      token_endpoint: config.GOOGLE_TOKEN_URL,
      jwks_uri: config.GOOGLE_JWKS_URL,
    },
    config.GOOGLE_CLIENT_ID,
    config.GOOGLE_CLIENT_SECRET,
  );
  const github = configuration(
    {
      issuer: config.GITHUB_ISSUER,
      authorization_endpoint: config.GITHUB_AUTHORIZATION_URL,
      token_endpoint: config.GITHUB_TOKEN_URL,
    },
    config.GITHUB_CLIENT_ID,
    config.GITHUB_CLIENT_SECRET,
  );

  // Plain http by construction: it listens on loopback only, and only outside production.
  const dev = devSignIn
    ? configuration(
        { issuer: devSignIn.issuer, authorization_endpoint: devSignIn.authorizationEndpoint, token_endpoint: devSignIn.tokenEndpoint, jwks_uri: devSignIn.jwksUri },
        devSignIn.clientId,
        devSignIn.clientSecret,
        true,
      )
    : undefined;

  async function authorizationUrl(configuration: client.Configuration, scope: string, secrets: AttemptSecrets, extra: Record<string, string> = {}) {
    const parameters: Record<string, string> = {
      redirect_uri: config.AUTH_CALLBACK_URL,
      scope,
      state: secrets.state,
      code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
      code_challenge_method: 'S256',
      ...extra,
    };
    if (secrets.nonce) parameters.nonce = secrets.nonce;
    return client.buildAuthorizationUrl(configuration, parameters);
  }

  async function grant(configuration: client.Configuration, callbackUrl: URL, secrets: AttemptSecrets, oidc: boolean) {
    try {
      return await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: secrets.state,
        ...(oidc ? { expectedNonce: secrets.nonce ?? undefined, idTokenExpected: true } : {}),
      });
    } catch (error) {
      throw classify(error);
    }
  }

  /** The identity an OpenID Connect provider's verified ID token names. */
  async function oidcIdentity(provider: 'google' | 'dev', configuration: client.Configuration, callbackUrl: URL, secrets: AttemptSecrets): Promise<ProviderIdentity> {
    const tokens = await grant(configuration, callbackUrl, secrets, true);
    const claims = tokens.claims();
    if (!claims) throw new OAuthFailure('id_token_invalid', 'The provider returned no ID token');
    const email = typeof claims.email === 'string' ? claims.email : undefined;
    if (!email || claims.email_verified === false) {
      throw new OAuthFailure('no_verified_email', 'The provider did not share a verified email address');
    }
    return {
      provider,
      providerUserId: claims.sub,
      email,
      displayName: typeof claims.name === 'string' ? claims.name : '',
      avatarUrl: typeof claims.picture === 'string' ? claims.picture : null,
      // Only our own development provider is trusted to say who is an admin or premium.
      ...(provider === 'dev' && (claims.user_role !== undefined || claims.subscription_plan !== undefined)
        ? { access: { role: oneOf(USER_ROLES, claims.user_role), plan: oneOf(SUBSCRIPTION_PLANS, claims.subscription_plan) } }
        : {}),
    };
  }

  function devConfiguration() {
    if (!dev) throw new OAuthFailure('provider_not_configured', 'Sign-in with dev is not configured on this server');
    return dev;
  }

  return {
    google: {
      name: 'google',
      configured: Boolean(config.GOOGLE_CLIENT_ID),
      oidc: true,
      authorizationUrl: (secrets) => authorizationUrl(google, config.GOOGLE_SCOPES, secrets),
      complete: (callbackUrl, secrets) => oidcIdentity('google', google, callbackUrl, secrets),
    },
    dev: {
      name: 'dev',
      configured: dev !== undefined,
      oidc: true,
      // prompt=login: the login page every time, so a person can switch between demo learners.
      authorizationUrl: (secrets) => authorizationUrl(devConfiguration(), 'openid email profile', secrets, { prompt: 'login' }),
      complete: (callbackUrl, secrets) => oidcIdentity('dev', devConfiguration(), callbackUrl, secrets),
    },
    github: {
      name: 'github',
      configured: Boolean(config.GITHUB_CLIENT_ID),
      oidc: false,
      authorizationUrl: (secrets) => authorizationUrl(github, config.GITHUB_SCOPES, secrets),
      async complete(callbackUrl, secrets) {
        const tokens = await grant(github, callbackUrl, secrets, false);
        const api = config.GITHUB_API_URL.replace(/\/+$/, '');
        const user = await githubApi<{ id: number | string; login?: string; name?: string | null; avatar_url?: string | null }>(
          `${api}/user`, tokens.access_token, timeoutSeconds);
        const emails = await githubApi<{ email: string; primary: boolean; verified: boolean }[]>(
          `${api}/user/emails`, tokens.access_token, timeoutSeconds);
        const email = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified);
        if (!email) throw new OAuthFailure('no_verified_email', 'The provider did not share a verified email address');
        if (user.id === undefined || user.id === null) throw new OAuthFailure('code_exchange_failed', 'The provider returned no user id');
        return {
          provider: 'github',
          providerUserId: String(user.id),
          email: email.email,
          displayName: user.name || user.login || '',
          avatarUrl: user.avatar_url ?? null,
        };
      },
    },
  };
}

function oneOf<T extends string>(values: readonly T[], value: unknown): T | null {
  return values.find((v) => v === value) ?? null;
}

async function githubApi<T>(url: string, accessToken: string, timeoutSeconds: number): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/vnd.github+json', 'User-Agent': 'sparkpath-api' },
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    });
  } catch {
    throw new OAuthFailure('provider_unavailable', 'The identity provider could not be reached');
  }
  if (!response.ok) throw new OAuthFailure('code_exchange_failed', `The provider API answered ${response.status}`);
  return (await response.json()) as T;
}

function classify(error: unknown): OAuthFailure {
  if (error instanceof OAuthFailure) return error;
  const cause = (error as { cause?: unknown }).cause;
  const message = [error, cause].map((e) => (e instanceof Error ? e.message : '')).join(' ');
  if (/"iss" \(issuer\)/.test(message)) return new OAuthFailure('issuer_mismatch', 'The authorization response came from an unexpected issuer');
  if (error instanceof client.ResponseBodyError) return new OAuthFailure('code_exchange_failed', 'The provider refused the authorization code');
  if (/nonce|ID Token|id_token|JWT|signature/i.test(message)) return new OAuthFailure('id_token_invalid', 'The provider\'s ID token failed validation');
  const code = (error as { code?: string; cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
  if (error instanceof TypeError || code === 'ECONNREFUSED' || /fetch failed|timeout|aborted/i.test(message)) {
    return new OAuthFailure('provider_unavailable', 'The identity provider could not be reached');
  }
  return new OAuthFailure('code_exchange_failed', 'The authorization code could not be exchanged');
}
