import { createHash } from 'node:crypto';
import postgres from 'postgres';

/**
 * The API's login role (supabase/schemas/02-callers.sql): NOINHERIT, no privilege on any table,
 * a member of anon and authenticated only, so it can do nothing but run the dispatchers and the
 * sign-in, rate-limit and cleanup functions granted to it, and become a request role.
 */
export const API_LOGIN_ROLE = 'sparkpath_api';

/**
 * Its password on a PostgreSQL this process starts itself (the embedded database, the test
 * clusters): loopback only, like the superuser's `postgres` there. Any other database gets a
 * password from whoever deploys it (docs/configuration.md).
 */
export const LOCAL_API_LOGIN_PASSWORD = 'sparkpath_api';

/**
 * The login role's connection string on the server and database of `ownerUrl`.
 *
 * @example apiLoginUrl('postgres://postgres:pw@127.0.0.1:54329/sparkpath') // => 'postgres://sparkpath_api:sparkpath_api@127.0.0.1:54329/sparkpath'
 */
export function apiLoginUrl(ownerUrl: string, password = LOCAL_API_LOGIN_PASSWORD): string {
  const url = new URL(ownerUrl);
  url.username = API_LOGIN_ROLE;
  url.password = encodeURIComponent(password);
  return url.toString();
}

/**
 * A local development database (the embedded one, test clusters; owner connection): the login
 * role logs in with LOCAL_API_LOGIN_PASSWORD, and may set a user's role and plan, which the
 * local dev provider's demo learners (admin, premium) need at sign-in. No migration grants the
 * latter: on any other database only the owner (the token CLI) sets them.
 */
export async function enableLocalApiLogin(ownerUrl: string): Promise<void> {
  const sql = postgres(ownerUrl, { max: 1, onnotice: () => undefined });
  try {
    await sql.unsafe(`alter role ${API_LOGIN_ROLE} with login password '${LOCAL_API_LOGIN_PASSWORD}'`);
    await sql.unsafe(`grant execute on function private.set_user_access(uuid, text, text) to ${API_LOGIN_ROLE}`);
  } finally {
    await sql.end();
  }
}

/**
 * Writes the SHA-256 of SERVICE_AUTH_SECRET where private.request_caller checks X-Service-Auth
 * (owner connection). Nothing happens without a secret: a process started without one (a
 * migration job, an API with no service access) never removes the digest another one relies on;
 * `select private.set_service_auth_digest(null)` does.
 */
export async function writeServiceAuthDigest(ownerUrl: string, secret: string | undefined): Promise<void> {
  if (!secret) return;
  const sql = postgres(ownerUrl, { max: 1, onnotice: () => undefined });
  try {
    await sql`select private.set_service_auth_digest(${createHash('sha256').update(secret).digest()})`;
  } finally {
    await sql.end();
  }
}
