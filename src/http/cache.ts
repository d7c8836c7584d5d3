import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { ApiArgs, Rpc, SnapshotFunctionName } from '../db/rpc.js';
import { callKey } from '../db/snapshot-cache.js';
import type { RequestContext } from '../context/request-context.js';
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
  /** The route needs a token: Cache-Control says private (the body itself is the same for all). */
  privateToCaller?: boolean;
}

/**
 * The entity tag of a snapshot read: the snapshot version in clear, then a digest of the
 * operation and its normalised arguments (defaults left out, keys sorted, snapshot_id left out
 * because the version already says which snapshot answered). The version in clear is what lets
 * one statement answer "you already hold this" (private.dispatch_snapshot_read).
 *
 * @example
 *   snapshotEtag('3f1c…', 'list_domains', { page: 1, per_page: 20 }) // => '"3f1c….9b1e…"'
 */
export function snapshotEtag(version: string, operation: string, args: object): string {
  return `"${version}.${callDigest(operation, args)}"`;
}

const callDigest = (operation: string, args: object) => createHash('sha256').update(callKey(operation, args)).digest('base64url').slice(0, 32);

/**
 * RFC 9110 If-None-Match, compared weakly, for one operation: whether it holds `*` (true of any
 * body that exists), and the snapshot versions of the tags it names for this operation.
 */
export function ifNoneMatch(header: string | undefined, operation: string, args: object): { any: boolean; versions: string[] } {
  if (!header) return { any: false, versions: [] };
  const suffix = `.${callDigest(operation, args)}"`;
  const versions: string[] = [];
  let any = false;
  for (const candidate of header.split(',')) {
    const tag = candidate.trim().replace(/^W\//, '');
    if (tag === '*') any = true;
    else if (tag.startsWith('"') && tag.endsWith(suffix) && tag.length > suffix.length + 1) versions.push(tag.slice(1, -suffix.length));
  }
  return { any, versions };
}

/**
 * Serves reads of immutable snapshot content with ETag, Cache-Control, 304s and the server's
 * snapshot cache, in one database statement (rpc.readSnapshot): the session check, which
 * snapshot answers, and the content query only when neither the server's cache nor the client
 * (If-None-Match) holds that snapshot's body.
 *
 * @example
 *   const read = createSnapshotReader(rpc);
 *   router.openapi(route, (c) => read(c, 'list_domains', c.req.valid('query')));
 */
export function createSnapshotReader(rpc: Rpc, options: SnapshotReaderOptions = {}) {
  const [current, pinned] = options.privateToCaller
    ? [PRIVATE_CURRENT_SNAPSHOT_CACHE, PRIVATE_PINNED_SNAPSHOT_CACHE]
    : [CURRENT_SNAPSHOT_CACHE, PINNED_SNAPSHOT_CACHE];
  // Any app whose requests carry the caller's context: this file needs no more of the app's env.
  return async function sendSnapshotRead<F extends SnapshotFunctionName, E extends { Variables: { context: RequestContext } }>(
    c: Context<E>,
    fn: F,
    args: ApiArgs<F> & { snapshot_id?: string },
  ): Promise<Response> {
    // Typed here: inside this generic function Hono cannot resolve the variable's type for us.
    const caller: RequestContext = c.get('context');
    const condition = ifNoneMatch(c.req.header('if-none-match'), fn, args);
    const read = await rpc.readSnapshot(fn, args, caller.db, condition.versions);
    const headers = {
      ETag: snapshotEtag(read.version, fn, args),
      'Cache-Control': args.snapshot_id ? pinned : current,
    };
    // A tag names a body this server sent. `*` only asks whether a body exists, which the query
    // (or a kept body) has told by now: an unknown slug stays a 404.
    if (read.body === null || condition.any || condition.versions.includes(read.version)) return c.body(null, 304, headers);
    return sendJsonText(c, read.body, 200, headers);
  };
}

export type SnapshotReader = ReturnType<typeof createSnapshotReader>;
