import { z } from 'zod';

/**
 * The content bundle: the file format `npm run content -- import` reads. One JSON object whose
 * arrays hold flat entity lists that reference each other by slug. docs/content-bundle.schema.json
 * is generated from this schema (`npm run content -- schema`); a test fails when it is stale.
 * The database validates the same rules again (and the cross-references) on import.
 */

const Slug = z
  .string()
  .max(200)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be a lowercase slug (letters, digits, single hyphens)')
  .meta({ description: 'Lowercase letters, digits and single hyphens; unique per entity kind within the bundle.' });

const SlugRef = (kind: string) => Slug.meta({ description: `Slug of a ${kind} in this bundle.` });

const EntityId = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID')
  .meta({
    description:
      'Optional stable id. When omitted, the id is derived from the kind and slug (UUID v3), so the same slug keeps the same id in every snapshot.',
  });

const Title = z.string().trim().min(1).max(300);
const Text = z.string();
const DIFFICULTIES = ['beginner', 'intermediate', 'advanced', 'expert'] as const;
export const LINK_TYPES = ['prerequisite', 'related', 'extends'] as const;

export const SnapshotMetaSchema = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    version_label: z.string().min(1).max(100).optional(),
    description: Text.optional(),
  })
  .meta({ description: 'Snapshot metadata; the CLI flags --name, --version-label and --description override it.' });

export const CategorySchema = z.strictObject({ id: EntityId.optional(), slug: Slug, name: Title });

export const DomainSchema = z.strictObject({
  id: EntityId.optional(),
  slug: Slug,
  name: Title,
  description: Text.optional(),
  icon: Text.optional().meta({ description: 'Icon name for clients, e.g. "code".' }),
  color: z
    .string()
    .regex(/^#[0-9A-Fa-f]{6}$/, 'must be a hex colour like #1A2B3C')
    .optional()
    .meta({ description: 'Hex colour #RRGGBB; default #6B7280.' }),
  is_published: z.boolean().optional().meta({ description: 'Default true.' }),
  category: SlugRef('category').optional(),
  learning_outcomes: z.array(z.string()).optional(),
});

export const TrailSchema = z.strictObject({
  id: EntityId.optional(),
  slug: Slug,
  domain: SlugRef('domain'),
  title: Title,
  description: Text.optional(),
  difficulty_level: z.enum(DIFFICULTIES).nullable().optional().meta({ description: 'null (or absent) means "any level".' }),
  order_index: z.int().min(0).max(1_000_000).optional().meta({ description: 'Position in the domain; default: order of appearance.' }),
});

export const ConceptSchema = z.strictObject({
  id: EntityId.optional(),
  slug: Slug,
  trail: SlugRef('trail'),
  title: Title,
  description: Text.optional(),
  order_index: z.int().min(0).max(1_000_000).optional().meta({ description: 'Position in the trail; default: order of appearance.' }),
  sparks: z.array(SlugRef('spark')).optional().meta({ description: 'The sparks of this concept, in order. A spark may be in several concepts.' }),
});

export const SparkSchema = z.strictObject({
  id: EntityId.optional(),
  slug: Slug,
  title: Title,
  summary: Text.optional(),
  difficulty: z.enum(DIFFICULTIES),
  estimated_mins: z.int().min(1).max(600),
});

export const BeaconSchema = z.strictObject({
  id: EntityId.optional(),
  slug: Slug,
  trail: SlugRef('trail'),
  concept: SlugRef('concept').optional().meta({ description: 'The concept that unlocks the beacon; must belong to the trail.' }),
  title: Title,
  description: Text.optional(),
});

const link = (kind: string) =>
  z.strictObject({
    source: SlugRef(kind).meta({ description: `The ${kind} that comes first.` }),
    target: SlugRef(kind),
    type: z.enum(LINK_TYPES).optional().meta({
      description: 'prerequisite (default): source must be known before target; related: see also; extends: target goes deeper into source.',
    }),
    weight: z.number().gt(0).lt(1000).optional().meta({ description: 'Strength of the link, default 1.' }),
  });

export const SparkLinkSchema = link('spark');
export const ConceptLinkSchema = link('concept');

/** Each array of the bundle and the schema of one of its elements. */
export const ITEM_SCHEMAS = {
  categories: CategorySchema,
  domains: DomainSchema,
  trails: TrailSchema,
  concepts: ConceptSchema,
  sparks: SparkSchema,
  beacons: BeaconSchema,
  spark_links: SparkLinkSchema,
  concept_links: ConceptLinkSchema,
} as const;
export type BundleArrayKey = keyof typeof ITEM_SCHEMAS;
export const BUNDLE_ARRAY_KEYS = Object.keys(ITEM_SCHEMAS) as BundleArrayKey[];

export const ContentBundleSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ description: 'Path or URL of this JSON Schema, for editors.' }),
    snapshot: SnapshotMetaSchema.optional(),
    categories: z.array(CategorySchema).optional(),
    domains: z.array(DomainSchema).optional(),
    trails: z.array(TrailSchema).optional(),
    concepts: z.array(ConceptSchema).optional(),
    sparks: z.array(SparkSchema).optional(),
    beacons: z.array(BeaconSchema).optional(),
    spark_links: z.array(SparkLinkSchema).optional(),
    concept_links: z.array(ConceptLinkSchema).optional(),
  })
  .meta({
    title: 'Sparkpath content bundle',
    description:
      'A whole catalog for one snapshot: flat lists of categories, domains, trails, concepts, sparks, beacons and links, referencing each other by slug. See docs/content.md.',
  });
export type ContentBundle = z.infer<typeof ContentBundleSchema>;

/** The JSON Schema committed at docs/content-bundle.schema.json. */
export function bundleJsonSchema(): string {
  const schema = z.toJSONSchema(ContentBundleSchema, { target: 'draft-2020-12', io: 'input' });
  return `${JSON.stringify({ $id: 'https://sparkpath.dev/schemas/content-bundle.schema.json', ...schema }, null, 2)}\n`;
}

export interface BundleProblem {
  path: string;
  message: string;
}

/** zod issues of one bundle element as problems with JSON paths like $.sparks[3].difficulty. */
export function itemProblems(key: string, position: number, value: unknown): BundleProblem[] {
  const base = position < 0 ? `$.${key}` : `$.${key}[${position}]`;
  if (position < 0) {
    if (key === '$schema') return typeof value === 'string' ? [] : [{ path: base, message: 'must be a string' }];
    if (key === 'snapshot') return issues(base, SnapshotMetaSchema.safeParse(value));
    if (key in ITEM_SCHEMAS) return [{ path: base, message: 'must be an array' }];
    return [{ path: base, message: 'is not a bundle key' }];
  }
  const schema = ITEM_SCHEMAS[key as BundleArrayKey];
  if (!schema) return position === 0 ? [{ path: `$.${key}`, message: 'is not a bundle key' }] : [];
  return issues(base, schema.safeParse(value));
}

function issues(base: string, result: { success: boolean; error?: z.ZodError }): BundleProblem[] {
  if (result.success || !result.error) return [];
  const problems: BundleProblem[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.push({ path: joinPath(base, [...issue.path, key]), message: 'is not a known field' });
      continue;
    }
    problems.push({ path: joinPath(base, issue.path), message: issue.message });
  }
  return problems;
}

function joinPath(base: string, path: PropertyKey[]): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : `${acc}.${String(part)}`), base);
}
