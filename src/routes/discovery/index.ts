import type { Rpc } from '../../db/rpc.js';
import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import { discoveryHandlers } from './discovery.handlers.js';
import { browse, getFacets, listAll, listConcepts, listSparks, listTrails } from './discovery.routes.js';

/** /discovery (no authentication). /discovery/domains lives in the domains router. */
export function discoveryRouter(rpc: Rpc) {
  const handlers = discoveryHandlers(rpc);
  const router = createRouter();
  router.openapi(listTrails, handlers.listTrails);
  router.openapi(listConcepts, handlers.listConcepts);
  router.openapi(listSparks, handlers.listSparks);
  router.openapi(listAll, handlers.listAll);
  router.openapi(getFacets, handlers.getFacets);
  router.openapi(browse, handlers.browse);
  addHealthRoute(router, rpc, 'Discovery');
  return router;
}
