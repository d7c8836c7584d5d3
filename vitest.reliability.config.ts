import { defineConfig } from 'vitest/config';

/**
 * The reliability suite (test/reliability): live processes, real signals, a database that goes
 * away. One file at a time, since each one loads the machine. RELIABILITY_MODE=full for the
 * long form (60 s soak); the default is the short form that `npm test` runs.
 */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 240_000,
    hookTimeout: 120_000,
  },
});
