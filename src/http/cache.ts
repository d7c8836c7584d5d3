import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { ApiArgs, ApiFunctionName, Rpc } from '../db/rpc.js';
import type { AppEnv } from './env.js';
import { sendJsonText } from './respond.js';

/** Reads of the current snapshot may change with a promote or rollback: revalidate often. */
export const CURRENT_SNAPSHOT_CACHE = 'public, max-age=60';
/** A snapshot named by id never changes. */
export const PINNED_SNAPSHOT_CACHE = 'public, max-age=3600';

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

/** RFC 9110 If-None-Match: `*` or a list of (weak or strong) tags, compared weakly. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const wanted = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === wanted;
  });
}

/**
 * Serves a read of immutable snapshot content with ETag and Cache-Control.
 *
 * 1. `api.resolve_snapshot` (one cheap indexed lookup) says which snapshot would answer.
 * 2. A matching If-None-Match gets 304 without running the content query.
 * 3. Otherwise `api.<fn>` runs pinned to that snapshot id, so the body always belongs to the
 *    snapshot the ETag names, even if a promote lands between the two calls.
 *
 * @example
 *   return sendSnapshotRead(c, rpc, 'list_domains', { page: 1, per_page: 20, snapshot_id: undefined });
 */
export async function sendSnapshotRead<F extends ApiFunctionName>(
  c: Context<AppEnv>,
  rpc: Rpc,
  fn: F,
  args: ApiArgs<F> & { snapshot_id?: string },
): Promise<never> {
  const db = c.get('context').db;
  const resolved = JSON.parse(await rpc.call('resolve_snapshot', { snapshot_id: args.snapshot_id }, db)) as ResolvedSnapshot;
  const etag = snapshotEtag(resolved.version, fn, args as Record<string, unknown>);
  const headers = {
    ETag: etag,
    'Cache-Control': args.snapshot_id ? PINNED_SNAPSHOT_CACHE : CURRENT_SNAPSHOT_CACHE,
  };
  if (matchesIfNoneMatch(c.req.header('if-none-match'), etag)) {
    return c.body(null, 304, headers) as never;
  }
  const body = await rpc.call(fn, { ...args, snapshot_id: resolved.snapshot_id ?? undefined }, db);
  return sendJsonText(c, body, 200, headers);
}
