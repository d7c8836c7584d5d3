import { SignJWT } from 'jose';
import type postgres from 'postgres';

export interface BenchUser {
  id: string;
  token: string;
  enrollmentId: string;
}

export interface BenchSession {
  accessToken: string;
  refreshToken: string;
}

export interface Fixtures {
  domainSlugs: string[];
  sparkSlugs: string[];
  /** Words of the dataset's titles; one in three misspelled (typo-tolerant search, issue 21). */
  searchTerms: string[];
  /** What autocomplete is sent: 3-letter prefixes, and 6-letter prefixes of the misspelled terms. */
  autocompleteTerms: string[];
  users: BenchUser[];
  /** Real sessions (auth issue); empty until a session mint is available. */
  sessions: BenchSession[];
  /** Authorization header of the i-th sampled user (JWT-only routes). */
  userHeaders(i: number): Record<string, string>;
}

export const BENCH_JWT_SECRET = 'bench-jwt-secret-for-sparkpath-0123456789abcdef';
export const BENCH_SERVICE_SECRET = 'bench-service-secret-for-sparkpath-0123456789abcdef';
export const VARIANTS = 16;

/** An HS256 access token for a generated user, as a Supabase project would issue it. */
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

/**
 * Samples request parameters from the loaded dataset (deterministically: setseed), so every
 * family spreads its load over several rows instead of hammering one cached page.
 */
export async function sampleFixtures(sql: postgres.Sql): Promise<Fixtures> {
  await sql`select setseed(0.42)`;
  const snapshot = sql`private.resolve_snapshot_id(null)`;
  const domainSlugs = (await sql<{ slug: string }[]>`
    select slug from app.domains where snapshot_id = ${snapshot} and is_published order by random() limit ${VARIANTS}`).map((r) => r.slug);
  // Sparks deep enough in the graph that depth 3 and 10 differ: they have a prerequisite whose
  // own prerequisites exist.
  const sparkSlugs = (await sql<{ slug: string }[]>`
    select s.slug from app.sparks s
    where s.snapshot_id = ${snapshot}
      and exists (select 1 from app.spark_links l
                  join app.spark_links l2 on l2.snapshot_id = l.snapshot_id and l2.target_id = l.source_id
                  where l.snapshot_id = s.snapshot_id and l.target_id = s.id)
    order by random() limit ${VARIANTS}`).map((r) => r.slug);
  const searchTerms = (await sql<{ term: string }[]>`
    select distinct on (term) term from (
      select lower(split_part(title, ' ', 1)) as term, random() as r from app.sparks
      where snapshot_id = ${snapshot} order by r limit 400) t
    where length(term) >= 3 limit ${VARIANTS}`).map((r, i) => (i % 3 === 2 ? misspell(r.term, i) : r.term));
  const autocompleteTerms = searchTerms.map((term, i) => (i % 3 === 2 ? term.slice(0, 6) : term.slice(0, 3)));
  const enrolled = await sql<{ user_id: string; id: string }[]>`
    select distinct on (user_id) user_id, id from app.enrollments
    where user_id in (select md5('bench-user-' || g)::uuid from generate_series(1, 200) g)
    order by user_id, random() limit ${VARIANTS}`;
  const users = await Promise.all(enrolled.map(async (r) => ({ id: r.user_id, enrollmentId: r.id, token: await signUserToken(r.user_id) })));
  const fallbackToken = await signUserToken('00000000-0000-4000-8000-00000000beef');
  return {
    domainSlugs,
    sparkSlugs,
    searchTerms,
    autocompleteTerms,
    users,
    sessions: [],
    userHeaders: (i) => ({ Authorization: `Bearer ${users.length ? users[i % users.length].token : fallbackToken}` }),
  };
}
