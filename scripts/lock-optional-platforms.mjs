// The npm registry reachable from our machines lacks the other platforms' builds of the
// supabase CLI (@supabase/cli-darwin-arm64@3.1.0 and friends), so `npm install` leaves them out
// of package-lock.json and `npm ci` then refuses the lock as out of sync. This records them as
// platform-restricted optional entries, which npm ci skips on linux-x64 without fetching.
// Run it after any `npm install` that rewrites the lock: `node scripts/lock-optional-platforms.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const cli = lock.packages['node_modules/supabase'];
const platforms = {
  'darwin-arm64': { os: 'darwin', cpu: 'arm64' },
  'darwin-x64': { os: 'darwin', cpu: 'x64' },
  'linux-arm64': { os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'linux-arm64-musl': { os: 'linux', cpu: 'arm64', libc: 'musl' },
  'linux-x64': { os: 'linux', cpu: 'x64', libc: 'glibc' },
  'linux-x64-musl': { os: 'linux', cpu: 'x64', libc: 'musl' },
  'windows-arm64': { os: 'win32', cpu: 'arm64' },
  'windows-x64': { os: 'win32', cpu: 'x64' },
};
let added = 0;
for (const [name, version] of Object.entries(cli?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const platform = platforms[name.replace('@supabase/cli-', '')];
  if (!platform) throw new Error(`unknown platform package ${name}`);
  lock.packages[key] = {
    version,
    cpu: [platform.cpu],
    dev: true,
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    license: 'MIT',
    optional: true,
    os: [platform.os],
  };
  added++;
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} platform entries`);
