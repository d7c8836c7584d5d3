import type { createRoute, RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import { createSnapshotReader } from '../../http/cache.js';
import type { AppEnv } from '../../http/env.js';
import type { browse, getFacets, listAll, listConcepts, listSparks, listTrails } from './discovery.routes.js';

type Handler<R extends Parameters<typeof createRoute>[0]> = RouteHandler<R, AppEnv>;

export const discoveryHandlers = (rpc: Rpc) => {
  const read = createSnapshotReader(rpc);
  return {
    listTrails: ((c) => read(c, 'list_discovery_trails', c.req.valid('query'))) as Handler<typeof listTrails>,
    listConcepts: ((c) => read(c, 'list_discovery_concepts', c.req.valid('query'))) as Handler<typeof listConcepts>,
    listSparks: ((c) => read(c, 'list_discovery_sparks', c.req.valid('query'))) as Handler<typeof listSparks>,
    listAll: ((c) => read(c, 'list_discovery_items', c.req.valid('query'))) as Handler<typeof listAll>,
    getFacets: ((c) => read(c, 'get_discovery_facets', c.req.valid('query'))) as Handler<typeof getFacets>,
    browse: ((c) => read(c, 'browse_catalog', c.req.valid('query'))) as Handler<typeof browse>,
  };
};
