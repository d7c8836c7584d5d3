import type { createRoute, RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import { sendSnapshotRead } from '../../http/cache.js';
import type { AppEnv } from '../../http/env.js';
import type { browse, getFacets, listAll, listConcepts, listSparks, listTrails } from './discovery.routes.js';

type Handler<R extends Parameters<typeof createRoute>[0]> = RouteHandler<R, AppEnv>;

export const discoveryHandlers = (rpc: Rpc) => ({
  listTrails: ((c) => sendSnapshotRead(c, rpc, 'list_discovery_trails', c.req.valid('query'))) as Handler<typeof listTrails>,
  listConcepts: ((c) => sendSnapshotRead(c, rpc, 'list_discovery_concepts', c.req.valid('query'))) as Handler<typeof listConcepts>,
  listSparks: ((c) => sendSnapshotRead(c, rpc, 'list_discovery_sparks', c.req.valid('query'))) as Handler<typeof listSparks>,
  listAll: ((c) => sendSnapshotRead(c, rpc, 'list_discovery_items', c.req.valid('query'))) as Handler<typeof listAll>,
  getFacets: ((c) => sendSnapshotRead(c, rpc, 'get_discovery_facets', c.req.valid('query'))) as Handler<typeof getFacets>,
  browse: ((c) => sendSnapshotRead(c, rpc, 'browse_catalog', c.req.valid('query'))) as Handler<typeof browse>,
});
