import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { reportSessionChanges, unavailableSessionStore, type SessionStore } from '../../src/auth/session-store.js';
import { loadConfig } from '../../src/config.js';
import { createJwtVerifier } from '../../src/context/jwt.js';
import type { Rpc } from '../../src/db/rpc.js';
import { createLogger } from '../../src/logger.js';
import { signToken, TEST_JWT_SECRET } from '../helpers/tokens.js';

/** A store whose every operation resolves (or, when told, rejects) and is recorded. */
function recordingStore(fail = false) {
  const log: string[] = [];
  const base = unavailableSessionStore();
  const store = Object.fromEntries(
    Object.keys(base).map((name) => [
      name,
      async () => {
        log.push(name);
        if (fail) throw new Error(`${name} failed`);
        return { status: 'ok' };
      },
    ]),
  ) as unknown as SessionStore;
  return { store, log };
}

describe('reportSessionChanges', () => {
  it('reports after every operation that may end a session, and only those', async () => {
    const { store, log } = recordingStore();
    const reported = reportSessionChanges(store, () => log.push('changed'));
    const sign = async () => ({ accessHash: 'h' });
    await reported.startOAuthAttempt({ provider: 'github', stateHash: 's', codeVerifier: 'v', nonce: null, redirectUrl: 'r', browserHash: 'b', ttlSeconds: 1 });
    await reported.consumeOAuthAttempt('s', null);
    await reported.signIn({} as never, sign);
    await reported.setUserAccess('u', 'learner', 'free');
    expect(log).toEqual(['startOAuthAttempt', 'consumeOAuthAttempt', 'signIn', 'setUserAccess']);
    log.length = 0;
    await reported.refresh({ refreshHash: 'a', newRefreshHash: 'b', graceSeconds: 1, accessTtlSeconds: 1 }, sign);
    await reported.signOut('{}');
    await reported.cleanup();
    expect(log).toEqual(['refresh', 'changed', 'signOut', 'changed', 'cleanup', 'changed']);
  });

  it('reports a failed operation too: it may have committed before failing', async () => {
    const { store, log } = recordingStore(true);
    const reported = reportSessionChanges(store, () => log.push('changed'));
    await expect(reported.signOut('{}')).rejects.toThrow('signOut failed');
    expect(log).toEqual(['signOut', 'changed']);
  });

  it('a logout through the app makes the rpc adapter forget what it vouched for', async () => {
    const { store, log } = recordingStore();
    const forgotten: string[] = [];
    const rpc: Rpc = { call: async () => '{}', ping: async () => undefined, close: async () => undefined, forgetSessions: () => void forgotten.push('forget') };
    const config = loadConfig({ NODE_ENV: 'test', SUPABASE_JWT_SECRET: TEST_JWT_SECRET });
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const verifier = createJwtVerifier({ secret: TEST_JWT_SECRET, audience: 'authenticated' });
    const app = createApp({ config, rpc, logger: createLogger('info', quiet), verifier, sessionStore: store });
    const token = await signToken({ session_id: crypto.randomUUID() });
    const response = await app.request('/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(log).toEqual(['signOut']);
    expect(forgotten).toEqual(['forget']);
  });
});
