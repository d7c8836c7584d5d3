/**
 * Builds databases from supabase/schemas and supabase/migrations and compares their catalogs.
 * Used by `npm run db:diff` (scripts/db-diff.ts) and by `npm test` (schema files and migrations
 * must give the same catalog).
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { migrate } from '../src/db/migrate.js';
import { withDatabase } from './test-database.js';

const root = path.resolve(import.meta.dirname, '..');
export const SCHEMAS_DIR = path.join(root, 'supabase/schemas');
/** The project's schemas: what the catalog check compares and what a diff may touch. */
export const PROJECT_SCHEMAS = ['app', 'api', 'private', 'auth', 'extensions'];
const run = promisify(execFile);

/** The schema files in the order they are applied (and the supabase CLI applies them): by name. */
export async function schemaFiles(dir = SCHEMAS_DIR): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort().map((f) => path.join(dir, f));
}

async function recreateDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  return withDatabase(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
}

/** A new database holding the schema files of `dir`, applied in order in one transaction. */
export async function buildFromSchemas(adminUrl: string, name: string, dir = SCHEMAS_DIR): Promise<string> {
  const url = await recreateDatabase(adminUrl, name);
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql.begin(async (tx) => {
      for (const file of await schemaFiles(dir)) {
        try {
          await tx.unsafe(await readFile(file, 'utf8'));
        } catch (error) {
          throw new Error(`${path.relative(root, file)}: ${(error as Error).message}`);
        }
      }
    });
  } finally {
    await sql.end();
  }
  return url;
}

/** A new database with every migration of `dir` applied, as `npm start` applies them. */
export async function buildFromMigrations(adminUrl: string, name: string, dir?: string): Promise<string> {
  const url = await recreateDatabase(adminUrl, name);
  await migrate(url, dir);
  return url;
}

/**
 * The statements that turn database `from` into `to`: @pgkit/migra for tables, columns,
 * constraints, indexes, views, functions, triggers, policies and table privileges, then what
 * migra does not compare or leaves out: routine settings, routine and column privileges, view
 * options and comments.
 * Empty when they agree.
 */
