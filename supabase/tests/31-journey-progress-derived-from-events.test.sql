-- Journey progress is derived from learning events and the trail's sparks in the current
-- snapshot: per spark not_started -> in_progress -> completed, per enrollment counts, percent,
-- status, completed_at, last_activity_at and the current concept.
begin;
select plan(37);

select tests.create_user('alice');

-- Fixture (as the owner). Trail "sql-basics": concept "select" (order 0) holds select-star and
-- where; concept "joins" (order 1) holds inner-join and, again, select-star (counted once).
-- Trail "empty" has one concept and no sparks.
-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a0000000-0000-4000-8000-000000000001', 'progress', 'v1', 'published', now());
insert into app.domains (snapshot_id, id, slug, name)
values ('a0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001', 'data', 'Data');
insert into app.trails (snapshot_id, id, domain_id, slug, title, difficulty_level) values
  ('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001',
   'd0000000-0000-4000-8000-000000000001', 'sql-basics', 'SQL basics', 'beginner'),
  ('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000002',
   'd0000000-0000-4000-8000-000000000001', 'empty', 'Empty', null);
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index) values
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000002',
   'b0000000-0000-4000-8000-000000000001', 'joins', 'Joins', 1),
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001',
   'b0000000-0000-4000-8000-000000000001', 'select', 'Select', 0),
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000003',
   'b0000000-0000-4000-8000-000000000002', 'nothing', 'Nothing', 0);
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('a0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 'select-star', 'Select star', 'beginner', 5),
  ('a0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000002', 'where', 'Where', 'beginner', 5),
  ('a0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000003', 'inner-join', 'Inner join', 'beginner', 5);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000002', 1),
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 0),
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000002', 'e0000000-0000-4000-8000-000000000003', 0),
  ('a0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000002', 'e0000000-0000-4000-8000-000000000001', 1);

-- acting as alice (user A)
select tests.authenticate_as('alice');
select set_config('test.journey', api.enroll_in_trail('b0000000-0000-4000-8000-000000000001') ->> 'id', true);

select results_eq(
  $$ select status, progress_percent, completed_sparks, total_sparks, completed_at, last_activity_at = started_at, current_concept_slug
     from app.journey_progress where id = current_setting('test.journey')::uuid $$,
  $$ values ('not_started', 0, 0, 3, null::timestamptz, true, 'select') $$,
  'a fresh enrollment is not_started, 0 of 3 distinct sparks, last activity = started_at, current concept is the first');
select is(
  (select jsonb_agg(s -> 'title') from jsonb_array_elements((api.get_user_journey(current_setting('test.journey')::uuid))::jsonb -> 'spark_progress') s),
  '["Select star", "Where", "Inner join"]'::jsonb,
  'spark_progress lists each distinct spark once, in concept order then spark order');
select is(
  (api.get_user_journey(current_setting('test.journey')::uuid))::jsonb -> 'current_concept',
  '{"id": "c0000000-0000-4000-8000-000000000001", "slug": "select", "title": "Select"}'::jsonb,
  'current_concept is {id, title, slug} of the first concept');

-- bookmarked changes nothing but the last activity
select lives_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'bookmarked', '2026-01-01T10:00:00Z') $$,
  'a bookmarked event is recorded');
select results_eq(
  $$ select status, completed_sparks, last_activity_at from app.journey_progress $$,
  $$ values ('not_started', 0, '2026-01-01T10:00:00Z'::timestamptz) $$,
  'a bookmark leaves the journey not_started but counts as activity');

-- started -> in_progress
select lives_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'started', '2026-01-01T11:00:00Z') $$,
  'a started event is recorded');
select results_eq(
  $$ select status, progress_percent, completed_sparks, last_activity_at from app.journey_progress $$,
  $$ values ('in_progress', 0, 0, '2026-01-01T11:00:00Z'::timestamptz) $$,
  'a started spark makes the journey in_progress with nothing completed');
