-- private.skip_row_checks_where_superuser, the one rule that lets the import's writers skip their
-- foreign-key checks: it sets session_replication_role = replica on a function when the role
-- running it is a superuser (the embedded database's migrating role), and does nothing for any
-- other role (Supabase's postgres). The five writers that call it carry the setting exactly when
-- their owner, the role that migrated them, is a superuser.
begin;
select plan(5);

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

-- Run by whoever runs this file: a superuser (the embedded and Debian runs) or not (the
-- Supabase-shaped runs, as postgres), so each branch is proved where it applies.
create function pg_temp.writer_a() returns int language sql set work_mem = '8MB' as $$ select 1 $$;
select lives_ok(
  $$ call private.skip_row_checks_where_superuser('pg_temp.writer_a()') $$,
  'the migrating role runs it, superuser or not');
select is(
  (select p.proconfig from pg_catalog.pg_proc p where p.oid = 'pg_temp.writer_a()'::regprocedure),
  case when (select r.rolsuper from pg_catalog.pg_roles r where r.rolname = current_user)
       then array['work_mem=8MB', 'session_replication_role=replica']
       else array['work_mem=8MB'] end,
  'a superuser''s call makes the function skip its row checks (its other settings kept); anyone else''s changes nothing');

select * from finish();
rollback;
