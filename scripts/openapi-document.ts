import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDependencies } from '../src/deps.js';
import { createLogger } from '../src/logger.js';

/**
 * The OpenAPI document the API serves at /openapi.json, built without a database (it is made
 * from the route contracts alone): the input of the typed client's generator.
 */
export async function openApiDocument(): Promise<object> {
  // Nothing listens on port 9: no connection is ever needed to describe the routes.
  const config = loadConfig({ NODE_ENV: 'test', SUPABASE_JWT_SECRET: 'document-only-'.padEnd(32, '0'), DATABASE_URL: 'postgres://offline@127.0.0.1:9/none' });
  const deps = createDependencies(config, config.DATABASE_URL!);
  try {
    const app = createApp({ ...deps, logger: createLogger('silent') });
    return (await (await app.request('/openapi.json')).json()) as object;
  } finally {
    await deps.close();
  }
}
