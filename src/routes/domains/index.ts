import type { Rpc } from '../../db/rpc.js';
import { createRouter } from '../../http/router.js';
import { domainsHandlers } from './domains.handlers.js';
import { getDomain, getDomainTrails, listDomains, listRelatedDomains } from './domains.routes.js';

/** /discovery/domains (no authentication). */
export function domainsRouter(rpc: Rpc) {
  const handlers = domainsHandlers(rpc);
  const router = createRouter();
  router.openapi(listDomains, handlers.listDomains);
  router.openapi(getDomainTrails, handlers.getDomainTrails);
  router.openapi(listRelatedDomains, handlers.listRelatedDomains);
  router.openapi(getDomain, handlers.getDomain);
  return router;
}