export async function diffDatabases(fromUrl: string, toUrl: string): Promise<string> {
  const migra = path.join(root, 'node_modules/.bin/migra');
  const { stdout } = await run(
    migra,
    ['run', fromUrl, toUrl, '--unsafe', 'true', '--with-privileges', 'true', '--exclude-schema', 'supabase_migrations', 'public'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const unchanged = await identicalIndexes(fromUrl, toUrl);
  const statements = stdout
    .trim()
    .split(/\n\n+/)
    .filter((statement) => !unchanged.has(statement.trim()));
  // A view migra writes anew loses its options, whatever they were before.
  const rewrittenViews = new Set(
    statements.flatMap((statement) => {
      const match = /^create (?:or replace )?view "([^"]+)"\."([^"]+)"/im.exec(statement.trim());
      return match ? [`view ${match[1]}.${match[2]}`] : [];
    }),
  );
  const [routinesBefore, routinesAfter] = await Promise.all([routines(fromUrl), routines(toUrl)]);
  const dropped = droppedRoutines(statements);
  const privileges = routinePrivilegeChanges(routinesBefore, routinesAfter, dropped);
  const settings = routineSettingChanges(routinesBefore, routinesAfter, new Set([...dropped, ...replacedRoutines(statements)]));
  const columnsAndViews = await columnPrivilegeAndViewOptionChanges(fromUrl, toUrl, rewrittenViews);
  const comments = await commentChanges(fromUrl, toUrl);
  return [statements.join('\n\n'), [...settings, ...privileges, ...columnsAndViews].join('\n'), comments.join('\n')]
    .filter((part) => part !== '')
    .join('\n\n');
}

/**
 * What migra does not carry besides routine privileges: privileges on columns, and a view's
 * options (its `create or replace view` drops security_invoker). One statement per grant, revoke
 * or option that `to` adds or removes, and every option of the views in `rewrittenViews`.
 */
async function columnPrivilegeAndViewOptionChanges(fromUrl: string, toUrl: string, rewrittenViews: Set<string>): Promise<string[]> {
  const facts = async (url: string) => {
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      const rows = await sql<{ fact: string; object: string; grant: string; revoke: string }[]>`
        select pg_catalog.concat_ws(' ', f.privilege, f.target, f.grantee) as fact, f.object,
               pg_catalog.format('grant %s on %s to %s;', f.privilege, f.target, f.grantee) as grant,
               pg_catalog.format('revoke %s on %s from %s;', f.privilege, f.target, f.grantee) as revoke
        from (
          select pg_catalog.format('%s (%I)', pg_catalog.lower(a.privilege_type), t.attname) as privilege, 'table ' || c.oid::regclass::text as target,
                 pg_catalog.format('table %s (%I)', c.oid::regclass::text, t.attname) as object,
                 case when a.grantee = 0 then 'public' else pg_catalog.quote_ident(a.grantee::regrole::text) end as grantee
          from pg_catalog.pg_attribute t
          join pg_catalog.pg_class c on c.oid = t.attrelid, lateral pg_catalog.aclexplode(t.attacl) a
          where c.relnamespace::regnamespace::text = any(${PROJECT_SCHEMAS}) and t.attnum > 0 and not t.attisdropped
        ) f
        union all
        select 'view ' || c.oid::regclass::text || ' ' || o.option, 'view ' || c.oid::regclass::text,
               pg_catalog.format('alter view %s set (%s);', c.oid::regclass::text, o.option),
               pg_catalog.format('alter view %s reset (%s);', c.oid::regclass::text, pg_catalog.split_part(o.option, '=', 1))
        from pg_catalog.pg_class c, lateral pg_catalog.unnest(c.reloptions) o(option)
        where c.relkind = 'v' and c.relnamespace::regnamespace::text = any(${PROJECT_SCHEMAS})`;
      // Every column and view, so that nothing is revoked from an object `to` drops.
      const objects = await sql<{ object: string }[]>`
        select pg_catalog.format('table %s (%I)', c.oid::regclass::text, t.attname) as object
        from pg_catalog.pg_attribute t join pg_catalog.pg_class c on c.oid = t.attrelid
        where c.relnamespace::regnamespace::text = any(${PROJECT_SCHEMAS}) and t.attnum > 0 and not t.attisdropped
        union all
        select 'view ' || c.oid::regclass::text
        from pg_catalog.pg_class c where c.relkind = 'v' and c.relnamespace::regnamespace::text = any(${PROJECT_SCHEMAS})`;
      return { facts: new Map(rows.map((row) => [row.fact, row])), objects: new Set(objects.map((o) => o.object)) };
    } finally {
      await sql.end();
    }
  };
  const [before, after] = await Promise.all([facts(fromUrl), facts(toUrl)]);
  return [
    ...[...before.facts].filter(([fact, row]) => !after.facts.has(fact) && after.objects.has(row.object)).map(([, row]) => row.revoke),
    ...[...after.facts].filter(([fact, row]) => !before.facts.has(fact) || rewrittenViews.has(row.object)).map(([, row]) => row.grant),
  ].sort();
}

/** `schema.name` of every routine migra's statements drop (to create again, or for good). */
function droppedRoutines(statements: string[]): Set<string> {
  const dropped = new Set<string>();
  for (const statement of statements) {
    for (const match of statement.matchAll(/drop (?:function|procedure) if exists "([^"]+)"\."([^"]+)"\(/gi)) dropped.add(`${match[1]}.${match[2]}`);
  }
  return dropped;
}

/** `schema.name` of every routine migra's statements create or replace (with its SET clauses). */
function replacedRoutines(statements: string[]): Set<string> {
  const replaced = new Set<string>();
  for (const statement of statements) {
    for (const match of statement.matchAll(/create (?:or replace )?(?:function|procedure) "?([a-z_][a-z0-9_]*)"?\."?([a-z_][a-z0-9_]*)"?\(/gi)) {
      replaced.add(`${match[1]}.${match[2]}`);
    }
  }
  return replaced;
}

interface Routine {
  /** schema.name, as droppedRoutines names it. */
  name: string;
  /** `function api.f(uuid)`: what grant, revoke and alter take. */
  target: string;
  owner: string;
  acl: string[];
  /** Its SET clauses in order, name -> value as SQL. */
  settings: Map<string, string>;
}

/**
 * Every routine of the project's schemas (extension members aside) with its ACL (PostgreSQL's
 * default when unset) and its SET clauses, by target.
 */
async function routines(url: string): Promise<Map<string, Routine>> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const rows = await sql<(Omit<Routine, 'settings'> & { setting_names: string[]; setting_values: string[] })[]>`
      select n.nspname || '.' || p.proname as name,
             case p.prokind when 'p' then 'procedure' else 'function' end || ' '
               || pg_catalog.format('%I.%I(%s)', n.nspname, p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid)) as target,
             pg_catalog.pg_get_userbyid(p.proowner) as owner,
             coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))::text[] as acl,
             coalesce(s.names, '{}') as setting_names, coalesce(s.sql_values, '{}') as setting_values
      from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
      cross join lateral (
        select pg_catalog.array_agg(c.name order by c.position) as names, pg_catalog.array_agg(c.value order by c.position) as sql_values
        from (
          select x.position, pg_catalog.split_part(x.setting, '=', 1) as name,
                 -- proconfig holds search_path as its list text ("" for the empty one), which SET
                 -- reads unquoted; every other value is a string literal.
                 case when pg_catalog.split_part(x.setting, '=', 1) <> 'search_path'
                        then pg_catalog.quote_literal(pg_catalog.substr(x.setting, pg_catalog.strpos(x.setting, '=') + 1))
                      when x.setting = 'search_path=""' then ''''''
                      else pg_catalog.substr(x.setting, pg_catalog.strpos(x.setting, '=') + 1) end as value
          from pg_catalog.unnest(p.proconfig) with ordinality x(setting, position)) c
      ) s
      where n.nspname = any(${PROJECT_SCHEMAS})
        and not exists (select from pg_catalog.pg_depend d
                        where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`;
    return new Map(rows.map(({ setting_names, setting_values, ...routine }) =>
      [routine.target, { ...routine, settings: new Map(setting_names.map((name, i) => [name, setting_values[i]])) }]));
  } finally {
    await sql.end();
  }
}

/**
 * migra compares a routine's body, not its SET clauses (pg_proc.proconfig): the statements that
 * give every routine `from` and `to` share the settings it has in `to`, except the routines the
 * diff creates or replaces (`recreated`), whose definition carries them. The settings are reset
 * and set again in `to`'s order: ALTER appends a new one, and the definition lists them in order.
 */
function routineSettingChanges(before: Map<string, Routine>, after: Map<string, Routine>, recreated: Set<string>): string[] {
  const listed = (settings: Map<string, string>) => JSON.stringify([...settings]);
  const out: string[] = [];
  for (const [target, routine] of after) {
    const had = before.get(target)?.settings;
    if (!had || recreated.has(routine.name) || listed(had) === listed(routine.settings)) continue;
    out.push(`alter ${target} reset all;`);
    for (const [name, value] of routine.settings) out.push(`alter ${target} set ${name} to ${value};`);
  }
  return out;
}

/** grantee (PUBLIC for the empty name) -> its privilege letters, the owner's own entry left out. */
function grantees(routine: Routine): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of routine.acl) {
    const [, grantee, privileges] = /^("(?:[^"]|"")*"|[^=]*)=([^/]*)\//.exec(item) ?? [];
    if (grantee === undefined || grantee === routine.owner) continue;
    out.set(grantee === '' ? 'public' : grantee, privileges);
  }
  return out;
}

