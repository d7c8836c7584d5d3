import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, healthyChecks, type TestApp } from '../helpers/app.js';
import { requestJson } from '../helpers/requests.js';
import { insertCatalog, type InsertedCatalog } from '../helpers/content.js';
import { testUser, TEST_SERVICE_SECRET } from '../helpers/tokens.js';
import { LearningPathSchema, SparkGraphSchema, SparkLinksSchema } from '../../src/routes/graph/graph.routes.js';

interface GraphBody {
  root_id: string;
  direction: string;
  max_depth: number;
  nodes: { id: string; slug: string; title: string; depth: number }[];
  edges: { source: string; target: string; weight: number; type: string }[];
}

/*
 * The test graph (source -> target = "source before target", prerequisite unless noted):
 *
 *   variables -> conditionals -> loops -> functions -> recursion
 *   variables -> loops (shortcut: loops is at depth 1 from variables, not 2)
 *   types -> functions
 *   functions -> closures (related) ; closures -> generators (extends)
 *   island (no links)
 */
describe('graph routes', () => {
  let t: TestApp;
  let c: InsertedCatalog;
  let user: Awaited<ReturnType<typeof testUser>>;

  beforeAll(async () => {
    t = await createTestApp();
    user = await testUser();
    c = await insertCatalog(t.db.sql, {
      sparks: [
        { slug: 'variables', title: 'Variables', estimated_mins: 5 },
        { slug: 'conditionals', title: 'Conditionals', estimated_mins: 7 },
        { slug: 'loops', title: 'Loops', estimated_mins: 8 },
        { slug: 'types', title: 'Types', estimated_mins: 6 },
        { slug: 'functions', title: 'Functions', estimated_mins: 10 },
        { slug: 'recursion', title: 'Recursion', estimated_mins: 12 },
        { slug: 'closures', title: 'Closures', estimated_mins: 9 },
        { slug: 'generators', title: 'Generators', estimated_mins: 11 },
        { slug: 'island', title: 'Island', estimated_mins: 3 },
      ],
      spark_links: [
        { source: 'variables', target: 'conditionals' },
        { source: 'conditionals', target: 'loops' },
        { source: 'variables', target: 'loops', weight: 0.5 },
        { source: 'loops', target: 'functions' },
        { source: 'types', target: 'functions', weight: 2 },
        { source: 'functions', target: 'recursion' },
        { source: 'functions', target: 'closures', type: 'related' },
        { source: 'closures', target: 'generators', type: 'extends' },
      ],
    });
  });
  afterAll(() => t.close());

  const get = (path: string, headers: Record<string, string> = user.headers) => requestJson(t, path, { headers });
  const depths = (body: GraphBody) => Object.fromEntries(body.nodes.map((n) => [n.slug, n.depth]));
  const edgePairs = (body: GraphBody) => {
    const slug = new Map(body.nodes.map((n) => [n.id, n.slug]));
    return body.edges.map((e) => `${slug.get(e.source)}>${slug.get(e.target)}`).sort();
  };

  it('GET /graph/sparks/{slug} returns ancestors to depth 3 by default, each at its shortest depth', async () => {
    const { res, body } = await get('/graph/sparks/recursion');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect(SparkGraphSchema.parse(body)).toBeTruthy();
    expect(body.root_id).toBe(c.id('spark', 'recursion'));
    expect(body.direction).toBe('ancestors');
    expect(body.max_depth).toBe(3);
    // variables is 3 links away via loops (its shortcut), conditionals also 3: both inside depth 3.
    expect(depths(body)).toEqual({ recursion: 0, functions: 1, loops: 2, types: 2, conditionals: 3, variables: 3 });
    expect(body.nodes[0]).toEqual({ id: c.id('spark', 'recursion'), slug: 'recursion', title: 'Recursion', depth: 0 });
    expect(edgePairs(body)).toEqual(['conditionals>loops', 'functions>recursion', 'loops>functions', 'types>functions', 'variables>conditionals', 'variables>loops']);
    const weighted = body.edges.find((e: GraphBody['edges'][number]) => e.source === c.id('spark', 'types'));
    expect(weighted).toEqual({ source: c.id('spark', 'types'), target: c.id('spark', 'functions'), weight: 2, type: 'prerequisite' });
  });

  it('GET /graph/sparks/{slug} cuts off at max_depth and keeps only edges inside the subgraph', async () => {
    const { body } = await get('/graph/sparks/recursion?max_depth=1');
    expect(depths(body)).toEqual({ recursion: 0, functions: 1 });
    expect(edgePairs(body)).toEqual(['functions>recursion']);
    const zero = await get('/graph/sparks/recursion?max_depth=0');
    expect(zero.body.nodes).toHaveLength(1);
    expect(zero.body.edges).toEqual([]);
  });

  it('GET /graph/sparks/{slug} walks descendants and both directions over prerequisite links only', async () => {
    const down = await get('/graph/sparks/variables?direction=descendants&max_depth=10');
    expect(depths(down.body)).toEqual({ variables: 0, conditionals: 1, loops: 1, functions: 2, recursion: 3 });
    const both = await get('/graph/sparks/loops?direction=both&max_depth=1');
    expect(depths(both.body)).toEqual({ loops: 0, conditionals: 1, variables: 1, functions: 1 });
    expect(edgePairs(both.body)).toEqual(['conditionals>loops', 'loops>functions', 'variables>conditionals', 'variables>loops']);
    const lonely = await get('/graph/sparks/island?direction=both');
    expect(lonely.body.nodes.map((n: { slug: string }) => n.slug)).toEqual(['island']);
  });

  it('GET /graph/sparks/{slug} answers 404 for an unknown slug and 400 for bad parameters', async () => {
    const missing = await get('/graph/sparks/no-such-spark');
    expect(missing.res.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    for (const query of ['direction=sideways', 'max_depth=11', 'max_depth=-1', 'max_depth=two', 'snapshot_id=x']) {
      const { res, body } = await get(`/graph/sparks/recursion?${query}`);
      expect(res.status, query).toBe(400);
      expect(body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await get('/graph/sparks/Not_A_Slug')).res.status).toBe(400);
  });

  it('GET /graph/sparks/{slug} is snapshot content: ETag, 304, private caching, and the body kept in memory', async () => {
    const path = '/graph/sparks/recursion?direction=both&max_depth=2';
    const first = await t.app.request(path, { headers: user.headers });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w:-]+\.[\w-]{32}"$/);
    const body = await first.text();
    const revalidated = await t.app.request(path, { headers: { ...user.headers, 'If-None-Match': etag } });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe('');

    // Kept in memory: answered while no request role may run the traversal.
    await t.db.sql`revoke execute on function api.get_spark_graph(text, text, integer, uuid) from anon, authenticated`;
    try {
      const again = await t.app.request(path, { headers: user.headers });
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(body);
      expect(again.headers.get('etag')).toBe(etag);
    } finally {
      await t.db.sql`grant execute on function api.get_spark_graph(text, text, integer, uuid) to anon, authenticated`;
    }

    const pinned = await t.app.request(`${path}&snapshot_id=${c.snapshotId}`, { headers: user.headers });
    expect(pinned.status).toBe(200);
    expect(pinned.headers.get('cache-control')).toBe('private, max-age=3600');
    expect(await pinned.text()).toBe(body);
    // `*` asks whether a body exists: never a 304 for a slug that names no spark.
    const unknown = await t.app.request('/graph/sparks/no-such-spark', { headers: { ...user.headers, 'If-None-Match': '*' } });
    expect(unknown.status).toBe(404);
    const known = await t.app.request('/graph/sparks/island', { headers: { ...user.headers, 'If-None-Match': '*' } });
    expect(known.status).toBe(304);
    // Still a signed-in route, cached body or not.
    expect((await t.app.request(path)).status).toBe(401);
  });

  it('GET /graph/path orders every prerequisite before its dependants with the documented tie-break', async () => {
    const { res, body } = await get('/graph/path?target=recursion');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store'); // it depends on the caller
    expect(res.headers.get('etag')).toBeNull();
    expect(LearningPathSchema.parse(body)).toBeTruthy();
    // Round 0: types, variables (by title); round 1: conditionals; round 2: loops; then functions, recursion.
    expect(body.path.map((s: { slug: string }) => s.slug)).toEqual(['types', 'variables', 'conditionals', 'loops', 'functions', 'recursion']);
    expect(body.path[0]).toEqual({ slug: 'types', title: 'Types', estimated_mins: 6 });
    expect(body.total_mins).toBe(6 + 5 + 7 + 8 + 10 + 12);
    expect(body.skipped_count).toBe(0);
    expect(body.target_id).toBe(c.id('spark', 'recursion'));
  });

  it('GET /graph/path skips the caller’s mastered sparks by default and keeps them with skip_mastered=false', async () => {
    const learner = await testUser();
    const classmate = await testUser();
    await t.db.sql`insert into app.learning_events (user_id, spark_id, verb, occurred_at) values
      (${learner.id}, ${c.id('spark', 'variables')}, 'mastered', now() - interval '2 days'),
      (${learner.id}, ${c.id('spark', 'variables')}, 'mastered', now() - interval '1 day'),
      (${learner.id}, ${c.id('spark', 'loops')}, 'completed', now()),
      (${classmate.id}, ${c.id('spark', 'types')}, 'mastered', now())`;
    const skipped = await get('/graph/path?target=recursion', learner.headers);
    expect(skipped.body.path.map((s: { slug: string }) => s.slug)).toEqual(['types', 'conditionals', 'loops', 'functions', 'recursion']);
    expect(skipped.body.skipped_count).toBe(1);
    expect(skipped.body.total_mins).toBe(6 + 7 + 8 + 10 + 12);
    const kept = await get('/graph/path?target=recursion&skip_mastered=false', learner.headers);
    expect(kept.body.path).toHaveLength(6);
    expect(kept.body.skipped_count).toBe(0);
    // Each user's mastery counts for that user only: the classmate mastered types, the learner variables.
    const other = await get('/graph/path?target=recursion', classmate.headers);
    expect(other.body.path.map((s: { slug: string }) => s.slug)).toEqual(['variables', 'conditionals', 'loops', 'functions', 'recursion']);
    expect(other.body.skipped_count).toBe(1);
  });

  it('GET /graph/path answers a one-step path for a spark without prerequisites, 404 and 400 otherwise', async () => {
    const { body } = await get('/graph/path?target=island');
    expect(body).toMatchObject({ path: [{ slug: 'island', title: 'Island', estimated_mins: 3 }], total_mins: 3, skipped_count: 0 });
    expect((await get('/graph/path?target=nowhere')).res.status).toBe(404);
    for (const query of ['', 'target=', 'target=recursion&skip_mastered=maybe']) {
      const { res, body: error } = await get(`/graph/path?${query}`);
      expect(res.status, query).toBe(400);
      expect(error.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('GET /graph/links/sparks lists every link type, paginated, ordered by source then target title', async () => {
    const { res, body } = await get('/graph/links/sparks');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect(res.headers.get('etag')).toBeTruthy();
    expect(SparkLinksSchema.parse(body)).toBeTruthy();
    expect(body.meta).toEqual({ total: 8, page: 1, per_page: 20, total_pages: 1, has_next: false, has_prev: false });
    expect(body.data.map((l: { source: { slug: string }; target: { slug: string } }) => `${l.source.slug}>${l.target.slug}`)).toEqual([
      'closures>generators', 'conditionals>loops', 'functions>closures', 'functions>recursion',
      'loops>functions', 'types>functions', 'variables>conditionals', 'variables>loops',
    ]);
    expect(body.data[0]).toEqual({
      source: { id: c.id('spark', 'closures'), slug: 'closures', title: 'Closures' },
      target: { id: c.id('spark', 'generators'), slug: 'generators', title: 'Generators' },
      type: 'extends',
      weight: 1,
    });
    const page2 = await get('/graph/links/sparks?per_page=3&page=2');
    expect(page2.body.meta).toEqual({ total: 8, page: 2, per_page: 3, total_pages: 3, has_next: true, has_prev: true });
    expect(page2.body.data.map((l: { source: { slug: string } }) => l.source.slug)).toEqual(['functions', 'loops', 'types']);
  });

  it('GET /graph/links/sparks filters by spark, direction and type', async () => {
    const pairs = async (query: string) =>
      (await get(`/graph/links/sparks?${query}`)).body.data.map(
        (l: { source: { slug: string }; target: { slug: string }; type: string }) => `${l.source.slug}>${l.target.slug}:${l.type}`,
      );
    expect(await pairs('spark=functions')).toEqual(['functions>closures:related', 'functions>recursion:prerequisite', 'loops>functions:prerequisite', 'types>functions:prerequisite']);
    expect(await pairs('spark=functions&direction=outgoing')).toEqual(['functions>closures:related', 'functions>recursion:prerequisite']);
    expect(await pairs('spark=functions&direction=incoming')).toEqual(['loops>functions:prerequisite', 'types>functions:prerequisite']);
    expect(await pairs('spark=functions&direction=both&type=related')).toEqual(['functions>closures:related']);
    expect(await pairs('type=extends')).toEqual(['closures>generators:extends']);
    expect(await pairs('spark=island')).toEqual([]);
  });

  it('GET /graph/links/sparks rejects bad filters with 400 and an unknown spark with 404', async () => {
    for (const query of ['type=needs', 'direction=up&spark=loops', 'direction=outgoing', 'per_page=101', 'page=0']) {
      const { res, body } = await get(`/graph/links/sparks?${query}`);
      expect(res.status, query).toBe(400);
      expect(body.error.code).toBe('VALIDATION_ERROR');
    }
    const missing = await get('/graph/links/sparks?spark=ghost');
    expect(missing.res.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
  });

  it('GET /graph reads the snapshot named by snapshot_id and answers 404 for an unknown one', async () => {
    const draft = await insertCatalog(
      t.db.sql,
      { sparks: [{ slug: 'alpha' }, { slug: 'beta' }], spark_links: [{ source: 'alpha', target: 'beta' }] },
      { status: 'draft' },
    );
    expect((await get('/graph/sparks/beta')).res.status).toBe(404);
    const { body } = await get(`/graph/sparks/beta?snapshot_id=${draft.snapshotId}`);
    expect(depths(body)).toEqual({ beta: 0, alpha: 1 });
    const path = await get(`/graph/path?target=beta&snapshot_id=${draft.snapshotId}`);
    expect(path.body.path.map((s: { slug: string }) => s.slug)).toEqual(['alpha', 'beta']);
    const links = await get(`/graph/links/sparks?snapshot_id=${draft.snapshotId}`);
    expect(links.body.meta.total).toBe(1);
    expect((await get('/graph/path?target=beta&snapshot_id=3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f')).res.status).toBe(404);
  });

  it('GET /graph requires a JWT or the service header: 401 anonymous; service callers read content, not paths', async () => {
    for (const path of ['/graph/sparks/loops', '/graph/path?target=loops', '/graph/links/sparks']) {
      const anonymous = await get(path, {});
      expect(anonymous.res.status, path).toBe(401);
      expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
    }
    expect((await get('/graph/sparks/loops', { 'X-Service-Auth': TEST_SERVICE_SECRET })).res.status).toBe(200);
    expect((await get('/graph/links/sparks', { 'X-Service-Auth': TEST_SERVICE_SECRET })).res.status).toBe(200);
    const path = await get('/graph/path?target=loops', { 'X-Service-Auth': TEST_SERVICE_SECRET });
    expect(path.res.status).toBe(403);
    expect(path.body.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'learner_required' } });
  });

  it('GET /graph/health answers ok without credentials', async () => {
    const { res, body } = await get('/graph/health', {});
    expect(res.status).toBe(200);
    expect(body).toEqual({ status: 'ok', checks: healthyChecks(t) });
  });
});
