import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';
import type * as routes from './snapshots.routes.js';

// Snapshots change with every promote or rollback: callers must not keep stale copies.
const NO_STORE = { 'Cache-Control': 'no-store' };

export const listSnapshots: RouteHandler<typeof routes.listSnapshots, AppEnv> = async (c) =>
  sendJsonText(c, await c.var.services.rpc.call('list_snapshots', c.req.valid('query'), c.var.context.db), 200, NO_STORE);

export const getCurrentSnapshot: RouteHandler<typeof routes.getCurrentSnapshot, AppEnv> = async (c) =>
  sendJsonText(c, await c.var.services.rpc.call('get_current_snapshot', {}, c.var.context.db), 200, NO_STORE);

export const getSnapshot: RouteHandler<typeof routes.getSnapshot, AppEnv> = async (c) =>
  sendJsonText(c, await c.var.services.rpc.call('get_snapshot', { id: c.req.valid('param').id }, c.var.context.db), 200, NO_STORE);

// Two snapshots never change, so neither does what changed between them: a snapshot read.
export const listSnapshotChanges: RouteHandler<typeof routes.listSnapshotChanges, AppEnv> = async (c) => {
  const { since, trail, page, per_page } = c.req.valid('query');
  return c.var.services.readPrivateSnapshot(c, 'list_snapshot_changes', { snapshot_id: c.req.valid('param').id, since, trail, page, per_page });
};
