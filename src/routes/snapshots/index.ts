import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import * as handlers from './snapshots.handlers.js';
import * as routes from './snapshots.routes.js';

/** /snapshots (a user token or the service secret). */
export function snapshotsRouter() {
  const router = createRouter();
  // Registered before /{id} so "current" and "health" are never read as ids.
  router.openapi(routes.getCurrentSnapshot, handlers.getCurrentSnapshot);
  addHealthRoute(router, 'Snapshots');
  router.openapi(routes.listSnapshots, handlers.listSnapshots);
  router.openapi(routes.getSnapshot, handlers.getSnapshot);
  router.openapi(routes.listSnapshotChanges, handlers.listSnapshotChanges);
  return router;
}
