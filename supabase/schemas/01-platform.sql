-- The platform: make a vanilla PostgreSQL look like a Supabase project, and leave one as it is.
--
-- On Supabase the roles, the `extensions` schema and the `auth` helpers already exist and `auth`
-- belongs to another owner, so every step is guarded: there this file only enables pg_trgm,
-- unaccent, btree_gin and intarray in `extensions` (search needs them), and the migrations change no default privilege
-- and no object of Supabase's but for registering the pre-request hook on authenticator
-- (12-dispatch.sql); they add the API's own login role (02-callers.sql) and the profile trigger
-- on auth.users (13-supabase-auth.sql); `npm test` proves it on a Supabase-shaped database
-- (scripts/supabase-platform.ts lists what may change). This file comes first:
-- everything else grants to these roles and calls these helpers.
-- PostgREST's request roles. nologin: only the API's login role switches into them.
do $$
begin
  if not exists (select from pg_catalog.pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_catalog.pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_catalog.pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
  -- Supabase Auth's database role: it runs the custom access token hook (13-supabase-auth.sql).
  -- Supabase creates it; elsewhere it exists so the hook's grant means the same thing.
  if not exists (select from pg_catalog.pg_roles where rolname = 'supabase_auth_admin') then
    create role supabase_auth_admin nologin noinherit;
  end if;
end
$$;

-- The role that runs the migrations (the owner) can `set role` into the request roles, so that a
-- DBA or pgTAP can act as a caller; the API itself connects as sparkpath_api (02-callers.sql).
do $$
declare
  request_role text;
begin
  foreach request_role in array array['anon', 'authenticated', 'service_role'] loop
    if not pg_catalog.pg_has_role(current_user, request_role, 'member') then
      execute pg_catalog.format('grant %I to %I', request_role, current_user);
    end if;
  end loop;
end
$$;

create schema if not exists extensions;
grant usage on schema extensions to anon, authenticated, service_role;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists pg_trgm with schema extensions;
create extension if not exists unaccent with schema extensions;
-- btree_gin: GIN indexes that lead with the snapshot id, so a search reads one snapshot's rows
create extension if not exists btree_gin with schema extensions;
-- intarray: sorted integer sets (search postings) intersected and merged in C
create extension if not exists intarray with schema extensions;

-- auth.uid(), auth.role(), auth.jwt() exactly as Supabase defines them, only where the
-- `auth` schema is ours to write (absent, or owned by the migrating role).
do $$
begin
  if not exists (select from pg_catalog.pg_namespace where nspname = 'auth') then
    execute 'create schema auth';
  end if;

  if (select pg_catalog.pg_get_userbyid(nspowner) from pg_catalog.pg_namespace where nspname = 'auth')
       is distinct from current_user then
    return;
  end if;

  grant usage on schema auth to anon, authenticated, service_role;

  if to_regprocedure('auth.uid()') is null then
    execute $fn$
      create function auth.uid() returns uuid
      language sql stable
      set search_path = ''
      as $body$
        select coalesce(
          nullif(current_setting('request.jwt.claim.sub', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
        )::uuid
      $body$
    $fn$;
    revoke execute on function auth.uid() from public;
    grant execute on function auth.uid() to anon, authenticated, service_role;
  end if;

  if to_regprocedure('auth.role()') is null then
    execute $fn$
      create function auth.role() returns text
      language sql stable
      set search_path = ''
      as $body$
        select coalesce(
          nullif(current_setting('request.jwt.claim.role', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
        )::text
      $body$
    $fn$;
    revoke execute on function auth.role() from public;
    grant execute on function auth.role() to anon, authenticated, service_role;
  end if;

  if to_regprocedure('auth.jwt()') is null then
    execute $fn$
      create function auth.jwt() returns jsonb
      language sql stable
      set search_path = ''
      as $body$
        select coalesce(
          nullif(current_setting('request.jwt.claim', true), ''),
          nullif(current_setting('request.jwt.claims', true), '')
        )::jsonb
      $body$
    $fn$;
    revoke execute on function auth.jwt() from public;
    grant execute on function auth.jwt() to anon, authenticated, service_role;
  end if;
end
$$;
