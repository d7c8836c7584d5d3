import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { ApiArgs, ApiFunctionName, Rpc } from '../db/rpc.js';
import type { AppEnv } from './env.js';
import { sendJsonText } from './respond.js';

/** Reads of the current snapshot may change with a promote or rollback: revalidate often. */
export const CURRENT_SNAPSHOT_CACHE = 'public, max-age=60';
/** A snapshot named by id never changes. */
export const PINNED_SNAPSHOT_CACHE = 'public, max-age=3600';
/**
 * The same for routes that need a token: shared caches must not keep them, the caller's own
 * cache may (and revalidates reads of the current snapshot every time: a 304 is cheap).
 */
export const PRIVATE_CURRENT_SNAPSHOT_CACHE = 'private, no-cache';
export const PRIVATE_PINNED_SNAPSHOT_CACHE = 'private, max-age=3600';

export interface SnapshotReaderOptions {
  cache?: BodyCache;
  /** The route needs a token: Cache-Control says private (the body itself is the same for all). */
  privateToCaller?: boolean;
}

interface ResolvedSnapshot {
  snapshot_id: string | null;
  version: string;
}

/**
 * The entity tag of a snapshot read: the snapshot version plus the operation and its
 * normalised arguments (defaults applied, keys sorted, snapshot_id left out because the version
 * already says which snapshot answered).
 *
 * @example
 *   snapshotEtag('3f1c…', 'list_domains', { page: 1, per_page: 20 }) // => '"9b1e…"'
 */
export function snapshotEtag(version: string, operation: string, args: Record<string, unknown>): string {
  const normalised = Object.keys(args)
    .filter((key) => key !== 'snapshot_id' && args[key] !== undefined)
    .sort()
    .map((key) => [key, args[key]]);
  const digest = createHash('sha256').update(JSON.stringify([version, operation, normalised])).digest('base64url');
  return `"${digest.slice(0, 32)}"`;
}

/**
 * RFC 9110 If-None-Match: `*` or a list of (weak or strong) tags, compared weakly. 'any' when it
 * holds `*` (true of any body that exists), 'tag' when it names `etag`, else undefined.
 */
export function ifNoneMatch(header: string | undefined, etag: string): 'any' | 'tag' | undefined {
  if (!header) return undefined;
  const tags = header.split(',').map((candidate) => candidate.trim());
  if (tags.includes('*')) return 'any';
  const wanted = etag.replace(/^W\//, '');
  return tags.some((tag) => tag.replace(/^W\//, '') === wanted) ? 'tag' : undefined;
}

export const matchesIfNoneMatch = (header: string | undefined, etag: string): boolean => ifNoneMatch(header, etag) !== undefined;

/**
 * A byte-bounded LRU of response bodies keyed by ETag. Snapshot content never changes, so a body
 * stays valid for as long as its tag names the snapshot that answers; a promote or rollback
 * changes the tag and the old entries simply age out.
 */
export class BodyCache {
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  constructor(
    readonly maxBytes = 16 * 1024 * 1024,
    readonly maxEntryBytes = 1024 * 1024,
  ) {}

  get(key: string): string | undefined {
    const body = this.entries.get(key);
    if (body !== undefined) {
      this.entries.delete(key); // refresh recency
      this.entries.set(key, body);
    }
    return body;
  }

  set(key: string, body: string): void {
    const size = body.length * 2;
    if (size > this.maxEntryBytes || this.entries.has(key)) return;
    this.entries.set(key, body);
    this.bytes += size;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.length * 2;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Serves reads of immutable snapshot content with ETag, Cache-Control and a server-side body
 * cache.
 *
 * 1. `api.resolve_snapshot` (one cheap indexed lookup) says which snapshot would answer.
 * 2. A matching If-None-Match gets 304 without running the content query (`*` once the body
 *    is known to exist).
 * 3. A body cached under the same tag is sent without running the content query.
 * 4. Otherwise `api.<fn>` runs pinned to that snapshot id, so the body always belongs to the
 *    snapshot the ETag names, even if a promote lands between the two calls.
 *
 * @example
 *   const read = createSnapshotReader(rpc);
 *   router.openapi(route, (c) => read(c, 'list_domains', c.req.valid('query')));
 */
export function createSnapshotReader(rpc: Rpc, options: SnapshotReaderOptions = {}) {
  const cache = options.cache ?? new BodyCache();
  const [current, pinned] = options.privateToCaller
    ? [PRIVATE_CURRENT_SNAPSHOT_CACHE, PRIVATE_PINNED_SNAPSHOT_CACHE]
    : [CURRENT_SNAPSHOT_CACHE, PINNED_SNAPSHOT_CACHE];
  return async function sendSnapshotRead<F extends ApiFunctionName>(
    c: Context<AppEnv>,
    fn: F,
    args: ApiArgs<F> & { snapshot_id?: string },
  ): Promise<Response> {
    const db = c.get('context').db;
    const resolved = JSON.parse(await rpc.call('resolve_snapshot', { snapshot_id: args.snapshot_id }, db)) as ResolvedSnapshot;
    const etag = snapshotEtag(resolved.version, fn, args as Record<string, unknown>);
    const headers = {
      ETag: etag,
      'Cache-Control': args.snapshot_id ? pinned : current,
    };
    // A tag names a body this server sent, so it is answered before the content query. `*` only
    // asks whether a body exists, which the query (or a kept body) has to tell: an unknown slug
    // stays a 404.
    const condition = ifNoneMatch(c.req.header('if-none-match'), etag);
    if (condition === 'tag') return c.body(null, 304, headers);
    let body = cache.get(etag);
    if (body === undefined) {
      body = await rpc.call(fn, { ...args, snapshot_id: resolved.snapshot_id ?? undefined }, db);
      cache.set(etag, body);
    }
    if (condition === 'any') return c.body(null, 304, headers);
    return sendJsonText(c, body, 200, headers);
  };
}

export type SnapshotReader = ReturnType<typeof createSnapshotReader>;
