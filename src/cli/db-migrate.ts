/**
 * `npm run db:migrate`: apply pending migrations to DATABASE_URL (or the embedded database), and
 * record the digest of SERVICE_AUTH_SECRET when it is set (the Data API's service callers need it
 * even where no API process starts).
 */
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { writeServiceAuthDigest } from '../db/login-role.js';
import { migrate } from '../db/migrate.js';

// It takes no arguments; anything given is a mistake worth stopping for, not migrating past.
const args = process.argv.slice(2);
if (args.length > 0) {
  const asked = args.includes('--help') || args.includes('-h');
  (asked ? console.log : console.error)('usage: npm run db:migrate   (applies pending supabase/migrations to DATABASE_URL, or the embedded database)');
  process.exit(asked ? 0 : 1);
}
const config = loadConfig();
const database = await openDatabase(config);
try {
  const { applied, skipped } = await migrate(database.url);
  await writeServiceAuthDigest(database.url, config.SERVICE_AUTH_SECRET);
  for (const file of applied) console.log(`applied ${file}`);
  console.log(`${applied.length} applied, ${skipped} already up to date`);
} finally {
  await database.stop();
}
