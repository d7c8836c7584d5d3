-- What next (api.list_next_sparks): the caller's ready sparks (not completed, every prerequisite
-- completed), enrolled trails by recent activity, then trail order, then difficulty closest to
-- the caller's recent level; only the caller's progress counts.
begin;
select plan(25);

select tests.create_user('alice');
select tests.create_user('bob');
select tests.create_user('carol');

-- Fixture (as the owner): trail "sql" with concept "first" (spark "a", then "int" and "adv" at the
-- same position) and concept "second" ("d", which needs "a"); trail "expert" with "x" and "y";
-- trail "both" with concept "mix" ("a" again, then "z").
-- No rollups: positions are derived on the fly (private.derive_trail_spark_positions).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a6000000-0000-4000-8000-000000000001', 'next', 'v1', 'published', now());
insert into app.domains (snapshot_id, id, slug, name)
values ('a6000000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-000000000001', 'data', 'Data');
insert into app.trails (snapshot_id, id, domain_id, slug, title) values
  ('a6000000-0000-4000-8000-000000000001', 'b6000000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-000000000001', 'sql', 'SQL'),
  ('a6000000-0000-4000-8000-000000000001', 'b6000000-0000-4000-8000-000000000002', 'd6000000-0000-4000-8000-000000000001', 'expert', 'Expert'),
  ('a6000000-0000-4000-8000-000000000001', 'b6000000-0000-4000-8000-000000000003', 'd6000000-0000-4000-8000-000000000001', 'both', 'Both');
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index) values
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000001', 'b6000000-0000-4000-8000-000000000001', 'first', 'First', 0),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000002', 'b6000000-0000-4000-8000-000000000001', 'second', 'Second', 1),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000003', 'b6000000-0000-4000-8000-000000000002', 'deep', 'Deep', 0),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000004', 'b6000000-0000-4000-8000-000000000003', 'mix', 'Mix', 0);
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000001', 'a', 'A', 'beginner', 3),
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000002', 'int', 'Int', 'intermediate', 4),
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000003', 'adv', 'Adv', 'advanced', 5),
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000004', 'd', 'D', 'beginner', 6),
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000005', 'x', 'X', 'expert', 7),
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000006', 'y', 'Y', 'expert', 8),
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000007', 'z', 'Z', 'beginner', 9);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000001', 0),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000002', 1),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000003', 1),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000002', 'e6000000-0000-4000-8000-000000000004', 0),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000003', 'e6000000-0000-4000-8000-000000000005', 0),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000003', 'e6000000-0000-4000-8000-000000000006', 1),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000004', 'e6000000-0000-4000-8000-000000000001', 0),
  ('a6000000-0000-4000-8000-000000000001', 'c6000000-0000-4000-8000-000000000004', 'e6000000-0000-4000-8000-000000000007', 1);
insert into app.spark_links (snapshot_id, source_id, target_id, type) values
  ('a6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000001', 'e6000000-0000-4000-8000-000000000004', 'prerequisite');

create function pg_temp.next_slugs(query json) returns text[] language sql as $$
  select coalesce(array_agg(e ->> 'slug' order by n), '{}') from json_array_elements(query -> 'data') with ordinality x(e, n)
$$;
grant execute on function pg_temp.next_slugs(json) to authenticated;

-- acting as alice
select tests.authenticate_as('alice');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{}', 'without an enrollment nothing is next');
select api.enroll_in_trail('b6000000-0000-4000-8000-000000000001');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{a,int,adv}',
  'an enrolled trail gives its sparks without prerequisites in trail order; at one position the difficulty closest to the level (beginner) comes first');
select is((api.list_next_sparks() -> 'meta')::jsonb, '{"limit": 10, "recent_level": 1}', 'with no completion the recent level is 1');
select is(pg_temp.next_slugs(api.list_next_sparks(null, 1)), '{a}', 'limit_count caps the list');

select api.record_learning_event('e6000000-0000-4000-8000-000000000001', 'completed', now() - interval '3 hours');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{int,adv,d}', 'completing a prerequisite makes what needs it ready');
select is(pg_temp.next_slugs(api.list_next_sparks(null, 1)), '{int}',
  'a limit inside a tied position still takes the difficulty closest to the level (adv is first in trail order)');
select is(
  (api.list_next_sparks() -> 'data' -> 2)::jsonb,
  '{"id": "e6000000-0000-4000-8000-000000000004", "slug": "d", "title": "D", "difficulty": "beginner", "estimated_mins": 6,
    "trail": {"id": "b6000000-0000-4000-8000-000000000001", "slug": "sql", "title": "SQL"},
    "concept": {"id": "c6000000-0000-4000-8000-000000000002", "slug": "second", "title": "Second"},
    "builds_on": [{"id": "e6000000-0000-4000-8000-000000000001", "slug": "a", "title": "A"}]}',
  'an item names its trail, concept, minutes and the prerequisites it builds on');

