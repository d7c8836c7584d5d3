import type { RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import { createSnapshotReader } from '../../http/cache.js';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';
import type { getLearningPath, getSparkGraph, listSparkLinks } from './graph.routes.js';

// A path depends on the caller's mastered sparks: never stored anywhere.
const NO_STORE = { 'Cache-Control': 'private, no-store' };

export const graphHandlers = (rpc: Rpc) => {
  // The graph and its links are snapshot content, the same for every caller: ETag, 304 and the
  // server-side body cache, like the catalog, but private (the routes need a token).
  const read = createSnapshotReader(rpc, { privateToCaller: true });
  const getSparkGraphHandler: RouteHandler<typeof getSparkGraph, AppEnv> = async (c) => {
    const { slug } = c.req.valid('param');
    const { direction, max_depth, snapshot_id } = c.req.valid('query');
    return read(c, 'get_spark_graph', { slug, direction, max_depth, snapshot_id });
  };
  const getLearningPathHandler: RouteHandler<typeof getLearningPath, AppEnv> = async (c) => {
    const { target, skip_mastered, snapshot_id } = c.req.valid('query');
    const body = await rpc.call('get_learning_path', { target, skip_mastered, snapshot_id }, c.get('context').db);
    return sendJsonText(c, body, 200, NO_STORE);
  };
  const listSparkLinksHandler: RouteHandler<typeof listSparkLinks, AppEnv> = async (c) => {
    const { spark, type, direction, page, per_page, snapshot_id } = c.req.valid('query');
    return read(c, 'list_spark_links', { spark, type, direction, page, per_page, snapshot_id });
  };
  return { getSparkGraph: getSparkGraphHandler, getLearningPath: getLearningPathHandler, listSparkLinks: listSparkLinksHandler };
};
