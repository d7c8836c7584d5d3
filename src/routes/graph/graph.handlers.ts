import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';
import type * as routes from './graph.routes.js';

// A path depends on the caller's mastered sparks: never stored anywhere.
const NO_STORE = { 'Cache-Control': 'private, no-store' };

// The graph and its links are snapshot content, the same for every caller: ETag, 304 and the
// server-side body cache, like the catalog, but private (the routes need a token).
export const getSparkGraph: RouteHandler<typeof routes.getSparkGraph, AppEnv> = async (c) => {
  const { slug } = c.req.valid('param');
  const { direction, max_depth, snapshot_id } = c.req.valid('query');
  return c.var.services.readPrivateSnapshot(c, 'get_spark_graph', { slug, direction, max_depth, snapshot_id });
};

export const getLearningPath: RouteHandler<typeof routes.getLearningPath, AppEnv> = async (c) => {
  const { target, skip_mastered, snapshot_id } = c.req.valid('query');
  const body = await c.var.services.rpc.call('get_learning_path', { target, skip_mastered, snapshot_id }, c.var.context.db);
  return sendJsonText(c, body, 200, NO_STORE);
};

export const listSparkLinks: RouteHandler<typeof routes.listSparkLinks, AppEnv> = async (c) => {
  const { spark, type, direction, page, per_page, snapshot_id } = c.req.valid('query');
  return c.var.services.readPrivateSnapshot(c, 'list_spark_links', { spark, type, direction, page, per_page, snapshot_id });
};
