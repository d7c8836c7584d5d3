import type postgres from 'postgres';

/** A small valid content bundle (2 domains, 3 trails, 4 concepts, 6 sparks); `extra` adds sparks. */
export function smallBundle(options: { name?: string; version_label?: string; extraSparks?: number } = {}) {
  const extra = Array.from({ length: options.extraSparks ?? 0 }, (_, i) => ({
    slug: `extra-${i + 1}`, title: `Extra ${i + 1}`, summary: 'More', difficulty: 'beginner', estimated_mins: 3,
  }));
  return {
    snapshot: { name: options.name ?? 'Small catalog', version_label: options.version_label ?? 'v1', description: 'For tests' },
    categories: [{ slug: 'tech', name: 'Technology' }],
    domains: [
      { slug: 'data', name: 'Data', category: 'tech', color: '#112233', learning_outcomes: ['Query data'] },
      { slug: 'craft', name: 'Craft' },
    ],
    trails: [
      { slug: 'sql', domain: 'data', title: 'SQL', difficulty_level: 'beginner' },
      { slug: 'stats', domain: 'data', title: 'Stats', difficulty_level: 'advanced' },
      { slug: 'wood', domain: 'craft', title: 'Woodwork', difficulty_level: null },
    ],
    concepts: [
      { slug: 'select', trail: 'sql', title: 'Select', sparks: ['select-star', 'where'] },
      { slug: 'joins', trail: 'sql', title: 'Joins', sparks: ['inner-join', 'where'] },
      { slug: 'mean', trail: 'stats', title: 'Mean', sparks: ['average'] },
      { slug: 'saws', trail: 'wood', title: 'Saws', sparks: ['hand-saw', ...extra.map((s) => s.slug)] },
    ],
    sparks: [
      { slug: 'select-star', title: 'SELECT *', summary: 'All columns', difficulty: 'beginner', estimated_mins: 5 },
      { slug: 'where', title: 'WHERE', summary: 'Filter rows', difficulty: 'beginner', estimated_mins: 6 },
      { slug: 'inner-join', title: 'Inner join', summary: 'Match rows', difficulty: 'intermediate', estimated_mins: 8 },
      { slug: 'average', title: 'Average', summary: 'The mean', difficulty: 'beginner', estimated_mins: 4 },
      { slug: 'hand-saw', title: 'Hand saw', summary: 'Cut wood', difficulty: 'beginner', estimated_mins: 7 },
      { slug: 'orphan', title: 'Orphan', summary: 'In no concept', difficulty: 'expert', estimated_mins: 9 },
      ...extra,
    ],
    beacons: [{ slug: 'first-query', trail: 'sql', concept: 'select', title: 'Write a first query' }],
    spark_links: [
      { source: 'select-star', target: 'where' },
      { source: 'where', target: 'inner-join', weight: 2 },
      { source: 'average', target: 'inner-join', type: 'related', weight: 0.5 },
    ],
    concept_links: [{ source: 'select', target: 'joins' }],
  };
}

export interface ImportResult {
  import_id: string;
  status: 'succeeded' | 'failed';
  snapshot_id: string | null;
  parent_snapshot_id: string | null;
  counts?: Record<string, number>;
  error?: { code: string; message: string; problems?: { path: string; message: string; cycle?: string[] }[]; problem_count?: number };
}

/** Imports a bundle through private.import_content_bundle as the owner. */
export async function importBundle(sql: postgres.Sql, bundle: unknown, options: { promote?: boolean } = {}): Promise<ImportResult> {
  const [row] = await sql<{ result: ImportResult }[]>`
    select private.import_content_bundle(${sql.json(bundle as postgres.JSONValue)}, promote => ${options.promote ?? false}) as result`;
  return row.result;
}
