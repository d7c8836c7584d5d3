/**
 * The varied mix: many distinct requests per family drawn with Zipf's law (s = 1), and the same
 * mix replayed on the database by pgbench (R1, R2).
 *
 * wrk's Lua script and pgbench draw the same distribution: the variant of rank k (1-based) has
 * probability (1/k) / H(n). For pgbench the statements of every variant sit in one table,
 * `bench_mix`, with the cumulative probability of their rank scaled to 1e9, and each transaction
 * draws a uniform number and takes the first variant at or above it (one index probe).
 */
import { decodeJwt } from 'jose';
import type postgres from 'postgres';
import { quote, unquote, type CapturedStatement } from './capture.js';
import type { Family, Variant } from './endpoints.js';
import { zipfCumulative } from './zipf.js';

/** What the database is sent for one request: the dispatcher's four arguments. */
export interface MixStatement {
  role: 'anon' | 'authenticated';
  claims: string | null;
  call: string;
  args: string;
  snapshotRead: boolean;
}

/** The argument shape of a variant: which arguments it sets, and whether it is signed in. */
export const shapeOf = (v: Variant) => `${Object.keys(v.args).sort().join(',')}|${v.request.headers?.Authorization ? 'user' : 'anon'}`;

const SNAPSHOT_READ = 'private.dispatch_snapshot_read(';

/** The dispatcher arguments of a captured statement (private.dispatch or dispatch_snapshot_read). */
export function dispatchOf(captured: CapturedStatement): MixStatement | undefined {
  const snapshotRead = captured.text.includes(SNAPSHOT_READ);
  if (!snapshotRead && !captured.text.includes('private.dispatch(')) return undefined;
  const [role, claims, call, args] = captured.params.map(unquote);
  return { role: role as MixStatement['role'], claims: claims === '' ? null : claims, call, args, snapshotRead };
}

/**
 * The statement of `variant`, built from the captured statement of another variant of the same
 * shape (`sample`, captured for `sampleVariant`): the same call text, the sample's arguments with
 * this variant's values over them, and the claims of this variant's token as the API forwards them.
 */
export function statementFor(variant: Variant, sample: MixStatement): MixStatement {
  const args = { ...(JSON.parse(sample.args) as Record<string, unknown>), ...variant.args };
  const token = /^Bearer (.+)$/.exec(variant.request.headers?.Authorization ?? '')?.[1];
  return {
    role: token ? 'authenticated' : 'anon',
    claims: token ? JSON.stringify(decodeJwt(token)) : null,
    call: sample.call,
    args: JSON.stringify(args),
    snapshotRead: sample.snapshotRead,
  };
}

/** The same statement? (JSON compared as values: key order is the API's business.) */
export function sameStatement(a: MixStatement, b: MixStatement): boolean {
  const json = (text: string | null) => (text === null ? null : JSON.stringify(sortKeys(JSON.parse(text))));
  return a.role === b.role && a.call === b.call && a.snapshotRead === b.snapshotRead && json(a.claims) === json(b.claims) && json(a.args) === json(b.args);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, sortKeys(v)]));
  return value;
}

/** The api call of R1 with its arguments inlined, as PostgREST would run it. */
export const r1Call = (s: MixStatement) => `select (${s.call.replace(/\$1/g, `(${quote(s.args)}::jsonb)`)})::text`;

/** Writes one family's statements, by rank, into bench_mix (created on first use). */
export async function loadMix(sql: postgres.Sql, family: string, statements: MixStatement[]): Promise<void> {
  await sql`create table if not exists bench_mix (
    -- args: JSON text, cast where it is used (the API sends it as text too)
    family text not null, rank integer not null, cum bigint not null,
    role text not null, claims text, call text not null, args text not null, r1 text not null,
    primary key (family, rank))`;
  await sql`create index if not exists bench_mix_draw on bench_mix (family, cum)`;
  await sql`delete from bench_mix where family = ${family}`;
  const cumulative = zipfCumulative(statements.length);
  for (let start = 0; start < statements.length; start += 2000) {
    const rows = statements.slice(start, start + 2000).map((s, i) => ({
      family, rank: start + i + 1, cum: cumulative[start + i], role: s.role, claims: s.claims, call: s.call, args: s.args, r1: r1Call(s),
    }));
    await sql`insert into bench_mix ${sql(rows)}`;
  }
  await sql`analyze bench_mix`;
}

const draw = (family: string) =>
  `(select * from bench_mix where family = ${quote(family)} and cum >= :u order by cum limit 1) m`;

/**
 * R2 on the mix: the API's statement for a miss (the content function runs: for a snapshot read,
 * held_versions is empty), drawn by rank. R1: PostgREST's transaction for the same call (the
 * draw is folded into the set_config statement, so it stays four round trips; -M simple, as
 * pgbench substitutes the call text).
 */
export function mixScripts(family: string, snapshotRead: boolean): { r1: string; r2: string } {
  const u = '\\set u random(1, 1000000000)';
  const r2 = snapshotRead
    ? `${u}\nselect (private.dispatch_snapshot_read(m.role, m.claims, m.call, m.args::jsonb, '{}')).body from ${draw(family)};\n`
    : `${u}\nselect private.dispatch(m.role, m.claims, m.call, m.args::jsonb) from ${draw(family)};\n`;
  const r1 = [
    u,
    'BEGIN;',
    `select pg_catalog.set_config('role', m.role, true) as set_role, pg_catalog.set_config('request.jwt.claims', coalesce(m.claims, ''), true) as set_claims, m.r1 as call from ${draw(family)} \\gset`,
    ':call;',
    'COMMIT;',
    '',
  ].join('\n');
  return { r1, r2 };
}

/** Families whose variants are statements the bench can build (reads, not single-use or writes). */
export const replayable = (f: Family) => !f.singleUse && !f.write;
