import { Writable } from 'node:stream';
import { createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createRpcFromConfig, createVerifierFromConfig } from '../../src/deps.js';
import { createLogger } from '../../src/logger.js';
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
  db: TestDatabase;
  config: Config;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * The real application on its own fresh database; requests go through `app.request()`.
 * `env` overrides configuration variables exactly as the process environment would.
 */
export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    SUPABASE_JWT_SECRET: TEST_JWT_SECRET,
    SERVICE_AUTH_SECRET: TEST_SERVICE_SECRET,
    DATABASE_URL: db.url,
    // Suites make hundreds of requests from one address; the rate-limit tests opt back in.
    RATE_LIMITS_ENABLED: 'false',
    // Suites write content and read it back at once; a notification can take a few ms to
    // arrive, so the in-memory reads are tested on their own (test/db/cached-rpc.test.ts).
    DB_LISTEN_CHANGES: 'false',
    ...env,
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  const rpc = createRpcFromConfig(config, db.url, { poolMax: 4 });
  const verifier = createVerifierFromConfig(config);
  const app = createApp({ config, rpc, logger: createLogger(config.LOG_LEVEL, sink), verifier });
  checkContracts(app);
  return {
    app,
    db,
    config,
    logs,
    async close() {
      await rpc.close();
      await db.drop();
    },
  };
}
