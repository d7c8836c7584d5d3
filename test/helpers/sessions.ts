import { randomUUID } from 'node:crypto';
import { createAuthService } from '../../src/auth/auth-service.js';
import { createSessionStore } from '../../src/auth/session-store.js';
import type { TestApp } from './app.js';

/**
 * A real session, made the way the callback makes it (without a provider round trip), through a
 * store of the test's own: to the app it is a sign-in at another instance.
 */
export async function signIn(app: TestApp, email = `${randomUUID()}@example.com`) {
  const auth = createAuthService(app.config, createSessionStore(app.db.sql));
  const { result, tokens } = await auth.signIn(
    { provider: 'github', providerUserId: randomUUID(), email, displayName: 'Tess', avatarUrl: null },
    { userAgent: 'vitest', ipAddress: '127.0.0.1' },
  );
  return { ...tokens, userId: result.user.id, sessionId: result.session_id, bearer: { Authorization: `Bearer ${tokens.access_token}` } };
}
