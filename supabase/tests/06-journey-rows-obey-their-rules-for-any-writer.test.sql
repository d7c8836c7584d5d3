-- The rules of the journey tables hold for any writer, not only through the api functions: a
-- row the API would refuse cannot be written by SQL either, by a learner acting directly on the
-- tables or by the owner. They, and the learners' spark reviews (whose rules pgTAP 61 proves the
-- same way), are the only tables a request role may write.
begin;
select plan(22);

select tests.create_user('alice');
select tests.create_user('bob');
set local timezone to 'UTC';

-- Fixture (as the owner): one current snapshot with a trail and a spark, and an archived one with
-- a trail and a spark that left the catalog.
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('06000000-0000-4000-8000-000000000001', 'rules', 'v2', 'published', now()),
  ('06000000-0000-4000-8000-000000000002', 'rules old', 'v1', 'archived', now() - interval '1 day');
insert into app.domains (snapshot_id, id, slug, name) values
  ('06000000-0000-4000-8000-000000000001', '06100000-0000-4000-8000-000000000001', 'rules', 'Rules'),
  ('06000000-0000-4000-8000-000000000002', '06100000-0000-4000-8000-000000000001', 'rules', 'Rules');
insert into app.trails (snapshot_id, id, domain_id, slug, title) values
  ('06000000-0000-4000-8000-000000000001', '06200000-0000-4000-8000-000000000001', '06100000-0000-4000-8000-000000000001', 'current-trail', 'Current trail'),
  ('06000000-0000-4000-8000-000000000002', '06200000-0000-4000-8000-000000000002', '06100000-0000-4000-8000-000000000001', 'gone-trail', 'Gone trail');
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('06000000-0000-4000-8000-000000000001', '06300000-0000-4000-8000-000000000001', 'current-spark', 'Current spark', 'beginner', 5),
  ('06000000-0000-4000-8000-000000000002', '06300000-0000-4000-8000-000000000002', 'gone-spark', 'Gone spark', 'beginner', 5);

-- ---------------------------------------------------------------------------------------------
-- Only the journey tables (and spark reviews) are writable by a request role
-- ---------------------------------------------------------------------------------------------
select is(
  (select array_agg(distinct c.oid::regclass::text order by c.oid::regclass::text)
   from pg_class c
   cross join unnest(array['anon', 'authenticated', 'service_role', 'sparkpath_api']) r
   cross join unnest(array['insert', 'update', 'delete', 'truncate']) p
   where c.relnamespace = 'app'::regnamespace and c.relkind in ('r', 'p', 'v')
     and (has_table_privilege(r, c.oid, p)
          or (p in ('insert', 'update') and has_any_column_privilege(r, c.oid, p)))),
  array['app.enrollments', 'app.learning_events', 'app.spark_reviews'],
  'request roles write only enrollments, learning events and spark reviews');
select ok(
  not has_column_privilege('authenticated', 'app.enrollments', 'user_id', 'insert')
  and not has_column_privilege('authenticated', 'app.enrollments', 'started_at', 'insert')
  and not has_column_privilege('authenticated', 'app.learning_events', 'user_id', 'insert')
  and not has_column_privilege('authenticated', 'app.learning_events', 'recorded_at', 'insert')
  and not has_table_privilege('authenticated', 'app.enrollments', 'update')
  and not has_table_privilege('authenticated', 'app.learning_events', 'update,delete'),
  'a learner writes only the columns it chooses: whose row it is and when it was written come from the server');

-- ---------------------------------------------------------------------------------------------
-- Acting directly on the tables as a learner
-- ---------------------------------------------------------------------------------------------
-- acting as alice
select tests.authenticate_as('alice');
select lives_ok($$ insert into app.enrollments (trail_id) values ('06200000-0000-4000-8000-000000000001') $$,
  'a learner enrolls in a trail of the current snapshot');
select is((select user_id from app.enrollments where trail_id = '06200000-0000-4000-8000-000000000001'), tests.get_user_id('alice'),
  'the row is the learner''s own');
