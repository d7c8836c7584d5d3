import { createRoute, z } from '@hono/zod-openapi';
import { booleanQuery, commonErrors, Difficulty, errorResponse, intQuery, jsonContent, notModified, pageQuery, Slug, Text } from '../../http/schemas.js';
import {
  BrowseDomain,
  DiscoveryAllList,
  DiscoveryConcept,
  DiscoveryTrail,
  Facets,
  listOf,
  SnapshotIdQuery,
  Spark,
} from './discovery.schemas.js';

/** Largest per_page of the discovery lists (the spec leaves it open; we use the domains-list maximum). */
export const DISCOVERY_MAX_PER_PAGE = 100;
/** /browse returns a tree per domain, so its pages are smaller. */
export const BROWSE_MAX_PER_PAGE = 50;

const TAG = 'Discovery';
const CACHING =
  'Public and cacheable: responses carry an ETag (resolved snapshot + normalised query) and Cache-Control; If-None-Match answers 304.';

const responses = (schema: z.ZodType, description: string) => ({
  200: jsonContent(schema, description),
  304: notModified,
  404: errorResponse('NOT_FOUND: unknown snapshot_id or an unknown slug in a filter'),
  ...commonErrors,
});

const optionalSlug = (description: string) => Slug.optional().openapi({ description });

// The spec documents the default as `all`: sent explicitly it means the same as leaving it out
// (same answer, same ETag).
export const TypesQuery = z
  .string()
  .regex(/^(all|(domain|trail|concept)(,(domain|trail|concept))*)$/i, 'must be all or a comma-separated subset of domain, trail, concept')
  .optional()
  .transform((value) => (value?.toLowerCase() === 'all' ? undefined : value))
  .openapi({ type: 'string', description: 'all (the default), or a comma-separated subset of domain,trail,concept.', example: 'trail,concept' });

export const listTrails = createRoute({
  method: 'get',
  path: '/trails',
  tags: [TAG],
  summary: 'Trails with counts and concept previews',
  description: `Trails in title order, each with concept_count, spark_count, estimated_mins (derived) and its first concept_limit concepts. An unknown domain slug is 404. ${CACHING}`,
  request: {
    query: z.object({
      ...pageQuery(DISCOVERY_MAX_PER_PAGE),
      domain: optionalSlug('Only trails of this domain (slug).'),
      difficulty: Difficulty.optional(),
      concept_limit: intQuery(5, 0, 50),
      snapshot_id: SnapshotIdQuery,
    }),
  },
  responses: responses(listOf(DiscoveryTrail, 'DiscoveryTrailList'), 'A page of trails'),
});

export const listConcepts = createRoute({
  method: 'get',
  path: '/concepts',
  tags: [TAG],
  summary: 'Concepts with counts and spark previews',
  description: `Concepts of a trail in position order (or all concepts in title order), each with spark_count, estimated_mins and its first spark_limit sparks. An unknown trail slug is 404. ${CACHING}`,
  request: {
    query: z.object({
      ...pageQuery(DISCOVERY_MAX_PER_PAGE),
      trail: optionalSlug('Only concepts of this trail (slug).'),
      spark_limit: intQuery(3, 0, 50),
      snapshot_id: SnapshotIdQuery,
    }),
  },
  responses: responses(listOf(DiscoveryConcept, 'DiscoveryConceptList'), 'A page of concepts'),
});

export const listSparks = createRoute({
  method: 'get',
  path: '/sparks',
  tags: [TAG],
  summary: 'Sparks',
  description: `Sparks of a concept in position order (or all sparks in title order), optionally of one difficulty. An unknown concept slug is 404. ${CACHING}`,
  request: {
    query: z.object({
      ...pageQuery(DISCOVERY_MAX_PER_PAGE),
      concept: optionalSlug('Only sparks of this concept (slug).'),
      difficulty: Difficulty.optional(),
      snapshot_id: SnapshotIdQuery,
    }),
  },
  responses: responses(listOf(Spark, 'SparkList'), 'A page of sparks'),
});

export const listAll = createRoute({
  method: 'get',
  path: '/all',
  tags: [TAG],
  summary: 'Domains, trails and concepts on one page',
  description: [
    'Mixed items (type DOMAIN, TRAIL, CONCEPT), alphabetical within each type.',
    'Share rule: the included types split per_page by weight 10/25/65 (renormalised over the included types); every type but the last gets round(per_page × weight / total weight), half up, the last the rest (20 → 2/5/13, 10 → 1/3/6).',
    'Each later page continues where each type stopped; the slots of an exhausted type go to the others in proportion to their share. Page N is computed directly, and walking every page returns each matching item exactly once.',
    'Filters: domain (content within it), track (only the concepts of that trail), difficulty (only trails of that level), types (subset), q (case-insensitive substring of name/title). Combining track and difficulty matches nothing.',
    `nested_limit 0–10 (0 omits concepts/sparks). include_facets adds facets over every matching item. ${CACHING}`,
  ].join(' '),
  request: {
    query: z.object({
      ...pageQuery(DISCOVERY_MAX_PER_PAGE),
      types: TypesQuery,
      domain: optionalSlug('Only content within this domain (slug).'),
      track: optionalSlug('Only concepts of this trail (slug).'),
      difficulty: Difficulty.optional(),
      q: Text(1, 200, { trim: true })
        .optional()
        .openapi({ description: 'Case-insensitive substring of a name or title (1-200 characters).' }),
      include_facets: booleanQuery(false),
      nested_limit: intQuery(3, 0, 10),
      snapshot_id: SnapshotIdQuery,
    }),
  },
  responses: responses(DiscoveryAllList, 'A page of mixed items'),
});

export const getFacets = createRoute({
  method: 'get',
  path: '/facets',
  tags: [TAG],
  summary: 'Facet lists of the catalog',
  description: `Counts of matching items per domain and per track (the item itself plus the matching items inside it), trails per difficulty level, and items per type, scoped by domain, track and difficulty with the /all rules. ${CACHING}`,
  request: {
    query: z.object({
      domain: optionalSlug('Scope to this domain (slug).'),
      track: optionalSlug('Scope to the concepts of this trail (slug).'),
      difficulty: Difficulty.optional(),
      snapshot_id: SnapshotIdQuery,
    }),
  },
  responses: responses(Facets, 'The facet lists'),
});

export const browse = createRoute({
  method: 'get',
  path: '/browse',
  tags: [TAG],
  summary: 'The catalog tree for a catalog page',
  description: [
    'Everything a catalog page needs in one call: a page of published domains (name order) with their counts,',
    'each with its first trail_limit trails (trail order, with counts) and each trail with its first concept_limit concepts (position order, with counts).',
    'page/per_page paginate the domains (per_page max 50). domain narrows to one domain; difficulty keeps only trails of that level and only domains that have one.',
    CACHING,
  ].join(' '),
  request: {
    query: z.object({
      ...pageQuery(BROWSE_MAX_PER_PAGE),
      domain: optionalSlug('Only this domain (slug).'),
      difficulty: Difficulty.optional(),
      trail_limit: intQuery(5, 0, 20),
      concept_limit: intQuery(5, 0, 20),
      snapshot_id: SnapshotIdQuery,
    }),
  },
  responses: responses(listOf(BrowseDomain, 'BrowseList'), 'A page of the catalog tree'),
});
