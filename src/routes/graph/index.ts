import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import * as handlers from './graph.handlers.js';
import * as routes from './graph.routes.js';

export function graphRouter() {
  const router = createRouter();
  addHealthRoute(router, 'Graph');
  router.openapi(routes.getSparkGraph, handlers.getSparkGraph);
  router.openapi(routes.getLearningPath, handlers.getLearningPath);
  router.openapi(routes.listSparkLinks, handlers.listSparkLinks);
  return router;
}
