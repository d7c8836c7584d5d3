import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser tests drive Debian's chromium with playwright-core; install it when missing (root). */
export function ensureChromium(log: (line: string) => void): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0) {
    log(`chromium is missing: browser tests will be skipped. Install it with: sudo apt-get install -y chromium`);
    return;
  }
  log('installing chromium from Debian');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    if (install().status !== 0) throw new Error('apt-get could not install chromium');
  }
}
