/**
 * postgres.js 3.4.9's pool queue leaks a hole per shift() until it drains; under sustained load
 * it never drains and the pool slows down (see patches/postgres+3.4.9.patch). These tests fail
 * if `npm ci` did not apply the patch (patch-package runs from `postinstall`), in each of the
 * three builds the package ships.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T | undefined): T | null | undefined;
}
type QueueFactory = <T>(initial?: T[]) => Queue<T>;

const require = createRequire(import.meta.url);
const packageRoot = path.resolve(path.dirname(require.resolve('postgres')), '../..');

async function loadQueue(build: 'src' | 'cjs/src' | 'cf/src'): Promise<QueueFactory> {
  const file = path.join(packageRoot, build, 'queue.js');
  if (build === 'cjs/src') return require(file) as QueueFactory;
  return ((await import(pathToFileURL(file).href)) as { default: QueueFactory }).default;
}

describe.each(['src', 'cjs/src', 'cf/src'] as const)('postgres.js queue (%s)', (build) => {
  it('leaves no consumed slot behind while it never drains', async () => {
    const Queue = await loadQueue(build);
    const q = Queue<number>();
    q.push(0);
    for (let i = 1; i <= 10_000; i++) {
      q.push(i);
      expect(q.shift()).toBe(i - 1);
    }
    expect(q.length).toBe(1);
    // Upstream keeps 10,000 `undefined` holes here, and remove() finds (and splices) one.
    expect(q.remove(undefined)).toBeNull();
    expect(q.shift()).toBe(10_000);
    expect(q.length).toBe(0);
  });

  it('behaves like a FIFO array under any mix of push, shift and remove', async () => {
    const Queue = await loadQueue(build);
    const command = fc.oneof(
      fc.record({ op: fc.constant('push' as const), value: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ op: fc.constant('shift' as const) }),
      fc.record({ op: fc.constant('remove' as const), value: fc.integer({ min: 0, max: 50 }) }),
    );
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 5 }), fc.array(command, { maxLength: 600 }), (initial, commands) => {
        const q = Queue(initial);
        const model = [...initial];
        for (const c of commands) {
          if (c.op === 'push') {
            expect(q.push(c.value)).toBe(c.value);
            model.push(c.value);
          } else if (c.op === 'shift') {
            // The pool never shifts an empty queue (it checks length first); neither do we.
            if (model.length > 0) expect(q.shift()).toBe(model.shift());
          } else {
            const at = model.indexOf(c.value);
            expect(q.remove(c.value)).toBe(at === -1 ? null : model.splice(at, 1)[0]);
          }
          expect(q.length).toBe(model.length);
        }
      }),
      { numRuns: 300 },
    );
  });
});
