import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';

/**
 * Test-only content builder: inserts a small catalog straight into the app tables of one
 * snapshot and returns the ids by slug. Production content goes through the import function;
 * this exists so each test can state exactly the catalog it needs in a few lines.
 */
export interface SparkSpec {
  slug: string;
  title?: string;
  summary?: string;
  difficulty?: 'beginner' | 'intermediate' | 'advanced' | 'expert';
  estimated_mins?: number;
}
export interface ConceptSpec {
  slug: string;
  title?: string;
  description?: string;
  order_index?: number;
  sparks?: (SparkSpec | string)[];
}
export interface TrailSpec {
  slug: string;
  title?: string;
  description?: string;
  difficulty_level?: 'beginner' | 'intermediate' | 'advanced' | 'expert' | null;
  order_index?: number;
  concepts?: ConceptSpec[];
  beacons?: { slug: string; title?: string; concept?: string }[];
}
export interface DomainSpec {
  slug: string;
  name?: string;
  description?: string;
  icon?: string;
  color?: string;
  is_published?: boolean;
  category?: string;
  learning_outcomes?: string[];
  trails?: TrailSpec[];
}
export interface CatalogSpec {
  categories?: { slug: string; name?: string }[];
  domains?: DomainSpec[];
  /** Sparks not placed in any concept (placed ones are created from the concepts). */
  sparks?: SparkSpec[];
  spark_links?: { source: string; target: string; type?: string; weight?: number }[];
  concept_links?: { source: string; target: string; type?: string; weight?: number }[];
}
export interface SnapshotSpec {
  status?: 'draft' | 'published' | 'archived';
  name?: string;
  version_label?: string;
  description?: string;
  parent_snapshot_id?: string | null;
  /** Reuse entity ids from an earlier catalog so the same entity spans snapshots. */
  ids?: Map<string, string>;
}

export interface InsertedCatalog {
  snapshotId: string;
  /** Entity ids keyed by "kind:slug", e.g. ids.get('spark:intro-to-sql'). */
  ids: Map<string, string>;
  id(kind: 'category' | 'domain' | 'trail' | 'concept' | 'spark' | 'beacon', slug: string): string;
}

const titleOf = (slug: string) => slug.split('-').map((w) => w[0].toUpperCase() + w.slice(1)).join(' ');

