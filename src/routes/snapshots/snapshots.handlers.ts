import type { Context } from 'hono';
import type { Rpc } from '../../db/rpc.js';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';

// Snapshots change with every promote or rollback: callers must not keep stale copies.
const NO_STORE = { 'Cache-Control': 'no-store' };

type Query = { page: number; per_page: number; status?: string };

export const snapshotsHandlers = (rpc: Rpc) => ({
  listSnapshots: async (c: Context<AppEnv>, query: Query) =>
    sendJsonText(c, await rpc.call('list_snapshots', query, c.get('context').db), 200, NO_STORE),
  getCurrentSnapshot: async (c: Context<AppEnv>) =>
    sendJsonText(c, await rpc.call('get_current_snapshot', {}, c.get('context').db), 200, NO_STORE),
  getSnapshot: async (c: Context<AppEnv>, id: string) =>
    sendJsonText(c, await rpc.call('get_snapshot', { id }, c.get('context').db), 200, NO_STORE),
});