/**
 * migra writes no GRANT or REVOKE for functions: the statements that give every routine of `to`
 * the grantees it has there. A routine new in `to`, or one the diff drops and creates again
 * (`recreated`), starts from PostgreSQL's default, which lets PUBLIC execute it.
 */
function routinePrivilegeChanges(before: Map<string, Routine>, after: Map<string, Routine>, recreated: Set<string>): string[] {
  const out: string[] = [];
  for (const [target, routine] of after) {
    const old = before.get(target);
    const had = old && !recreated.has(routine.name) ? grantees(old) : new Map([['public', 'X']]);
    const has = grantees(routine);
    for (const [grantee, privileges] of had) {
      if (has.get(grantee) !== privileges) out.push(`revoke all on ${target} from ${grantee};`);
    }
    for (const [grantee, privileges] of has) {
      if (had.get(grantee) === privileges) continue;
      out.push(`grant execute on ${target} to ${grantee}${privileges.includes('*') ? ' with grant option' : ''};`);
    }
  }
  return out;
}

/**
 * migra (schemainspect) compares an index's collations by OID (pg_index.indcollation), and a
 * collation the schema creates (app.alphabetical) has another OID in every database, so it drops
 * and recreates every index sorted in one although nothing changed. An index whose definition
 * reads the same in both databases is the same index: the drop and create statements migra
 * writes for it are left out. (The catalog comparison checks index definitions by text too.)
 */
