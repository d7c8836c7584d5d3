import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleJsonSchema } from '../../src/content/bundle-schema.js';
import { buildSeedSql } from '../../src/content/seed-sql.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('generated content files', () => {
  it('docs/content-bundle.schema.json is the JSON Schema of the zod bundle schema (run `npm run content -- schema`)', async () => {
    expect(await readFile(path.join(root, 'docs/content-bundle.schema.json'), 'utf8')).toBe(bundleJsonSchema());
  });

  it('supabase/seed.sql is built from content/demo (run `npm run content -- seed-sql`)', async () => {
    expect(await readFile(path.join(root, 'supabase/seed.sql'), 'utf8')).toBe(await buildSeedSql());
  });
});
