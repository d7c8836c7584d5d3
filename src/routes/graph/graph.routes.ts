import { createRoute, z } from '@hono/zod-openapi';
import { requirePermission } from '../../context/middleware.js';
import { forbidden } from '../../http/api-error.js';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { booleanQuery, commonErrors, errorResponse, intQuery, jsonContent, notModified, pageQuery, PaginationMetaSchema, PRIVATE_SNAPSHOT_CACHING, Slug, Uuid } from '../../http/schemas.js';

/** Documented maximums (the spec leaves them open); SQL enforces the same bounds. */
export const GRAPH_MAX_DEPTH = 10;
export const LINKS_MAX_PER_PAGE = 100;

const LINK_TYPES = ['prerequisite', 'related', 'extends'] as const;

const contentAuthErrors = {
  401: errorResponse('UNAUTHORIZED: a JWT or X-Service-Auth is required'),
  403: errorResponse('FORBIDDEN: the caller lacks READ_PUBLIC_CONTENT'),
};
const pathAuthErrors = {
  401: errorResponse('UNAUTHORIZED: a user JWT is required'),
  403: errorResponse('FORBIDDEN: service callers (a path is computed from one learner\'s mastered sparks) and callers without READ_PUBLIC_CONTENT'),
};

const GraphNode = z
  .object({ id: Uuid, slug: z.string(), title: z.string(), depth: z.number().int().min(0) })
  .openapi('GraphNode');
const GraphEdge = z
  .object({ source: Uuid, target: Uuid, weight: z.number(), type: z.enum(LINK_TYPES) })
  .openapi('GraphEdge');

export const SparkGraphSchema = z
  .object({
    root_id: Uuid,
    direction: z.enum(['ancestors', 'descendants', 'both']),
    max_depth: z.number().int(),
    nodes: z.array(GraphNode),
    edges: z.array(GraphEdge),
  })
  .openapi('SparkGraph');

const PathStep = z.object({ slug: z.string(), title: z.string(), estimated_mins: z.number().int() }).openapi('PathStep');
export const LearningPathSchema = z
  .object({
    target_id: Uuid,
    path: z.array(PathStep),
    total_mins: z.number().int(),
    skipped_count: z.number().int(),
  })
  .openapi('LearningPath');

const LinkEnd = z.object({ id: Uuid, slug: z.string(), title: z.string() });
export const SparkLinksSchema = z
  .object({
    data: z.array(z.object({ source: LinkEnd, target: LinkEnd, type: z.enum(LINK_TYPES), weight: z.number() })),
    meta: PaginationMetaSchema,
  })
  .openapi('SparkLinks');

// The graph and its links are content: service callers read them (READ_PUBLIC_CONTENT, spec
// "Service-to-service access"). A learning path is one learner's (it skips their mastered sparks).
const contentSecurity: Record<string, string[]>[] = [{ bearerAuth: [] }, { cookieAuth: [] }, { serviceAuth: [] }];
const learnerSecurity: Record<string, string[]>[] = [{ bearerAuth: [] }, { cookieAuth: [] }];
const contentGuard = requirePermission('READ_PUBLIC_CONTENT', { allowService: true });
const refuseServiceCallers: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('context').kind === 'service') {
    throw forbidden(
      'A learning path is personal: it is computed from one learner\'s mastered sparks, and a service caller has no learner (use a learner\'s token, or read /graph/sparks/{slug})',
      { reason: 'learner_required' },
    );
  }
  await next();
};
const pathGuard = requirePermission('READ_PUBLIC_CONTENT');
const snapshotQuery = { snapshot_id: Uuid.optional() };

export const getSparkGraph = createRoute({
  method: 'get',
  path: '/sparks/{slug}',
  tags: ['Graph'],
  summary: 'Prerequisite subgraph around a spark',
  description:
    'Follows prerequisite links: ancestors = what must be known first, descendants = what the spark unlocks. ' +
    `Each node once, at its shortest depth from the root (0). max_depth defaults to 3, at most ${GRAPH_MAX_DEPTH}. ` +
    'edges are the prerequisite links between returned nodes. ' +
    PRIVATE_SNAPSHOT_CACHING,
  middleware: [contentGuard] as const,
  security: contentSecurity,
  request: {
    params: z.object({ slug: Slug }),
    query: z.object({
      direction: z.enum(['ancestors', 'descendants', 'both']).default('ancestors'),
      max_depth: intQuery(3, 0, GRAPH_MAX_DEPTH),
      ...snapshotQuery,
    }),
  },
  responses: {
    200: jsonContent(SparkGraphSchema, 'The subgraph'),
    304: notModified,
    ...commonErrors,
    ...contentAuthErrors,
    404: errorResponse('NOT_FOUND: no spark has this slug (or snapshot_id names no snapshot)'),
  },
});

export const getLearningPath = createRoute({
  method: 'get',
  path: '/path',
  tags: ['Graph'],
  summary: 'Ordered learning path to a target spark',
  description:
    'Every prerequisite ancestor of the target plus the target, each after all of its prerequisites: ' +
    "Kahn's algorithm in rounds, ties by title (case-insensitive) then id. skip_mastered (default true) leaves out " +
    'sparks the caller has a mastered learning event for; skipped_count counts them; total_mins sums the returned steps.',
  middleware: [refuseServiceCallers, pathGuard] as const,
  security: learnerSecurity,
  request: {
    query: z.object({ target: Slug, skip_mastered: booleanQuery(true), ...snapshotQuery }),
  },
  responses: {
    200: jsonContent(LearningPathSchema, 'The path'),
    ...commonErrors,
    ...pathAuthErrors,
    404: errorResponse('NOT_FOUND: no spark has the target slug (or snapshot_id names no snapshot)'),
  },
});

export const listSparkLinks = createRoute({
  method: 'get',
  path: '/links/sparks',
  tags: ['Graph'],
  summary: 'Spark relationships, paginated',
  description:
    'All link types (prerequisite, related, extends); source → target reads "source comes before target". ' +
    'spark limits the list to links touching it; direction (needs spark): outgoing (spark is the source), incoming ' +
    `(spark is the target), both (default). Ordered by source title, target title, type. per_page at most ${LINKS_MAX_PER_PAGE}. ` +
    PRIVATE_SNAPSHOT_CACHING,
  middleware: [contentGuard] as const,
  security: contentSecurity,
  request: {
    query: z.object({
      spark: Slug.optional(),
      type: z.enum(LINK_TYPES).optional(),
      direction: z.enum(['outgoing', 'incoming', 'both']).optional(),
      ...pageQuery(LINKS_MAX_PER_PAGE),
      ...snapshotQuery,
    }),
  },
  responses: {
    200: jsonContent(SparkLinksSchema, 'A page of links'),
    304: notModified,
    ...commonErrors,
    ...contentAuthErrors,
    404: errorResponse('NOT_FOUND: no spark has this slug (or snapshot_id names no snapshot)'),
  },
});