-- Two expert completions lift the level to (1 + 4 + 4) / 3 = 3: advanced is now the closest.
select api.record_learning_event('e6000000-0000-4000-8000-000000000005', 'completed', now() - interval '2 hours');
select api.record_learning_event('e6000000-0000-4000-8000-000000000006', 'mastered', now() - interval '1 hour');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{adv,int,d}', 'a higher recent level puts the advanced spark of a tied position first');
select is((api.list_next_sparks() ->> 'meta')::jsonb ->> 'recent_level', '3', 'the recent level is the mean difficulty of the recent completions');

-- A second enrollment with later activity comes first.
select api.enroll_in_trail('b6000000-0000-4000-8000-000000000002');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{adv,int,d}', 'an enrolled trail with nothing left adds nothing');
select is(pg_temp.next_slugs(api.list_next_sparks('expert')), '{}', 'trail limits the list to one trail');
select throws_ok($$ select api.list_next_sparks('no-such-trail') $$, 'PT404', 'trail no-such-trail not found', 'an unknown trail is not found');
select throws_ok($$ select api.list_next_sparks(null, 0) $$, '22023', 'limit must be an integer between 1 and 100', 'limit_count out of range is refused');

-- Rolled up (as an import does it), the positions are stored with each spark's prerequisites.
reset role;
select private.refresh_content_rollups('a6000000-0000-4000-8000-000000000001');
select is(
  (select array_agg(p.parents::text order by p.spark_id) from app.trail_spark_positions p
   where p.snapshot_id = 'a6000000-0000-4000-8000-000000000001'),
  '{"{}","{}","{}","{}","{e6000000-0000-4000-8000-000000000001}","{}","{}","{}"}',
  'stored positions carry each spark''s prerequisites (d needs a)');
select is(
  (select count(*)::int from app.trail_spark_positions p
   join app.spark_graph_nodes g on g.snapshot_id = p.snapshot_id and g.spark_id = p.spark_id
   where p.snapshot_id = 'a6000000-0000-4000-8000-000000000001' and p.parents = g.parents),
  (select count(*)::int from app.trail_spark_positions p where p.snapshot_id = 'a6000000-0000-4000-8000-000000000001'),
  'the stored prerequisites are the graph nodes'' parents, position for position');
select tests.authenticate_as('alice');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{adv,int,d}', 'stored positions give the list the derived ones gave');

-- acting as bob
select tests.authenticate_as('bob');
select is(pg_temp.next_slugs(api.list_next_sparks('sql')), '{a,int,adv}', 'another learner''s completions do not count for bob');

-- acting as carol: two enrolled trails sharing "a", ordered by their journeys' last activity
select tests.authenticate_as('carol');
select api.enroll_in_trail('b6000000-0000-4000-8000-000000000001');
select api.enroll_in_trail('b6000000-0000-4000-8000-000000000003');
select api.record_learning_event('e6000000-0000-4000-8000-000000000007', 'started', now() - interval '2 hours');
select api.record_learning_event('e6000000-0000-4000-8000-000000000002', 'started', now() - interval '1 hour');
select is(pg_temp.next_slugs(api.list_next_sparks(null, 3)), '{a,int,adv}',
  'the trail with the latest event comes first, and a limit it fills ends the list there');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{a,int,adv,z}',
  'the next trail follows, without the spark an earlier trail listed');
select api.record_learning_event('e6000000-0000-4000-8000-000000000007', 'bookmarked', now() - interval '30 minutes');
select is(pg_temp.next_slugs(api.list_next_sparks()), '{a,z,int,adv}',
  'any event, a bookmark too, makes its trail the most recent; a shared spark is listed at its first trail');
select is(
  (select j.last_activity_at from private.caller_journeys(null, false) j where j.trail_id = 'b6000000-0000-4000-8000-000000000003'),
  now() - interval '30 minutes',
  'the journey shows the last activity what next orders its trail by');
select is(private.journey_last_activity(null, '2026-01-02 00:00+00'), '2026-01-02 00:00+00'::timestamptz,
  'without an event on the trail a journey''s last activity is its start');
select is(private.journey_last_activity('2025-12-01 00:00+00', '2026-01-02 00:00+00'), '2025-12-01 00:00+00'::timestamptz,
  'an event recorded before enrolling is still the last activity');

-- acting as anon
select tests.clear_authentication();
select throws_ok($$ select api.list_next_sparks() $$, 'PT401', 'Authentication required', 'anonymous callers are refused');

-- acting as a service caller
select tests.authenticate_as_service();
select throws_ok($$ select api.list_next_sparks() $$, 'PT403', 'Service callers cannot use this endpoint',
  'a service caller has no next sparks: they are a learner''s');

select * from finish();
rollback;
