import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { createApp } from '../../src/app.js';
import { parseSigningKey, publicJwks } from '../../src/auth/signing-key.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDependencies, type Dependencies } from '../../src/deps.js';
import { apiLoginUrl, writeServiceAuthDigest } from '../../src/db/login-role.js';
import type { Rpc } from '../../src/db/rpc.js';
import { createLogger } from '../../src/logger.js';
import { authenticatorUrl, startPostgrest, supabaseKey, type Postgrest } from '../doubles/postgrest.js';
import { createContractChecker } from './contract.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { TEST_JWT_SECRET, TEST_SERVICE_SECRET } from './tokens.js';

/**
 * Every response a test receives is checked against the app's own OpenAPI document first:
 * a body or status the contract does not declare fails the test that caused it.
 */
function checkContracts(app: ReturnType<typeof createApp>) {
  let check: ReturnType<typeof createContractChecker> | undefined;
  const request = app.request.bind(app);
  app.request = (async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    check ??= createContractChecker(app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'test', version: '0' } }) as never);
    const input = args[0];
    const url = typeof input === 'string' ? input : input instanceof Request ? input.url : String(input);
    const method = (input instanceof Request ? input.method : (args[1] as RequestInit | undefined)?.method) ?? 'GET';
    check(method.toUpperCase(), url, response.status, response.headers.get('content-type'), await response.clone().text());
    return response;
  }) as typeof app.request;
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  /** `db.url` is the owner connection (fixtures, assertions); the app connects with `apiUrl`. */
  db: TestDatabase;
  /** The API's least-privilege login role on this database (DATABASE_API_URL). */
  apiUrl: string;
  config: Config;
  /** What the app was built from, exactly as `npm start` builds it. */
  deps: Dependencies;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  /** With DATA_API=supabase: the PostgREST double the app's requests go through (DATA_API_URL). */
  dataApi?: Postgrest;
  close(): Promise<void>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The transport the HTTP suite runs through: each vitest project provides its own (vitest.config.ts). */
    dataApi: 'postgres' | 'supabase';
  }
}

