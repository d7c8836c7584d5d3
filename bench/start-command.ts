import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The node arguments `npm start` runs the API with: the esbuild bundle it builds and the node
 * flags of its script (heap caps), read from package.json so the bench and the reliability
 * suite cannot drift from production. Builds the bundle (a few milliseconds) on every call.
 */
export function npmStartArgs(root: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr}`);
  const [node, ...args] = pkg.scripts.start.split('&&').at(-1)!.trim().split(/\s+/);
  if (node !== 'node') throw new Error(`the start script should end in "node ...": ${pkg.scripts.start}`);
  return args;
}
