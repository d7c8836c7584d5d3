import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSchema, SCHEMA_FILE } from '../../client/scripts/generate.js';
import type * as ClientModule from '../../client/src/index.js';
import { freePort } from '../../scripts/test-database.js';
import { createOfflineApp, createTestApp, type TestApp } from '../helpers/app.js';
import { signIn } from '../helpers/sessions.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('typed client (client/)', () => {
  it('client/src/schema.ts is what openapi-typescript generates from /openapi.json (else: npm run client:generate)', async () => {
    const { app, close } = createOfflineApp();
    try {
      const document = await (await app.request('/openapi.json')).json();
      expect(await generateSchema(document), 'client/src/schema.ts is stale: run `npm run client:generate` and commit it').toBe(readFileSync(SCHEMA_FILE, 'utf8'));
    } finally {
      await close();
    }
  });

  describe('built with its own tsc and used against a running API', () => {
    let t: TestApp;
    let server: ServerType;
    let baseUrl: string;
    let client: typeof ClientModule;

    beforeAll(async () => {
      execFileSync('npm', ['run', '-s', 'client:build'], { cwd: root, stdio: 'pipe' });
      for (const file of ['index.js', 'index.d.ts', 'schema.d.ts']) expect(existsSync(path.join(root, 'client/dist', file)), file).toBe(true);
      client = (await import(pathToFileURL(path.join(root, 'client/dist/index.js')).href)) as typeof ClientModule;
      t = await createTestApp();
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      server = serve({ fetch: t.app.fetch, port, hostname: '127.0.0.1' });
      await new Promise((resolve) => server.once('listening', resolve));
    }, 120_000);
    afterAll(async () => {
      await new Promise((resolve) => server?.close(resolve));
      await t?.close();
    });

    it('reads public endpoints anonymously and turns errors into SparkpathError with the envelope', async () => {
      const sparkpath = client.createSparkpathClient({ baseUrl });
      const metadata = client.unwrap(await sparkpath.api.GET('/metadata'));
      expect(metadata.learning_verbs.map((verb) => verb.value)).toEqual(expect.arrayContaining(['started', 'completed', 'mastered']));
      const refused = await sparkpath.api.GET('/user/me/journeys', { params: { query: { sort: 'recent' } } });
      expect(() => client.unwrap(refused)).toThrow(expect.objectContaining({ name: 'SparkpathError', status: 401, code: 'UNAUTHORIZED' }));
      expect(await sparkpath.restore()).toBeUndefined();
      expect(sparkpath.signInUrl('dev', 'http://localhost:3000/explore')).toBe(`${baseUrl}/auth/login?provider=dev&redirect=http%3A%2F%2Flocalhost%3A3000%2Fexplore`);
    });

    it('keeps the access token from the refresh body in memory, sends it as the bearer header, refreshes ahead of expiry and signs out', async () => {
      const user = await signIn(t, 'client-user@example.com');
      // Node's fetch keeps no cookies: play the browser's cookie jar for the refresh cookie (path /auth).
      let refreshCookie: string | undefined = user.refresh_token;
      const browserFetch: typeof fetch = async (input, init) => {
        const request = new Request(input, init);
        if (new URL(request.url).pathname.startsWith('/auth') && refreshCookie) request.headers.set('Cookie', `svc-refresh-token=${refreshCookie}`);
        const response = await fetch(request);
        const set = response.headers.getSetCookie().find((c) => c.startsWith('svc-refresh-token='));
        if (set) refreshCookie = set.split(';')[0].split('=')[1] || undefined;
        return response;
      };
      const sessions: (string | undefined)[] = [];
      // Refresh ahead by more than the token's lifetime: every call refreshes first.
      const sparkpath = client.createSparkpathClient({ baseUrl, fetch: browserFetch, refreshAheadMs: 2 * 3600_000, onSessionChange: (s) => sessions.push(s?.claims.email) });

      const restored = await sparkpath.restore();
      expect(restored?.claims).toMatchObject({ sub: user.userId, email: 'client-user@example.com', user_role: 'learner', subscription_plan: 'free' });
      const rotated = refreshCookie;
      expect(rotated).not.toBe(user.refresh_token);

      const journeys = client.unwrap(await sparkpath.api.GET('/user/me/journeys', { params: { query: {} } }));
      expect(journeys).toEqual({ data: [] });
      expect(refreshCookie, 'refreshed ahead of the call').not.toBe(rotated);

      await sparkpath.signOut();
      expect(sparkpath.session).toBeUndefined();
      expect(refreshCookie).toBeUndefined();
      // restore, the refresh ahead of GET, the one ahead of logout, then signed out.
      expect(sessions).toEqual(['client-user@example.com', 'client-user@example.com', 'client-user@example.com', undefined]);
      // The signed-out session cannot be restored.
      const again = client.createSparkpathClient({ baseUrl, fetch: browserFetch });
      refreshCookie = user.refresh_token;
      expect(await again.restore()).toBeUndefined();
    });
  });
});
