import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * Two real local identity providers for the sign-in tests, both oidc-provider instances:
 *  - `google`: OpenID Connect (ID token with nonce, RFC 9207 `iss` in the response);
 *  - `github`: plain OAuth 2.0 (no openid scope, opaque access token for a resource) plus a
 *    GitHub-shaped `/user` and `/user/emails` API served next to it.
 * Interactions are answered without a form: the account in `nextAccount` signs in and consents,
 * or the user "cancels" when `deny` is set.
 */
export interface TestAccount {
  id: string;
  email: string;
  name: string;
  picture?: string;
  emailVerified?: boolean;
}

export interface FakeProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  nextAccount: string;
  deny: boolean;
  accounts: Map<string, TestAccount>;
  close(): Promise<void>;
}

const GITHUB_RESOURCE = 'https://api.github.test';

export async function startFakeProvider(kind: 'google' | 'github', redirectUri: string): Promise<FakeProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, TestAccount>();
  const fixture: FakeProvider = {
    issuer,
    clientId: `${kind}-client`,
    clientSecret: `${kind}-secret-0123456789abcdef0123456789abcdef`,
    nextAccount: 'alice',
    deny: false,
    accounts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: fixture.clientId,
        client_secret: fixture.clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    cookies: { keys: ['sparkpath-test-cookie-key'] },
    pkce: { required: () => true },
    // Like Google: the ID token itself carries email and profile claims.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    // GitHub's scopes are not OpenID scopes: they belong to the (resource) API.
    ...(kind === 'google' ? { scopes: ['openid', 'email', 'profile'] } : {}),
    features: {
      devInteractions: { enabled: false },
      ...(kind === 'github'
        ? {
            resourceIndicators: {
              enabled: true,
              defaultResource: () => GITHUB_RESOURCE,
              useGrantedResource: () => true,
              getResourceServerInfo: () => ({ scope: 'read:user user:email', accessTokenFormat: 'opaque' }),
            },
          }
        : {}),
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: account.email,
          email_verified: account.emailVerified ?? true,
          name: account.name,
          picture: account.picture,
        }),
      };
    },
  });
  provider.on("server_error", (_ctx: unknown, error: unknown) => console.error(`[${kind} provider]`, error));
  const handler = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    if (fixture.deny) {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user cancelled' }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = fixture.nextAccount;
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    const scope = String(details.params.scope ?? '');
    if (kind === 'google') grant.addOIDCScope(scope);
    else grant.addResourceScope(GITHUB_RESOURCE, scope);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  async function githubApi(req: IncomingMessage, res: ServerResponse) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ? await provider.AccessToken.find(bearer) : undefined;
    const account = token ? accounts.get(token.accountId) : undefined;
    res.setHeader('Content-Type', 'application/json');
    if (!account) {
      res.statusCode = 401;
      res.end('{"message":"Bad credentials"}');
      return;
    }
    const numericId = Number.parseInt(account.id.replace(/\D/g, '') || '0', 10) + 1000;
    if (req.url === '/user') {
      res.end(JSON.stringify({ id: numericId, login: account.id, name: account.name, avatar_url: account.picture ?? null }));
    } else {
      res.end(JSON.stringify([
        { email: `noreply-${account.id}@users.github.test`, primary: false, verified: true },
        { email: account.email, primary: true, verified: account.emailVerified ?? true },
      ]));
    }
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const run = path.startsWith('/interaction/')
      ? interaction(req, res)
      : kind === 'github' && (path === '/user' || path === '/user/emails')
        ? githubApi(req, res)
        : Promise.resolve(handler(req, res));
    run.catch((error: unknown) => {
      console.error(`[${kind} provider]`, error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  });
  return fixture;
}

/** Environment that points the API at the two fake providers. */
export function providerEnv(google: FakeProvider, github: FakeProvider, callbackUrl: string): Record<string, string> {
  return {
    AUTH_CALLBACK_URL: callbackUrl,
    OAUTH_ALLOW_INSECURE_HTTP: 'true',
    GOOGLE_CLIENT_ID: google.clientId,
    GOOGLE_CLIENT_SECRET: google.clientSecret,
    GOOGLE_ISSUER: google.issuer,
    GOOGLE_AUTHORIZATION_URL: `${google.issuer}/auth`,
    GOOGLE_TOKEN_URL: `${google.issuer}/token`,
    GOOGLE_JWKS_URL: `${google.issuer}/jwks`,
    GITHUB_CLIENT_ID: github.clientId,
    GITHUB_CLIENT_SECRET: github.clientSecret,
    GITHUB_ISSUER: github.issuer,
    GITHUB_AUTHORIZATION_URL: `${github.issuer}/auth`,
    GITHUB_TOKEN_URL: `${github.issuer}/token`,
    GITHUB_API_URL: github.issuer,
  };
}

/** Follows the provider's redirects like a browser (with its own cookie jar) until it returns to `callbackUrl`. */
export async function followProvider(location: string, callbackUrl: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = location;
  for (let hop = 0; hop < 10; hop += 1) {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const next = res.headers.get('location');
    if (!next) throw new Error(`provider stopped at ${res.status}: ${(await res.text()).slice(0, 300)}`);
    const target = new URL(next, url);
    if (target.href.startsWith(callbackUrl)) return target;
    url = target.href;
  }
  throw new Error('too many provider redirects');
}
