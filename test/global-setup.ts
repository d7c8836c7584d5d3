import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { startTestCluster } from '../scripts/test-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}

/**
 * Builds the explorer's script bundle (as `npm start` does; the app serves it at /explore), then
 * starts the run's cluster (or reuses the one `npm test` started, named by
 * TEST_ADMIN_DATABASE_URL with the template already migrated) and hands its URL to every file.
 */
export default async function setup(project: TestProject) {
  execFileSync('npm', ['run', '-s', 'build:explorer'], { cwd: project.config.root, stdio: 'inherit' });
  if (process.env.TEST_ADMIN_DATABASE_URL && process.env.TEST_TEMPLATE_READY === '1') {
    project.provide('adminDatabaseUrl', process.env.TEST_ADMIN_DATABASE_URL);
    return undefined;
  }
  const cluster = await startTestCluster();
  project.provide('adminDatabaseUrl', cluster.adminUrl);
  return () => cluster.stop();
}
