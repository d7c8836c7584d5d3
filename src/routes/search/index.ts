import { addHealthRoute } from '../../http/health.js';
import { createRouter } from '../../http/router.js';
import * as handlers from './search.handlers.js';
import * as routes from './search.routes.js';

/** /search (a user token or the service secret). */
export function searchRouter() {
  const router = createRouter();
  addHealthRoute(router, 'Search');
  router.openapi(routes.autocomplete, handlers.autocomplete);
  router.openapi(routes.searchContent, handlers.searchContent);
  return router;
}
