import { SignJWT, decodeJwt } from 'jose';
import type postgres from 'postgres';
import { rng } from '../src/content/generate.js';

/** A learner with a real session (signed in through the auth service) and journeys of its own. */
export interface BenchLearner {
  id: string;
  token: string;
  /** Its enrollments and the trails they are in. */
  enrollments: { id: string; trailId: string }[];
  /** Sparks of its trails, for learning events. */
  sparkIds: string[];
}

export interface BenchSession {
  accessToken: string;
  refreshToken: string;
}

export interface Fixtures {
  domainSlugs: string[];
  trailSlugs: string[];
  trailIds: string[];
  /** Every spark of the current snapshot, in a fixed shuffled order. */
  sparkSlugs: string[];
  /** Sparks deep enough in the graph that depth 3 and 10 differ (the hot graph variants). */
  deepSparkSlugs: string[];
  /**
   * The dataset's own words (its search lexicon, words english full-text search indexes), most
   * frequent first: search and autocomplete draw them with Zipf's law, as a query log asks for
   * common words most.
   */
  words: string[];
  /** Up to 20,000 titles of sparks, concepts and trails, as their words (two or more of 3+ letters). */
  titles: string[][];
  learners: BenchLearner[];
  /** The published and archived snapshots, the current one first: what change lists compare. */
  snapshotIds: string[];
  /** Sessions for the single-use auth families (refresh, logout), minted per run. */
  sessions: BenchSession[];
}

export const BENCH_JWT_SECRET = 'bench-jwt-secret-for-sparkpath-0123456789abcdef';
export const BENCH_SERVICE_SECRET = 'bench-service-secret-for-sparkpath-0123456789abcdef';
/** Variants of a hot run: few enough that every answer is cached after the warm-up. */
export const HOT_VARIANTS = 16;
/** Distinct argument sets a varied family draws from, where the data allows. */
export const VARIED_VARIANTS = 10_000;
/** Learners with real sessions and journeys. */
export const LEARNERS = 2000;

/** An HS256 access token for a generated user without a session (the synthetic journey owners). */
export async function signUserToken(userId: string, secret = BENCH_JWT_SECRET, ttlSeconds = 6 * 3600): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ role: 'authenticated', user_role: 'learner', subscription_plan: 'premium', email: `${userId.slice(0, 8)}@bench.local` })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setAudience('authenticated')
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}

/** The user a token belongs to. */
export const tokenUser = (token: string) => String(decodeJwt(token).sub);

/**
 * A typo a learner makes, deterministically: two neighbouring letters swapped (the commonest
 * typo) or one dropped, alternately, inside the word. Words shorter than 4 letters are kept:
 * search corrects none of them.
 */
export function misspell(term: string, i: number): string {
  if (term.length < 4) return term;
  const at = 1 + (i % (term.length - 3));
  return i % 2 === 0 ? term.slice(0, at) + term[at + 1] + term[at] + term.slice(at + 2) : term.slice(0, at) + term.slice(at + 1);
}

/** The generator's deterministic random numbers (mulberry32), for shuffles and picks. */
export const random = rng;

/** Fisher-Yates with a fixed seed: popularity in a Zipf mix must not follow id or title order. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const r = random(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Reads what the families draw their requests from out of the loaded dataset, deterministically.
 * `learnerTokens` are access tokens of real sessions, one per learner (bench/sessions.ts).
 */
export async function sampleFixtures(sql: postgres.Sql, learnerTokens: string[]): Promise<Fixtures> {
  const snapshot = sql`private.resolve_snapshot_id(null)`;
  const domainSlugs = (await sql<{ slug: string }[]>`
    select slug from app.domains where snapshot_id = ${snapshot} and is_published order by slug`).map((r) => r.slug);
  const trails = await sql<{ slug: string; id: string }[]>`select slug, id from app.trails where snapshot_id = ${snapshot} order by slug`;
  const sparkSlugs = shuffled((await sql<{ slug: string }[]>`select slug from app.sparks where snapshot_id = ${snapshot} order by slug`).map((r) => r.slug), 19);
  // A prerequisite whose own prerequisites exist: depth 3 and 10 differ.
  const deepSparkSlugs = (await sql<{ slug: string }[]>`
    select g.slug from app.spark_graph_nodes g
    where g.snapshot_id = ${snapshot} and g.round >= 12
    order by g.slug limit ${HOT_VARIANTS}`).map((r) => r.slug);
  const words = (await sql<{ word: string }[]>`
    select word from app.search_lexicon
    where snapshot_id = ${snapshot} and char_length(word) >= 3 and word !~ '^[0-9]+$'
      and to_tsvector('english', word) <> ''::tsvector
    order by docs desc, word`).map((r) => r.word);
  // Titles as a learner reads them, for queries of words that stand together in the catalog.
  const titles = (await sql<{ title: string }[]>`
    select search_title as title from (
      select id, search_title from app.sparks where snapshot_id = ${snapshot}
      union all select id, search_title from app.concepts where snapshot_id = ${snapshot}
      union all select id, search_title from app.trails where snapshot_id = ${snapshot}) t
    order by md5(id::text) limit 20000`)
    .map((r) => r.title.split(/[^\p{L}]+/u).filter((w) => w.length >= 3))
    .filter((words) => words.length >= 2);
  const snapshotIds = (await sql<{ id: string }[]>`
    select id from app.snapshots where status in ('published', 'archived')
    order by (id = ${snapshot}) desc, published_at desc nulls last, id`).map((r) => r.id);
  const ids = learnerTokens.map(tokenUser);
  const enrollments = await sql<{ user_id: string; id: string; trail_id: string }[]>`
    select user_id, id, trail_id from app.enrollments where user_id = any(${ids}::uuid[]) order by user_id, started_at, id`;
  const sparksOfTrail = new Map<string, string[]>();
  for (const row of await sql<{ trail_id: string; spark_id: string }[]>`
    select trail_id, spark_id from app.trail_spark_positions where snapshot_id = ${snapshot} and ordinal <= 12 order by trail_id, ordinal`) {
    sparksOfTrail.set(row.trail_id, [...(sparksOfTrail.get(row.trail_id) ?? []), row.spark_id]);
  }
  const byUser = new Map<string, { id: string; trailId: string }[]>();
  for (const e of enrollments) byUser.set(e.user_id, [...(byUser.get(e.user_id) ?? []), { id: e.id, trailId: e.trail_id }]);
  const learners = learnerTokens.map((token, i) => {
    const own = byUser.get(ids[i]) ?? [];
    return { id: ids[i], token, enrollments: own, sparkIds: own.flatMap((e) => sparksOfTrail.get(e.trailId) ?? []) };
  });
  return {
    domainSlugs,
    trailSlugs: trails.map((t) => t.slug),
    trailIds: trails.map((t) => t.id),
    sparkSlugs,
    deepSparkSlugs,
    words,
    titles,
    learners,
    snapshotIds,
    sessions: [],
  };
}
