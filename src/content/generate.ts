/**
 * A deterministic synthetic catalog at any scale, for benchmarks and load tests.
 *
 * Shape per 50,000 sparks: 20 domains, 200 trails, 2,000 concepts (about 25 sparks each) and
 * about 150,000 spark links. The prerequisite graph is a realistic DAG: a spark depends on 2-4
 * sparks of the one or two concepts before it in the same trail, and the first concept of a
 * later trail builds on the domain's two foundation trails, so depth stays bounded (about 30)
 * however large the catalog. The same --sparks and --seed always give the same bytes.
 *
 * Text is written from a vocabulary shaped like a real catalog's (see `vocabulary`): Zipf-
 * distributed words (s = 1), a few very common, most in a handful of documents, and a vocabulary
 * that grows with the catalog (Heaps' law), so search meets both common and rare words.
 *
 * Output is produced as a stream of text chunks: memory stays bounded by the per-concept and
 * per-trail tables (a few numbers per concept) and the vocabulary (about 30 * sqrt(sparks)
 * words), never by the number of sparks or links.
 */

export interface GenerateOptions {
  sparks: number;
  seed: string;
  name?: string;
  versionLabel?: string;
}

const DOMAIN_NAMES = [
  'Software Engineering', 'Data Science', 'Design', 'Personal Finance', 'Cloud Infrastructure', 'Security',
  'Product Management', 'Marketing', 'Leadership', 'Writing', 'Photography', 'Music Theory', 'Nutrition',
  'Psychology', 'Economics', 'Climate Science', 'Public Speaking', 'Languages', 'Mathematics', 'History of Ideas',
];
const ADJECTIVES = [
  'practical', 'resilient', 'modern', 'essential', 'hidden', 'elegant', 'robust', 'curious', 'everyday', 'advanced',
  'classic', 'lean', 'visual', 'reliable', 'scalable', 'gentle', 'honest', 'rapid', 'careful', 'playful',
];
const NOUNS = [
  'patterns', 'habits', 'models', 'pipelines', 'systems', 'budgets', 'stories', 'signals', 'layouts', 'experiments',
  'trade-offs', 'workflows', 'metrics', 'foundations', 'principles', 'tools', 'decisions', 'sketches', 'proofs', 'rituals',
];
const VERBS = ['Understanding', 'Exploring', 'Building', 'Debugging', 'Designing', 'Measuring', 'Explaining', 'Choosing', 'Improving', 'Mastering'];
const DIFFICULTIES = ['beginner', 'intermediate', 'advanced', 'expert'] as const;
const TRAIL_DIFFICULTIES = ['beginner', 'intermediate', 'advanced', 'expert', null] as const;
const COLORS = ['#2563EB', '#7C3AED', '#DB2777', '#059669', '#EA580C', '#0891B2', '#CA8A04', '#DC2626', '#4F46E5', '#65A30D'];

// Pseudo-words of the vocabulary's long tail: syllables of these, so they read like words.
const ONSETS = ['b', 'c', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'cr', 'dr', 'gr', 'pl', 'st', 'tr', 'sh', 'ch', 'th'];
const NUCLEI = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 'm', 'x', 'nd', 'rt', 'st'];

/** 32-bit FNV-1a of a string: seeds the per-entity generators. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: small, fast, good enough for synthetic data, and identical on every platform. */
export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(list: readonly T[], r: () => number) => list[Math.floor(r() * list.length)];
const title = (words: string[]) => words.map((w) => w[0].toUpperCase() + w.slice(1)).join(' ');
const pad = (n: number) => String(n).padStart(6, '0');

/** Splits `total` into `parts` sizes of at least `min`, jittered by `r`, summing to `total`. */
function split(total: number, parts: number, r: () => number, jitter: number): Int32Array {
  const sizes = new Int32Array(parts);
  const base = Math.floor(total / parts);
  for (let i = 0; i < parts; i++) sizes[i] = base + (i < total % parts ? 1 : 0);
  for (let i = 0; i + 1 < parts; i += 2) {
    const d = Math.floor(r() * (jitter + 1));
    const move = Math.min(d, sizes[i + 1] - 1);
    sizes[i] += move;
    sizes[i + 1] -= move;
  }
  return sizes;
}

const starts = (sizes: Int32Array) => {
  const result = new Int32Array(sizes.length + 1);
  for (let i = 0; i < sizes.length; i++) result[i + 1] = result[i] + sizes[i];
  return result;
};

/**
 * The catalog's words, most frequent first, and a Zipf (s = 1) sampler over them. Heaps' law
 * sizes it: 30 * sqrt(sparks) words (about 6,700 at 50,000 sparks, 21,000 at 500,000), at
 * least 200. The 40 real adjectives and nouns are the common head (in a seed-shuffled order),
 * then pronounceable pseudo-words (4-12 letters, all distinct), the same prefix for every size
 * with one seed. Each of the about ten words a spark draws is word r with probability
 * 1 / (r * H(n)), so at 50,000 sparks the first word is in about two thirds of the sparks and
 * the median word in a few dozen (docs/search-graph.md, "The benchmark vocabulary").
 */
