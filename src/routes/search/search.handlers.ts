import type { RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import { createSnapshotReader } from '../../http/cache.js';
import type { AppEnv } from '../../http/env.js';
import type { autocomplete, searchContent } from './search.routes.js';

export const searchHandlers = (rpc: Rpc) => {
  // Results are snapshot content, the same for every caller: ETag, 304 and the server-side body
  // cache (byte-bounded, so unbounded query text only churns it), private because the routes
  // need a token or the service secret.
  const read = createSnapshotReader(rpc, { privateToCaller: true });
  const searchContentHandler: RouteHandler<typeof searchContent, AppEnv> = async (c) => {
    const { q, type, difficulty, page, per_page, snapshot_id } = c.req.valid('query');
    return read(c, 'search_content', { q, type, difficulty, page, per_page, snapshot_id });
  };
  const autocompleteHandler: RouteHandler<typeof autocomplete, AppEnv> = async (c) => {
    const { q, limit, snapshot_id } = c.req.valid('query');
    return read(c, 'list_search_suggestions', { q, limit_count: limit, snapshot_id });
  };
  return { searchContent: searchContentHandler, autocomplete: autocompleteHandler };
};
