/**
 * Streams a content bundle without holding it in memory: yields each element of the top-level
 * arrays (and each other top-level value) as soon as it is complete, so a 500k-spark file is
 * read with memory bounded by its largest element. Any valid JSON layout works; the scanner
 * only tracks strings and nesting depth, then JSON.parse()s one element at a time.
 */
export interface BundleItem {
  /** The top-level key, e.g. "sparks". */
  key: string;
  /** Index within the array, or -1 for a top-level value that is not an array. */
  position: number;
  value: unknown;
  /** The element's JSON text, as found in the file. */
  text: string;
}

export class BundleSyntaxError extends Error {}

const enum State {
  BeforeObject,
  BeforeKey,
  Key,
  BeforeColon,
  BeforeValue,
  Value,
  AfterValue,
  BeforeElement,
  Element,
  AfterElement,
  Done,
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export async function* readBundleItems(source: AsyncIterable<string | Buffer>): AsyncGenerator<BundleItem> {
  let state = State.BeforeObject;
  let key = '';
  let keyText = '';
  let position = 0;
  // Capture of the value or element being read.
  let buffer = '';
  let depth = 0;
  let inString = false;
  let escaped = false;
  let offset = 0; // characters consumed before the current chunk, for error messages

  const fail = (message: string, at: number): never => {
    throw new BundleSyntaxError(`Invalid bundle JSON at character ${offset + at}: ${message}`);
  };
  const parse = (text: string, at: number) => {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      return fail(`${(error as Error).message} (in ${key})`, at);
    }
  };

  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? piece : piece.toString('utf8');
    let start = -1; // where the capture began in this chunk
    if (state === State.Key || state === State.Value || state === State.Element) start = 0;
    let i = 0;
    while (i < chunk.length) {
      const c = chunk.charCodeAt(i);
      switch (state) {
        case State.BeforeObject:
          if (c === 0xfeff || isSpace(c)) break;
          if (c !== 0x7b) fail('a bundle is a JSON object', i);
          state = State.BeforeKey;
          break;
        case State.BeforeKey:
          if (isSpace(c) || c === 0x2c) break;
          if (c === 0x7d) {
            state = State.Done;
            break;
          }
          if (c !== 0x22) fail('expected a key', i);
          state = State.Key;
          keyText = '';
          start = i + 1;
          escaped = false;
          break;
        case State.Key:
          if (escaped) escaped = false;
          else if (c === 0x5c) escaped = true;
          else if (c === 0x22) {
            keyText += chunk.slice(start, i);
            key = parse(`"${keyText}"`, i) as string;
            start = -1;
            state = State.BeforeColon;
          }
          break;
        case State.BeforeColon:
          if (isSpace(c)) break;
          if (c !== 0x3a) fail('expected ":"', i);
          state = State.BeforeValue;
          break;
        case State.BeforeValue:
          if (isSpace(c)) break;
          if (c === 0x5b) {
            state = State.BeforeElement;
            position = 0;
            break;
          }
          state = State.Value;
          buffer = '';
          start = i;
          depth = 0;
          inString = false;
          escaped = false;
          continue; // let the capture see this character
        case State.BeforeElement:
          if (isSpace(c) || c === 0x2c) break;
          if (c === 0x5d) {
            state = State.AfterValue;
            break;
          }
          state = State.Element;
          buffer = '';
          start = i;
          depth = 0;
          inString = false;
          escaped = false;
          continue;
        case State.Value:
        case State.Element: {
          // Returns here with `end` set when the captured value is complete.
          let end = -1; // exclusive end index of the value in this chunk
          if (inString) {
            if (escaped) escaped = false;
            else if (c === 0x5c) escaped = true;
            else if (c === 0x22) {
              inString = false;
              if (depth === 0) end = i + 1;
            }
          } else if (c === 0x22) inString = true;
          else if (c === 0x7b || c === 0x5b) depth++;
          else if (c === 0x7d || c === 0x5d) {
            if (depth === 0) end = i; // a scalar ended by the parent's closing bracket
            else if (--depth === 0) end = i + 1;
          } else if (depth === 0 && (c === 0x2c || isSpace(c))) end = i;
          if (end >= 0) {
            const text = buffer + chunk.slice(start, end);
            buffer = '';
            start = -1;
            if (state === State.Value) {
              yield { key, position: -1, value: parse(text, i), text };
              state = State.AfterValue;
            } else {
              yield { key, position, value: parse(text, i), text };
              position++;
              state = State.AfterElement;
            }
            if (end === i) continue; // the terminator belongs to the next state
          }
          break;
        }
        case State.AfterElement:
          if (isSpace(c)) break;
          if (c === 0x2c) state = State.BeforeElement;
          else if (c === 0x5d) state = State.AfterValue;
          else fail('expected "," or "]" after an array element', i);
          break;
        case State.AfterValue:
          if (isSpace(c)) break;
          if (c === 0x2c) state = State.BeforeKey;
          else if (c === 0x7d) state = State.Done;
          else fail('expected "," or "}"', i);
          break;
        case State.Done:
          if (!isSpace(c)) fail('unexpected text after the bundle object', i);
          break;
      }
      i++;
    }
    if (start >= 0) {
      if (state === State.Key) keyText += chunk.slice(start);
      else buffer += chunk.slice(start);
    }
    offset += chunk.length;
  }
  if ((state as State) !== State.Done) throw new BundleSyntaxError('Invalid bundle JSON: the file ends before the bundle object is closed');
}
