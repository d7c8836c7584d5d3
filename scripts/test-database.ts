import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { prepareDatabase } from '../src/db/database.js';
import { ensureAuthenticator } from '../test/doubles/postgrest.js';

export const TEMPLATE_DB = 'sparkpath_template';

export interface TestCluster {
  /** Maintenance-database URL: tests create their own databases from the template through it. */
  adminUrl: string;
  templateUrl: string;
  stop(): Promise<void>;
}

/**
 * A throwaway cluster for a test run: embedded PostgreSQL in a temp directory on a free port,
 * or the server in TEST_ADMIN_DATABASE_URL. The template database holds every migration (no
 * seed); each test file clones it, so files never see each other's data.
 */
export async function startTestCluster(): Promise<TestCluster> {
  let adminUrl = process.env.TEST_ADMIN_DATABASE_URL;
  let stopServer = async () => undefined as void;
  if (!adminUrl) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-test-'));
    const server = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg'), port: await freePort(), database: 'postgres' });
    adminUrl = server.adminUrl;
    stopServer = async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  const templateUrl = withDatabase(adminUrl, TEMPLATE_DB);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists ${TEMPLATE_DB} with (force)`);
    await admin.unsafe(`create database ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  // Supabase's PostgREST login role exists before the migrations, as on a Supabase project: they
  // register the pre-request hook on it, and the PostgREST double (test/doubles/postgrest.ts)
  // connects as it. The template is migrated as the owner; the API's login role may then log in.
  await ensureAuthenticator(adminUrl);
  await prepareDatabase(templateUrl, { seed: false, enableLocalApiLogin: true });
  return { adminUrl, templateUrl, stop: stopServer };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
