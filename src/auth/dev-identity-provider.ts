import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import type { SubscriptionPlan, UserRoleClaim } from '../context/permissions.js';

/**
 * The local OpenID provider behind sign-in provider `dev` (docs/auth.md#local-sign-in-the-dev-provider).
 *
 * `npm start` runs it in development when no real provider is configured (DEV_SIGN_IN), so a
 * person can sign in on the first start. It is a real OpenID Connect provider (oidc-provider,
 * certified by the OpenID Foundation) on a loopback port: the API talks to it exactly as to
 * Google (authorization code + PKCE S256, state, nonce, ID token signature and claims), and only
 * its login page is ours: it lists the demo learners and accepts any email address, no password.
 * Nothing is kept across restarts (keys, client secret and grants are made at start).
 */

/** The learners the login page offers; any other address signs in as a free learner. */
export interface DemoAccount {
  email: string;
  name: string;
  role: UserRoleClaim;
  plan: SubscriptionPlan;
  description: string;
}

export const DEMO_ACCOUNTS: readonly DemoAccount[] = [
  { email: 'learner@example.com', name: 'Lena Learner', role: 'learner', plan: 'free', description: 'Learner on the free plan' },
  { email: 'premium@example.com', name: 'Priya Premium', role: 'learner', plan: 'premium', description: 'Learner on the premium plan' },
  { email: 'admin@example.com', name: 'Ada Admin', role: 'admin', plan: 'free', description: 'Administrator: drafts, snapshots, no rate limit' },
];

/** How the API reaches it: static metadata, as for Google, so the login path makes no discovery call. */
export interface DevSignInClient {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  clientId: string;
  clientSecret: string;
}

export interface DevIdentityProvider {
  client: DevSignInClient;
  close(): Promise<void>;
}

const EMAIL = /^[^\s@<>"']{1,64}@[^\s@<>"']+\.[^\s@<>"']+$/;

/**
 * Starts the provider on 127.0.0.1 (`port` 0: any free port), its one client registered with
 * `redirectUri` (AUTH_CALLBACK_URL).
 *
 * @example
 *   const devSignIn = await startDevIdentityProvider({ redirectUri: config.AUTH_CALLBACK_URL });
 *   const deps = createDependencies(config, databaseUrl, { devSignIn: devSignIn.client });
 */
export async function startDevIdentityProvider(options: { redirectUri: string; port?: number }): Promise<DevIdentityProvider> {
  // Loaded here, not at the top: production never loads the package (it is used for this mode only).
  const { default: Provider } = await import('oidc-provider');
  const { createMemoryAdapter } = await import('oidc-provider/lib/adapters/memory_adapter.js');
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client: DevSignInClient = {
    issuer,
    authorizationEndpoint: `${issuer}/auth`,
    tokenEndpoint: `${issuer}/token`,
    jwksUri: `${issuer}/jwks`,
    clientId: 'sparkpath-dev',
    clientSecret: randomBytes(32).toString('base64url'),
  };
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: randomBytes(8).toString('hex') };

  const provider = new Provider(issuer, {
    // The package's own in-memory store, named explicitly: here its state is meant to end with the
    // process (the implicit default prints a warning written for production deployments).
    adapter: createMemoryAdapter(),
    // A sign-in takes seconds; nothing here needs to outlive one.
    ttl: { Interaction: 600, Session: 600, Grant: 600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'profile'],
    // The ID token itself carries the profile, as Google's does; role and plan are this
    // provider's own claims (the demo learners'), which the API writes to the profile.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'user_role', 'subscription_plan'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, id: string) {
      if (!EMAIL.test(id)) return undefined;
      const demo = DEMO_ACCOUNTS.find((account) => account.email === id);
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: id,
          email_verified: true,
          name: demo?.name ?? nameFromEmail(id),
          ...(demo ? { user_role: demo.role, subscription_plan: demo.plan } : {}),
        }),
      };
    },
  });
  const oidc = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined) {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return page(res, 400, messagePage('This sign-in page has expired. Go back to the app and start again.'));
    if (req.method === 'GET' && action === undefined) return page(res, 200, loginPage(uid));
    if (req.method !== 'POST') return page(res, 405, messagePage('Not allowed.'));
    if (action === 'cancel') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user cancelled the sign-in' }, { mergeWithLastSubmission: false });
      return;
    }
    if (action !== 'login') return page(res, 404, messagePage('Not found.'));
    const email = String(new URLSearchParams(await readBody(req)).get('email') ?? '').trim().toLowerCase();
    if (!EMAIL.test(email)) return page(res, 400, loginPage(uid, 'Type an email address such as sam@example.com.', email));
    const grant = new provider.Grant({ accountId: email, clientId: client.clientId });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: email }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const match = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|cancel))?\/?(?:\?.*)?$/.exec(req.url ?? '/');
    const handled = match ? interaction(req, res, match[1], match[2]) : Promise.resolve(oidc(req, res));
    handled.catch(() => {
      // Typically an interaction cookie that expired or belongs to another attempt.
      if (!res.headersSent) page(res, 400, messagePage('This sign-in page has expired. Go back to the app and start again.'));
      else res.end();
    });
  });

  return {
    client,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function nameFromEmail(email: string): string {
  const local = email.split('@')[0].replace(/[._+-]+/g, ' ').trim();
  return local.replace(/\b\p{L}/gu, (letter) => letter.toUpperCase()) || email;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > 4096) req.destroy(new Error('body too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function page(res: ServerResponse, status: number, html: string) {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    // No form-action: browsers apply it to the redirects that follow a form post, and the last one
    // goes to the app's callback on another origin.
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  });
  res.end(html);
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid: string, error?: string, email = ''): string {
  const action = (name: string) => `/interaction/${uid}/${name}`;
  const accounts = DEMO_ACCOUNTS.map(
    (account) => `
      <form method="post" action="${action('login')}">
        <input type="hidden" name="email" value="${escape(account.email)}">
        <button class="account" type="submit" data-email="${escape(account.email)}">
          <span class="avatar avatar-${account.role}-${account.plan}">${escape(account.name[0])}</span>
          <span class="who"><strong>${escape(account.name)}</strong><small>${escape(account.email)}</small></span>
          <span class="badge">${account.role === 'admin' ? 'Admin' : account.plan === 'premium' ? 'Premium' : 'Free'}</span>
        </button>
      </form>`,
  ).join('');
  return shell(
    'Sign in',
    `<h1>Sign in to Sparkpath</h1>
     <p class="lead">Choose a demo learner, or sign in as anyone with an email address. No password: this is the local development sign-in.</p>
     <div class="accounts">${accounts}</div>
     <div class="divider"><span>or any email</span></div>
     <form method="post" action="${action('login')}" class="email">
       <label for="email">Email address</label>
       <div class="row">
         <input id="email" name="email" type="email" autocomplete="email" placeholder="sam@example.com" value="${escape(email)}" required>
         <button type="submit" class="primary">Continue</button>
       </div>
       ${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
     </form>
     <form method="post" action="${action('cancel')}" class="cancel"><button type="submit" class="link">Cancel and go back</button></form>`,
  );
}

