-- Spaced review: private.fsrs_review gives ts-fsrs 5.4.2's numbers; a completion schedules a
-- card, each review reschedules it, the stored cards equal a replay of the history, and every
-- card and review is its learner's alone.
begin;
select plan(30);

select tests.create_user('alice');
select tests.create_user('bob');
set local timezone to 'UTC';

-- FSRS-6 itself, against values ts-fsrs 5.4.2 computes (long-term scheduler, default weights).
select is(private.js_round(2.5, 0), 3::double precision, 'js_round rounds a half up, as Math.round');
select is(private.js_round(-2.5, 0), -2::double precision, 'js_round rounds a negative half up too');
select results_eq(
  $$ select next_stability, next_difficulty, scheduled_days, due_at, next_reps, next_lapses
     from private.fsrs_review(null, null, null, 0, 0, 3, '2026-03-01T10:00:00Z') $$,
  $$ values (2.3065::float8, 2.11810397::float8, 3, '2026-03-04T10:00:00Z'::timestamptz, 1, 0) $$,
  'a new card rated good: S = w2, D = D0(3), three days');
select results_eq(
  $$ select next_stability, next_difficulty, scheduled_days, due_at, next_reps, next_lapses
     from private.fsrs_review(2.3065, 2.11810397, '2026-03-01T10:00:00Z', 1, 0, 3, '2026-03-04T10:00:00Z') $$,
  $$ values (13.82690327::float8, 2.11121424::float8, 14, '2026-03-18T10:00:00Z'::timestamptz, 2, 0) $$,
  'good again three days later: the recall stability of ts-fsrs, fourteen days');
select results_eq(
  $$ select next_stability, next_difficulty, scheduled_days, next_lapses
     from private.fsrs_review(1.2931, 5.11217071, '2026-01-01T08:00:00Z', 1, 0, 1, '2026-01-20T08:00:00Z') $$,
  $$ values (0.57694036::float8, 8.37863212::float8, 1, 1) $$,
  'again after nineteen days: the forget stability, one day, a lapse');
select throws_ok($$ select private.fsrs_review(null, null, null, 0, 0, 5, now()) $$, '22023', 'grade must be 1 to 4', 'a grade outside 1-4 is refused');

-- Fixture (as the owner): one published snapshot with three sparks.
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a6100000-0000-4000-8000-000000000001', 'reviews', 'v1', 'published', now());
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('a6100000-0000-4000-8000-000000000001', 'e6100000-0000-4000-8000-000000000001', 'one', 'One', 'beginner', 3),
  ('a6100000-0000-4000-8000-000000000001', 'e6100000-0000-4000-8000-000000000002', 'two', 'Two', 'beginner', 4),
  ('a6100000-0000-4000-8000-000000000001', 'e6100000-0000-4000-8000-000000000003', 'three', 'Three', 'beginner', 5);

-- acting as alice
select tests.authenticate_as('alice');
select api.record_learning_event('e6100000-0000-4000-8000-000000000001', 'completed', '2026-03-01T10:00:00Z');
select api.record_learning_event('e6100000-0000-4000-8000-000000000002', 'mastered', '2026-03-01T11:00:00Z');
select api.record_learning_event('e6100000-0000-4000-8000-000000000003', 'started', '2026-03-01T12:00:00Z');
select results_eq(
  $$ select spark_id, stability, scheduled_days, due_at from app.review_cards order by due_at $$,
  $$ values ('e6100000-0000-4000-8000-000000000001'::uuid, 2.3065::float8, 3, '2026-03-04T10:00:00Z'::timestamptz),
            ('e6100000-0000-4000-8000-000000000002'::uuid, 8.2956::float8, 8, '2026-03-09T11:00:00Z'::timestamptz) $$,
  'a completion schedules its first review as good, a mastery as easy; starting schedules nothing');
select is(
  (api.list_due_reviews('2026-03-05T00:00:00Z') -> 'meta' ->> 'total')::int, 1, 'one card is due by 03-05');
select is(
  (api.list_due_reviews('2026-03-10T00:00:00Z', 1) -> 'data' -> 0 -> 'spark')::jsonb,
  '{"id": "e6100000-0000-4000-8000-000000000001", "slug": "one", "title": "One", "estimated_mins": 3}',
  'the soonest card comes first, with its spark');

select is(
  (api.record_review('e6100000-0000-4000-8000-000000000001', 'good', '2026-03-04T10:00:00Z', 'r-1') -> 'card')::jsonb
    - 'retrievability' - 'last_review_at',
  '{"due_at": "2026-03-18T10:00:00+00:00", "stability": 13.82690327, "difficulty": 2.11121424, "scheduled_days": 14, "reps": 2, "lapses": 0}',
  'a review reschedules the card in the same call');
select is(api.record_review('e6100000-0000-4000-8000-000000000001', 'good', '2026-03-04T10:00:00Z', 'r-1') ->> 'created', 'false',
  'the same idempotency key returns the recorded review');
