import { createRoute, z } from '@hono/zod-openapi';
import { requirePermission } from '../../context/middleware.js';
import { commonErrors, errorResponse, jsonContent, notModified, pageQuery, PaginationMetaSchema, PRIVATE_SNAPSHOT_CACHING, Text, Uuid } from '../../http/schemas.js';

export const SNAPSHOT_STATUSES = ['draft', 'published', 'archived'] as const;

const BaseCounts = z.object({
  domains: z.number().int(),
  trails: z.number().int(),
  concepts: z.number().int(),
  sparks: z.number().int(),
});

const snapshotFields = {
  id: Uuid,
  name: z.string(),
  version_label: z.string(),
  description: z.string(),
  status: z.enum(SNAPSHOT_STATUSES),
  created_at: z.string().openapi({ format: 'date-time' }),
  published_at: z.string().nullable().openapi({ format: 'date-time', description: 'null while draft' }),
};

export const SnapshotSummarySchema = z
  .object({ ...snapshotFields, entity_counts: BaseCounts.openapi('SnapshotEntityCounts') })
  .openapi('SnapshotSummary');

export const SnapshotSchema = SnapshotSummarySchema.extend({
  parent_snapshot_id: Uuid.nullable().openapi({ description: 'The snapshot that was current when this one was imported' }),
}).openapi('Snapshot');

export const CurrentSnapshotSchema = SnapshotSchema.extend({
  entity_counts: BaseCounts.extend({
    beacons: z.number().int(),
    concept_sparks: z.number().int(),
    spark_links: z.number().int(),
    concept_links: z.number().int(),
  }).openapi('CurrentSnapshotEntityCounts'),
}).openapi('CurrentSnapshot');

const security: Record<string, string[]>[] = [{ bearerAuth: [] }, { cookieAuth: [] }, { serviceAuth: [] }];
const authErrors = {
  401: errorResponse('UNAUTHORIZED: a user JWT (or the service secret) is required'),
  403: errorResponse('FORBIDDEN: the caller lacks READ_PUBLIC_CONTENT'),
};
const guard = requirePermission('READ_PUBLIC_CONTENT', { allowService: true });

export const listSnapshots = createRoute({
  method: 'get',
  path: '/',
  tags: ['Snapshots'],
  summary: 'List snapshots',
  description: 'Every content snapshot (draft, published and archived), newest first, with entity counts.',
  security,
  middleware: [guard] as const,
  request: {
    query: z.object({
      ...pageQuery(100),
      status: z
        .enum(SNAPSHOT_STATUSES, { error: 'must be one of draft, published, archived' })
        .optional()
        .openapi({ description: 'Only snapshots in this state' }),
    }),
  },
  responses: {
    200: jsonContent(z.object({ data: z.array(SnapshotSummarySchema), meta: PaginationMetaSchema }), 'One page of snapshots'),
    ...authErrors,
    ...commonErrors,
  },
});

export const getCurrentSnapshot = createRoute({
  method: 'get',
  path: '/current',
  tags: ['Snapshots'],
  summary: 'The current snapshot',
  description: 'The published snapshot every content read uses by default, with all entity counts.',
  security,
  middleware: [guard] as const,
  responses: {
    200: jsonContent(CurrentSnapshotSchema, 'The current snapshot'),
    ...authErrors,
    404: errorResponse('NOT_FOUND: no snapshot has been published yet'),
    ...commonErrors,
  },
});

export const getSnapshot = createRoute({
  method: 'get',
  path: '/{id}',
  tags: ['Snapshots'],
  summary: 'A snapshot by id',
  description: 'Any snapshot (draft, published or archived) by its UUID.',
  security,
  middleware: [guard] as const,
  request: { params: z.object({ id: Uuid }) },
  responses: {
    200: jsonContent(SnapshotSchema, 'The snapshot'),
    ...authErrors,
    404: errorResponse('NOT_FOUND: no snapshot has this id'),
    ...commonErrors,
  },
});

export const CHANGE_TYPES = ['category', 'domain', 'trail', 'concept', 'spark', 'beacon'] as const;

const SnapshotChange = z
  .object({
    type: z.enum(CHANGE_TYPES),
    id: Uuid.openapi({ description: 'The entity id, stable across snapshots' }),
    slug: z.string(),
    title: z.string().openapi({ description: 'A domain’s or category’s name; from the newer snapshot, or the older for a removed entity' }),
    change: z.enum(['added', 'removed', 'changed']),
    fields: z
      .array(z.string())
      .nullable()
      .openapi({ description: 'For changed: the fields that differ (links and placements included: sparks, prerequisites, links); else null', example: ['prerequisites', 'title'] }),
  })
  .openapi('SnapshotChange');

export const listSnapshotChanges = createRoute({
  method: 'get',
  path: '/{id}/changes',
  operationId: 'listSnapshotChanges',
  tags: ['Snapshots'],
  summary: 'What changed since another snapshot',
  description:
    'Entities (categories, domains, trails, concepts, sparks, beacons) added, removed and changed from snapshot `since` to this one, ' +
    'matched by their stable ids, with the changed fields named. With `trail`, only that trail’s own entities (the trail, its concepts, ' +
    'the sparks placed in them, its beacons) in either snapshot. By type, then id. ' + PRIVATE_SNAPSHOT_CACHING,
  security,
  middleware: [guard] as const,
  request: {
    params: z.object({ id: Uuid }),
    query: z.object({
      since: Uuid.openapi({ description: 'The snapshot to compare from (any status)' }),
      trail: Text(1, 200).optional().openapi({ description: 'A trail slug or id (in either snapshot)' }),
      ...pageQuery(100),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({ snapshot_id: Uuid, since: Uuid, trail_id: Uuid.nullable(), data: z.array(SnapshotChange), meta: PaginationMetaSchema }),
      'One page of changes',
    ),
    304: notModified,
    ...authErrors,
    404: errorResponse('NOT_FOUND: no snapshot has this id or the since id, or the trail is in neither'),
    ...commonErrors,
  },
});