export function vocabulary(sparks: number, seed: string) {
  const size = Math.max(200, Math.round(30 * Math.sqrt(sparks)));
  const r = rng(hash(`${seed}:vocabulary`));
  const head = [...ADJECTIVES, ...NOUNS];
  for (let i = head.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [head[i], head[j]] = [head[j], head[i]];
  }
  const words = [...head];
  const seen = new Set(words);
  while (words.length < size) {
    let word = '';
    for (let n = 2 + Math.floor(r() * 2); n > 0; n--) word += pick(ONSETS, r) + pick(NUCLEI, r) + (n === 1 ? pick(CODAS, r) : '');
    if (word.length < 4 || word.length > 12 || seen.has(word)) continue;
    seen.add(word);
    words.push(word);
  }
  const cumulative = new Float64Array(size);
  let sum = 0;
  for (let i = 0; i < size; i++) cumulative[i] = sum += 1 / (i + 1);
  /** A word drawn with Zipf's law: rank r (1-based) with probability proportional to 1 / r. */
  const draw = (rand: () => number) => {
    const u = rand() * sum;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return words[lo];
  };
  return { words, draw };
}

export function catalogShape(sparks: number) {
  const concepts = Math.max(1, Math.min(sparks, Math.round(sparks / 25)));
  const trails = Math.max(1, Math.min(concepts, Math.round(concepts / 10)));
  const domains = Math.max(1, Math.min(trails, Math.round(trails / 10)));
  const categories = Math.max(1, Math.ceil(domains / 4));
  return { sparks, concepts, trails, domains, categories };
}

