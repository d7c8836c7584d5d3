import * as client from 'openid-client';
import type { Config } from '../config.js';

export const PROVIDERS = ['google', 'github'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** Who the provider says signed in. */
export interface ProviderIdentity {
  provider: ProviderName;
  providerUserId: string;
  email: string;
  displayName: string;
  avatarUrl: string | null;
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
  authorizationUrl(secrets: AttemptSecrets): Promise<URL>;
  /** Validates the authorization response (state, iss), exchanges the code with PKCE, reads the identity. */
  complete(callbackUrl: URL, secrets: AttemptSecrets): Promise<ProviderIdentity>;
}

/**
 * The two providers, built from configuration only (static metadata, no discovery round trip
 * on the login path). `google` is OpenID Connect: the ID token is verified, nonce included.
 * `github` is plain OAuth 2.0: identity comes from its user and emails API.
 */
export function createProviders(config: Config): Record<ProviderName, OAuthProvider> {
  const timeoutSeconds = config.OAUTH_HTTP_TIMEOUT_S;
  const insecure = config.OAUTH_ALLOW_INSECURE_HTTP;

  function configuration(server: client.ServerMetadata, id: string | undefined, secret: string | undefined) {
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

  async function authorizationUrl(configuration: client.Configuration, scope: string, secrets: AttemptSecrets) {
    const parameters: Record<string, string> = {
      redirect_uri: config.AUTH_CALLBACK_URL,
      scope,
      state: secrets.state,
      code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
      code_challenge_method: 'S256',
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

  return {
    google: {
      name: 'google',
      configured: Boolean(config.GOOGLE_CLIENT_ID),
      authorizationUrl: (secrets) => authorizationUrl(google, config.GOOGLE_SCOPES, secrets),
      async complete(callbackUrl, secrets) {
        const tokens = await grant(google, callbackUrl, secrets, true);
        const claims = tokens.claims();
        if (!claims) throw new OAuthFailure('id_token_invalid', 'The provider returned no ID token');
        const email = typeof claims.email === 'string' ? claims.email : undefined;
        if (!email || claims.email_verified === false) {
          throw new OAuthFailure('no_verified_email', 'The provider did not share a verified email address');
        }
        return {
          provider: 'google',
          providerUserId: claims.sub,
          email,
          displayName: typeof claims.name === 'string' ? claims.name : '',
          avatarUrl: typeof claims.picture === 'string' ? claims.picture : null,
        };
      },
    },
    github: {
      name: 'github',
      configured: Boolean(config.GITHUB_CLIENT_ID),
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