select throws_ok($$ insert into app.enrollments (trail_id) values ('06200000-0000-4000-8000-000000000002') $$,
  'PT404', 'trail not found', 'a trail that left the current snapshot cannot be enrolled in');
select throws_ok($$ insert into app.enrollments (trail_id) values (gen_random_uuid()) $$,
  'PT404', 'trail not found', 'nor a trail that never existed');
select throws_ok($$ insert into app.enrollments (trail_id, started_at) values ('06200000-0000-4000-8000-000000000001', '-infinity') $$,
  '42501', null, 'a learner cannot choose started_at');
select throws_ok($$ insert into app.enrollments (user_id, trail_id) values (tests.get_user_id('bob'), '06200000-0000-4000-8000-000000000001') $$,
  '42501', null, 'nor enroll another user');
select lives_ok($$ insert into app.learning_events (spark_id, verb) values ('06300000-0000-4000-8000-000000000001', 'started') $$,
  'a learner records an event for a spark of the current snapshot');
select throws_ok($$ insert into app.learning_events (spark_id, verb) values ('06300000-0000-4000-8000-000000000002', 'started') $$,
  'PT404', 'spark not found', 'a spark that left the current snapshot cannot be recorded');
select throws_ok($$ insert into app.learning_events (spark_id, verb, occurred_at) values ('06300000-0000-4000-8000-000000000001', 'completed', 'infinity') $$,
  '23514', null, 'an event at infinity is refused (GET /user/me/journeys would show "infinity")');
select throws_ok($$ insert into app.learning_events (spark_id, verb, occurred_at) values ('06300000-0000-4000-8000-000000000001', 'completed', '-infinity') $$,
  '23514', null, 'an event at -infinity is refused');
select throws_ok($$ insert into app.learning_events (spark_id, verb, occurred_at) values ('06300000-0000-4000-8000-000000000001', 'completed', now() + interval '6 minutes') $$,
  '23514', null, 'an event more than 5 minutes ahead is refused');
select throws_ok($$ insert into app.learning_events (spark_id, verb, occurred_at) values ('06300000-0000-4000-8000-000000000001', 'completed', '1999-12-31T23:59:59Z') $$,
  '23514', null, 'an event before 2000 is refused');
select throws_ok($$ insert into app.learning_events (spark_id, verb, recorded_at) values ('06300000-0000-4000-8000-000000000001', 'completed', 'infinity') $$,
  '42501', null, 'a learner cannot choose recorded_at');
select throws_ok($$ insert into app.learning_events (spark_id, verb) values ('06300000-0000-4000-8000-000000000001', 'liked') $$,
  '23503', null, 'a verb that is not a learning verb is refused');
reset role;

-- acting as bob: alice's rows stay hers
select tests.authenticate_as('bob');
select is((select count(*)::int from app.enrollments) + (select count(*)::int from app.learning_events), 0,
  'another learner sees none of them');
reset role;

-- ---------------------------------------------------------------------------------------------
-- As the owner: the same rules
-- ---------------------------------------------------------------------------------------------
select throws_ok($$ insert into app.enrollments (user_id, trail_id, started_at) values (tests.get_user_id('bob'), '06200000-0000-4000-8000-000000000001', '-infinity') $$,
  '23514', null, 'not even the owner writes an enrollment started at -infinity');
select throws_ok($$ insert into app.enrollments (user_id, trail_id) values (tests.get_user_id('bob'), '06200000-0000-4000-8000-000000000002') $$,
  'PT404', 'trail not found', 'nor one for a trail outside the current snapshot');
select throws_ok($$ insert into app.learning_events (user_id, spark_id, verb, occurred_at) values (tests.get_user_id('bob'), '06300000-0000-4000-8000-000000000001', 'started', 'infinity') $$,
  '23514', null, 'nor an event at infinity');
select throws_ok($$ update app.learning_events set occurred_at = 'infinity' $$,
  '23514', null, 'nor moves an event to infinity afterwards');
select throws_ok($$ update app.enrollments set started_at = 'infinity' $$,
  '23514', null, 'nor an enrollment');

select * from finish();
rollback;
