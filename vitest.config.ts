import { defineConfig } from 'vitest/config';

/**
 * Two projects: every test through the API's direct transport (postgres.js and the dispatcher),
 * and the HTTP suite again through the Data API transport (DATA_API=supabase), against the
 * PostgREST double on the same test database (test/helpers/app.ts reads `dataApi`).
 * `npx vitest run --project data-api test/http/<file>` runs one file through the Data API.
 */
export default defineConfig({
  test: {
    exclude: ['test/reliability/**', 'node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'postgres', include: ['test/**/*.test.ts'], provide: { dataApi: 'postgres' } } },
      { extends: true, test: { name: 'data-api', include: ['test/http/**/*.test.ts'], provide: { dataApi: 'supabase' } } },
    ],
  },
});
