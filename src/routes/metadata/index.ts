import type { Rpc } from '../../db/rpc.js';
import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import { metadataHandlers } from './metadata.handlers.js';
import { getMetadata, listDifficultyLevels } from './metadata.routes.js';

export function metadataRouter(rpc: Rpc) {
  const handlers = metadataHandlers(rpc);
  const router = createRouter();
  router.openapi(getMetadata, handlers.getMetadata);
  router.openapi(listDifficultyLevels, handlers.listDifficultyLevels);
  addHealthRoute(router, rpc, 'Metadata');
  return router;
}
