-- A user's progress rows notify (20261123000100_user_progress_notify.sql): the API keeps a
-- signed-in caller's journeys and learning path and drops them on 'user:<id>'. That the
-- notification reaches the API after commit is tested in test/http/content-change-feed.test.ts.
begin;
select plan(8);

-- tgtype: row (1) + insert (4) + delete (8) + update (16) = 29; statement truncate = 32.
select results_eq(
  $$ select c.relname::text collate "default", t.tgtype::int, t.tgenabled::text
     from pg_trigger t join pg_class c on c.oid = t.tgrelid
     where t.tgfoid = 'private.notify_user_progress_changed()'::regprocedure and not t.tgisinternal
     order by 1, 2 $$,
  $$ values ('enrollments', 29, 'O'), ('enrollments', 32, 'O'), ('learning_events', 29, 'O'), ('learning_events', 32, 'O') $$,
  'enrollments and learning events notify after every row written and every truncate');
select is((select proconfig from pg_proc where oid = 'private.notify_user_progress_changed()'::regprocedure),
  array['search_path=""'], 'it runs with an empty search_path');
select ok(not has_function_privilege('anon', 'private.notify_user_progress_changed()', 'execute')
          and not has_function_privilege('authenticated', 'private.notify_user_progress_changed()', 'execute'),
  'request roles cannot call it');

-- Writes of every kind still succeed, as the caller would make them.
insert into app.users (id, provider, provider_user_id, email, last_login_provider) values
  ('aaaaaaaa-0000-4000-8000-000000000006', 'dev', 'progress', 'progress@example.com', 'dev');
create temporary table imported as
select private.import_content_bundle('{
  "categories": [{"slug": "tech", "name": "Technology"}],
  "domains": [{"slug": "data", "name": "Data", "category": "tech"}],
  "trails": [{"slug": "sql", "domain": "data", "title": "SQL", "difficulty_level": "beginner"}],
  "concepts": [{"slug": "select", "trail": "sql", "title": "Select", "sparks": ["select-star"]}],
  "sparks": [{"slug": "select-star", "title": "SELECT *", "difficulty": "beginner", "estimated_mins": 5}]
}'::jsonb, 'Progress', 'v6', '', promote => true) as result;
select set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000006","role":"authenticated"}', true);
set local role authenticated;
select lives_ok(
  $$ select api.enroll_in_trail((select t.id from app.trails t where t.slug = 'sql' and t.snapshot_id = private.resolve_snapshot_id(null))) $$,
  'an enrollment succeeds with the trigger in place');
select lives_ok(
  $$ select api.record_learning_event((select s.id from app.sparks s where s.slug = 'select-star' and s.snapshot_id = private.resolve_snapshot_id(null)), 'mastered', null, 'k-1') $$,
  'a learning event succeeds with the trigger in place');
reset role;
select is((select count(*)::int from app.learning_events where user_id = 'aaaaaaaa-0000-4000-8000-000000000006'), 1, 'the event is stored');
select lives_ok($$ delete from app.learning_events where user_id = 'aaaaaaaa-0000-4000-8000-000000000006' $$, 'a delete succeeds');
select lives_ok($$ delete from app.enrollments where user_id = 'aaaaaaaa-0000-4000-8000-000000000006' $$, 'an enrollment delete succeeds');

select * from finish();
rollback;
