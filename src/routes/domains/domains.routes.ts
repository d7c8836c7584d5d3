import { createRoute, z } from '@hono/zod-openapi';
import { commonErrors, errorResponse, intQuery, jsonContent, notModified, pageQuery } from '../../http/schemas.js';
import {
  DiscoveryDomain,
  DomainDetail,
  DomainSummary,
  DomainTrails,
  listOf,
  RelatedDomains,
  SnapshotIdQuery,
} from '../discovery/discovery.schemas.js';

const TAG = 'Domains';
const CACHING = 'Public and cacheable (ETag + Cache-Control; If-None-Match answers 304).';

const SlugOrId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9-]+$/, 'must be a slug or a UUID')
  .openapi({ param: { name: 'slug', in: 'path' }, description: 'Domain slug or UUID', example: 'data-engineering' });

const responses = (schema: z.ZodType, description: string, notFound: string) => ({
  200: jsonContent(schema, description),
  304: notModified,
  404: errorResponse(notFound),
  ...commonErrors,
});

/**
 * GET /discovery/domains and GET /discovery/domains/ are one route (routing ignores the
 * trailing slash) but the spec gives them two bodies: without the slash it is the discovery
 * list (counts and trail previews, trail_limit), with it the plain domains list.
 */
export const listDomains = createRoute({
  method: 'get',
  path: '/',
  tags: [TAG],
  summary: 'Published domains (discovery list or plain list)',
  description: [
    '`/discovery/domains` (no trailing slash): published domains with trail_count, concept_count, spark_count, estimated_mins and the first trail_limit trails (id, slug, title, estimated_mins).',
    '`/discovery/domains/` (trailing slash): published domains with id, slug, name, description, icon, color, trail_count; trail_limit is ignored.',
    `Name order; per_page max 100. ${CACHING}`,
  ].join(' '),
  request: {
    query: z.object({
      ...pageQuery(100),
      trail_limit: intQuery(5, 0, 100),
      snapshot_id: SnapshotIdQuery,
    }),
  },
  responses: responses(
    z.union([listOf(DiscoveryDomain, 'DiscoveryDomainList'), listOf(DomainSummary, 'DomainList')]),
    'A page of published domains',
    'NOT_FOUND: unknown snapshot_id',
  ),
});

export const getDomain = createRoute({
  method: 'get',
  path: '/{slug}',
  tags: [TAG],
  summary: 'A domain by slug or UUID',
  description: `The domain detail. Unpublished domains are returned too (is_published says so). ${CACHING}`,
  request: { params: z.object({ slug: SlugOrId }), query: z.object({ snapshot_id: SnapshotIdQuery }) },
  responses: responses(DomainDetail, 'The domain', 'NOT_FOUND: no domain has this slug or UUID (or unknown snapshot_id)'),
});

export const getDomainTrails = createRoute({
  method: 'get',
  path: '/{slug}/trails',
  tags: [TAG],
  summary: 'A domain with one page of its trails',
  description: `Domain fields plus a page of its trails (trail order). page applies to the trails; trail_limit (default 5, max 100) is the page size. trail_meta has the six pagination fields plus total_concept_count. ${CACHING}`,
  request: {
    params: z.object({ slug: SlugOrId }),
    query: z.object({ page: intQuery(1, 1, 100_000), trail_limit: intQuery(5, 1, 100), snapshot_id: SnapshotIdQuery }),
  },
  responses: responses(DomainTrails, 'The domain and its trails', 'NOT_FOUND: no domain has this slug or UUID (or unknown snapshot_id)'),
});

export const listRelatedDomains = createRoute({
  method: 'get',
  path: '/{slug}/related',
  tags: [TAG],
  summary: 'Domains related to a domain',
  description: `Published domains of the same category (name order), the requested one excluded. When it has no category or no other domain shares it: other published domains in a pseudo-random order seeded by the requested domain (stable per snapshot, so cacheable). limit default 4, max 10. ${CACHING}`,
  request: {
    params: z.object({ slug: SlugOrId }),
    query: z.object({ limit: intQuery(4, 1, 10), snapshot_id: SnapshotIdQuery }),
  },
  responses: responses(RelatedDomains, 'Related domains', 'NOT_FOUND: no domain has this slug or UUID (or unknown snapshot_id)'),
});
