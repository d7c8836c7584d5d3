-- Functions are private until granted (supabase/schemas/99-default-deny.sql), and the migrations
-- change no default privilege: on a Supabase project, functions written later keep PostgreSQL's
-- defaults.
begin;
select plan(3);

select is_empty(
  $$ select p.oid::regprocedure::text from pg_catalog.pg_proc p
     where p.pronamespace in ('app'::regnamespace, 'private'::regnamespace, 'api'::regnamespace)
       and pg_catalog.has_function_privilege('public', p.oid, 'execute') $$,
  'PUBLIC may execute no function of app, private or api');

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
