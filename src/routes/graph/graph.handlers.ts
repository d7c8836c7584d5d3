import type { RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';
import type { getLearningPath, getSparkGraph, listSparkLinks } from './graph.routes.js';

// Graph reads need a signed-in user and paths depend on that user: never in shared caches.
const NO_SHARED_CACHE = { 'Cache-Control': 'private, no-store' };

export const graphHandlers = (rpc: Rpc) => {
  const getSparkGraphHandler: RouteHandler<typeof getSparkGraph, AppEnv> = async (c) => {
    const { slug } = c.req.valid('param');
    const { direction, max_depth, snapshot_id } = c.req.valid('query');
    const body = await rpc.call('get_spark_graph', { slug, direction, max_depth, snapshot_id }, c.get('context').db);
    return sendJsonText(c, body, 200, NO_SHARED_CACHE);
  };
  const getLearningPathHandler: RouteHandler<typeof getLearningPath, AppEnv> = async (c) => {
    const { target, skip_mastered, snapshot_id } = c.req.valid('query');
    const body = await rpc.call('get_learning_path', { target, skip_mastered, snapshot_id }, c.get('context').db);
    return sendJsonText(c, body, 200, NO_SHARED_CACHE);
  };
  const listSparkLinksHandler: RouteHandler<typeof listSparkLinks, AppEnv> = async (c) => {
    const { spark, type, direction, page, per_page, snapshot_id } = c.req.valid('query');
    const body = await rpc.call('list_spark_links', { spark, type, direction, page, per_page, snapshot_id }, c.get('context').db);
    return sendJsonText(c, body, 200, NO_SHARED_CACHE);
  };
  return { getSparkGraph: getSparkGraphHandler, getLearningPath: getLearningPathHandler, listSparkLinks: listSparkLinksHandler };
};
