import type { Rpc } from '../../db/rpc.js';
import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import { searchHandlers } from './search.handlers.js';
import { autocomplete, searchContent } from './search.routes.js';

export function searchRouter(rpc: Rpc) {
  const handlers = searchHandlers(rpc);
  const router = createRouter();
  addHealthRoute(router, rpc, 'Search');
  router.openapi(autocomplete, handlers.autocomplete);
  router.openapi(searchContent, handlers.searchContent);
  return router;
}
