import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema, loadConfig } from '../../src/config.js';
import { connectionMode } from '../../src/db/connection-mode.js';

const guide = readFileSync(path.resolve(import.meta.dirname, '../../docs/supabase.md'), 'utf8');
const schemaVariables = new Set(Object.keys(configSchema.in.shape));

/**
 * The settings docs/supabase.md names: every `SNAKE_CASE` name (one underscore at least, so words
 * like JSON or HTTPS are not taken for settings) and every `NAME=` assignment in its commands.
 */
function namedSettings(markdown: string): string[] {
  const names = [
    ...[...markdown.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)].map((match) => match[0]),
    ...[...markdown.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]),
  ];
  return [...new Set(names)].sort();
}

describe('docs/supabase.md', () => {
  it('names only settings the config schema has', () => {
    const named = namedSettings(guide);
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((name) => !schemaVariables.has(name))).toEqual([]);
  });

  it('lists every Supabase setting in its one-page table', () => {
    const table = guide.slice(guide.indexOf('## Settings on one page'));
    for (const name of ['DATABASE_URL', 'DB_PREPARE', 'SUPABASE_URL', 'SUPABASE_ANON_KEY', 'AUTH_PROVIDER', 'SUPABASE_AUTH_LOGOUT_SCOPE', 'JWT_ACCEPTED_ISSUERS', 'JWT_JWKS_URL']) {
      expect(table, name).toContain(`| \`${name}\``);
    }
  });

  it('states the defaults the code has: the project\'s JWKS, the accepted issuers, and the start-up report on port 6543', () => {
    const config = loadConfig({ SUPABASE_URL: 'https://abcdefghijklmnopqrst.supabase.co' });
    expect(config.JWT_JWKS_URL).toBe('https://abcdefghijklmnopqrst.supabase.co/auth/v1/.well-known/jwks.json');
    expect(guide).toContain('`<SUPABASE_URL>/auth/v1/.well-known/jwks.json`');
    expect(config.JWT_ACCEPTED_ISSUERS).toEqual(['sparkpath', 'https://abcdefghijklmnopqrst.supabase.co/auth/v1']);
    expect(loadConfig({ JWT_ISSUER: 'https://api.example.com' }).JWT_ACCEPTED_ISSUERS).toEqual(['https://api.example.com']);
    expect(loadConfig({ JWT_ACCEPTED_ISSUERS: 'https://a.example.com, https://b.example.com' }).JWT_ACCEPTED_ISSUERS).toEqual(['https://a.example.com', 'https://b.example.com']);
    expect(loadConfig({}).JWT_ACCEPTED_ISSUERS).toBeUndefined();
    const report = connectionMode('postgresql://postgres.ref:pw@aws-0-eu-west-1.pooler.supabase.com:6543/postgres', 'auto');
    expect(guide).toContain(JSON.stringify({ msg: 'database connection', prepared_statements: report.prepare, transaction_pooler: report.transactionPooler, reason: report.reason }));
  });
});