select throws_ok(
  $$ select api.record_review('e6100000-0000-4000-8000-000000000001', 'easy', null, 'r-1') $$,
  '23505', 'idempotency key already used for a different review', 'the same key for another rating is a conflict');
select throws_ok(
  $$ select api.record_review('e6100000-0000-4000-8000-000000000001', 'perfect') $$,
  '22023', 'rating must be one of again, hard, good, easy', 'an unknown rating is refused');
select throws_ok(
  $$ select api.record_review('e6100000-0000-4000-8000-000000000009', 'good') $$,
  'PT404', 'spark not found', 'a spark outside the current snapshot is not found');
select throws_ok(
  $$ insert into app.spark_reviews (spark_id, rating) values ('e6100000-0000-4000-8000-000000000009', 'good') $$,
  'PT404', 'spark not found', 'a review written directly (as through the Data API) is of a current spark too');
select throws_ok(
  $$ insert into app.spark_reviews (spark_id, rating, reviewed_at) values ('e6100000-0000-4000-8000-000000000001', 'good', now() + interval '1 hour') $$,
  '23514', null, 'a review written directly is not in the future either');
select throws_ok(
  $$ insert into app.review_cards (user_id, spark_id, stability, difficulty, due_at, last_review_at, scheduled_days, reps, lapses)
     values (tests.get_user_id('alice'), 'e6100000-0000-4000-8000-000000000003', 1, 1, now(), now(), 1, 1, 0) $$,
  '42501', null, 'a learner cannot write a card: only the history does');

-- acting as bob
select tests.authenticate_as('bob');
select is_empty($$ select * from app.review_cards $$, 'bob sees none of alice''s cards');
select is_empty($$ select * from app.spark_reviews $$, 'bob sees none of alice''s reviews');
select is((api.list_due_reviews('2027-01-01T00:00:00Z') -> 'meta' ->> 'total')::int, 0, 'bob has nothing due');
select throws_ok(
  $$ insert into app.spark_reviews (user_id, spark_id, rating) values (tests.get_user_id('alice'), 'e6100000-0000-4000-8000-000000000001', 'again') $$,
  '42501', null, 'bob cannot record a review for alice');
select is(api.record_review('e6100000-0000-4000-8000-000000000001', 'hard', '2026-03-02T10:00:00Z', 'r-1') ->> 'created', 'true',
  'keys are per learner: bob''s r-1 is his own review');

-- acting as anon
select tests.clear_authentication();
select throws_ok($$ select api.list_due_reviews() $$, 'PT401', 'Authentication required', 'anonymous callers have no reviews');

-- acting as a service caller
select tests.authenticate_as_service();
select throws_ok($$ select api.record_review('e6100000-0000-4000-8000-000000000001', 'good') $$, 'PT403',
  'Service callers cannot use this endpoint', 'a service caller records no review: reviews are a learner''s');

-- as the owner: one statement for several learners (a bulk write) gives each its card, and one
-- statement voiding those completions removes exactly those cards.
reset role;
insert into app.learning_events (user_id, spark_id, verb, occurred_at)
select tests.get_user_id(u), 'e6100000-0000-4000-8000-000000000003', 'completed', '2026-03-05T10:00:00Z'
from unnest(array['alice', 'bob']) u;
select is((select count(*)::int from app.review_cards where spark_id = 'e6100000-0000-4000-8000-000000000003'), 2,
  'one statement completing a spark for two learners schedules both cards');
create temporary table other_cards as select * from app.review_cards where spark_id <> 'e6100000-0000-4000-8000-000000000003';
update app.learning_events set voided_at = now()
where spark_id = 'e6100000-0000-4000-8000-000000000003' and verb = 'completed';
select is((select count(*)::int from app.review_cards where spark_id = 'e6100000-0000-4000-8000-000000000003'), 0,
  'voiding both completions in one statement removes both cards');
select set_eq($$ select * from app.review_cards $$, $$ select * from other_cards $$, 'and leaves every other card as it was');

-- as the owner: the stored cards are exactly a replay of every history.
create temporary table stored_cards as select * from app.review_cards;
select private.refresh_review_cards(array_agg(user_id), array_agg(spark_id)) from stored_cards;
select set_eq($$ select * from app.review_cards $$, $$ select * from stored_cards $$, 'replaying every history gives the stored cards');
select ok(
  (select bool_and(p.prosecdef) from pg_proc p where p.proname in ('refresh_review_cards_after_events', 'refresh_review_cards_after_reviews'))
  and not (select p.prosecdef from pg_proc p where p.proname = 'refresh_review_cards'),
  'only the trigger functions run as their owner');
select ok(
  not has_function_privilege('authenticated', 'private.refresh_review_cards(uuid[], uuid[])', 'execute')
  and not has_function_privilege('anon', 'private.refresh_review_cards(uuid[], uuid[])', 'execute'),
  'request roles cannot rewrite cards directly');

select * from finish();
rollback;