select results_eq(
  $$ select status, completed_at from app.journey_spark_progress where spark_id = 'e0000000-0000-4000-8000-000000000001' $$,
  $$ values ('in_progress', null::timestamptz) $$,
  'the started spark is in_progress');

-- completed -> 1 of 3
select lives_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'completed', '2026-01-01T12:00:00Z') $$,
  'a completed event is recorded');
select results_eq(
  $$ select status, progress_percent, completed_sparks, completed_at, current_concept_slug from app.journey_progress $$,
  $$ values ('in_progress', 33, 1, null::timestamptz, 'select') $$,
  'one of three sparks completed is 33 percent (floored), still in the first concept');
select results_eq(
  $$ select status, completed_at from app.journey_spark_progress where spark_id = 'e0000000-0000-4000-8000-000000000001' $$,
  $$ values ('completed', '2026-01-01T12:00:00Z'::timestamptz) $$,
  'the completed spark carries its completion time');

-- mastered counts as completed
select lives_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000002', 'mastered', '2026-01-01T13:00:00Z') $$,
  'a mastered event is recorded');
select results_eq(
  $$ select status, progress_percent, completed_sparks, current_concept_slug from app.journey_progress $$,
  $$ values ('in_progress', 66, 2, 'joins') $$,
  'a mastered spark counts as completed; 66 percent; the current concept moves to the next one');

-- a later event on an already completed spark does not move its completion time
select lives_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'mastered', '2026-01-01T15:00:00Z') $$,
  'mastering an already completed spark is recorded');
select lives_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000003', 'completed', '2026-01-01T14:00:00Z') $$,
  'the last spark is completed');
select results_eq(
  $$ select status, progress_percent, completed_sparks, total_sparks, completed_at, last_activity_at, current_concept_id
     from app.journey_progress $$,
  $$ values ('completed', 100, 3, 3, '2026-01-01T14:00:00Z'::timestamptz, '2026-01-01T15:00:00Z'::timestamptz, null::uuid) $$,
  'all sparks completed: completed at the last first-completion, 100 percent, no current concept');
select is(
  (api.get_user_journey(current_setting('test.journey')::uuid))::jsonb -> 'current_concept', 'null'::jsonb,
  'current_concept is null when every spark is completed');
