/**
 * Real sessions for the auth families, minted through the auth service (the same path as
 * `npm run token`): sign-in as a `dev` provider identity, which stores the hashed session and
 * returns an access and a refresh token.
 */
import { loadConfig } from '../src/config.js';
import { apiLoginUrl } from '../src/db/login-role.js';
import { createDependencies } from '../src/deps.js';
import type { BenchSession } from './fixtures.js';

export interface SessionMinter {
  /** Sessions for the single-use auth families: 200 users, several sessions (devices) each. */
  mint(count: number): Promise<BenchSession[]>;
  /** One session for each of `count` distinct learners (bench-learner-1..count); their access tokens. */
  learners(count: number): Promise<string[]>;
  close(): Promise<void>;
}

export async function createSessionMinter(databaseUrl: string, env: Record<string, string>): Promise<SessionMinter | undefined> {
  const config = loadConfig({ ...env, NODE_ENV: 'test', DATABASE_URL: databaseUrl });
  // Another instance on the same database, composed as `npm start` composes it.
  const deps = createDependencies(config, apiLoginUrl(databaseUrl));
  let counter = 0;
  return {
    async mint(count) {
      const sessions: BenchSession[] = [];
      for (let i = 0; i < count; i++) {
        // 200 distinct users, several sessions each, like several devices.
        const n = counter++ % 200;
        const email = `bench-${n}@bench.local`;
        const { tokens } = await deps.auth.signIn({ provider: 'dev', providerUserId: email, email, displayName: `Bench ${n}`, avatarUrl: null }, { userAgent: 'sparkpath-bench', ipAddress: null });
        sessions.push({ accessToken: tokens.access_token, refreshToken: tokens.refresh_token });
      }
      return sessions;
    },
    async learners(count) {
      const tokens: string[] = [];
      for (let n = 1; n <= count; n++) {
        const email = `bench-learner-${n}@bench.local`;
        const { tokens: t } = await deps.auth.signIn({ provider: 'dev', providerUserId: email, email, displayName: `Learner ${n}`, avatarUrl: null }, { userAgent: 'sparkpath-bench', ipAddress: null });
        tokens.push(t.access_token);
      }
      return tokens;
    },
    close: () => deps.close(),
  };
}
