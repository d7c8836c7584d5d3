-- private.skip_row_checks_where_superuser, the one rule that lets the import's writers skip their
-- foreign-key checks: it sets session_replication_role = replica on a function when the role
-- running it is a superuser (the embedded database's migrating role), and does nothing for any
-- other role (Supabase's postgres). The five writers that call it carry the setting exactly when
-- their owner, the role that migrated them, is a superuser.
begin;
select plan(7);

select has_function('private', 'skip_row_checks_where_superuser', array['regprocedure'],
  'the rule is one routine');
select is(
  (select count(*)::int from pg_catalog.pg_proc p
   where p.oid = 'private.skip_row_checks_where_superuser(regprocedure)'::regprocedure
     and pg_catalog.has_function_privilege('public', p.oid, 'execute')),
  0, 'PUBLIC may not call it');

-- The five writers: the setting exactly when their owner is a superuser.
select results_eq(
  $$ select p.oid::regprocedure::text,
            coalesce('session_replication_role=replica' = any(p.proconfig), false) = r.rolsuper
     from pg_catalog.pg_proc p join pg_catalog.pg_roles r on r.oid = p.proowner
     where p.oid in ('private.write_staged_content(uuid)'::regprocedure,
                     'private.derive_search_figures(uuid)'::regprocedure,
                     'private.refresh_content_digests(uuid)'::regprocedure,
                     'private.refresh_spark_rounds(uuid)'::regprocedure,
                     'private.fill_trail_spark_positions()'::regprocedure)
     order by 1 $$,
  $$ values ('private.derive_search_figures(uuid)', true), ('private.fill_trail_spark_positions()', true),
            ('private.refresh_content_digests(uuid)', true), ('private.refresh_spark_rounds(uuid)', true),
            ('private.write_staged_content(uuid)', true) $$,
  'each writer skips its row checks exactly when the role that migrated it is a superuser');

-- A superuser: the function gets the setting, and keeps its other settings.
create function pg_temp.writer_a() returns int language sql set work_mem = '8MB' as $$ select 1 $$;
select lives_ok(
  $$ call private.skip_row_checks_where_superuser('pg_temp.writer_a()') $$,
  'a superuser runs it');
select is(
  (select p.proconfig from pg_catalog.pg_proc p where p.oid = 'pg_temp.writer_a()'::regprocedure),
  array['work_mem=8MB', 'session_replication_role=replica'],
  'run by a superuser: the function skips its row checks, its other settings kept');

-- Any other role: nothing changes (it could not set session_replication_role anyway).
create role skip_checks_owner nologin;
create schema skip_checks authorization skip_checks_owner;
grant usage on schema private, extensions to skip_checks_owner;
grant execute on procedure private.skip_row_checks_where_superuser(regprocedure) to skip_checks_owner;
set local role skip_checks_owner;
create function skip_checks.writer_b() returns int language sql as $$ select 1 $$;
select lives_ok(
  $$ call private.skip_row_checks_where_superuser('skip_checks.writer_b()') $$,
  'a role that is no superuser runs it without an error');
reset role;
select is(
  (select p.proconfig from pg_catalog.pg_proc p where p.oid = 'skip_checks.writer_b()'::regprocedure),
  null::text[],
  'run by a role that is no superuser: nothing is set, the checks run');

select * from finish();
rollback;
