/**
 * Real sessions for the auth families, minted through the auth issue's own service (the same
 * path as `npm run token`): sign-in as a `dev` provider identity, which stores the hashed
 * session and returns an access and a refresh token. Loaded dynamically so the bench keeps
 * working on a branch without src/auth (the auth families are then "not available").
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { loadConfig } from '../src/config.js';
import type { BenchSession } from './fixtures.js';

const root = path.resolve(import.meta.dirname, '..');

interface AuthModule {
  createAuthService(config: unknown, store: unknown): {
    signIn(identity: { provider: string; providerUserId: string; email: string; displayName: string; avatarUrl: string | null }, meta: { userAgent: string | null; ipAddress: string | null }): Promise<{ tokens: { access_token: string; refresh_token: string } }>;
  };
}
interface StoreModule {
  createSessionStore(sql: postgres.Sql): unknown;
}

export interface SessionMinter {
  mint(count: number): Promise<BenchSession[]>;
  close(): Promise<void>;
}

export async function createSessionMinter(databaseUrl: string, env: Record<string, string>): Promise<SessionMinter | undefined> {
  const serviceFile = path.join(root, 'src/auth/auth-service.ts');
  const storeFile = path.join(root, 'src/auth/session-store.ts');
  if (!existsSync(serviceFile) || !existsSync(storeFile)) return undefined;
  const { createAuthService } = (await import(pathToFileURL(serviceFile).href)) as AuthModule;
  const { createSessionStore } = (await import(pathToFileURL(storeFile).href)) as StoreModule;
  const config = loadConfig({ ...env, NODE_ENV: 'test', DATABASE_URL: databaseUrl });
  const sql = postgres(databaseUrl, { max: 4, onnotice: () => undefined });
  const auth = createAuthService(config, createSessionStore(sql));
  let counter = 0;
  return {
    async mint(count) {
      const sessions: BenchSession[] = [];
      for (let i = 0; i < count; i++) {
        // 200 distinct users, several sessions each, like several devices.
        const n = counter++ % 200;
        const email = `bench-${n}@bench.local`;
        const { tokens } = await auth.signIn({ provider: 'dev', providerUserId: email, email, displayName: `Bench ${n}`, avatarUrl: null }, { userAgent: 'sparkpath-bench', ipAddress: null });
        sessions.push({ accessToken: tokens.access_token, refreshToken: tokens.refresh_token });
      }
      return sessions;
    },
    close: () => sql.end(),
  };
}
