import type { Rpc } from '../../db/rpc.js';
import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import { graphHandlers } from './graph.handlers.js';
import { getLearningPath, getSparkGraph, listSparkLinks } from './graph.routes.js';

export function graphRouter(rpc: Rpc) {
  const handlers = graphHandlers(rpc);
  const router = createRouter();
  addHealthRoute(router, rpc, 'Graph');
  router.openapi(getSparkGraph, handlers.getSparkGraph);
  router.openapi(getLearningPath, handlers.getLearningPath);
  router.openapi(listSparkLinks, handlers.listSparkLinks);
  return router;
}
