import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import type * as routes from './discovery.routes.js';

export const listTrails: RouteHandler<typeof routes.listTrails, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'list_discovery_trails', c.req.valid('query'));

export const listConcepts: RouteHandler<typeof routes.listConcepts, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'list_discovery_concepts', c.req.valid('query'));

export const listSparks: RouteHandler<typeof routes.listSparks, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'list_discovery_sparks', c.req.valid('query'));

export const listAll: RouteHandler<typeof routes.listAll, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'list_discovery_items', c.req.valid('query'));

export const getFacets: RouteHandler<typeof routes.getFacets, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'get_discovery_facets', c.req.valid('query'));

export const browse: RouteHandler<typeof routes.browse, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'browse_catalog', c.req.valid('query'));
