import * as client from 'openid-client';
import { TOKEN_ISSUER_DEFAULT, type Config } from '../config.js';
import { ApiError, unauthorized, validationError } from '../http/api-error.js';
import { createAccessTokenSigner } from './access-tokens.js';
import { parseSigningKey, publicJwks } from './signing-key.js';
import { openWith, randomSecret, sealFor, sha256Hex } from './crypto.js';
import { createProviders, OAuthFailure, PROVIDERS, type OAuthProvider, type ProviderIdentity, type ProviderName } from './providers.js';
import { redirectPolicyFromConfig, resolveRedirect } from './redirect.js';
import type { SessionGrant, SessionStore, SignInResult } from './session-store.js';

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  expires_at: string;
  expires_in: number;
}

export interface CallbackResult {
  user: SignInResult['user'];
  session: TokenSet;
  is_new_user: boolean;
  redirect_url: string;
}

export interface CallbackInput {
  query: URLSearchParams;
  browserBinding: string | undefined;
  userAgent: string | null;
  ipAddress: string | null;
}

/**
 * Sign-in and session use cases. Decisions about sessions (rotation, reuse, lifetimes,
 * events) are SQL's; this layer speaks OAuth to the providers, mints tokens and hashes them.
 */
export function createAuthService(config: Config, store: SessionStore, providers: Record<ProviderName, OAuthProvider> = createProviders(config)) {
  const secret = config.SUPABASE_JWT_SECRET;
  const signingKey = config.JWT_SIGNING_KEY ? parseSigningKey(config.JWT_SIGNING_KEY, config.JWT_SIGNING_KEY_ID) : undefined;
  const signer = secret || signingKey
    ? createAccessTokenSigner({ secret, signingKey, audience: config.JWT_AUDIENCE, issuer: config.JWT_ISSUER ?? TOKEN_ISSUER_DEFAULT })
    : undefined;
  const jwks = JSON.stringify(publicJwks(signingKey));
  const redirectPolicy = redirectPolicyFromConfig(config);

  async function issue(grant: SessionGrant, refreshToken: string) {
    if (!signer) throw new ApiError('SERVICE_UNAVAILABLE', 'Token signing is not configured (SUPABASE_JWT_SECRET)');
    // The database fixed the expiry (now() + ACCESS_TOKEN_TTL_S, whole seconds); deriving iat
    // from it keeps exp - iat and expires_in exactly the configured lifetime, however long the
    // transaction took.
    const issuedAt = grant.access_expires_at - config.ACCESS_TOKEN_TTL_S;
    const accessToken = await signer.sign(grant.claims, grant.access_expires_at, issuedAt);
    const tokens: TokenSet = {
      access_token: accessToken,
      refresh_token: refreshToken,
      expires_at: new Date(grant.access_expires_at * 1000).toISOString(),
      expires_in: grant.access_expires_at - issuedAt,
    };
    return tokens;
  }

  /**
   * Signs in an identity (OAuth callback or the token CLI): one transaction in SQL. When the
   * identity comes with a role or plan its profile does not have yet (the token CLI's --role and
   * --plan, the dev provider's demo learners), they are written to the profile and the session's
   * first refresh issues the tokens, so their claims say so from the first request.
   */
  async function signIn(identity: Omit<ProviderIdentity, 'provider'> & { provider: string }, meta: { userAgent: string | null; ipAddress: string | null }) {
    const refreshToken = randomSecret(32);
    let tokens: TokenSet | undefined;
    const { access, ...profile } = identity;
    const result = await store.signIn(
      {
        ...profile,
        ...meta,
        refreshHash: sha256Hex(refreshToken),
        accessTtlSeconds: config.ACCESS_TOKEN_TTL_S,
        idleTimeoutSeconds: config.SESSION_IDLE_TIMEOUT_S,
        maxLifetimeSeconds: config.SESSION_MAX_LIFETIME_S,
      },
      async (grant) => {
        tokens = await issue(grant, refreshToken);
        return { accessHash: sha256Hex(tokens.access_token) };
      },
    );
    const changes = (access?.role != null && access.role !== result.claims.user_role) || (access?.plan != null && access.plan !== result.claims.subscription_plan);
    if (access && changes) {
      await store.setUserAccess(result.user.id, access.role, access.plan);
      return { result, tokens: await refresh(tokens!.refresh_token) };
    }
    return { result, tokens: tokens! };
  }

  /**
   * Rotates a refresh token. Each token has exactly one successor set: a retry of the same
   * token inside REFRESH_REUSE_GRACE_S (a lost response, another tab) receives that set again,
   * as Supabase Auth's reuse interval does; later, a used token is reuse and ends the session.
   * The set is stored sealed with a key derived from the old refresh token, which the
   * database never holds, so only a caller presenting that token can read it.
   */
  async function refresh(refreshToken: string): Promise<TokenSet> {
    const newRefreshToken = randomSecret(32);
    const refreshHash = sha256Hex(refreshToken);
    let tokens: TokenSet | undefined;
    const result = await store.refresh(
      {
        refreshHash,
        newRefreshHash: sha256Hex(newRefreshToken),
        graceSeconds: config.REFRESH_REUSE_GRACE_S,
        accessTtlSeconds: config.ACCESS_TOKEN_TTL_S,
      },
      async (grant) => {
        tokens = await issue(grant, newRefreshToken);
        const sealedSuccessor = config.REFRESH_REUSE_GRACE_S > 0 ? sealFor(refreshToken, JSON.stringify(tokens), refreshHash) : undefined;
        return { accessHash: sha256Hex(tokens.access_token), sealedSuccessor };
      },
    );
    if (result.status === 'replay') {
      const opened = openWith(refreshToken, result.sealed, refreshHash);
      if (opened === undefined) throw unauthorized('The refresh token is not valid; sign in again', { reason: 'refresh_token_invalid' });
      const successor = JSON.parse(opened) as TokenSet;
      // The same set, with expires_in counted from now.
      return { ...successor, expires_in: Math.max(0, Math.floor((Date.parse(successor.expires_at) - Date.now()) / 1000)) };
    }
    if (result.status !== 'ok') throw refreshRefused(result.status, result.reason);
    return tokens!;
  }

  return {
    /** The providers /auth/login accepts here, in PROVIDERS order. */
    configuredProviders: PROVIDERS.filter((name) => providers[name].configured),
    /** The public keys of ES256 access tokens (empty with HS256 only). */
    jwks,
    redirectPolicy,

    /** Starts an attempt; returns where to send the browser and the browser-binding value. */
    async login(providerName: ProviderName, redirect: string | string[] | undefined, existingBinding: string | undefined) {
      const provider = providers[providerName];
      if (!provider.configured) {
        throw validationError(`Sign-in with ${providerName} is not configured on this server`, { reason: 'provider_not_configured', provider: providerName });
      }
      const redirectUrl = resolveRedirect(redirect, redirectPolicy);
      // One binding per browser, reused across attempts so two tabs can sign in at once.
      const binding = existingBinding && /^[A-Za-z0-9_-]{43}$/.test(existingBinding) ? existingBinding : randomSecret(32);
      const secrets = {
        state: client.randomState(),
        codeVerifier: client.randomPKCECodeVerifier(),
        nonce: provider.oidc ? client.randomNonce() : null,
      };
      await store.startOAuthAttempt({
        provider: providerName,
        stateHash: sha256Hex(secrets.state),
        codeVerifier: secrets.codeVerifier,
        nonce: secrets.nonce,
        redirectUrl,
        browserHash: sha256Hex(binding),
        ttlSeconds: config.OAUTH_ATTEMPT_TTL_S,
      });
      return { location: (await provider.authorizationUrl(secrets)).href, binding };
    },

    async callback(input: CallbackInput): Promise<{ body: CallbackResult; tokens: TokenSet }> {
      const state = single(input.query, 'state');
      if (!state) throw validationError('The state parameter is missing', { reason: 'missing_state' });
      // Consumed before anything else: a state is good for exactly one callback, success or not.
      const attempt = await store.consumeOAuthAttempt(sha256Hex(state), input.browserBinding ? sha256Hex(input.browserBinding) : null);
      refuseProviderError(input.query);
      if (!single(input.query, 'code')) throw validationError('The code parameter is missing', { reason: 'missing_code' });
      const provider = providers[attempt.provider as ProviderName];
      const callbackUrl = new URL(config.AUTH_CALLBACK_URL);
      callbackUrl.search = input.query.toString();
      let identity;
      try {
        identity = await provider.complete(callbackUrl, { state, codeVerifier: attempt.code_verifier, nonce: attempt.nonce });
      } catch (failure) {
        if (failure instanceof OAuthFailure) {
          if (failure.reason === 'provider_unavailable') {
            throw new ApiError('SERVICE_UNAVAILABLE', failure.message, { reason: failure.reason }, { 'Retry-After': '5' });
          }
          throw unauthorized(failure.message, { reason: failure.reason });
        }
        throw failure;
      }
      const { result, tokens } = await signIn(identity, { userAgent: input.userAgent, ipAddress: input.ipAddress });
      return {
        body: { user: result.user, session: tokens, is_new_user: result.is_new_user, redirect_url: attempt.redirect_url },
        tokens,
      };
    },

    refresh,

    /**
     * Signs out the token whose verified claims these are: its session here ends, or (a token
     * without one: another issuer's, or none named) the token is recorded and refused until it
     * expires. PT401 (refused as 401) when it was already signed out.
     */
    async logout(claims: string) {
      await store.signOut(claims);
    },

    signIn,
    cleanup: () => store.cleanup(),
  };
}

export type AuthService = ReturnType<typeof createAuthService>;

/** A callback parameter, at most once (a repeated one is refused). */
export function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw validationError(`The ${name} parameter must appear once`, { reason: `repeated_${name}` });
  return values[0] || undefined;
}

/** A callback carrying the provider's `error` (the user cancelled, or it refused) ends the sign-in. */
export function refuseProviderError(query: URLSearchParams): void {
  const error = single(query, 'error');
  if (!error) return;
  throw unauthorized(error === 'access_denied' ? 'Sign-in was cancelled at the provider' : 'The provider refused the sign-in', {
    reason: 'access_denied',
    provider_error: error.slice(0, 64),
  });
}

/** Why a refresh token was refused, as POST /auth/refresh answers it (401, details.reason). */
export function refreshRefused(status: 'invalid' | 'expired' | 'revoked', reason?: string): ApiError {
  const messages = {
    invalid: 'The refresh token is not valid; sign in again',
    expired: 'The session has expired; sign in again',
    revoked: 'The session has been revoked; sign in again',
  } as const;
  return unauthorized(messages[status], { reason: reason ?? `refresh_token_${status}` });
}