select is(
  (select jsonb_agg(s ->> 'completed_at') from jsonb_array_elements((api.get_user_journey(current_setting('test.journey')::uuid))::jsonb -> 'spark_progress') s),
  to_jsonb(array[to_jsonb('2026-01-01T12:00:00Z'::timestamptz) #>> '{}', to_jsonb('2026-01-01T13:00:00Z'::timestamptz) #>> '{}', to_jsonb('2026-01-01T14:00:00Z'::timestamptz) #>> '{}']),
  'each spark_progress entry carries its first completion time');

-- a trail without sparks
select set_config('test.empty', api.enroll_in_trail('b0000000-0000-4000-8000-000000000002') ->> 'id', true);
select results_eq(
  $$ select status, progress_percent, completed_sparks, total_sparks, completed_at, current_concept_id
     from app.journey_progress where id = current_setting('test.empty')::uuid $$,
  $$ values ('not_started', 0, 0, 0, null::timestamptz, null::uuid) $$,
  'a trail with no sparks stays not_started at 0 percent with no current concept');
select is(
  (api.get_user_journey(current_setting('test.empty')::uuid))::jsonb -> 'trail',
  '{"id": "b0000000-0000-4000-8000-000000000002", "slug": "empty", "title": "Empty", "difficulty_level": null}'::jsonb,
  'the trail summary carries a null difficulty_level as null');

-- list filters and sorts
select is(
  (select jsonb_agg(j ->> 'status') from jsonb_array_elements((api.list_user_journeys('completed'))::jsonb -> 'data') j),
  '["completed"]'::jsonb,
  'status=completed lists only the completed journey');
select is(
  (api.list_user_journeys('in_progress'))::jsonb -> 'data', '[]'::jsonb,
  'status=in_progress lists nothing when no journey is in progress');
select is(
  (select jsonb_agg(j -> 'trail' ->> 'slug') from jsonb_array_elements((api.list_user_journeys(null, 'progress'))::jsonb -> 'data') j),
  '["sql-basics", "empty"]'::jsonb,
  'sort=progress puts the most complete journey first');
select throws_ok(
  $$ select api.list_user_journeys('paused') $$, '22023', 'status must be one of not_started, in_progress, completed',
  'an unknown status is invalid input');
select throws_ok(
  $$ select api.list_user_journeys(null, 'alphabetical') $$, '22023', 'sort must be one of recent, progress, started',
  'an unknown sort is invalid input');

-- enrollment is idempotent; unknown trails are not found
select is(
  api.enroll_in_trail('b0000000-0000-4000-8000-000000000001')::jsonb - 'created',
  (api.get_user_journey(current_setting('test.journey')::uuid))::jsonb,
  'enrolling again returns the existing journey');
select is(
  (api.enroll_in_trail('b0000000-0000-4000-8000-000000000001') ->> 'created')::boolean, false,
  'enrolling again reports created = false');
select throws_ok(
  $$ select api.enroll_in_trail('b0000000-0000-4000-8000-00000000ffff') $$, 'PT404', 'trail not found',
  'enrolling in an unknown trail is not found');

-- learning event validation and deduplication
select throws_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-00000000ffff', 'started') $$, 'PT404', 'spark not found',
  'an event for an unknown spark is not found');
select throws_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'liked') $$, '22023', 'verb must be one of the learning verbs',
  'an unknown verb is invalid input');
select throws_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'started', now() + interval '10 minutes') $$,
  '22023', 'occurred_at must not be in the future (5 minutes of clock skew allowed)',
  'an occurred_at beyond the 5 minute skew is invalid input');
select is(
  (api.record_learning_event('e0000000-0000-4000-8000-000000000002', 'started', now() + interval '4 minutes') ->> 'created')::boolean, true,
  'an occurred_at within the 5 minute skew is accepted');
select results_eq(
  $$ select (e ->> 'created')::boolean, e ->> 'occurred_at' = to_jsonb('2026-01-01T12:00:00Z'::timestamptz) #>> '{}'
     from api.record_learning_event('e0000000-0000-4000-8000-000000000001', 'completed', '2026-01-01T12:00:00Z') e $$,
  $$ values (false, true) $$,
  'repeating an event with the same spark, verb and occurred_at returns the original (natural key)');
select is(
  (select count(*)::int from app.learning_events where spark_id = 'e0000000-0000-4000-8000-000000000001' and verb = 'completed'), 1,
  'the natural-key repeat added no row');
select set_config('test.keyed', api.record_learning_event('e0000000-0000-4000-8000-000000000003', 'started', now() - interval '1 hour', 'k-2') ->> 'id', true);
select results_eq(
  $$ select e ->> 'id', (e ->> 'created')::boolean
     from api.record_learning_event('e0000000-0000-4000-8000-000000000003', 'started', null, 'k-2') e $$,
  $$ values (current_setting('test.keyed'), false) $$,
  'a retry with the same idempotency key returns the original event, created = false');
select is(
  (select count(*)::int from app.learning_events where idempotency_key = 'k-2'), 1,
  'the idempotency-key retry added no row');
select throws_ok(
  $$ select api.record_learning_event('e0000000-0000-4000-8000-000000000002', 'completed', null, 'k-1'),
            api.record_learning_event('e0000000-0000-4000-8000-000000000003', 'completed', null, 'k-1') $$,
  '23505', 'idempotency key already used for a different event',
  'an idempotency key reused for a different event is a conflict');

select * from finish();
rollback;
