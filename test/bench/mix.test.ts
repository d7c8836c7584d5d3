import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../../bench/endpoints.js';
import { misspell, shuffled, type Fixtures } from '../../bench/fixtures.js';
import { mixScripts, sameStatement, shapeOf, statementFor, type MixStatement } from '../../bench/mix.js';
import { zipfCumulative, zipfRepeatShare } from '../../bench/zipf.js';

const token = (sub: string) =>
  new SignJWT({ role: 'authenticated' }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).sign(new TextEncoder().encode('x'.repeat(32)));

async function fixtures(): Promise<Fixtures> {
  const tokens = await Promise.all(['a', 'b', 'c'].map((n) => token(`00000000-0000-4000-8000-00000000000${n === 'a' ? 1 : n === 'b' ? 2 : 3}`)));
  return {
    domainSlugs: ['data', 'craft', 'music'],
    trailSlugs: ['sql', 'wood'],
    trailIds: ['10000000-0000-4000-8000-000000000001', '10000000-0000-4000-8000-000000000002'],
    sparkSlugs: Array.from({ length: 300 }, (_, i) => `spark-${i}`),
    deepSparkSlugs: ['spark-7'],
    words: ['testing', 'recursion', 'building', 'practical', 'patterns', 'models', 'habits'],
    titles: [['practical', 'testing', 'patterns'], ['quokka', 'models'], ['recursion', 'habits', 'testing']],
    learners: tokens.map((t, i) => ({ id: `l${i}`, token: t, enrollments: [{ id: `e${i}`, trailId: '10000000-0000-4000-8000-000000000001' }], sparkIds: ['s1', 's2'] })),
    snapshotIds: ['a0000000-0000-4000-8000-000000000002', 'a0000000-0000-4000-8000-000000000001'],
    sessions: [],
  };
}

describe('bench mix', () => {
  it('draws ranks by Zipf (s = 1): cumulative shares end at 1e9 and rank k has (1/k)/H(n)', () => {
    const cum = zipfCumulative(4);
    const h = 1 + 1 / 2 + 1 / 3 + 1 / 4;
    expect(cum.at(-1)).toBe(1e9);
    expect(cum[0] / 1e9).toBeCloseTo(1 / h, 6);
    expect((cum[1] - cum[0]) / 1e9).toBeCloseTo(1 / 2 / h, 6);
    // A never-evicting cache: one request repeats nothing; many requests over few variants mostly repeat.
    expect(zipfRepeatShare(10_000, 1)).toBeCloseTo(0, 9);
    expect(zipfRepeatShare(10, 10_000)).toBeGreaterThan(0.99);
  });

  it('builds a variant\'s statement from a captured one of the same shape and tells a different one apart', async () => {
    const f = await fixtures();
    const [first, second] = FAMILIES.find((x) => x.name === 'graph.ancestors.d10')!.variants(f);
    expect(shapeOf(first)).toBe(shapeOf(second));
    const captured: MixStatement = {
      role: 'authenticated', claims: JSON.stringify({ sub: 'x' }), snapshotRead: true,
      call: 'api.get_spark_graph("slug" => ($1->>\'slug\')::text)', args: JSON.stringify({ ...first.args, snapshot_id: null }),
    };
    const built = statementFor(second, captured);
    expect(JSON.parse(built.args)).toEqual({ ...second.args, snapshot_id: null });
    expect(built.call).toBe(captured.call);
    expect(built.role).toBe('authenticated');
    expect(sameStatement(built, { ...built, args: JSON.stringify({ snapshot_id: null, ...second.args }) })).toBe(true);
    expect(sameStatement(built, { ...built, args: JSON.stringify({ ...second.args, max_depth: 3, snapshot_id: null }) })).toBe(false);
  });

  it('gives every family distinct requests, and search one query in three misspelled from the dataset\'s words', async () => {
    const f = await fixtures();
    for (const family of FAMILIES.filter((x) => !x.singleUse)) {
      const requests = family.variants(f).map((v) => `${v.request.method} ${v.request.path} ${v.request.headers?.Authorization ?? ''} ${v.request.body ?? ''}`);
      expect(new Set(requests).size, family.name).toBe(requests.length);
    }
    const search = FAMILIES.find((x) => x.name === 'search')!.variants(f).map((v) => String(v.args.q));
    const known = (q: string) => q.split(' ').every((w) => f.words.includes(w));
    const misspelled = search.filter((q) => !known(q)).length / search.length;
    expect(misspelled).toBeGreaterThan(0.25);
    expect(misspelled).toBeLessThan(0.4);
    // Two-word queries include words side by side in a title, as a learner who read it types them
    // ("quokka" is in a title only, not among the words drawn alone).
    expect(search).toContain('quokka models');
    expect([misspell('testing', 0), misspell('testing', 1), misspell('git', 0)]).toEqual(['tseting', 'teting', 'git']);
    expect(shuffled([1, 2, 3, 4, 5], 7)).toEqual(shuffled([1, 2, 3, 4, 5], 7));
  });

  it('replays the miss statement for snapshot content and PostgREST\'s four statements for R1', () => {
    const { r1, r2 } = mixScripts('search', true);
    expect(r2).toContain("private.dispatch_snapshot_read(m.role, m.claims, m.call, m.args::jsonb, '{}')");
    expect(r2).toMatch(/random\(1, 1000000000\)/);
    expect(r1.split('\n').filter((l) => l && !l.startsWith('\\')).length).toBe(4);
    expect(mixScripts('journeys.detail', false).r2).toContain('private.dispatch(m.role, m.claims, m.call, m.args::jsonb)');
  });
});