function messagePage(message: string): string {
  return shell('Sign in', `<h1>Sign in to Sparkpath</h1><p class="lead">${escape(message)}</p>`);
}

function shell(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Sparkpath dev sign-in</title>
<style>
  :root { color-scheme: light; --ink: #0f172a; --muted: #64748b; --line: #e2e8f0; --brand: #4f46e5; }
  * { box-sizing: border-box; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
         background: radial-gradient(1200px 600px at 10% -10%, #e0e7ff 0, transparent 60%), radial-gradient(900px 500px at 110% 110%, #fce7f3 0, transparent 55%), #f8fafc; }
  main { width: min(440px, calc(100vw - 32px)); background: #fff; border: 1px solid var(--line); border-radius: 16px; padding: 32px; box-shadow: 0 20px 50px -20px rgb(15 23 42 / 0.25); }
  .brand { display: flex; align-items: center; gap: 8px; font-weight: 700; color: var(--brand); margin-bottom: 18px; }
  .brand i { width: 22px; height: 22px; border-radius: 7px; background: linear-gradient(135deg, #6366f1, #ec4899); display: inline-block; }
  .brand small { margin-left: auto; font-weight: 600; font-size: 11px; letter-spacing: .06em; text-transform: uppercase; color: #b45309; background: #fef3c7; padding: 2px 8px; border-radius: 99px; }
  h1 { font-size: 22px; margin: 0 0 6px; }
  .lead { color: var(--muted); margin: 0 0 20px; }
  .accounts { display: grid; gap: 8px; }
  .accounts form { margin: 0; }
  .account { width: 100%; display: flex; align-items: center; gap: 12px; padding: 10px 12px; border: 1px solid var(--line); border-radius: 12px; background: #fff; cursor: pointer; text-align: left; font: inherit; color: inherit; }
  .account:hover, .account:focus-visible { border-color: #a5b4fc; background: #f5f7ff; outline: none; }
  .avatar { width: 36px; height: 36px; border-radius: 50%; display: grid; place-items: center; color: #fff; font-weight: 700; background: #0ea5e9; flex: none; }
  .avatar-learner-premium { background: #a855f7; } .avatar-admin-free, .avatar-admin-premium { background: #f97316; }
  .who { display: grid; flex: 1; } .who small { color: var(--muted); }
  .badge { font-size: 12px; font-weight: 600; color: #334155; background: #f1f5f9; border-radius: 99px; padding: 2px 10px; }
  .divider { display: flex; align-items: center; gap: 12px; color: var(--muted); font-size: 13px; margin: 22px 0 14px; }
  .divider::before, .divider::after { content: ""; height: 1px; background: var(--line); flex: 1; }
  label { display: block; font-weight: 600; font-size: 13px; margin-bottom: 6px; }
  .row { display: flex; gap: 8px; }
  input { flex: 1; min-width: 0; font: inherit; padding: 9px 12px; border: 1px solid #cbd5e1; border-radius: 10px; }
  input:focus { outline: 2px solid #a5b4fc; border-color: var(--brand); }
  .primary { font: inherit; font-weight: 600; color: #fff; background: var(--brand); border: 0; border-radius: 10px; padding: 9px 16px; cursor: pointer; }
  .primary:hover { background: #4338ca; }
  .error { color: #b91c1c; margin: 8px 0 0; font-size: 13px; }
  .cancel { margin: 18px 0 0; text-align: center; }
  .link { font: inherit; font-size: 13px; color: var(--muted); background: none; border: 0; cursor: pointer; text-decoration: underline; }
</style></head>
<body><main><div class="brand"><i></i>Sparkpath<small>local dev sign-in</small></div>${body}</main></body></html>`;
}
