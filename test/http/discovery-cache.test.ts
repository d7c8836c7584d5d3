import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callKey, SnapshotCache } from '../../src/db/snapshot-cache.js';
import { ifNoneMatch, snapshotEtag } from '../../src/http/cache.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertCatalog } from '../helpers/content.js';

describe('discovery routes: caching of immutable snapshot content', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await insertCatalog(t.db.sql, { domains: [{ slug: 'data', trails: [{ slug: 'sql', concepts: [{ slug: 'select', sparks: ['star'] }] }] }] });
  });
  afterAll(() => t.close());

  it('a repeated read is answered from the body cache without running the content query', async () => {
    const first = await t.app.request('/discovery/concepts?trail=sql');
    const body = await first.text();
    await t.db.sql`revoke execute on function api.list_discovery_concepts(integer, integer, text, integer, uuid) from anon`;
    try {
      const again = await t.app.request('/discovery/concepts?trail=sql');
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(body);
      expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    } finally {
      await t.db.sql`grant execute on function api.list_discovery_concepts(integer, integer, text, integer, uuid) to anon`;
    }
  });

  it('a promote answers from the new snapshot even when the old body is cached', async () => {
    const before = await (await t.app.request('/discovery/domains/')).json();
    expect(before.data.map((d: { slug: string }) => d.slug)).toEqual(['data']);
    await insertCatalog(t.db.sql, { domains: [{ slug: 'data' }, { slug: 'web' }] });
    const after = await (await t.app.request('/discovery/domains/')).json();
    expect(after.data.map((d: { slug: string }) => d.slug)).toEqual(['data', 'web']);
  });

  it('the snapshot cache evicts the least recently used bodies beyond its byte budget and skips oversized ones', () => {
    const call = callKey('list_domains', {});
    const size = (body: string) => (body.length + call.length) * 2; // UTF-16, key included
    const cache = new SnapshotCache(size('aaaaaaaa') * 2 + 4, size('aaaaaaaa') + 4);
    cache.set(call, 'v1', 'aaaaaaaa');
    cache.set(call, 'v2', 'bbbbbbbb');
    expect([...cache.heldFor(call).keys()]).toEqual(['v1', 'v2']); // both now recently used, v1 first
    cache.heldFor(callKey('list_domains', { page: 2 })); // another call: nothing held
    expect(cache.heldFor(call).get('v1')).toBe('aaaaaaaa');
    cache.set(call, 'v3', 'cccccccc'); // over budget: the least recently used (v1) goes
    expect([...cache.heldFor(call).keys()].sort()).toEqual(['v2', 'v3']);
    cache.set(call, 'v4', 'x'.repeat(20)); // larger than one entry may be
    expect(cache.heldFor(call).has('v4')).toBe(false);
    expect(cache.size).toBe(2);
  });

  it('the ETag carries the version in clear and ignores snapshot_id and key order; If-None-Match compares weakly and accepts *', () => {
    const tag = snapshotEtag('v1', 'list_domains', { page: 1, per_page: 20, snapshot_id: 'x' });
    expect(tag.startsWith('"v1.')).toBe(true);
    expect(snapshotEtag('v1', 'list_domains', { per_page: 20, page: 1 })).toBe(tag);
    expect(snapshotEtag('v2', 'list_domains', { per_page: 20, page: 1 })).not.toBe(tag);
    expect(snapshotEtag('v1', 'get_domain', { per_page: 20, page: 1 })).not.toBe(tag);
    const args = { page: 1, per_page: 20 };
    expect(ifNoneMatch(`W/${tag}`, 'list_domains', args)).toEqual({ any: false, versions: ['v1'] });
    expect(ifNoneMatch(`"other", ${snapshotEtag('v2', 'list_domains', args)}, ${tag}`, 'list_domains', args)).toEqual({ any: false, versions: ['v2', 'v1'] });
    expect(ifNoneMatch('*', 'list_domains', args)).toEqual({ any: true, versions: [] });
    expect(ifNoneMatch(tag, 'get_domain', args).versions).toEqual([]);
    expect(ifNoneMatch('"nope", "other"', 'list_domains', args).versions).toEqual([]);
    expect(ifNoneMatch(undefined, 'list_domains', args)).toEqual({ any: false, versions: [] });
  });
});
