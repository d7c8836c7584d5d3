/**
 * @hono/node-server writes a response straight to the socket only while it is still its
 * lightweight Response (status, body text, plain headers). Anything that touches the body or
 * adds a header after the handler returned (Hono then clones the response) turns it into a full
 * fetch Response whose body is encoded and streamed: 15% fewer requests/s on a journey detail.
 * These requests go through a real node-server and fail if a middleware knocks a route off
 * that path.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Rpc } from '../../src/db/rpc.js';
import { createOfflineApp } from '../helpers/app.js';
import { signToken } from '../helpers/tokens.js';

const JOURNEY_ID = '7b0c6a8e-4a59-4f0e-9d6b-3c2f1e0d9a87';
const bodies: Record<string, string> = {
  get_metadata: '{"learning_verbs": [], "journey_statuses": [], "difficulty_levels": []}',
  list_user_journeys: '{"data": [], "pagination": {"page": 1, "limit": 20, "total": 0, "has_more": false}}',
  get_user_journey: `{"id": "${JOURNEY_ID}"}`,
};

let server: ServerType;
let app: ReturnType<typeof createOfflineApp>['app'];
let close: () => Promise<void>;
let base: string;
const onFastPath = new Map<string, boolean>();

beforeAll(async () => {
  const rpc: Partial<Rpc> = {
    call: async (fn) => bodies[fn] ?? '{}',
    readSnapshot: async (fn) => ({ version: 'v1', snapshot_id: null, body: bodies[fn] ?? '{}' }),
  };
  ({ app, close } = createOfflineApp(rpc));
  await new Promise<void>((resolve) => {
    server = serve(
      {
        fetch: async (request, env) => {
          const response = await app.fetch(request, env);
          // The lightweight Response keeps [status, body, headers] under a private symbol
          // until something asks for the full object.
          const lightweight = Object.getOwnPropertySymbols(response).some((s) => s.description === 'cache');
          const url = new URL(request.url);
          onFastPath.set(`${request.method} ${url.pathname}${url.search}`, lightweight);
          return response;
        },
        port: 0,
        hostname: '127.0.0.1',
      },
      (info: AddressInfo) => {
        base = `http://127.0.0.1:${info.port}`;
        resolve();
      },
    );
  });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await close();
});

describe('responses stay on the node-server fast path', () => {
  it.each([
    ['/metadata', false, 200],
    ['/user/me/journeys', true, 200],
    [`/user/me/journeys/${JOURNEY_ID}`, true, 200],
    ['/snapshots/current', true, 200],
    ['/search?q=data', true, 200],
    ['/search/autocomplete?q=da', true, 200],
    ['/graph/sparks/select-star', true, 200],
    ['/graph/path?target=select-star', true, 200],
    ['/auth/session', true, 200],
    ['/user/me/journeys', false, 401],
    ['/no/such/route', false, 404],
  ])('GET %s (signed in: %s) answers %i without leaving it', async (path, signedIn, status) => {
    const headers: Record<string, string> = signedIn ? { Authorization: `Bearer ${await signToken()}` } : {};
    const response = await fetch(`${base}${path}`, { headers });
    expect(response.status).toBe(status);
    await response.text();
    expect(onFastPath.get(`GET ${path}`)).toBe(true);
  });
});
