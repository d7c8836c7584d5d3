import { spawnSync } from 'node:child_process';

/** Installs Debian packages (as root), updating the package lists once if the first try fails. */
export function aptInstall(packages: string[]): void {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: 'inherit', env });
  if (install().status === 0) return;
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (install().status !== 0) throw new Error(`apt-get could not install ${packages.join(' ')}`);
}
