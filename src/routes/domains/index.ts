import { createRouter } from '../../http/router.js';
import * as handlers from './domains.handlers.js';
import * as routes from './domains.routes.js';

/** /discovery/domains (no authentication). */
export function domainsRouter() {
  const router = createRouter();
  router.openapi(routes.listDomains, handlers.listDomains);
  router.openapi(routes.getDomainTrails, handlers.getDomainTrails);
  router.openapi(routes.listRelatedDomains, handlers.listRelatedDomains);
  router.openapi(routes.getDomain, handlers.getDomain);
  return router;
}
