-- Journeys are private: RLS on auth.uid() keeps each user's enrollments and learning events to
-- themselves, for direct table access and through the api functions alike; anon sees nothing.
begin;
select plan(26);

select tests.create_user('alice');
select tests.create_user('bob');

select is(
  (select count(*)::int from pg_catalog.pg_class c
   where c.relnamespace = 'app'::regnamespace and c.relkind = 'v'
     and c.relname in ('journey_trails', 'journey_sparks', 'journey_spark_progress', 'journey_progress')
     and c.reloptions @> array['security_invoker=true']),
  4,
  'every journey derivation view is security_invoker, so RLS applies to the caller');
select ok(
  not exists (
    select 1 from pg_catalog.pg_proc p
    where p.prosecdef and p.proname in ('journey_list_item', 'journey_detail', 'learning_event_json', 'require_user',
      'list_user_journeys', 'get_user_journey', 'enroll_in_trail', 'record_learning_event')),
  'no journeys function is security definer');

-- Fixture (as the owner): one published snapshot with one trail of two sparks.
-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a0000000-0000-4000-8000-000000000001', 'rls', 'v1', 'published', now());
insert into app.domains (snapshot_id, id, slug, name)
values ('a0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001', 'data', 'Data');
insert into app.trails (snapshot_id, id, domain_id, slug, title)
values ('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001',
        'd0000000-0000-4000-8000-000000000001', 'sql-basics', 'SQL basics');
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index)
values ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001',
        'b0000000-0000-4000-8000-000000000001', 'select', 'Select', 0);
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('a0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 'select-star', 'Select star', 'beginner', 5),
  ('a0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000002', 'where', 'Where', 'beginner', 5);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 0),
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000002', 1);

-- acting as alice (user A)
select tests.authenticate_as('alice');
select set_config('test.enrollment_a', api.enroll_in_trail('b0000000-0000-4000-8000-000000000001') ->> 'id', true);
select lives_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'completed', now() - interval '1 minute', 'a-key-1') $$,
  'user A records a learning event');
select results_eq(
  $$ select user_id, trail_id from app.enrollments $$,
  $$ values (tests.get_user_id('alice')::uuid, 'b0000000-0000-4000-8000-000000000001'::uuid) $$,
  'user A sees their own enrollment, owned by A');
select is((select count(*)::int from app.learning_events), 1, 'user A sees their own learning event');
select is(jsonb_array_length((api.list_user_journeys())::jsonb -> 'data'), 1, 'user A lists their one journey');

-- acting as bob (user B)
select tests.authenticate_as('bob');
select is_empty($$ select * from app.enrollments $$, 'user B sees none of user A''s enrollments');
select is_empty($$ select * from app.learning_events $$, 'user B sees none of user A''s learning events');
select is_empty($$ select * from app.journey_progress $$, 'user B sees none of user A''s derived progress');
select is((api.list_user_journeys())::jsonb, '{"data": []}'::jsonb, 'user B lists no journeys');
select throws_ok(
  $$ select api.get_user_journey(current_setting('test.enrollment_a')::uuid) $$,
  'PT404', 'journey not found',
  'user B gets not found for user A''s enrollment id');
select throws_ok(
  $$ insert into app.enrollments (user_id, trail_id)
     values (tests.get_user_id('alice'), 'b0000000-0000-4000-8000-000000000001') $$,
  '42501', null,
  'user B cannot create an enrollment for user A');
select throws_ok(
  $$ insert into app.learning_events (user_id, spark_id, verb)
     values (tests.get_user_id('alice'), 'e0000000-0000-4000-8000-000000000001', 'completed') $$,
  '42501', null,
  'user B cannot record a learning event for user A');
select throws_ok(
  $$ delete from app.learning_events $$,
  '42501', null,
  'user B cannot delete learning events');
select throws_ok(
  $$ update app.enrollments set started_at = now() $$,
  '42501', null,
  'user B cannot update enrollments');
-- B reusing A's idempotency key is a different key space: it records B's own event.
select is(
  (api.record_learning_event('e0000000-0000-4000-8000-000000000002', 'started', now() - interval '1 minute', 'a-key-1') ->> 'created')::boolean,
  true,
  'user B reusing user A''s idempotency key records a new event of B''s own');
select is(
  (api.enroll_in_trail('b0000000-0000-4000-8000-000000000001') ->> 'created')::boolean, true,
  'user B enrolling in the same trail creates B''s own enrollment');
select results_eq(
  $$ select d -> 'data' -> 0 ->> 'status', (d -> 'data' -> 0 ->> 'completed_sparks')::int from api.list_user_journeys() d $$,
  $$ values ('in_progress', 0) $$,
  'user B''s progress ignores user A''s completed event');

-- acting as alice (user A) again
select tests.authenticate_as('alice');
select results_eq(
  $$ select count(*)::int, min(id::text) from app.enrollments $$,
  $$ values (1, current_setting('test.enrollment_a')) $$,
  'user A still sees only their own enrollment after B enrolled');
select is(
  (select count(*)::int from app.learning_events where idempotency_key = 'a-key-1'), 1,
  'user A sees only their own event under the shared idempotency key');

-- acting as anon (service callers reach the database as anon)
reset role;
select tests.clear_authentication();
select throws_ok($$ select * from app.enrollments $$, '42501', null, 'anon cannot read enrollments');
select throws_ok($$ select * from app.learning_events $$, '42501', null, 'anon cannot read learning events');
select throws_ok(
  $$ insert into app.enrollments (user_id, trail_id)
     values (tests.get_user_id('alice'), 'b0000000-0000-4000-8000-000000000001') $$,
  '42501', null,
  'anon cannot create an enrollment');
select throws_ok(
  $$ select api.list_user_journeys() $$, 'PT401', 'Authentication required',
  'anon calling api.list_user_journeys is unauthorized');
select throws_ok(
  $$ select api.enroll_in_trail('b0000000-0000-4000-8000-000000000001') $$, 'PT401', 'Authentication required',
  'anon calling api.enroll_in_trail is unauthorized');
select throws_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'started') $$, 'PT401', 'Authentication required',
  'anon calling api.record_learning_event is unauthorized');
reset role;

select * from finish();
rollback;
