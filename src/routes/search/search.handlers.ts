import type { RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';
import type { autocomplete, searchContent } from './search.routes.js';

// Only authenticated callers may see results: keep them out of shared caches.
const NO_SHARED_CACHE = { 'Cache-Control': 'private, no-store' };

export const searchHandlers = (rpc: Rpc) => {
  const searchContentHandler: RouteHandler<typeof searchContent, AppEnv> = async (c) => {
    const { q, type, difficulty, page, per_page, snapshot_id } = c.req.valid('query');
    const body = await rpc.call('search_content', { q, type, difficulty, page, per_page, snapshot_id }, c.get('context').db);
    return sendJsonText(c, body, 200, NO_SHARED_CACHE);
  };
  const autocompleteHandler: RouteHandler<typeof autocomplete, AppEnv> = async (c) => {
    const { q, limit, snapshot_id } = c.req.valid('query');
    const body = await rpc.call('list_search_suggestions', { q, limit_count: limit, snapshot_id }, c.get('context').db);
    return sendJsonText(c, body, 200, NO_SHARED_CACHE);
  };
  return { searchContent: searchContentHandler, autocomplete: autocompleteHandler };
};
