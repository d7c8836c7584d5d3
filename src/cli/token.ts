/**
 * `npm run token -- --email alice@example.com [--role learner|admin] [--plan free|premium] [--name "Alice"]`
 *
 * Development helper: creates the user if needed (provider `dev`, keyed by the email), opens a
 * real session and prints a working access and refresh token as JSON. Refused when
 * NODE_ENV=production. Uses the same database and secret as `npm start` (DATABASE_URL or the
 * embedded database; SUPABASE_JWT_SECRET or the generated development secret).
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { loadOrCreateDevJwtSecret } from '../context/dev-secret.js';
import { SUBSCRIPTION_PLANS, USER_ROLES } from '../context/permissions.js';
import { openDatabase, prepareDatabase } from '../db/database.js';
import { createDependencies } from '../deps.js';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let config;
try {
  config = loadConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}
if (config.NODE_ENV === 'production') fail('npm run token is refused when NODE_ENV=production');

const USAGE = 'usage: npm run token -- --email alice@example.com [--role learner|admin] [--plan free|premium] [--name "Alice"]';
let values: { email?: string; role?: string; plan?: string; name?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { email: { type: 'string' }, role: { type: 'string' }, plan: { type: 'string' }, name: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  }));
} catch (error) {
  // An unknown or malformed option: say which, then how to call it (no stack trace).
  fail(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const email = values.email?.trim().toLowerCase();
if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) fail(USAGE);
if (values.role && !USER_ROLES.some((role) => role === values.role)) fail(`--role must be one of ${USER_ROLES.join(', ')}`);
if (values.plan && !SUBSCRIPTION_PLANS.some((plan) => plan === values.plan)) fail(`--plan must be one of ${SUBSCRIPTION_PLANS.join(', ')}`);

const database = await openDatabase(config);
let deps: ReturnType<typeof createDependencies> | undefined;
try {
  await prepareDatabase(database.url, { seed: config.SEED_DEMO_CONTENT, serviceAuthSecret: config.SERVICE_AUTH_SECRET, enableLocalApiLogin: database.embedded });
  if (!config.SUPABASE_JWT_SECRET && !config.JWT_JWKS_URL) {
    config = { ...config, SUPABASE_JWT_SECRET: await loadOrCreateDevJwtSecret(config.EMBEDDED_PG_DATA_DIR) };
  }
  // An operator's tool, like the content CLI: the owner connection (setting a role and plan is
  // not something the API's login role may do).
  deps = createDependencies(config, database.url);
  const { result, tokens } = await deps.auth.signIn(
    {
      provider: 'dev',
      providerUserId: email,
      email,
      displayName: values.name ?? email.split('@')[0],
      avatarUrl: null,
      access: { role: USER_ROLES.find((role) => role === values.role) ?? null, plan: SUBSCRIPTION_PLANS.find((plan) => plan === values.plan) ?? null },
    },
    { userAgent: 'npm run token', ipAddress: null },
  );
  console.log(JSON.stringify({ user_id: result.user.id, email, is_new_user: result.is_new_user, session_id: result.session_id, ...tokens }, null, 2));
  console.error(`\ncurl -H "Authorization: Bearer ${tokens.access_token.slice(0, 16)}…" http://${config.HOST}:${config.PORT}/auth/session`);
} finally {
  await deps?.close();
  await database.stop();
}
