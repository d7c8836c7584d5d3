import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { configSchema, DEV_FRONTEND_ORIGINS, loadConfig } from '../../src/config.js';

const root = path.resolve(import.meta.dirname, '../..');
const doc = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
const envExample = readFileSync(path.join(root, '.env.example'), 'utf8');
// The schema's input side: its variables as the environment names them (the output fills in computed defaults).
const schemaVariables = Object.keys(configSchema.in.shape).sort();

interface DocumentedVariable {
  name: string;
  defaultCell: string;
}

/**
 * The reference rows of docs/configuration.md: table rows whose first cell is one
 * `VARIABLE_NAME` in backticks. Pipes inside cells are not used there, so splitting on `|` is exact.
 */
function documentedVariables(markdown: string): DocumentedVariable[] {
  const rows: DocumentedVariable[] = [];
  for (const line of markdown.split('\n')) {
    const cells = line.trim().replace(/^\||\|$/g, '').split('|').map((cell) => cell.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? '')?.[1];
    if (name && cells.length === 3) rows.push({ name, defaultCell: cells[1] });
  }
  return rows;
}

/**
 * Defaults that depend on the machine or on another variable, so no literal can state them: the
 * doc gives the formula, and the test checks the schema against it on machines of several sizes.
 */
const computedDefaults: Record<string, { text: string; expected: (cores: number) => unknown }> = {
  DB_POOL_MAX: { text: '2 × CPU cores, at most 20', expected: (cores) => Math.min(20, 2 * cores) },
  AUTH_CALLBACK_URL: { text: '`http://localhost:$PORT/explore/callback`', expected: () => 'http://localhost:3000/explore/callback' },
  AUTH_ALLOWED_REDIRECT_ORIGINS: { text: '`http://localhost:$PORT`', expected: () => 'http://localhost:3000' },
  AUTH_DEFAULT_REDIRECT_URL: { text: '`http://localhost:$PORT/explore`', expected: () => 'http://localhost:3000/explore' },
  CORS_ALLOWED_ORIGINS: {
    text: 'the Vite dev servers outside production, none in production',
    expected: () => DEV_FRONTEND_ORIGINS.join(','),
  },
  SESSION_IDLE_TIMEOUT_S: {
    text: '`ACCESS_TOKEN_TTL_S` + 10 (`SESSION_IDLE_CLOCK_SKEW_S`)',
    expected: () => loadConfig({}).ACCESS_TOKEN_TTL_S + 10,
  },
};

type Config = ReturnType<typeof loadConfig>;

/** The value `name` gets when the environment sets it to `value` (or leaves it unset), as the server loads it. */
const loaded = (name: string, value?: string) => loadConfig(value === undefined ? {} : { [name]: value })[name as keyof Config];

const documented = documentedVariables(doc);

describe('docs/configuration.md', () => {
  afterEach(() => {
    vi.doUnmock('node:os');
    vi.resetModules();
  });

  it('documents every variable of the config schema once, and no other', () => {
    const names = documented.map((row) => row.name);
    expect({
      documentedTwice: names.filter((name, i) => names.indexOf(name) !== i),
      missingFromTheDoc: schemaVariables.filter((name) => !names.includes(name)),
      notInTheSchema: names.filter((name) => !schemaVariables.includes(name)),
    }).toEqual({ documentedTwice: [], missingFromTheDoc: [], notInTheSchema: [] });
  });

  it.each(documented.map((row) => [row.name, row.defaultCell] as const))('states the actual default of %s (%s)', async (name, cell) => {
    const computed = computedDefaults[name];
    if (computed) {
      expect(cell, `the documented formula of ${name}`).toBe(computed.text);
      for (const cores of [1, 4, 16]) {
        vi.resetModules();
        vi.doMock('node:os', async (importOriginal) => ({ ...(await importOriginal<typeof import('node:os')>()), availableParallelism: () => cores }));
        const { loadConfig: loadOnMachine } = await import('../../src/config.js');
        expect(loadOnMachine({})[name as keyof Config], `${name} on ${cores} cores`).toEqual(computed.expected(cores));
      }
      return;
    }
    const literal = /^`([^`]*)`$/.exec(cell)?.[1];
    if (literal !== undefined) {
      // Setting a variable to its documented default must give what leaving it unset gives.
      expect(loaded(name, literal), `${name}=${literal} differs from leaving ${name} unset`).toEqual(loaded(name));
      return;
    }
    expect(cell, `${name}: a default is \`literal\`, "unset…" or a formula listed in computedDefaults`).toMatch(/^unset\b/);
    expect(loaded(name), `${name} is documented as unset`).toBeUndefined();
  });
});

describe('.env.example', () => {
  const mentioned = [...envExample.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]);
  const assigned = parseEnv(envExample);

  it('lists every variable of the config schema, set or commented out, and no other', () => {
    expect({
      missingFromEnvExample: schemaVariables.filter((name) => !mentioned.includes(name)),
      notInTheSchema: [...new Set(mentioned)].filter((name) => !schemaVariables.includes(name)),
    }).toEqual({ missingFromEnvExample: [], notInTheSchema: [] });
  });

  it('sets each variable it sets to its default, so copying it changes nothing', () => {
    expect(Object.keys(assigned).length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(assigned)) {
      expect(loaded(name, value), `${name}=${value} in .env.example is not the default`).toEqual(loaded(name));
    }
  });
});
