import type { Rpc } from '../../db/rpc.js';
import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import { snapshotsHandlers } from './snapshots.handlers.js';
import { getCurrentSnapshot, getSnapshot, listSnapshots } from './snapshots.routes.js';

export function snapshotsRouter(rpc: Rpc) {
  const handlers = snapshotsHandlers(rpc);
  const router = createRouter();
  // Registered before /{id} so "current" and "health" are never read as ids.
  router.openapi(getCurrentSnapshot, (c) => handlers.getCurrentSnapshot(c));
  addHealthRoute(router, rpc, 'Snapshots');
  router.openapi(listSnapshots, (c) => handlers.listSnapshots(c, c.req.valid('query')));
  router.openapi(getSnapshot, (c) => handlers.getSnapshot(c, c.req.valid('param').id));
  return router;
}
