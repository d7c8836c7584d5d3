import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
// No database is given on purpose: with any argument the command must stop before opening one.
const migrateCli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'src/cli/db-migrate.ts', ...args], { cwd: root, env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' } });

describe('npm run db:migrate arguments', () => {
  it('prints its usage for --help and exits 0 without touching a database', async () => {
    const { stdout } = await migrateCli(['--help']);
    expect(stdout).toContain('usage: npm run db:migrate');
  });

  it('refuses an unexpected argument with exit code 1', async () => {
    await expect(migrateCli(['--url', 'x'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('usage: npm run db:migrate') });
  });
});
