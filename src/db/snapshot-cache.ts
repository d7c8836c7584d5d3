/**
 * The API's one cache: response bodies of snapshot content, which never change once a snapshot
 * exists. Keyed by (snapshot version, call), where a call is an api function with its
 * normalised arguments (see `callKey`), and bounded in bytes: least recently used bodies go
 * first. A promote or rollback changes the version that answers; old entries simply age out.
 *
 * @example
 *   const cache = new SnapshotCache(32 * 1024 * 1024);
 *   cache.set(callKey('list_domains', { page: 1 }), 'v1', '{"data":[]}');
 *   cache.heldFor(callKey('list_domains', { page: 1 })); // Map { 'v1' => '{"data":[]}' }
 */
export class SnapshotCache {
  /** `${version} ${call}` → body, in recency order (oldest first). */
  private readonly entries = new Map<string, { call: string; version: string; body: string }>();
  /** call → versions held for it, so a read can tell the database which it need not send. */
  private readonly versions = new Map<string, Set<string>>();
  private bytes = 0;

  constructor(
    readonly maxBytes: number,
    readonly maxEntryBytes = Math.min(1024 * 1024, maxBytes),
  ) {}

  /** The bodies held for `call`, by version (a copy: later evictions do not reach it). */
  heldFor(call: string): Map<string, string> {
    const held = new Map<string, string>();
    for (const version of this.versions.get(call) ?? []) {
      const key = `${version} ${call}`;
      const entry = this.entries.get(key)!;
      this.entries.delete(key); // refresh recency
      this.entries.set(key, entry);
      held.set(version, entry.body);
    }
    return held;
  }

  set(call: string, version: string, body: string): void {
    const key = `${version} ${call}`;
    const size = sizeOf(body) + sizeOf(call);
    if (size > this.maxEntryBytes || this.entries.has(key)) return;
    this.entries.set(key, { call, version, body });
    let versions = this.versions.get(call);
    if (!versions) this.versions.set(call, (versions = new Set()));
    versions.add(version);
    this.bytes += size;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= sizeOf(entry.body) + sizeOf(entry.call);
      const held = this.versions.get(entry.call)!;
      held.delete(entry.version);
      if (held.size === 0) this.versions.delete(entry.call);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/** JavaScript strings hold UTF-16: two bytes per code unit. */
const sizeOf = (body: string) => body.length * 2;

/**
 * The cache key of a snapshot read: the function and its arguments with defaults left out,
 * keys sorted, and snapshot_id dropped (the version already says which snapshot answered).
 *
 * @example callKey('list_domains', { per_page: 20, page: 1 }) === callKey('list_domains', { page: 1, per_page: 20, snapshot_id: 'x' })
 */
export function callKey(fn: string, args: object): string {
  const normalised = Object.entries(args)
    .filter(([key, value]) => key !== 'snapshot_id' && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([fn, normalised]);
}
