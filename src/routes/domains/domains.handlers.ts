import type { createRoute, RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import { createSnapshotReader } from '../../http/cache.js';
import type { AppEnv } from '../../http/env.js';
import type { getDomain, getDomainTrails, listDomains, listRelatedDomains } from './domains.routes.js';

type Handler<R extends Parameters<typeof createRoute>[0]> = RouteHandler<R, AppEnv>;

export const domainsHandlers = (rpc: Rpc) => {
  const read = createSnapshotReader(rpc);
  return {
    listDomains: ((c) => {
      const { trail_limit, ...query } = c.req.valid('query');
      // Routing ignores the trailing slash; the raw URL still has it.
      return new URL(c.req.url).pathname.endsWith('/')
        ? read(c, 'list_domains', query)
        : read(c, 'list_discovery_domains', { ...query, trail_limit });
    }) as Handler<typeof listDomains>,
    getDomain: ((c) => read(c, 'get_domain', { slug: c.req.valid('param').slug, ...c.req.valid('query') })) as Handler<typeof getDomain>,
    getDomainTrails: ((c) =>
      read(c, 'get_domain_trails', { slug: c.req.valid('param').slug, ...c.req.valid('query') })) as Handler<typeof getDomainTrails>,
    listRelatedDomains: ((c) => {
      const { limit, snapshot_id } = c.req.valid('query');
      return read(c, 'list_related_domains', { slug: c.req.valid('param').slug, related_limit: limit, snapshot_id });
    }) as Handler<typeof listRelatedDomains>,
  };
};