/** The bundle as a stream of JSON text chunks (about 64 KB each). */
export function* generateBundle(options: GenerateOptions): Generator<string> {
  const total = options.sparks;
  if (!Number.isInteger(total) || total < 1) throw new RangeError('--sparks must be a positive integer');
  const seed = hash(options.seed);
  const shape = catalogShape(total);
  const layout = rng(seed ^ 0x9e3779b9);
  // Sparks per concept, concepts per trail, trails per domain.
  const conceptSparks = starts(split(total, shape.concepts, layout, 12));
  const trailConcepts = starts(split(shape.concepts, shape.trails, layout, 3));
  const domainTrails = starts(split(shape.trails, shape.domains, layout, 2));
  const trailOf = new Int32Array(shape.concepts);
  for (let t = 0; t < shape.trails; t++) for (let c = trailConcepts[t]; c < trailConcepts[t + 1]; c++) trailOf[c] = t;
  const domainOf = new Int32Array(shape.trails);
  for (let d = 0; d < shape.domains; d++) for (let t = domainTrails[d]; t < domainTrails[d + 1]; t++) domainOf[t] = d;

  const vocab = vocabulary(total, options.seed);
  const w = vocab.draw;
  const entityRng = (kind: string, index: number) => rng(hash(`${options.seed}:${kind}:${index}`));
  const domainName = (d: number) => `${DOMAIN_NAMES[d % DOMAIN_NAMES.length]}${d >= DOMAIN_NAMES.length ? ` ${Math.floor(d / DOMAIN_NAMES.length) + 1}` : ''}`;
  const domainSlug = (d: number) => `domain-${pad(d)}`;
  const trailSlug = (t: number) => `trail-${pad(t)}`;
  const conceptSlug = (c: number) => `concept-${pad(c)}`;
  const sparkSlug = (s: number) => `spark-${pad(s)}`;
  const conceptOfSpark = (s: number) => {
    let lo = 0;
    let hi = shape.concepts - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (conceptSparks[mid] <= s) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const sparkIn = (c: number, r: () => number) => conceptSparks[c] + Math.floor(r() * (conceptSparks[c + 1] - conceptSparks[c]));

  let out = '';
  const CHUNK = 1 << 16;
  function* emit(text: string) {
    out += text;
    if (out.length >= CHUNK) {
      yield out;
      out = '';
    }
  }
  function* array(key: string, count: number, item: (i: number) => string | null, last = false) {
    yield* emit(`  ${JSON.stringify(key)}: [`);
    let first = true;
    for (let i = 0; i < count; i++) {
      const text = item(i);
      if (text === null) continue;
      yield* emit(`${first ? '\n' : ',\n'}    ${text}`);
      first = false;
    }
    yield* emit(`\n  ]${last ? '' : ','}\n`);
  }

  yield* emit('{\n');
  yield* emit(`  "snapshot": ${JSON.stringify({
    name: options.name ?? `Synthetic catalog (${total.toLocaleString('en')} sparks, seed ${options.seed})`,
    version_label: options.versionLabel ?? `synthetic-${total}-${options.seed}`.slice(0, 100),
    description: `Generated by npm run content -- generate --sparks ${total} --seed ${options.seed}`,
  })},\n`);
  yield* array('categories', shape.categories, (k) => JSON.stringify({ slug: `category-${pad(k)}`, name: `Category ${k + 1}` }));
  yield* array('domains', shape.domains, (d) => {
    const r = entityRng('domain', d);
    return JSON.stringify({
      slug: domainSlug(d),
      name: domainName(d),
      description: `Everything about ${domainName(d).toLowerCase()}, from first steps to expert practice.`,
      icon: 'sparkles',
      color: pick(COLORS, r),
      category: `category-${pad(Math.floor(d / 4))}`,
      learning_outcomes: [`Explain the ${w(r)} ${w(r)}`, `Apply ${w(r)} with confidence`],
    });
  });
  yield* array('trails', shape.trails, (t) => {
    const r = entityRng('trail', t);
    const local = t - domainTrails[domainOf[t]];
    return JSON.stringify({
      slug: trailSlug(t),
      domain: domainSlug(domainOf[t]),
      title: title([w(r), w(r), `${t + 1}`]),
      description: `A trail through ${w(r)} ${w(r)} and ${w(r)}.`,
      difficulty_level: TRAIL_DIFFICULTIES[local % TRAIL_DIFFICULTIES.length],
    });
  });
  yield* array('concepts', shape.concepts, (c) => {
    const r = entityRng('concept', c);
    const sparks: string[] = [];
    for (let s = conceptSparks[c]; s < conceptSparks[c + 1]; s++) sparks.push(sparkSlug(s));
    return JSON.stringify({
      slug: conceptSlug(c),
      trail: trailSlug(trailOf[c]),
      title: title([w(r), w(r), `${c + 1}`]),
      description: `Key ideas of ${w(r)} ${w(r)}.`,
      sparks,
    });
  });
  yield* array('sparks', total, (s) => {
    const r = entityRng('spark', s);
    const c = conceptOfSpark(s);
    const level = Math.min(3, Math.floor(((c - trailConcepts[trailOf[c]]) * 4) / Math.max(1, trailConcepts[trailOf[c] + 1] - trailConcepts[trailOf[c]])));
    const topic = r() < 0.5 ? [w(r), w(r)] : [w(r), w(r), w(r)];
    const summary = [w(r), w(r), topic[topic.length - 1], w(r), w(r), w(r)];
    return JSON.stringify({
      slug: sparkSlug(s),
      title: `${pick(VERBS, r)} ${title(topic)} #${s + 1}`,
      summary: `${title([summary[0]])} ${summary[1]} for ${summary[2]} ${summary[3]}, with ${summary[4]} ${summary[5]}.`,
      difficulty: DIFFICULTIES[level],
      estimated_mins: 3 + Math.floor(r() * 18),
    });
  });
  yield* array('beacons', shape.trails, (t) => {
    const lastConcept = trailConcepts[t + 1] - 1;
    return JSON.stringify({ slug: `beacon-${pad(t)}`, trail: trailSlug(t), concept: conceptSlug(lastConcept), title: `Finish trail ${t + 1}` });
  });
  // Links: one generator per spark, so the graph does not depend on emission order.
  let link = '';
  yield* emit('  "spark_links": [');
  let firstLink = true;
  for (let s = 0; s < total; s++) {
    const r = entityRng('links', s);
    const c = conceptOfSpark(s);
    const t = trailOf[c];
    const localConcept = c - trailConcepts[t];
    const sources = new Set<number>();
    const related: number[] = [];
    if (localConcept >= 1) {
      const n = 2 + Math.floor(r() * 3);
      for (let i = 0; i < n; i++) sources.add(sparkIn(localConcept >= 2 && r() < 0.3 ? c - 2 : c - 1, r));
    } else {
      const localTrail = t - domainTrails[domainOf[t]];
      if (localTrail >= 2) {
        const n = 1 + Math.floor(r() * 3);
        for (let i = 0; i < n; i++) {
          const foundation = domainTrails[domainOf[t]] + (r() < 0.5 ? 0 : 1);
          sources.add(sparkIn(trailConcepts[foundation + 1] - 1, r));
        }
      }
    }
    if (r() < 0.1 && s > conceptSparks[c]) related.push(conceptSparks[c] + Math.floor(r() * (s - conceptSparks[c])));
    for (const source of sources) {
      link = JSON.stringify({ source: sparkSlug(source), target: sparkSlug(s), type: 'prerequisite', weight: Math.round((0.5 + r()) * 100) / 100 });
      yield* emit(`${firstLink ? '\n' : ',\n'}    ${link}`);
      firstLink = false;
    }
    for (const source of related) {
      link = JSON.stringify({ source: sparkSlug(source), target: sparkSlug(s), type: 'related', weight: 0.5 });
      yield* emit(`${firstLink ? '\n' : ',\n'}    ${link}`);
      firstLink = false;
    }
  }
  yield* emit('\n  ],\n');
  yield* array(
    'concept_links',
    shape.concepts,
    (c) => (c > trailConcepts[trailOf[c]] ? JSON.stringify({ source: conceptSlug(c - 1), target: conceptSlug(c), type: 'prerequisite' }) : null),
    true,
  );
  yield* emit('}\n');
  if (out) yield out;
}
