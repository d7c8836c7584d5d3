import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import * as handlers from './metadata.handlers.js';
import * as routes from './metadata.routes.js';

/** /metadata (no authentication). */
export function metadataRouter() {
  const router = createRouter();
  router.openapi(routes.getMetadata, handlers.getMetadata);
  router.openapi(routes.listDifficultyLevels, handlers.listDifficultyLevels);
  addHealthRoute(router, 'Metadata');
  return router;
}
