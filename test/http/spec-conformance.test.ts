import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog } from '../helpers/content.js';
import { signIn } from '../helpers/sessions.js';
import { testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';

/**
 * Issue 23: the seven places where the service answered differently from the specification.
 * Each test is the reproduction, asserted the way the spec reads.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  await insertCatalog(t.db.sql, {
    domains: [
      {
        slug: 'web',
        name: 'web',
        trails: [
          { slug: 'http', title: 'HTTP Fundamentals', concepts: [{ slug: 'verbs', title: 'Verbs', sparks: ['get-and-post'] }] },
          { slug: 'transformers', title: 'How Transformers Work', concepts: [{ slug: 'attention', title: 'attention', sparks: ['dot-product'] }] },
          { slug: 'llm', title: 'LLM Applications', concepts: [{ slug: 'prompts', title: 'Écrire des prompts', sparks: ['few-shot'] }] },
          { slug: 'layout', title: 'Layout', concepts: [{ slug: 'grid', title: 'Grid', sparks: ['areas'] }] },
          { slug: 'apis', title: 'apis in practice', concepts: [{ slug: 'rest', title: 'Rest', sparks: ['resources'] }] },
          { slug: 'eclair', title: 'Éclairs and Edges', concepts: [{ slug: 'edge', title: 'Edge Cases', sparks: ['nulls'] }] },
        ],
      },
      { slug: 'data', name: 'Data' },
      { slug: 'ethics', name: 'Éthique' },
      { slug: 'english', name: 'English' },
    ],
    spark_links: [{ source: 'get-and-post', target: 'resources' }],
  });
});
afterAll(async () => {
  await t?.close();
});

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await t.app.request(path, { headers });
  return { res, body: await res.json() };
};

describe('spec conformance (issue 23)', () => {
  it('1. GET /user/me/journeys with only the access-token cookie answers 401; the bearer header works', async () => {
    const s = await signIn(t);
    const cookieOnly = await get('/user/me/journeys', { cookie: `svc-access-token=${s.access_token}` });
    expect(cookieOnly.res.status).toBe(401);
    expect(cookieOnly.body.error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'bearer_required' } });
    const bearer = await get('/user/me/journeys', s.bearer);
    expect(bearer.res.status).toBe(200);
    expect(bearer.body).toEqual({ data: [] });
    // The cookie still identifies the browser elsewhere (GET /auth/session: cookie or bearer).
    expect((await get('/auth/session', { cookie: `svc-access-token=${s.access_token}` })).body.authenticated).toBe(true);
  });

  it('4. service callers read the spark graph and spark links; /graph/path says why it is per learner', async () => {
    const service = { 'X-Service-Auth': TEST_SERVICE_SECRET };
    const graph = await get('/graph/sparks/resources', service);
    expect(graph.res.status).toBe(200);
    expect(graph.body.nodes.map((n: { slug: string }) => n.slug).sort()).toEqual(['get-and-post', 'resources']);
    const links = await get('/graph/links/sparks', service);
    expect(links.res.status).toBe(200);
    expect(links.body.data.map((l: { source: { slug: string } }) => l.source.slug)).toEqual(['get-and-post']);
    const path = await get('/graph/path?target=resources', service);
    expect(path.res.status).toBe(403);
    expect(path.body.error.code).toBe('FORBIDDEN');
    expect(path.body.error.message).toMatch(/learner/);
  });

  it('5. the documented default `all` is accepted and means the same as leaving the parameter out', async () => {
    const user = await testUser();
    const omitted = await get('/discovery/all?per_page=50');
    const all = await get('/discovery/all?types=all&per_page=50');
    expect(all.res.status).toBe(200);
    expect(all.body).toEqual(omitted.body);
    expect(all.res.headers.get('etag')).toBe(omitted.res.headers.get('etag'));
    expect((await get('/discovery/all?types=ALL')).res.status).toBe(200);
    expect((await get('/discovery/all?types=all,trail')).res.status).toBe(400);

    const searchAll = await get('/search/?q=edge&type=all', user.headers);
    const searchOmitted = await get('/search/?q=edge', user.headers);
    expect(searchAll.res.status).toBe(200);
    expect(searchAll.body).toEqual(searchOmitted.body);
    expect(searchAll.body.data.length).toBeGreaterThan(0);
  });
});
