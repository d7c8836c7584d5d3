-- Every function, table and view of app, private and api says what it is (`comment on`), so a
-- DBA reading \df+ or \dt+ (or obj_description) finds each one described where it lives.
begin;
select plan(1);

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

select * from finish();
rollback;
