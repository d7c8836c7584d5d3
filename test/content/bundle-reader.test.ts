import { describe, expect, it } from 'vitest';
import { readBundleItems, type BundleItem } from '../../src/content/bundle-reader.js';

async function* chunks(text: string, size: number) {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function items(text: string, size: number) {
  const result: BundleItem[] = [];
  for await (const { key, position, value } of readBundleItems(chunks(text, size))) result.push({ key, position, value });
  return result;
}

describe('bundle reader', () => {
  const text = ' {"$schema": "x.json", "snapshot" : {"name":"N"},\n"sparks":[ {"slug":"a\\"]}","n":[1,2]} ,\n{"slug":"b"}],"weird":12,"empty":[],"list":[1, "two",null ,true]}\n';
  const expected = [
    { key: '$schema', position: -1, value: 'x.json' },
    { key: 'snapshot', position: -1, value: { name: 'N' } },
    { key: 'sparks', position: 0, value: { slug: 'a"]}', n: [1, 2] } },
    { key: 'sparks', position: 1, value: { slug: 'b' } },
    { key: 'weird', position: -1, value: 12 },
    { key: 'list', position: 0, value: 1 },
    { key: 'list', position: 1, value: 'two' },
    { key: 'list', position: 2, value: null },
    { key: 'list', position: 3, value: true },
  ];

  it('yields every top-level value and array element, whatever the chunk boundaries', async () => {
    for (const size of [1, 2, 3, 7, 64, 10_000]) expect(await items(text, size), `chunk size ${size}`).toEqual(expected);
  });

  it('rejects a bundle that is not an object, is truncated, or has trailing text', async () => {
    await expect(items('[1,2]', 4)).rejects.toThrow(/a bundle is a JSON object/);
    await expect(items('{"sparks": [{"slug": "a"}', 4)).rejects.toThrow(/ends before/);
    await expect(items('{} x', 4)).rejects.toThrow(/unexpected text/);
    await expect(items('{"sparks": [{"slug": }]}', 4)).rejects.toThrow(/Invalid bundle JSON/);
  });
});
