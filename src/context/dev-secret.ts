import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Outside production, a missing SUPABASE_JWT_SECRET is replaced by a random one kept next to
 * the embedded data, so tokens minted by `npm run token` keep working across restarts.
 */
export async function loadOrCreateDevJwtSecret(dataDir: string): Promise<string> {
  const file = path.join(path.dirname(path.resolve(dataDir)), 'dev-jwt-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(48).toString('base64url');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
