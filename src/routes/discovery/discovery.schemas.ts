import { z } from '@hono/zod-openapi';
import { Difficulty, PaginationMetaSchema, Uuid } from '../../http/schemas.js';

/**
 * Response shapes of the public catalog. Objects are strict: an item carries exactly the
 * fields the spec lists for its endpoint, and the contract check in the tests enforces it.
 */

export const SnapshotIdQuery = Uuid.optional().openapi({
  description: 'Snapshot to read (draft and archived included). Default: the current snapshot; when none is published, no snapshot filter.',
});

const Count = z.number().int().min(0);
const HexColor = z.string().regex(/^#[0-9A-Fa-f]{6}$/);

export const Preview = z
  .strictObject({ id: Uuid, slug: z.string(), title: z.string(), estimated_mins: Count })
  .openapi('CatalogPreview', { description: 'Trail, concept or spark preview: id, slug, title, estimated_mins.' });

export const DomainBase = {
  id: Uuid,
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  icon: z.string(),
  color: HexColor,
  trail_count: Count,
};

export const DomainSummary = z.strictObject(DomainBase).openapi('DomainSummary');

const DomainCounts = { ...DomainBase, concept_count: Count, spark_count: Count, estimated_mins: Count };

export const DiscoveryDomain = z
  .strictObject({ ...DomainCounts, trails: z.array(Preview) })
  .openapi('DiscoveryDomain');

const TrailFields = {
  id: Uuid,
  slug: z.string(),
  title: z.string(),
  description: z.string(),
  difficulty_level: Difficulty.nullable(),
  concept_count: Count,
  spark_count: Count,
  estimated_mins: Count,
};

export const DiscoveryTrail = z.strictObject({ ...TrailFields, concepts: z.array(Preview) }).openapi('DiscoveryTrail');

const ConceptFields = {
  id: Uuid,
  slug: z.string(),
  title: z.string(),
  description: z.string(),
  order_index: z.number().int(),
  spark_count: Count,
  estimated_mins: Count,
};

export const DiscoveryConcept = z.strictObject({ ...ConceptFields, sparks: z.array(Preview) }).openapi('DiscoveryConcept');

export const Spark = z
  .strictObject({
    id: Uuid,
    slug: z.string(),
    title: z.string(),
    summary: z.string(),
    difficulty: Difficulty,
    estimated_mins: Count,
  })
  .openapi('Spark');

export const AllDomainItem = z.strictObject({ type: z.literal('DOMAIN'), ...DomainCounts }).openapi('DiscoveryAllDomain');
export const AllTrailItem = z
  .strictObject({ type: z.literal('TRAIL'), ...TrailFields, concepts: z.array(Preview).optional() })
  .openapi('DiscoveryAllTrail', { description: '`concepts` is omitted when nested_limit=0.' });
export const AllConceptItem = z
  .strictObject({ type: z.literal('CONCEPT'), ...ConceptFields, sparks: z.array(Preview).optional() })
  .openapi('DiscoveryAllConcept', { description: '`sparks` is omitted when nested_limit=0.' });

const NamedCount = z.strictObject({ slug: z.string(), name: z.string(), count: Count });
export const Facets = z
  .strictObject({
    domains: z.array(NamedCount),
    tracks: z.array(NamedCount),
    difficulties: z.array(z.strictObject({ level: Difficulty, count: Count })),
    types: z.array(z.strictObject({ type: z.enum(['DOMAIN', 'TRAIL', 'CONCEPT']), count: Count })),
  })
  .openapi('DiscoveryFacets');

export const listOf = <T extends z.ZodType>(item: T, name: string) =>
  z.strictObject({ data: z.array(item), meta: PaginationMetaSchema }).openapi(name);

export const DiscoveryAllList = z
  .strictObject({
    data: z.array(z.union([AllDomainItem, AllTrailItem, AllConceptItem])),
    meta: PaginationMetaSchema,
    facets: Facets.optional(),
  })
  .openapi('DiscoveryAllList');

const BrowseConcept = z.strictObject({
  id: Uuid,
  slug: z.string(),
  title: z.string(),
  order_index: z.number().int(),
  spark_count: Count,
  estimated_mins: Count,
});
const BrowseTrail = z.strictObject({
  id: Uuid,
  slug: z.string(),
  title: z.string(),
  difficulty_level: Difficulty.nullable(),
  concept_count: Count,
  spark_count: Count,
  estimated_mins: Count,
  concepts: z.array(BrowseConcept),
});
export const BrowseDomain = z.strictObject({ ...DomainCounts, trails: z.array(BrowseTrail) }).openapi('BrowseDomain');

export const DomainDetail = z
  .strictObject({
    ...DomainBase,
    is_published: z.boolean(),
    category_id: Uuid.nullable(),
    learning_outcomes: z.array(z.string()),
  })
  .openapi('DomainDetail');

export const DomainTrails = z
  .strictObject({
    ...DomainBase,
    trails: z.array(z.strictObject({ id: Uuid, title: z.string(), slug: z.string(), estimated_mins: Count })),
    trail_meta: PaginationMetaSchema.extend({ total_concept_count: Count }).strict(),
  })
  .openapi('DomainTrails');

export const RelatedDomains = z
  .strictObject({
    data: z.array(DomainSummary),
    meta: z.strictObject({ total: Count, page: z.number().int(), per_page: z.number().int() }),
  })
  .openapi('RelatedDomains');
