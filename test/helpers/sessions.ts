import { randomUUID } from 'node:crypto';
import { createDependencies } from '../../src/deps.js';
import type { TestApp } from './app.js';

/**
 * A real session, made the way the callback makes it (without a provider round trip), through
 * dependencies of the test's own: to the app it is a sign-in at another instance.
 */
export async function signIn(app: TestApp, email = `${randomUUID()}@example.com`) {
  const other = createDependencies(app.config, app.apiUrl);
  const { result, tokens } = await other.auth
    .signIn({ provider: 'github', providerUserId: randomUUID(), email, displayName: 'Tess', avatarUrl: null }, { userAgent: 'vitest', ipAddress: '127.0.0.1' })
    .finally(() => other.close());
  return { ...tokens, userId: result.user.id, sessionId: result.session_id, bearer: { Authorization: `Bearer ${tokens.access_token}` } };
}
