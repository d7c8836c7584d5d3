-- api.void_learning_event: a learner takes back one of their own events; from then on it counts
-- for nothing (journeys, the reference views, the learning path), and nobody else can void it.
begin;
select plan(15);

select tests.create_user('alice');
select tests.create_user('bob');

-- Fixture (as the owner): trail "sql" of two sparks; "where" needs "select".
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a3500000-0000-4000-8000-000000000001', 'void', 'v1', 'published', now());
insert into app.domains (snapshot_id, id, slug, name)
values ('a3500000-0000-4000-8000-000000000001', 'd3500000-0000-4000-8000-000000000001', 'data', 'Data');
insert into app.trails (snapshot_id, id, domain_id, slug, title)
values ('a3500000-0000-4000-8000-000000000001', 'b3500000-0000-4000-8000-000000000001', 'd3500000-0000-4000-8000-000000000001', 'sql', 'SQL');
insert into app.concepts (snapshot_id, id, trail_id, slug, title)
values ('a3500000-0000-4000-8000-000000000001', 'c3500000-0000-4000-8000-000000000001', 'b3500000-0000-4000-8000-000000000001', 'basics', 'Basics');
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('a3500000-0000-4000-8000-000000000001', 'e3500000-0000-4000-8000-000000000001', 'select', 'Select', 'beginner', 5),
  ('a3500000-0000-4000-8000-000000000001', 'e3500000-0000-4000-8000-000000000002', 'where', 'Where', 'beginner', 5);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('a3500000-0000-4000-8000-000000000001', 'c3500000-0000-4000-8000-000000000001', 'e3500000-0000-4000-8000-000000000001', 0),
  ('a3500000-0000-4000-8000-000000000001', 'c3500000-0000-4000-8000-000000000001', 'e3500000-0000-4000-8000-000000000002', 1);
insert into app.spark_links (snapshot_id, source_id, target_id, type)
values ('a3500000-0000-4000-8000-000000000001', 'e3500000-0000-4000-8000-000000000001', 'e3500000-0000-4000-8000-000000000002', 'prerequisite');

-- acting as alice
select tests.authenticate_as('alice');
select set_config('test.enrollment', api.enroll_in_trail('b3500000-0000-4000-8000-000000000001') ->> 'id', true);
select set_config('test.mastered',
  api.record_learning_event('e3500000-0000-4000-8000-000000000001', 'mastered', now() - interval '1 hour', 'm-1') ->> 'id', true);
select is((api.get_user_journey(current_setting('test.enrollment')::uuid) ->> 'completed_sparks')::int, 1, 'the mastered spark counts before voiding');
select is((api.get_learning_path('where') ->> 'skipped_count')::int, 1, 'the learning path skips the mastered spark');

select isnt(
  api.void_learning_event(current_setting('test.mastered')::uuid) ->> 'voided_at', null, 'voiding answers the event with voided_at');
select is((api.get_user_journey(current_setting('test.enrollment')::uuid) ->> 'completed_sparks')::int, 0, 'the journey no longer counts it');
select is(
  (select status from app.journey_spark_progress where spark_id = 'e3500000-0000-4000-8000-000000000001'), 'not_started',
  'the reference views no longer count it either');
select is((api.get_learning_path('where') ->> 'skipped_count')::int, 0, 'the learning path no longer skips it');
select is(
  (select count(*)::int from json_array_elements(api.list_next_sparks() -> 'data') e where e ->> 'slug' = 'select'), 1,
  'what next offers the spark again');
-- as the owner: date the voiding back, so that a second voiding would show.
reset role;
update app.learning_events set voided_at = '2026-01-01T00:00:00Z' where id = current_setting('test.mastered')::uuid;
-- acting as alice
select tests.authenticate_as('alice');
select is(
  (api.void_learning_event(current_setting('test.mastered')::uuid) ->> 'voided_at')::timestamptz, '2026-01-01T00:00:00Z'::timestamptz,
  'voiding again changes nothing: voided_at keeps its first value');
select throws_ok(
  $$ update app.learning_events set verb = 'started' where id = current_setting('test.mastered')::uuid $$,
  '42501', null, 'a learner may set voided_at and nothing else');
select is_empty(
  $$ with changed as (update app.learning_events set voided_at = null where id = current_setting('test.mastered')::uuid returning id)
     select * from changed $$,
  'a voided event stays voided: the update policy reaches only events not yet voided');

-- acting as bob
select tests.authenticate_as('bob');
select throws_ok(
  format($$ select api.void_learning_event(%L) $$, current_setting('test.mastered')),
  'PT404', 'learning event not found', 'bob cannot void alice''s event: for him it does not exist');
select is(
  (select count(*)::int from app.learning_events), 0, 'bob still sees none of alice''s events');

-- acting as anon
select tests.clear_authentication();
select throws_ok(
  format($$ select api.void_learning_event(%L) $$, current_setting('test.mastered')),
  'PT401', 'Authentication required', 'anonymous callers cannot void anything');

-- acting as a service caller
select tests.authenticate_as_service();
select throws_ok(
  format($$ select api.void_learning_event(%L) $$, current_setting('test.mastered')),
  'PT403', 'Service callers cannot use this endpoint', 'a service caller cannot void a learner''s event');

reset role;
select is(
  (select count(*)::int from app.learning_events where id = current_setting('test.mastered')::uuid and voided_at is not null), 1,
  'the voided event is kept (the xAPI export shows its voiding)');

select * from finish();
rollback;
