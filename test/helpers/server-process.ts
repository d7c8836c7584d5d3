import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../scripts/test-database.js';

export interface ServerProcess {
  child: ChildProcess;
  /** Every JSON log line the server wrote so far, parsed. */
  lines: Record<string, unknown>[];
  stderr(): string;
  /** Signals the whole process group (npm, its shell and node) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export const root = path.resolve(import.meta.dirname, '../..');

/**
 * Starts the API as a real process (`npm start`, or the sources with tsx) and resolves once it
 * logs that it is listening. The process leads its own group, so `stop` reaches the server
 * behind `npm start` too.
 *
 * @example
 *   const server = await startServerProcess('npm', ['start'], { ...process.env, PORT: String(port) });
 */
export async function startServerProcess(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<ServerProcess> {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), timeoutMs);
    child.stdout!.on('data', (chunk) => {
      buffer += String(chunk);
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          const parsed = JSON.parse(line);
          lines.push(parsed);
          if (parsed.msg === 'Sparkpath API listening') {
            clearTimeout(timer);
            resolve();
          }
        } catch {
          // not a log line
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // already gone
        }
      }
      return exited;
    },
  };
}

export interface Running {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  baseUrl: string;
}

/** Starts `src/server.ts` (tsx, development) on a free port with `env` and resolves once it listens. */
export async function startServer(env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  const server = await startServerProcess(process.execPath, ['--import', 'tsx', 'src/server.ts'], { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', PORT: String(port), ...env }, 60_000);
  return { child: server.child, lines: server.lines, baseUrl: `http://127.0.0.1:${port}` };
}
