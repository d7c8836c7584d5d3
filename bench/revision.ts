import type { ContentBundle } from '../src/content/bundle-schema.js';
import { rng } from '../src/content/generate.js';

/** Shares of the sparks a release touches: edited, removed, added. */
const EDITED = 0.02;
const REMOVED = 0.005;
const ADDED = 0.005;

/**
 * The catalog team's next release of a bundle: the same catalog with about 2 % of its sparks
 * edited, 0.5 % removed and 0.5 % added (chosen from a fixed seed), as a release looks. The bench
 * promotes it over the first import, so "what changed" compares two real snapshots the way an
 * app asks after a release, never a snapshot with itself.
 */
export function reviseBundle(bundle: ContentBundle): ContentBundle {
  const random = rng(7);
  // Removed: never one of a concept's first two sparks, so a release empties no concept.
  const removed = new Set((bundle.concepts ?? []).flatMap((c) => (c.sparks ?? []).slice(2).filter(() => random() < REMOVED)));
  const bySlug = new Map((bundle.sparks ?? []).map((s) => [s.slug, s]));
  const added: ContentBundle['sparks'] = [];
  const concepts = (bundle.concepts ?? []).map((concept) => {
    const kept = (concept.sparks ?? []).filter((slug) => !removed.has(slug));
    const more = kept.filter(() => random() < ADDED).map((slug) => `${slug}-r2`);
    for (const slug of more) {
      const { id: _id, ...base } = bySlug.get(slug.slice(0, -3))!;
      added.push({ ...base, slug, title: `${base.title} (part 2)` });
    }
    return { ...concept, sparks: [...kept, ...more] };
  });
  const sparks = (bundle.sparks ?? [])
    .filter((s) => !removed.has(s.slug))
    .map((s) => (random() < EDITED ? { ...s, summary: `${s.summary ?? ''} Revised for this release.`, estimated_mins: Math.min(600, s.estimated_mins + 1) } : s));
  return {
    ...bundle,
    snapshot: { ...bundle.snapshot, version_label: `${bundle.snapshot?.version_label ?? 'bench'}-r2` },
    concepts,
    sparks: [...sparks, ...added],
    spark_links: (bundle.spark_links ?? []).filter((l) => !removed.has(l.source) && !removed.has(l.target)),
  };
}
