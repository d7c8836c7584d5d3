import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/test-database.js';
import { sharedBuffersMb } from '../../src/db/embedded.js';
import { root, startServer } from '../helpers/server-process.js';

const postmasterPid = (dataDir: string) => Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('server lifecycle with the embedded database', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('survives a crash: the next start stops the orphaned postgres, reuses the data, and SIGTERM exits cleanly', async () => {
    const work = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-lifecycle-'));
    const dataDir = path.join(work, 'pg');
    cleanup.push(() => rm(work, { recursive: true, force: true }));
    const env = { EMBEDDED_PG_DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) };

    const first = await startServer(env);
    cleanup.push(async () => void first.child.kill('SIGKILL'));
    expect(first.lines.find((l) => l.msg === 'database ready')).toMatchObject({ embedded: true });
    expect((first.lines.find((l) => l.msg === 'database ready')?.migrations_applied as number) > 0).toBe(true);
    expect((await fetch(`${first.baseUrl}/metadata/health`)).status).toBe(200);
    // Sized as Supabase sizes an instance's (src/db/embedded.ts), not PostgreSQL's 128 MB.
    const admin = postgres(`postgres://postgres:postgres@127.0.0.1:${env.EMBEDDED_PG_PORT}/postgres`, { max: 1 });
    const [buffers] = await admin`select setting::bigint * 8192 / 1048576 as mb from pg_settings where name = 'shared_buffers'`;
    await admin.end();
    expect(Number(buffers.mb)).toBe(sharedBuffersMb());
    expect(Number(buffers.mb) * 4 * 2 ** 20).toBeLessThanOrEqual(Math.max(os.totalmem(), 512 * 2 ** 20));

    // Crash: the API dies without stopping its postgres.
    const orphan = postmasterPid(dataDir);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    expect(alive(orphan)).toBe(true);

    const second = await startServer(env);
    cleanup.push(async () => void second.child.kill('SIGKILL'));
    expect(alive(orphan)).toBe(false);
    expect(second.lines.find((l) => l.msg === 'database ready')).toMatchObject({ migrations_applied: 0, demo_content_loaded: false });
    expect((await fetch(`${second.baseUrl}/metadata`)).status).toBe(200);

    // A CLI opening the same data directory while the server runs attaches to its postgres.
    const cli = spawn(process.execPath, ['--import', 'tsx', 'src/cli/db-migrate.ts'], { cwd: root, env: { ...process.env, ...env }, stdio: 'ignore' });
    expect(await new Promise((resolve) => cli.once('exit', resolve))).toBe(0);
    expect((await fetch(`${second.baseUrl}/metadata/health`)).status).toBe(200);

    const running = postmasterPid(dataDir);
    const exited = new Promise<number | null>((resolve) => second.child.once('exit', resolve));
    second.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(alive(running)).toBe(false);
    expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
  }, 120_000);
});
