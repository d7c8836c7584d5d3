-- Functions are private until granted (supabase/schemas/99-default-deny.sql), and the migrations
-- change no default privilege: on a Supabase project, functions written later keep PostgreSQL's
-- defaults. Every function, table and view says what it is (`comment on`), for a DBA's \df+.
begin;
select plan(4);

select is_empty(
  $$ select p.oid::regprocedure::text from pg_catalog.pg_proc p
     where p.pronamespace in ('app'::regnamespace, 'private'::regnamespace, 'api'::regnamespace)
       and pg_catalog.has_function_privilege('public', p.oid, 'execute') $$,
  'PUBLIC may execute no function of app, private or api');

select is_empty(
  $$ select p.oid::regprocedure::text from pg_catalog.pg_proc p
     where p.pronamespace in ('app'::regnamespace, 'private'::regnamespace, 'api'::regnamespace)
       and pg_catalog.obj_description(p.oid, 'pg_proc') is null
     union all
     select c.oid::regclass::text from pg_catalog.pg_class c
     where c.relnamespace in ('app'::regnamespace, 'private'::regnamespace, 'api'::regnamespace)
       and c.relkind in ('r', 'p', 'v', 'm')
       and pg_catalog.obj_description(c.oid, 'pg_class') is null $$,
  'every function, table and view of app, private and api has a comment');

select is_empty(
  $$ select a.defaclobjtype from pg_catalog.pg_default_acl a
     where a.defaclrole = current_user::regrole and a.defaclnamespace = 0 $$,
  'the migrating role has no database-wide default privilege');

create function public.tests_written_after_the_migrations() returns integer language sql as $$ select 1 $$;
select ok(
  pg_catalog.has_function_privilege('public', 'public.tests_written_after_the_migrations()', 'execute'),
  'a function written after the migrations is executable by PUBLIC, as PostgreSQL makes every function');

select * from finish();
rollback;
