/** `npm run db:migrate`: apply pending migrations to DATABASE_URL (or the embedded database). */
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';

const config = loadConfig();
const database = await openDatabase(config);
try {
  const { applied, skipped } = await migrate(database.url);
  for (const file of applied) console.log(`applied ${file}`);
  console.log(`${applied.length} applied, ${skipped} already up to date`);
} finally {
  await database.stop();
}