async function identicalIndexes(fromUrl: string, toUrl: string): Promise<Set<string>> {
  const definitions = async (url: string) => {
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      const rows = await sql<{ schema: string; name: string; definition: string }[]>`
        select schemaname as schema, indexname as name, indexdef as definition
        from pg_catalog.pg_indexes where schemaname = any(${PROJECT_SCHEMAS})`;
      return new Map(rows.map((row) => [`${row.schema}.${row.name}`, row]));
    } finally {
      await sql.end();
    }
  };
  const [from, to] = await Promise.all([definitions(fromUrl), definitions(toUrl)]);
  const unchanged = new Set<string>();
  for (const [key, index] of from) {
    if (to.get(key)?.definition !== index.definition) continue;
    unchanged.add(`drop index if exists "${index.schema}"."${index.name}";`);
    unchanged.add(`${index.definition};`);
  }
  return unchanged;
}

interface CommentRow {
  key: string;
  target: string;
  literal: string;
}

/** Every comment on an object of the project's schemas, with what `comment on` needs to set it. */
async function comments(url: string): Promise<CommentRow[]> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    return await sql<CommentRow[]>`
      select i.type || ' ' || i.identity as key,
             case when i.type in ('table column', 'view column') then 'column' else i.type end || ' ' ||
             case when d.classoid in ('pg_catalog.pg_policy'::regclass, 'pg_catalog.pg_trigger'::regclass, 'pg_catalog.pg_constraint'::regclass)
                  then pg_catalog.quote_ident(a.object_names[pg_catalog.array_length(a.object_names, 1)]) || ' on '
                       || pg_catalog.array_to_string(a.object_names[1:pg_catalog.array_length(a.object_names, 1) - 1], '.')
                  else i.identity end as target,
             pg_catalog.quote_literal(d.description) as literal
      from pg_catalog.pg_description d,
           lateral pg_catalog.pg_identify_object(d.classoid, d.objoid, d.objsubid) i,
           lateral pg_catalog.pg_identify_object_as_address(d.classoid, d.objoid, d.objsubid) a
      where (i.schema = any(${PROJECT_SCHEMAS}) or (d.classoid = 'pg_catalog.pg_namespace'::regclass and i.identity = any(${PROJECT_SCHEMAS})))
        and not exists (select from pg_catalog.pg_depend e where e.classid = d.classoid and e.objid = d.objoid and e.deptype = 'e')`;
  } finally {
    await sql.end();
  }
}

