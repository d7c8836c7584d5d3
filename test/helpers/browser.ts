import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM } from '../../scripts/chromium.js';

/** `npm test` installs Debian's chromium when missing; a bare `vitest` run without it skips. */
export const hasChromium = existsSync(CHROMIUM);

/**
 * Headless Debian chromium for browser tests. The flags keep it off the network: this machine
 * refuses outside connections, and chromium's background services would try them at start.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