export async function insertCatalog(sql: postgres.Sql, catalog: CatalogSpec, snapshot: SnapshotSpec = {}): Promise<InsertedCatalog> {
  const ids = new Map<string, string>();
  const idFor = (kind: string, slug: string) => {
    const key = `${kind}:${slug}`;
    if (!ids.has(key)) ids.set(key, snapshot.ids?.get(key) ?? randomUUID());
    return ids.get(key)!;
  };
  const status = snapshot.status ?? 'published';
  const snapshotId = randomUUID();

  await sql.begin(async (tx) => {
    if (status === 'published') await tx`update app.snapshots set status = 'archived' where status = 'published'`;
    await tx`insert into app.snapshots (id, name, version_label, description, status, published_at, parent_snapshot_id)
             values (${snapshotId}, ${snapshot.name ?? 'Test snapshot'}, ${snapshot.version_label ?? 'v-test'},
                     ${snapshot.description ?? ''}, ${status}, ${status === 'draft' ? null : new Date()},
                     ${snapshot.parent_snapshot_id ?? null})`;
    for (const category of catalog.categories ?? []) {
      await tx`insert into app.categories (snapshot_id, id, slug, name)
               values (${snapshotId}, ${idFor('category', category.slug)}, ${category.slug}, ${category.name ?? titleOf(category.slug)})`;
    }
    const sparkRows = new Map<string, SparkSpec>();
    const collect = (spark: SparkSpec | string) => {
      const spec = typeof spark === 'string' ? { slug: spark } : spark;
      if (!sparkRows.has(spec.slug)) sparkRows.set(spec.slug, spec);
      return spec.slug;
    };
    for (const spark of catalog.sparks ?? []) collect(spark);
    for (const domain of catalog.domains ?? []) for (const trail of domain.trails ?? []) for (const concept of trail.concepts ?? []) for (const s of concept.sparks ?? []) collect(s);
    for (const spark of sparkRows.values()) {
      await tx`insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
               values (${snapshotId}, ${idFor('spark', spark.slug)}, ${spark.slug}, ${spark.title ?? titleOf(spark.slug)},
                       ${spark.summary ?? `About ${spark.slug}`}, ${spark.difficulty ?? 'beginner'}, ${spark.estimated_mins ?? 5})`;
    }
    for (const domain of catalog.domains ?? []) {
      const domainId = idFor('domain', domain.slug);
      await tx`insert into app.domains (snapshot_id, id, slug, name, description, icon, color, is_published, category_id, learning_outcomes)
               values (${snapshotId}, ${domainId}, ${domain.slug}, ${domain.name ?? titleOf(domain.slug)}, ${domain.description ?? ''},
                       ${domain.icon ?? 'book'}, ${domain.color ?? '#336699'}, ${domain.is_published ?? true},
                       ${domain.category ? idFor('category', domain.category) : null}, ${domain.learning_outcomes ?? []})`;
      for (const [t, trail] of (domain.trails ?? []).entries()) {
        const trailId = idFor('trail', trail.slug);
        await tx`insert into app.trails (snapshot_id, id, domain_id, slug, title, description, difficulty_level, order_index)
                 values (${snapshotId}, ${trailId}, ${domainId}, ${trail.slug}, ${trail.title ?? titleOf(trail.slug)},
                         ${trail.description ?? ''}, ${trail.difficulty_level === undefined ? 'beginner' : trail.difficulty_level}, ${trail.order_index ?? t})`;
        for (const [c, concept] of (trail.concepts ?? []).entries()) {
          const conceptId = idFor('concept', concept.slug);
          await tx`insert into app.concepts (snapshot_id, id, trail_id, slug, title, description, order_index)
                   values (${snapshotId}, ${conceptId}, ${trailId}, ${concept.slug}, ${concept.title ?? titleOf(concept.slug)},
                           ${concept.description ?? ''}, ${concept.order_index ?? c})`;
          for (const [s, spark] of (concept.sparks ?? []).entries()) {
            await tx`insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index)
                     values (${snapshotId}, ${conceptId}, ${idFor('spark', typeof spark === 'string' ? spark : spark.slug)}, ${s})`;
          }
        }
        for (const beacon of trail.beacons ?? []) {
          await tx`insert into app.beacons (snapshot_id, id, trail_id, concept_id, slug, title)
                   values (${snapshotId}, ${idFor('beacon', beacon.slug)}, ${trailId},
                           ${beacon.concept ? idFor('concept', beacon.concept) : null}, ${beacon.slug}, ${beacon.title ?? titleOf(beacon.slug)})`;
        }
      }
    }
    for (const link of catalog.spark_links ?? []) {
      await tx`insert into app.spark_links (snapshot_id, source_id, target_id, type, weight)
               values (${snapshotId}, ${idFor('spark', link.source)}, ${idFor('spark', link.target)}, ${link.type ?? 'prerequisite'}, ${link.weight ?? 1})`;
    }
    for (const link of catalog.concept_links ?? []) {
      await tx`insert into app.concept_links (snapshot_id, source_id, target_id, type, weight)
               values (${snapshotId}, ${idFor('concept', link.source)}, ${idFor('concept', link.target)}, ${link.type ?? 'prerequisite'}, ${link.weight ?? 1})`;
    }
    // The import computes a snapshot's derived figures in its transaction; so does this builder.
    await tx`select private.refresh_content_rollups(${snapshotId})`;
  });

  return {
    snapshotId,
    ids,
    id(kind, slug) {
      const value = ids.get(`${kind}:${slug}`);
      if (!value) throw new Error(`no ${kind} ${slug} in this catalog`);
      return value;
    },
  };
}
