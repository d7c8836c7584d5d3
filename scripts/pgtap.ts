import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { aptInstall } from './apt.js';
import { DEBIAN_15 } from './postgres-servers.js';

// postgresql-15-pgtap brings Debian's postgresql-15 with it: the suite's PostgreSQL 15.
const DEBIAN_PACKAGES = ['postgresql-15-pgtap', 'libtap-parser-sourcehandler-pgtap-perl'];

const installed = () =>
  existsSync(path.join(DEBIAN_15.extensionDir, 'pgtap.control')) &&
  existsSync(path.join(DEBIAN_15.binDir, 'postgres')) &&
  spawnSync('pg_prove', ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * Makes pgTAP usable by every PostgreSQL the suite runs on: installs Debian's packages when
 * missing (as root), then copies the extension's SQL files into each of `extensionDirs` (the
 * embedded builds' share directories).
 */
export function ensurePgtap(log: (line: string) => void, extensionDirs: string[]): void {
  if (!installed()) {
    if (process.getuid?.() !== 0) {
      throw new Error(`pgTAP is missing. Install it with: sudo apt-get install -y ${DEBIAN_PACKAGES.join(' ')}`);
    }
    log(`installing ${DEBIAN_PACKAGES.join(', ')} from Debian`);
    aptInstall(DEBIAN_PACKAGES);
    if (!installed()) throw new Error(`pgTAP or PostgreSQL 15 not found after installing ${DEBIAN_PACKAGES.join(' ')}`);
  }
  const source = DEBIAN_15.extensionDir;
  for (const target of extensionDirs) {
    for (const file of readdirSync(source).filter((f) => f.startsWith('pgtap') || f.startsWith('schematap'))) {
      if (!existsSync(path.join(target, file))) copyFileSync(path.join(source, file), path.join(target, file));
    }
  }
}
