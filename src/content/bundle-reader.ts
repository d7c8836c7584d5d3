/**
 * Streams a content bundle without holding it in memory: yields each element of the top-level
 * arrays (and each other top-level value) as soon as it is complete, so a 500k-spark file is
 * read with memory bounded by its largest element, not by its size. Parsing is done by
 * @streamparser/json (a maintained streaming parser): its token parser emits the values two
 * levels deep and forgets them (keepStack: false); the top-level values that are not arrays
 * (the snapshot object, `$schema`, unknown keys the validation must name) are picked from the
 * tokens on their way to it. Asking the parser for the top-level values as well would make it
 * keep every array whole until its end.
 */
import { Tokenizer, TokenParser } from '@streamparser/json';

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

// Token types of @streamparser/json (utils/types/tokenType).
const LEFT_BRACE = 0;
const RIGHT_BRACE = 1;
const LEFT_BRACKET = 2;
const RIGHT_BRACKET = 3;
const COLON = 4;
const COMMA = 5;
const STRING = 9;

export async function* readBundleItems(source: AsyncIterable<string | Buffer>, progress?: ReadProgress): AsyncGenerator<BundleItem> {
  const tokenizer = new Tokenizer();
  const parser = new TokenParser({ paths: ['$.*.*'], keepStack: false });
  let ready: BundleItem[] = [];
  // The top-level object's members: the key being read, and the members of an object value.
  let depth = 0;
  let topKey = '';
  let expectKey = false;
  let members: Record<string, unknown> | undefined;
  tokenizer.onToken = (token) => {
    const type = token.token as number;
    if (depth === 1) {
      if (expectKey && type === STRING) topKey = String(token.value);
      else if (type === LEFT_BRACE) members = {};
      else if (type !== LEFT_BRACKET && type !== COLON && type !== COMMA && type !== RIGHT_BRACE) {
        ready.push({ key: topKey, position: -1, value: token.value });
      }
      expectKey = type === COMMA;
    }
    if (type === LEFT_BRACE || type === LEFT_BRACKET) {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (type === RIGHT_BRACE || type === RIGHT_BRACKET) {
      depth--;
      if (depth === 1 && members) {
        ready.push({ key: topKey, position: -1, value: members });
        members = undefined;
      }
    }
    parser.write(token);
  };
  parser.onValue = ({ value, key }) => {
    if (typeof key === 'number') ready.push({ key: topKey, position: key, value });
    else if (members) members[String(key)] = value;
  };
  parser.onEnd = () => {
    if (!tokenizer.isEnded) tokenizer.end();
  };
  let seenStart = false;
  let characters = 0;

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
      tokenizer.write(chunk);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (parser.isEnded || tokenizer.isEnded) throw new BundleSyntaxError(`Invalid bundle JSON: unexpected text after the bundle object (${message})`);
      throw new BundleSyntaxError(`Invalid bundle JSON at character ${characters}: ${message}`);
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
