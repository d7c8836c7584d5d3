/**
 * Streams a content bundle without holding it in memory: yields each element of the top-level
 * arrays (and each other top-level value) as soon as it is complete, so a 500k-spark file is
 * read with memory bounded by its largest element, not by its size. Parsing is done by
 * @streamparser/json (a maintained streaming parser): it emits the elements two levels deep
 * and forgets them (keepStack: false), then each top-level value once it closes.
 */
import { JSONParser } from '@streamparser/json';

export interface BundleItem {
  /** The top-level key, e.g. "sparks". */
  key: string;
  /** Index within the array, or -1 for a top-level value that is not an array. */
  position: number;
  value: unknown;
}

export class BundleSyntaxError extends Error {}

/** Characters of the source read so far, for the progress display. */
export interface ReadProgress {
  characters: number;
}

export async function* readBundleItems(source: AsyncIterable<string | Buffer>, progress?: ReadProgress): AsyncGenerator<BundleItem> {
  // `$.*.*`: array elements (numeric key) as they complete; properties of a top-level object
  // (the snapshot) too, so they are gathered back into it. `$.*`: every top-level value when it
  // closes; an array arrives emptied (its elements went out already).
  const parser = new JSONParser({ paths: ['$.*.*', '$.*'], keepStack: false });
  let ready: BundleItem[] = [];
  let members: Record<string, unknown> | undefined;
  parser.onValue = ({ value, key, stack }) => {
    if (stack.length === 2) {
      if (typeof key === 'number') ready.push({ key: String(stack[1].key), position: key, value });
      else (members ??= {})[String(key)] = value;
      return;
    }
    if (stack.length !== 1) return;
    if (Array.isArray(value)) {
      members = undefined;
      return;
    }
    const isObject = value !== null && typeof value === 'object';
    ready.push({ key: String(key), position: -1, value: isObject ? { ...members, ...(value as object) } : value });
    members = undefined;
  };
  let seenStart = false;
  let characters = 0;
  const syntaxError = (error: unknown): never => {
    const message = error instanceof Error ? error.message : String(error);
    if (parser.isEnded || /ENDED/.test(message)) throw new BundleSyntaxError(`Invalid bundle JSON: unexpected text after the bundle object (${message})`);
    throw new BundleSyntaxError(`Invalid bundle JSON at character ${characters}: ${message}`);
  };

  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? piece : piece.toString('utf8');
    if (!seenStart) {
      const first = /[^\s\ufeff]/.exec(chunk);
      if (first) {
        if (first[0] !== '{') throw new BundleSyntaxError('Invalid bundle JSON: a bundle is a JSON object');
        seenStart = true;
      }
    }
    try {
      parser.write(chunk);
    } catch (error) {
      syntaxError(error);
    }
    characters += chunk.length;
    if (progress) progress.characters = characters;
    const items = ready;
    ready = [];
    yield* items;
  }
  if (!parser.isEnded) {
    if (!seenStart) throw new BundleSyntaxError('Invalid bundle JSON: the file is empty');
    throw new BundleSyntaxError('Invalid bundle JSON: the file ends before the bundle object is closed');
  }
}
