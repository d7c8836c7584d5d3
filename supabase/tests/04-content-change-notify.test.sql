-- private.notify_content_changed (20261122160000_content_change_notify.sql): every table the
-- API answers from memory notifies sparkpath_content after any statement that writes to it.
-- That the notification reaches a listener after commit is tested end to end in
-- test/http/content-change-feed.test.ts (pgTAP runs inside one transaction, which never commits).
begin;
select plan(10);

-- tgtype: after, for each statement, on insert (4) + delete (8) + update (16) + truncate (32).
select results_eq(
  $$ select c.relname::text collate "default", t.tgtype::int, t.tgenabled::text
     from pg_trigger t join pg_class c on c.oid = t.tgrelid
     where t.tgfoid = 'private.notify_content_changed()'::regprocedure and not t.tgisinternal
     order by 1 $$,
  $$ values ('difficulty_levels', 60, 'O'), ('journey_statuses', 60, 'O'), ('learning_verbs', 60, 'O'),
            ('snapshot_rollups', 60, 'O'), ('snapshots', 60, 'O') $$,
  'the five tables behind the in-memory reads notify after every insert, update, delete and truncate statement');

select is(
  (select array_agg(distinct c.relnamespace::regnamespace::text) from pg_trigger t join pg_class c on c.oid = t.tgrelid
   where t.tgfoid = 'private.notify_content_changed()'::regprocedure),
  array['app'], 'the notifying tables are the app tables');

select function_returns('private', 'notify_content_changed', array[]::text[], 'trigger', 'a trigger function');
select is(
  (select proconfig from pg_proc where oid = 'private.notify_content_changed()'::regprocedure),
  array['search_path=""'], 'it runs with an empty search_path');
select ok(not has_function_privilege('anon', 'private.notify_content_changed()', 'execute'), 'anon cannot call it');
select ok(not has_function_privilege('authenticated', 'private.notify_content_changed()', 'execute'), 'authenticated cannot call it');

-- The trigger runs inside the writing statement: writes of every kind still succeed.
select lives_ok($$ update app.difficulty_levels set label = label $$, 'an update of difficulty_levels succeeds with the trigger in place');
select lives_ok($$ update app.journey_statuses set label = label where false $$, 'a statement that changes no row (the trigger still fires) succeeds');
select lives_ok(
  $$ insert into app.snapshots (name, version_label, status) values ('notify fixture', 'v4', 'draft') $$,
  'an insert into snapshots succeeds with the trigger in place');
select lives_ok($$ delete from app.snapshots where name = 'notify fixture' $$, 'a delete from snapshots succeeds with the trigger in place');

select * from finish();
rollback;
