import { serve } from '@hono/node-server';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import { startDevIdentityProvider, type DevIdentityProvider } from './auth/dev-identity-provider.js';
import { ConfigError, EXPLORER_CALLBACK_PATH, loadConfig, PUBLIC_BASE_URL_DEFAULT, TOKEN_ISSUER_DEFAULT, type Config } from './config.js';
import { loadOrCreateDevJwtSecret } from './context/dev-secret.js';
import { postgrestRoleSetting } from './db/data-api-rpc.js';
import { openDatabase, prepareDatabase } from './db/database.js';
import { createDependencies, type Dependencies } from './deps.js';
import { createLogger } from './logger.js';

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.LOG_LEVEL);

  // The server stops PostgreSQL itself, after in-flight requests are answered.
  const database = await openDatabase(config, (line) => logger.debug({ postgres: line }), { handleSignals: false });
  if (database.apiUrl === database.url) {
    if (config.NODE_ENV === 'production') {
      console.error('Invalid configuration: DATABASE_API_URL is required when NODE_ENV=production and DATABASE_URL is set (the API never connects as the owner role; docs/configuration.md)');
      process.exit(1);
    }
    logger.warn('DATABASE_API_URL is not set: the API connects as the owner role of DATABASE_URL (refused in production; docs/configuration.md)');
  }
  // The owner connection migrates and records start-up facts; the API then connects as its login role.
  const { applied, seeded } = await prepareDatabase(database.url, {
    seed: config.SEED_DEMO_CONTENT,
    serviceAuthSecret: config.SERVICE_AUTH_SECRET,
    enableLocalApiLogin: database.embedded,
  });
  logger.info({ embedded: database.embedded, migrations_applied: applied.length, demo_content_loaded: seeded }, 'database ready');

  // Development only: production must bring its own keys (a generated secret on disk would be
  // accepted for HS256 tokens next to a configured signing key).
  if (config.NODE_ENV !== 'production' && !config.SUPABASE_JWT_SECRET && !config.JWT_JWKS_URL) {
    config = { ...config, SUPABASE_JWT_SECRET: await loadOrCreateDevJwtSecret(config.EMBEDDED_PG_DATA_DIR) };
    logger.warn('SUPABASE_JWT_SECRET is not set: using a generated development secret');
  }

  // Development without a real provider: sign in on the first start (docs/auth.md#local-sign-in-the-dev-provider).
  let devSignIn: DevIdentityProvider | undefined;
  if (config.DEV_SIGN_IN) {
    devSignIn = await startDevIdentityProvider({ redirectUri: config.AUTH_CALLBACK_URL });
    logger.info({ issuer: devSignIn.client.issuer, callback: config.AUTH_CALLBACK_URL }, 'dev sign-in: a local OpenID provider is running (provider "dev")');
  }

  const deps = createDependencies(config, database.apiUrl, { devSignIn: devSignIn?.client });
  await reportConnection(deps, logger);
  const app = createApp({ ...deps, logger });

  // The session cleanup routine (private.cleanup_sessions; pg_cron can run the same function).
  const cleanupTimer =
    config.SESSION_CLEANUP_INTERVAL_S > 0
      ? setInterval(() => {
          deps.cleanup().then(
            (result) => logger.info({ cleanup: result }, 'session cleanup'),
            (error: unknown) => logger.warn({ err: error }, 'session cleanup failed'),
          );
        }, config.SESSION_CLEANUP_INTERVAL_S * 1000)
      : undefined;
  cleanupTimer?.unref();

  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
    // The explorer on the callback's host: the sign-in's browser-binding cookie is kept per host name.
    const callback = new URL(config.AUTH_CALLBACK_URL);
    const explorer = callback.pathname === EXPLORER_CALLBACK_PATH ? `${callback.origin}/explore` : undefined;
    logger.info({ url: `http://${info.address.includes(':') ? `[${info.address}]` : info.address}:${info.port}`, explorer }, 'Sparkpath API listening');
  });

  // Requests Node's HTTP parser refuses never reach Hono (headers over 16 KB, malformed request
  // lines or header names): answer them in the error envelope too instead of a bare status line.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: import('node:stream').Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const body = JSON.stringify({
      error: {
        code: 'VALIDATION_ERROR',
        message: tooLarge ? 'Request line and headers exceed the server limit (16 KB)' : 'Malformed HTTP request',
        details: {},
      },
    });
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(cleanupTimer);
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // Stop accepting; close() resolves once every in-flight request has been answered.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const forced = setTimeout(() => {
      logger.warn('in-flight requests did not finish within 10 s; closing connections');
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    }, 10_000);
    await closed;
    clearTimeout(forced);
    await deps.close();
    await devSignIn?.close();
    await database.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/**
 * Says at start-up how the API talks to the database, and what a transaction pooler (Supavisor's
 * port 6543) changes: prepared statements off; nothing else to turn off, as the API keeps no
 * session state (it LISTENs to nothing, takes no session locks; one statement per request). A pooler also
 * drops the start-up parameters the pool sends: a setting the server did not receive is named
 * with the statement that sets it on the API's login role.
 */
async function reportConnection(deps: Dependencies, logger: Logger) {
  const { prepare, transactionPooler, reason } = deps.connection;
  logger.info({ prepared_statements: prepare, transaction_pooler: transactionPooler, reason }, 'database connection');
  if (transactionPooler) {
    logger.info('transaction pooler: the API listens for no notifications and keeps no session state, so nothing else needs turning off');
    if (prepare) logger.warn('DB_PREPARE=true behind a transaction pooler: prepared statements will fail; use DB_PREPARE=auto or false');
  }
  const missing = await deps.pool.missingSettings().catch(() => []);
  if (missing.length > 0) {
    logger.warn(
      { missing, fix: missing.map(({ name, expected }) => `alter role current_user set "${name}" = '${expected}'`) },
      'the database did not receive these connection settings (a transaction pooler drops them): run the fix as the API login role',
    );
  }
  if (deps.config.DATA_API === 'supabase') {
    logger.info({ data_api: deps.config.DATA_API_URL }, 'requests reach the api functions through the Data API, as their callers');
    // PostgREST's sessions cannot be handed the settings the pool hands every connection.
    const handed = [
      { name: 'sparkpath.token_issuer', expected: deps.config.JWT_ISSUER ?? TOKEN_ISSUER_DEFAULT, unset: TOKEN_ISSUER_DEFAULT },
      { name: 'sparkpath.home_page', expected: deps.config.PUBLIC_BASE_URL, unset: PUBLIC_BASE_URL_DEFAULT },
    ];
    for (const { name, expected, unset } of handed) {
      const seen = await postgrestRoleSetting(deps.pool, name).catch(() => undefined);
      if (seen !== undefined && (seen ?? unset) !== expected) {
        logger.warn(
          { setting: name, expected, actual: seen, fix: `alter role authenticator set "${name}" = '${expected}'` },
          'the Data API\'s sessions do not get this setting the API hands its own connections: run the fix as the owner role (docs/supabase.md, section 7)',
        );
      }
    }
  }
}

main().catch((error: unknown) => {
  console.error('Sparkpath failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
