import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyCache, matchesIfNoneMatch, snapshotEtag } from '../../src/http/cache.js';
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

  it('BodyCache evicts the least recently used bodies beyond its byte budget and skips oversized ones', () => {
    const cache = new BodyCache(40, 20); // bytes: 2 per character
    cache.set('a', 'aaaaaaaa'); // 16 bytes
    cache.set('b', 'bbbbbbbb'); // 32
    expect(cache.get('a')).toBe('aaaaaaaa'); // a is now the most recent
    cache.set('c', 'cccccccc'); // 48 > 40: evicts b
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('aaaaaaaa');
    expect(cache.get('c')).toBe('cccccccc');
    cache.set('huge', 'x'.repeat(11)); // 22 > 20 per entry
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it('the ETag ignores snapshot_id and key order; If-None-Match compares weakly and accepts *', () => {
    const tag = snapshotEtag('v1', 'list_domains', { page: 1, per_page: 20, snapshot_id: 'x' });
    expect(snapshotEtag('v1', 'list_domains', { per_page: 20, page: 1 })).toBe(tag);
    expect(snapshotEtag('v2', 'list_domains', { per_page: 20, page: 1 })).not.toBe(tag);
    expect(snapshotEtag('v1', 'get_domain', { per_page: 20, page: 1 })).not.toBe(tag);
    expect(matchesIfNoneMatch(`W/${tag}`, tag)).toBe(true);
    expect(matchesIfNoneMatch('*', tag)).toBe(true);
    expect(matchesIfNoneMatch('"nope", "other"', tag)).toBe(false);
    expect(matchesIfNoneMatch(undefined, tag)).toBe(false);
  });
});
