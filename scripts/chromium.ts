import { existsSync } from 'node:fs';
import { aptInstall } from './apt.js';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser tests drive Debian's chromium with playwright-core; install it when missing (root). */
export function ensureChromium(log: (line: string) => void): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0) {
    log(`chromium is missing: browser tests will be skipped. Install it with: sudo apt-get install -y chromium`);
    return;
  }
  log('installing chromium from Debian');
  aptInstall(['chromium']);
}
