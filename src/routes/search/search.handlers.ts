import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import type * as routes from './search.routes.js';

// Results are snapshot content, the same for every caller: ETag, 304 and the server-side body
// cache (byte-bounded, so unbounded query text only churns it), private because the routes
// need a token or the service secret.
export const searchContent: RouteHandler<typeof routes.searchContent, AppEnv> = async (c) => {
  const { q, type, difficulty, page, per_page, snapshot_id } = c.req.valid('query');
  return c.var.services.readPrivateSnapshot(c, 'search_content', { q, type, difficulty, page, per_page, snapshot_id });
};

export const autocomplete: RouteHandler<typeof routes.autocomplete, AppEnv> = async (c) => {
  const { q, limit, snapshot_id } = c.req.valid('query');
  return c.var.services.readPrivateSnapshot(c, 'list_search_suggestions', { q, limit_count: limit, snapshot_id });
};