/** `comment on` statements for every comment that `to` adds, changes or removes. */
export async function commentChanges(fromUrl: string, toUrl: string): Promise<string[]> {
  const before = new Map((await comments(fromUrl)).map((r) => [r.key, r]));
  const after = new Map((await comments(toUrl)).map((r) => [r.key, r]));
  const present = new Set((await catalogRows(toUrl)).map((row) => row.split('\t')[0]));
  const out: string[] = [];
  for (const [key, row] of after) if (before.get(key)?.literal !== row.literal) out.push(`comment on ${row.target} is ${row.literal};`);
  // A comment whose object `to` still has, without the comment; a dropped object takes its own.
  for (const [key, row] of before) if (!after.has(key) && present.has(key)) out.push(`comment on ${row.target} is null;`);
  return out.sort();
}

/**
 * One line per catalog fact of `schemas` (object identity, a tab, its definition): relations and
 * their options, columns, constraints, indexes, views, functions, triggers and whether they fire,
 * policies, privileges (also per column) and comments, leaving out the objects extensions bring
 * (each extension is one line); plus every default privilege in the database. Two databases with
 * the same lines have the same schema.
 */
export async function catalogRows(url: string, schemas = PROJECT_SCHEMAS): Promise<string[]> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const rows = await sql<{ line: string }[]>`
      with obj as (
        select d.classid, d.objid, d.objsubid, i.type, i.identity, i.schema
        from (
          select 'pg_catalog.pg_class'::regclass as classid, c.oid as objid, 0 as objsubid from pg_catalog.pg_class c
          union all select 'pg_catalog.pg_class'::regclass, a.attrelid, a.attnum from pg_catalog.pg_attribute a where a.attnum > 0 and not a.attisdropped
          union all select 'pg_catalog.pg_proc'::regclass, p.oid, 0 from pg_catalog.pg_proc p
          union all select 'pg_catalog.pg_constraint'::regclass, k.oid, 0 from pg_catalog.pg_constraint k
          union all select 'pg_catalog.pg_trigger'::regclass, t.oid, 0 from pg_catalog.pg_trigger t where not t.tgisinternal
          union all select 'pg_catalog.pg_policy'::regclass, p.oid, 0 from pg_catalog.pg_policy p
          union all select 'pg_catalog.pg_namespace'::regclass, n.oid, 0 from pg_catalog.pg_namespace n
          union all select 'pg_catalog.pg_extension'::regclass, e.oid, 0 from pg_catalog.pg_extension e
        ) d, lateral pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid) i
        where (i.schema = any(${schemas}) or i.identity = any(${schemas}) or i.type = 'extension')
          and not exists (select from pg_catalog.pg_depend e where e.classid = d.classid and e.objid = d.objid and e.deptype = 'e')
      )
      select o.type || ' ' || o.identity || E'\t' || coalesce(case o.classid
        when 'pg_catalog.pg_class'::regclass then (
          select case when o.objsubid = 0 then pg_catalog.concat_ws(' | ', c.relkind, c.relpersistence, c.relrowsecurity, c.relforcerowsecurity,
                        c.reloptions::text, (select pg_catalog.array_agg(x::text order by x::text) from pg_catalog.unnest(c.relacl) x)::text,
                        case when c.relkind in ('v', 'm') then pg_catalog.pg_get_viewdef(c.oid) end,
                        case when c.relkind = 'i' then pg_catalog.pg_get_indexdef(c.oid) end)
                 else (select pg_catalog.concat_ws(' | ', pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity, a.attgenerated,
                        a.attcollation::regcollation::text, pg_catalog.pg_get_expr(ad.adbin, ad.adrelid),
                        (select pg_catalog.array_agg(x::text order by x::text) from pg_catalog.unnest(a.attacl) x)::text)
                       from pg_catalog.pg_attribute a left join pg_catalog.pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
                       where a.attrelid = c.oid and a.attnum = o.objsubid) end
          from pg_catalog.pg_class c where c.oid = o.objid)
        when 'pg_catalog.pg_proc'::regclass then (
          select pg_catalog.pg_get_functiondef(p.oid) || ' | ' || coalesce((select pg_catalog.array_agg(x::text order by x::text) from pg_catalog.unnest(p.proacl) x)::text, 'default')
          from pg_catalog.pg_proc p where p.oid = o.objid)
        when 'pg_catalog.pg_constraint'::regclass then (select pg_catalog.pg_get_constraintdef(k.oid) from pg_catalog.pg_constraint k where k.oid = o.objid)
        when 'pg_catalog.pg_trigger'::regclass then (select pg_catalog.pg_get_triggerdef(t.oid) || ' | ' || t.tgenabled::text from pg_catalog.pg_trigger t where t.oid = o.objid)
        when 'pg_catalog.pg_policy'::regclass then (
          select pg_catalog.concat_ws(' | ', p.polpermissive, p.polcmd, (select pg_catalog.array_agg(r::regrole::text order by r::regrole::text) from pg_catalog.unnest(p.polroles) r)::text,
                 pg_catalog.pg_get_expr(p.polqual, p.polrelid), pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid))
          from pg_catalog.pg_policy p where p.oid = o.objid)
        when 'pg_catalog.pg_namespace'::regclass then (select (select pg_catalog.array_agg(x::text order by x::text) from pg_catalog.unnest(n.nspacl) x)::text from pg_catalog.pg_namespace n where n.oid = o.objid)
        when 'pg_catalog.pg_extension'::regclass then (select e.extnamespace::regnamespace::text from pg_catalog.pg_extension e where e.oid = o.objid)
      end, '') as line
      from obj o`;
    const comments = await sql<{ line: string }[]>`
      select i.type || ' ' || i.identity || E'\tcomment ' || d.description as line
      from pg_catalog.pg_description d, lateral pg_catalog.pg_identify_object(d.classoid, d.objoid, d.objsubid) i
      where (i.schema = any(${schemas}) or (d.classoid = 'pg_catalog.pg_namespace'::regclass and i.identity = any(${schemas})))
        -- an extension's own comments come with it (intarray comments its operators' functions)
        and not exists (select from pg_catalog.pg_depend e where e.classid = d.classoid and e.objid = d.objoid and e.deptype = 'e')`;
    const defaults = await sql<{ line: string }[]>`
      select 'default privileges of ' || pg_catalog.pg_get_userbyid(a.defaclrole) || coalesce(' in schema ' || n.nspname, '')
             || ' on ' || a.defaclobjtype::text || E'\t'
             || coalesce((select pg_catalog.array_agg(x::text order by x::text) from pg_catalog.unnest(a.defaclacl) x)::text, '{}') as line
      from pg_catalog.pg_default_acl a left join pg_catalog.pg_namespace n on n.oid = a.defaclnamespace`;
    return [...rows, ...comments, ...defaults].map((r) => r.line).sort();
  } finally {
    await sql.end();
  }
}

/** Lines one catalog has and the other lacks, marked `-` (only in `a`) and `+` (only in `b`). */
export async function catalogDifferences(aUrl: string, bUrl: string): Promise<string[]> {
  const [a, b] = await Promise.all([catalogRows(aUrl), catalogRows(bUrl)]);
  return lineDifferences(a, b);
}

/** Lines only `a` has, marked `-`, then lines only `b` has, marked `+`. */
export function lineDifferences(a: string[], b: string[]): string[] {
  const inB = new Set(b);
  const inA = new Set(a);
  return [...a.filter((line) => !inB.has(line)).map((l) => `- ${l}`), ...b.filter((line) => !inA.has(line)).map((l) => `+ ${l}`)];
}
