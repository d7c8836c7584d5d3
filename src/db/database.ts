import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import type { Config } from '../config.js';
import { startEmbeddedPostgres } from './embedded.js';
import { apiLoginUrl, enableLocalApiLogin, writeServiceAuthDigest } from './login-role.js';
import { migrate } from './migrate.js';

export const SEED_FILE = path.resolve(import.meta.dirname, '../../supabase/seed.sql');

export interface Database {
  /** The owner connection: migrations, the seed, the content CLI, start-up writes. */
  url: string;
  /** The API's connection: its least-privilege login role (src/db/login-role.ts). */
  apiUrl: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * The database the process works with: DATABASE_URL (and DATABASE_API_URL) when set, otherwise
 * an embedded PostgreSQL whose data persists in EMBEDDED_PG_DATA_DIR. Shared by the server and
 * the CLIs. Without DATABASE_API_URL the API connects with DATABASE_URL, which the configuration
 * refuses in production.
 */
export async function openDatabase(
  config: Config,
  log: (line: string) => void = () => undefined,
  options: { handleSignals?: boolean } = {},
): Promise<Database> {
  if (config.DATABASE_URL) {
    return { url: config.DATABASE_URL, apiUrl: config.DATABASE_API_URL ?? config.DATABASE_URL, embedded: false, stop: async () => undefined };
  }
  const embedded = await startEmbeddedPostgres({
    dataDir: config.EMBEDDED_PG_DATA_DIR,
    port: config.EMBEDDED_PG_PORT,
    database: 'sparkpath',
    log,
    handleSignals: options.handleSignals,
  });
  return { url: embedded.url, apiUrl: apiLoginUrl(embedded.url), embedded: true, stop: embedded.stop };
}

export interface PrepareOptions {
  /** Load supabase/seed.sql into an empty catalog. */
  seed: boolean;
  /** SERVICE_AUTH_SECRET: its digest is written for the SQL check of X-Service-Auth. */
  serviceAuthSecret?: string;
  /** A server this process started (embedded, test clusters): the API's login role may log in. */
  enableLocalApiLogin?: boolean;
}

/**
 * With the owner connection: applies pending migrations, lets the API's login role log in on a
 * local server, records the service secret's digest, then loads supabase/seed.sql once, into an
 * empty catalog only.
 */
export async function prepareDatabase(url: string, options: PrepareOptions): Promise<{ applied: string[]; seeded: boolean }> {
  const { applied } = await migrate(url);
  if (options.enableLocalApiLogin) await enableLocalApiLogin(url);
  await writeServiceAuthDigest(url, options.serviceAuthSecret);
  if (!options.seed || !existsSync(SEED_FILE)) return { applied, seeded: false };
  const sql = postgres(url, { max: 1, prepare: false, onnotice: () => undefined });
  try {
    const [{ empty }] = await sql<{ empty: boolean }[]>`select not exists (select 1 from app.snapshots) as empty`;
    if (!empty) return { applied, seeded: false };
    const seed = await readFile(SEED_FILE, 'utf8');
    if (seed.trim() === '') return { applied, seeded: false };
    await sql.begin((tx) => tx.unsafe(seed));
    return { applied, seeded: true };
  } finally {
    await sql.end();
  }
}
