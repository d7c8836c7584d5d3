import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testUser } from '../helpers/tokens.js';

/**
 * The relevance set: queries against the demo catalog (supabase/seed.sql, generated from
 * content/demo) with the results a person would expect at the top. `top` must be the first
 * results in this order; `topSet` must be the first results in any order; `none` expects no
 * result at all.
 */
interface Case {
  kind: string;
  q: string;
  params?: string;
  top?: string[];
  topSet?: string[];
  none?: true;
}

const CASES: Case[] = [
  { kind: 'exact title', q: 'Window Functions', top: ['spark:window-functions'] },
  { kind: 'exact title (domain name)', q: 'Personal Finance', top: ['domain:personal-finance'] },
  { kind: 'exact title (concept), then the trail that teaches it', q: 'Neural Networks', top: ['concept:neural-networks', 'trail:machine-learning-foundations'] },
  { kind: 'exact title beats the longer titles sharing its words', q: 'design tokens', top: ['concept:design-tokens', 'spark:what-are-design-tokens'] },
  { kind: 'prefix', q: 'backprop', top: ['spark:backpropagation'] },
  { kind: 'prefix of the last word in a multi-word query', q: 'gradient desc', top: ['spark:gradient-descent'] },
  { kind: 'typo', q: 'linearizabilty', top: ['spark:linearizability'] },
  { kind: 'typo', q: 'typografy', top: ['concept:typography'] },
  { kind: 'typo with two equally good answers', q: 'regresion', topSet: ['spark:linear-regression', 'spark:logistic-regression'] },
  { kind: 'typo absorbed by stemming', q: 'retirment', topSet: ['concept:retirement-planning', 'trail:retirement-and-taxes'] },
  { kind: 'multi-word', q: 'merge conflicts', top: ['spark:resolving-merge-conflicts'] },
  { kind: 'multi-word', q: 'compound interest', top: ['spark:compound-interest'] },
  { kind: 'multi-word, two siblings', q: 'raft', topSet: ['spark:raft-leader-election', 'spark:raft-log-replication'] },
  { kind: 'accents in the query', q: 'bayés théorem', top: ['spark:bayes-theorem'] },
  { kind: 'stop words around the title', q: 'the normal distribution', top: ['spark:the-normal-distribution'] },
  { kind: 'a question full of stop words', q: 'how do I budget', top: ['concept:budgeting'] },
  { kind: 'plural and singular', q: 'flaky test', top: ['spark:flaky-tests'] },
  { kind: 'short technical term: the trail named after it first', q: 'sql', top: ['trail:sql-from-zero'] },
  { kind: 'punctuation inside a term', q: 'a/b testing', top: ['spark:ab-testing-in-practice'] },
  { kind: 'type filter', q: 'design', params: 'type=domain', top: ['domain:design'] },
  { kind: 'only stop words', q: 'the and of', none: true },
  { kind: 'no match', q: 'quantum chromodynamics', none: true },
];

const SUGGESTIONS: { q: string; first: string }[] = [
  { q: 'gra', first: 'spark:Gradient Descent' },
  { q: 'desig', first: 'domain:Design' },
  { q: 'infla', first: 'spark:Inflation, the Silent Tax' },
  { q: 'typografy', first: 'concept:Typography' },
  { q: 'backprpagation', first: 'spark:Backpropagation' },
];

describe('search relevance on the demo catalog', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    headers = (await testUser()).headers;
    await t.db.sql.unsafe(await readFile(path.resolve(import.meta.dirname, '../../supabase/seed.sql'), 'utf8'));
  });
  afterAll(() => t.close());

  it('has at least 15 queries', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(15);
  });

  it.each(CASES)('GET /search/ puts what a person expects on top: $kind ("$q")', async ({ q, params, top, topSet, none }) => {
    const res = await t.app.request(`/search/?q=${encodeURIComponent(q)}${params ? `&${params}` : ''}`, { headers });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { type: string; slug: string }[]; meta: { total: number } };
    const results = body.data.map((d) => `${d.type}:${d.slug}`);
    if (none) {
      expect(results).toEqual([]);
      expect(body.meta.total).toBe(0);
    }
    if (top) expect(results.slice(0, top.length)).toEqual(top);
    if (topSet) expect(results.slice(0, topSet.length).sort()).toEqual([...topSet].sort());
  });

  it.each(SUGGESTIONS)('GET /search/autocomplete suggests $first first for "$q"', async ({ q, first }) => {
    const res = await t.app.request(`/search/autocomplete?q=${encodeURIComponent(q)}`, { headers });
    const body = (await res.json()) as { suggestions: { text: string; type: string }[] };
    expect(body.suggestions.length).toBeGreaterThan(0);
    expect(`${body.suggestions[0].type}:${body.suggestions[0].text}`).toBe(first);
  });
});
