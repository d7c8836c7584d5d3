/**
 * A Supabase-shaped database (test/fixtures/supabase-platform.sql) for `npm test`: a server whose
 * bootstrap superuser is supabase_admin, with Supabase's roles, its `auth` schema with GoTrue's
 * auth.users and claim readers, and `extensions`; and what the project may change there.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { catalogRows } from './schema-catalog.js';
import { startPostgres, type PostgresBuild } from './postgres-servers.js';
import { withDatabase } from './test-database.js';

const FIXTURE = path.resolve(import.meta.dirname, '../test/fixtures/supabase-platform.sql');

/** Supabase's schemas a project's migrations meet. */
const PLATFORM_SCHEMAS = ['auth', 'extensions', 'public'];

/**
 * What the migrations may change of Supabase's on a project, each written down where it is done:
 * the four extensions search needs (supabase/schemas/01-platform.sql) and the pre-request hook on
 * authenticator (12-dispatch.sql; the fixture's postgres, without supautils, may not set it).
 */
export const PERMITTED_PLATFORM_CHANGES = [
  /^\+ extension (pg_trgm|unaccent|btree_gin|intarray)\textensions$/,
  /^\+ role setting authenticator\tpgrst\.db_pre_request=private\.check_request$/,
  // The API's own login role (supabase/schemas/02-callers.sql): created without LOGIN, a member of
  // the two request roles and nothing else.
  /^\+ role sparkpath_api\tf f f f f f f -1$/,
  /^\+ role member sparkpath_api\t(anon|authenticated)$/,
  // From PostgreSQL 16 the role that creates a role administers it.
  /^\+ role member postgres\tsparkpath_api with admin option$/,
];

export interface SupabaseShaped {
  /** The platform's superuser, supabase_admin, on database postgres. */
  adminUrl: string;
  /** The project owner's connection string, as a project's dashboard gives it: postgres on postgres. */
  url: string;
  stop(): Promise<void>;
}

export async function startSupabaseShaped(build: PostgresBuild): Promise<SupabaseShaped> {
  const server = await startPostgres(build, { superuser: 'supabase_admin' });
  try {
    const sql = postgres(server.adminUrl, { max: 1, onnotice: () => undefined });
    try {
      await sql.unsafe(await readFile(FIXTURE, 'utf8'));
    } finally {
      await sql.end();
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
  const url = new URL(server.adminUrl);
  url.username = 'postgres';
  return { adminUrl: server.adminUrl, url: withDatabase(url.toString(), 'postgres'), stop: server.stop };
}

/**
 * One line per fact of Supabase's that a project's migrations could change: the objects of
 * auth, extensions and public (catalogRows), every default privilege, and every role with its
 * attributes, memberships and settings, and the database's owner, privileges and settings.
 */
export async function platformState(adminUrl: string): Promise<string[]> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    const rows = await sql<{ line: string }[]>`
      select 'role ' || r.rolname || E'\t' || pg_catalog.concat_ws(' ', r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb,
             r.rolcanlogin, r.rolreplication, r.rolbypassrls, r.rolconnlimit, r.rolvaliduntil) as line
      from pg_catalog.pg_roles r where r.rolname !~ '^pg_'
      union all
      select 'role member ' || pg_catalog.pg_get_userbyid(m.member) || E'\t' || pg_catalog.pg_get_userbyid(m.roleid)
             || case when m.admin_option then ' with admin option' else '' end
      from pg_catalog.pg_auth_members m
      union all
      select 'role setting ' || coalesce(pg_catalog.pg_get_userbyid(s.setrole), 'any role')
             || coalesce(' in database ' || d.datname, '') || E'\t' || c.setting
      from pg_catalog.pg_db_role_setting s left join pg_catalog.pg_database d on d.oid = s.setdatabase,
           pg_catalog.unnest(s.setconfig) c(setting)
      union all
      select 'database ' || d.datname || E'\t' || pg_catalog.pg_get_userbyid(d.datdba) || ' '
             || coalesce((select pg_catalog.array_agg(x::text order by x::text) from pg_catalog.unnest(d.datacl) x)::text, 'default')
      from pg_catalog.pg_database d`;
    return [...rows.map((row) => row.line), ...(await catalogRows(adminUrl, PLATFORM_SCHEMAS))].sort();
  } finally {
    await sql.end();
  }
}

/** auth.uid()'s owner and whether its definition is the fixture's (GoTrue's: no search_path setting). */
export async function authUid(adminUrl: string): Promise<{ owner: string; definitions: number; gotrues: boolean }> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await sql<{ owner: string; definitions: number; gotrues: boolean }[]>`
      select pg_catalog.pg_get_userbyid(p.proowner) as owner,
             (select pg_catalog.count(*)::integer from pg_catalog.pg_proc q where q.pronamespace = p.pronamespace and q.proname = 'uid') as definitions,
             p.proconfig is null as gotrues
      from pg_catalog.pg_proc p where p.oid = 'auth.uid()'::pg_catalog.regprocedure`;
    return row;
  } finally {
    await sql.end();
  }
}
