import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import type * as routes from './domains.routes.js';

export const listDomains: RouteHandler<typeof routes.listDomains, AppEnv> = async (c) => {
  const { trail_limit, ...query } = c.req.valid('query');
  // Routing ignores the trailing slash; the raw URL still has it.
  return new URL(c.req.url).pathname.endsWith('/')
    ? c.var.services.readSnapshot(c, 'list_domains', query)
    : c.var.services.readSnapshot(c, 'list_discovery_domains', { ...query, trail_limit });
};

export const getDomain: RouteHandler<typeof routes.getDomain, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'get_domain', { slug: c.req.valid('param').slug, ...c.req.valid('query') });

export const getDomainTrails: RouteHandler<typeof routes.getDomainTrails, AppEnv> = async (c) =>
  c.var.services.readSnapshot(c, 'get_domain_trails', { slug: c.req.valid('param').slug, ...c.req.valid('query') });

export const listRelatedDomains: RouteHandler<typeof routes.listRelatedDomains, AppEnv> = async (c) => {
  const { limit, snapshot_id } = c.req.valid('query');
  return c.var.services.readSnapshot(c, 'list_related_domains', { slug: c.req.valid('param').slug, related_limit: limit, snapshot_id });
};
