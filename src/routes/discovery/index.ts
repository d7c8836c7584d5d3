import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import * as handlers from './discovery.handlers.js';
import * as routes from './discovery.routes.js';

/** /discovery (no authentication). /discovery/domains lives in the domains router. */
export function discoveryRouter() {
  const router = createRouter();
  router.openapi(routes.listTrails, handlers.listTrails);
  router.openapi(routes.listConcepts, handlers.listConcepts);
  router.openapi(routes.listSparks, handlers.listSparks);
  router.openapi(routes.listAll, handlers.listAll);
  router.openapi(routes.getFacets, handlers.getFacets);
  router.openapi(routes.browse, handlers.browse);
  addHealthRoute(router, 'Discovery');
  return router;
}