/**
 * The real application on its own fresh database (or `options.database`, which it then owns),
 * composed by createDependencies as `npm start` composes it; requests go through `app.request()`.
 * `env` overrides configuration variables exactly as the process environment would; the other
 * `options` are createDependencies' (the dev sign-in).
 *
 * Rate limits are on, as in production. Requests made through `app.request()` have no socket,
 * so every anonymous request of a file shares one address; the budgets are raised (through the
 * same variables an operator sets) so that a suite's hundreds of requests never reach them.
 * The rate-limit tests set their own budgets.
 *
 * The transport is the vitest project's (`inject('dataApi')`), unless `env` names DATA_API. With
 * `supabase` the app's requests go through a PostgREST double (test/doubles/postgrest.ts) on the
 * same database, as a Supabase project's Data API: it trusts what such a project would, the JWT
 * secret, the project's signing keys (JWT_JWKS_URL) and this API's own ES256 key, which a
 * deployment adds to the project's keys (docs/supabase.md, section 5); an anon key that is not
 * a JWT is a publishable key to its gateway. A JWT_ISSUER of the test's own is set on the
 * project's `authenticator` role, as the deploy guide says.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  { database, ...options }: { database?: TestDatabase } & Parameters<typeof createDependencies>[2] = {},
): Promise<TestApp> {
  const db = database ?? (await createTestDatabase());
  const apiUrl = apiLoginUrl(db.url);
  let settings: Record<string, string | undefined> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    SUPABASE_JWT_SECRET: TEST_JWT_SECRET,
    SERVICE_AUTH_SECRET: TEST_SERVICE_SECRET,
    DATABASE_URL: db.url,
    DATABASE_API_URL: apiUrl,
    RATE_LIMIT_ANONYMOUS: '100000',
    RATE_LIMIT_FREE_USER: '100000',
    RATE_LIMIT_PREMIUM_USER: '100000',
    DATA_API: inject('dataApi') ?? 'postgres',
    ...env,
  };
  let dataApi: Postgrest | undefined;
  if (settings.DATA_API === 'supabase' && !settings.DATA_API_URL) {
    const planned = loadConfig({ ...settings, DATA_API: 'postgres' });
    const anonKey = planned.SUPABASE_ANON_KEY ?? (await supabaseKey('anon', planned.SUPABASE_JWT_SECRET ?? TEST_JWT_SECRET));
    // What docs/supabase.md (section 7) has a deployment with an issuer of its own, or a public
    // home page of its own (the xAPI export's), run once.
    const setOnAuthenticator = (name: string, value: string) =>
      db.sql.unsafe(`alter role authenticator in database ${db.sql.options.database} set "${name}" = '${value.replaceAll("'", "''")}'`);
    if (planned.JWT_ISSUER) await setOnAuthenticator('sparkpath.token_issuer', planned.JWT_ISSUER);
    if (settings.PUBLIC_BASE_URL) await setOnAuthenticator('sparkpath.home_page', planned.PUBLIC_BASE_URL);
    dataApi = await startPostgrest({
      databaseUrl: authenticatorUrl(db.url),
      jwtSecret: planned.SUPABASE_JWT_SECRET,
      jwksUrl: planned.JWT_JWKS_URL,
      jwks: planned.JWT_SIGNING_KEY ? publicJwks(parseSigningKey(planned.JWT_SIGNING_KEY, planned.JWT_SIGNING_KEY_ID)) : undefined,
      publishableKeys: anonKey.split('.').length === 3 ? [] : [anonKey],
    });
    settings = { ...settings, DATA_API_URL: dataApi.url, SUPABASE_ANON_KEY: anonKey };
  }
  const config = loadConfig(settings);
  // What `npm start` does with the owner connection before it serves (src/db/database.ts).
  await writeServiceAuthDigest(db.url, config.SERVICE_AUTH_SECRET);
  const { logs, sink } = collectLogs();
  const deps = createDependencies(config, apiUrl, options);
  const app = createApp({ ...deps, logger: createLogger(config.LOG_LEVEL, sink) });
  checkContracts(app);
  return {
    app,
    db,
    apiUrl,
    config,
    deps,
    logs,
    dataApi,
    async close() {
      await deps.close();
      await dataApi?.close();
      await db.drop();
    },
  };
}

/**
 * The health checks of an app whose every part answers: the database, the session functions
 * and, with DATA_API=supabase, the Data API.
 *
 * @example expect(await res.json()).toEqual({ status: 'ok', checks: healthyChecks(t) })
 */
export const healthyChecks = (t: TestApp) => ({ database: 'ok', sessions: 'ok', ...(t.config.DATA_API === 'supabase' ? { data_api: 'ok' } : {}) });

/** Where the offline apps below point: nothing listens on port 9, so a query fails to connect. */
export const UNREACHABLE_DATABASE_URL = 'postgres://postgres:x@127.0.0.1:9/none';

/**
 * The application composed as `npm start` composes it, without a database: for tests of the
 * HTTP pipeline itself. `rpc` replaces the given rpc methods (e.g. a call that throws); anything
 * else reaching the database fails to connect, as it would with Postgres down.
 */
export function createOfflineApp(rpc: Partial<Rpc> = {}, env: Record<string, string> = {}) {
  const config = loadConfig({
    NODE_ENV: 'test',
    SUPABASE_JWT_SECRET: TEST_JWT_SECRET,
    SERVICE_AUTH_SECRET: TEST_SERVICE_SECRET,
    DATABASE_URL: UNREACHABLE_DATABASE_URL,
    DB_CONNECT_TIMEOUT_S: '1',
    ...env,
  });
  const { logs, sink } = collectLogs();
  const deps = createDependencies(config, config.DATABASE_URL!);
  const app = createApp({ ...deps, rpc: { ...deps.rpc, ...rpc }, logger: createLogger('info', sink) });
  return { app, deps, logs, close: () => deps.close() };
}

/** A log destination that keeps every JSON line the app writes, parsed, for assertions. */
function collectLogs() {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  return { logs, sink };
}
