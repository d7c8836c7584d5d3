-- Journey bodies are built as text and are exactly the bytes the reference views give when
-- printed as jsonb: for titles that need JSON escaping (quotes, backslashes, control characters,
-- non-ASCII), out-of-order and repeated events, every status filter and sort, in another time
-- zone, with derived and with stored positions, and after a promote that renames a spark.
begin;
select plan(31);

select tests.create_user('alice');
select tests.create_user('bob');

-- Structure
select col_not_null('app', 'trail_spark_positions', 'progress_json', 'every stored position has its not-started element');
select has_index('app', 'trail_spark_positions', 'trail_spark_positions_trail_spark',
  array['snapshot_id', 'trail_id', 'spark_id'], 'the list counts a trail''s sparks from a (snapshot, trail, spark) index');
select is(
  (select array_agg(p.proname::text || ':' || p.prorettype::regtype::text order by p.proname)
   from pg_catalog.pg_proc p where p.pronamespace = 'api'::regnamespace
     and p.proname in ('list_user_journeys', 'get_user_journey', 'enroll_in_trail')),
  array['enroll_in_trail:json', 'get_user_journey:json', 'list_user_journeys:json'],
  'the three return json (the body as built)');
select ok(
  not exists (select 1 from pg_catalog.pg_proc p
    where p.proname in ('journey_list_json', 'journey_detail_json', 'spark_progress_json') and (p.prosecdef or p.proconfig is null)),
  'the new private functions are security invoker with a fixed search_path');
select hasnt_function('private', 'journey_summaries', 'journeys are computed in one place: the earlier helper private.journey_summaries does not exist');

-- Fixture (as the owner): one published snapshot, not rolled up yet. Titles need escaping
-- (quotes, backslash, control characters, non-ASCII); a trail, a concept and a spark title hold the
-- placeholder private.journey_detail_json swaps for spark_progress; trail "plain" has no
-- difficulty; spark 3 sits in both trails; concept order ties break on slug.
-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a3000000-0000-4000-8000-000000000001', 'escapes', 'v1', 'published', now() - interval '1 day');
insert into app.domains (snapshot_id, id, slug, name)
values ('a3000000-0000-4000-8000-000000000001', 'd3000000-0000-4000-8000-000000000001', 'esc', 'Escapes');
insert into app.trails (snapshot_id, id, domain_id, slug, title, difficulty_level) values
  ('a3000000-0000-4000-8000-000000000001', 'b3000000-0000-4000-8000-000000000001', 'd3000000-0000-4000-8000-000000000001',
   'quoted', 'The "quoted" \ trail, "spark_progress": 0', 'advanced'),
  ('a3000000-0000-4000-8000-000000000001', 'b3000000-0000-4000-8000-000000000002', 'd3000000-0000-4000-8000-000000000001',
   'plain', E'Plain\ttrail', null);
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index) values
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000001', 'b3000000-0000-4000-8000-000000000001', 'b-first', 'Concept "one", "spark_progress": 0', 0),
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000002', 'b3000000-0000-4000-8000-000000000001', 'a-first', E'Concept\\two', 0),
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000003', 'b3000000-0000-4000-8000-000000000002', 'only', 'Only ünïcødé 漢字', 0);
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('a3000000-0000-4000-8000-000000000001', 'e3000000-0000-4000-8000-000000000001', 's-1', 'Say "hi"', 'beginner', 5),
  ('a3000000-0000-4000-8000-000000000001', 'e3000000-0000-4000-8000-000000000002', 's-2', E'Back\\slash and \u0001 control', 'beginner', 5),
  ('a3000000-0000-4000-8000-000000000001', 'e3000000-0000-4000-8000-000000000003', 's-3', E'New\nline 🚀', 'beginner', 5),
  ('a3000000-0000-4000-8000-000000000001', 'e3000000-0000-4000-8000-000000000004', 's-4', 'Plain "spark_progress": 0 four', 'beginner', 5),
  ('a3000000-0000-4000-8000-000000000001', 'e3000000-0000-4000-8000-000000000005', 's-5', '</script> & five', 'beginner', 5);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000001', 'e3000000-0000-4000-8000-000000000001', 0),
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000001', 'e3000000-0000-4000-8000-000000000002', 1),
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000002', 'e3000000-0000-4000-8000-000000000003', 0),
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000002', 'e3000000-0000-4000-8000-000000000004', 0),
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000003', 'e3000000-0000-4000-8000-000000000003', 0),
  ('a3000000-0000-4000-8000-000000000001', 'c3000000-0000-4000-8000-000000000003', 'e3000000-0000-4000-8000-000000000005', 1);

-- References, from the reference views printed as jsonb (security invoker: RLS applies).
create temporary view ref_detail with (security_invoker = true) as
select p.id, (private.journey_list_item(p) || jsonb_build_object(
  'current_concept', case when p.current_concept_id is null then null else
    jsonb_build_object('id', p.current_concept_id, 'title', p.current_concept_title, 'slug', p.current_concept_slug) end,
  'spark_progress', coalesce((
    select jsonb_agg(jsonb_build_object('spark_id', jsp.spark_id, 'title', jsp.spark_title, 'status', jsp.status,
      'completed_at', jsp.completed_at) order by jsp.concept_order, jsp.concept_slug, jsp.spark_order, jsp.spark_slug)
    from app.journey_spark_progress jsp where jsp.enrollment_id = p.id), '[]'::jsonb)))::text as doc
from app.journey_progress p;
grant select on ref_detail to authenticated;
create temporary view ref_lists with (security_invoker = true) as
select s.status, o.sort, (
  select jsonb_build_object('data', coalesce(jsonb_agg(private.journey_list_item(p)
    order by
      case when o.sort = 'recent' then p.last_activity_at end desc nulls last,
      case when o.sort = 'progress' then p.completed_sparks::numeric / nullif(p.total_sparks, 0) end desc nulls last,
      case when o.sort = 'started' then p.started_at end desc nulls last,
      p.last_activity_at desc, p.started_at desc, p.id), '[]'::jsonb))::text
  from app.journey_progress p where s.status is null or p.status = s.status) as body
from unnest(array[null, 'not_started', 'in_progress', 'completed']) s(status)
cross join unnest(array['recent', 'progress', 'started']) o(sort);
grant select on ref_lists to authenticated;

-- The current caller's api bodies against the reference views, byte for byte.
create function pg_temp.details_match(description text) returns text language sql as $f$
  select results_eq(
    $$ select r.id, api.get_user_journey(r.id)::text from ref_detail r order by r.id $$,
    $$ select id, doc from ref_detail order by id $$,
    description)
$f$;
create function pg_temp.lists_match(description text) returns text language sql as $f$
  select results_eq(
    $$ select status, sort, api.list_user_journeys(status, sort)::text from ref_lists order by 1, 2 $$,
    $$ select status, sort, body from ref_lists order by 1, 2 $$,
    description)
$f$;
grant execute on function pg_temp.details_match(text), pg_temp.lists_match(text) to authenticated;

-- A enrolls in both trails, B in one.
-- acting as alice
select tests.authenticate_as('alice');
select set_config('test.a_quoted', api.enroll_in_trail('b3000000-0000-4000-8000-000000000001') ->> 'id', true);
select set_config('test.a_plain', api.enroll_in_trail('b3000000-0000-4000-8000-000000000002') ->> 'id', true);
-- acting as bob
select tests.authenticate_as('bob');
select set_config('test.b_quoted', api.enroll_in_trail('b3000000-0000-4000-8000-000000000001') ->> 'id', true);
reset role;

-- A's events, recorded out of order: spark 1 completed twice (the earlier one counts) and started
-- after its completion; spark 2 mastered only; spark 3 (in both trails) started, then
-- bookmarked later; spark 5 bookmarked only. Microseconds survive into the body.
insert into app.learning_events (user_id, spark_id, verb, occurred_at) values
  (tests.get_user_id('alice'), 'e3000000-0000-4000-8000-000000000001', 'completed', '2026-05-02 10:00:00.654321+00'),
  (tests.get_user_id('alice'), 'e3000000-0000-4000-8000-000000000001', 'completed', '2026-05-01 10:00:00.123456+00'),
  (tests.get_user_id('alice'), 'e3000000-0000-4000-8000-000000000001', 'started', '2026-05-03 09:00:00+00'),
  (tests.get_user_id('alice'), 'e3000000-0000-4000-8000-000000000002', 'mastered', '2026-04-30 23:59:59.5+00'),
  (tests.get_user_id('alice'), 'e3000000-0000-4000-8000-000000000003', 'started', '2026-04-01 08:00:00+00'),
  (tests.get_user_id('alice'), 'e3000000-0000-4000-8000-000000000003', 'bookmarked', '2026-06-01 08:00:00+00'),
  (tests.get_user_id('alice'), 'e3000000-0000-4000-8000-000000000005', 'bookmarked', '2026-03-01 08:00:00+00');
-- B completes spark 4 only.
insert into app.learning_events (user_id, spark_id, verb, occurred_at) values
  (tests.get_user_id('bob'), 'e3000000-0000-4000-8000-000000000004', 'completed', '2026-05-05 05:05:05+00');

-- Derived positions (no rollups yet)
-- acting as alice
select tests.authenticate_as('alice');
select pg_temp.details_match('derived positions: A''s details are the reference bytes');
select pg_temp.lists_match('derived positions: A''s lists, every status filter and sort, are the reference bytes');
select ok(
  (select count(distinct status) from app.journey_spark_progress) = 3
    and (select bool_and(status = 'in_progress') from app.journey_progress),
  'the fixture has all three spark statuses, both journeys in progress');
select is(
  (select (e ->> 'completed_at')::timestamptz
   from json_array_elements(api.get_user_journey(current_setting('test.a_quoted')::uuid) -> 'spark_progress') e
   where e ->> 'spark_id' = 'e3000000-0000-4000-8000-000000000001'),
  '2026-05-01 10:00:00.123456+00'::timestamptz,
  'a spark completed twice shows its earliest completion, to the microsecond');
select is(
  api.get_user_journey(current_setting('test.a_quoted')::uuid) -> 'trail' ->> 'title',
  'The "quoted" \ trail, "spark_progress": 0',
  'escaped text reads back unchanged');
select is(
  api.get_user_journey(current_setting('test.a_plain')::uuid) -> 'trail' ->> 'difficulty_level',
  null,
  'a trail without difficulty shows null');
set local timezone = 'America/St_Johns';
select pg_temp.details_match('in another time zone (-02:30/-03:30) the details still match the reference bytes');
select pg_temp.lists_match('in another time zone the lists still match the reference bytes');
reset timezone;
-- acting as bob
select tests.authenticate_as('bob');
select pg_temp.details_match('derived positions: B''s detail is the reference bytes (B''s own events only)');
select throws_ok(
  format('select api.get_user_journey(%L)', current_setting('test.a_quoted')),
  'PT404', 'journey not found', 'B gets not found for A''s enrollment');
select is(api.list_user_journeys('completed', 'recent')::text, '{"data": []}', 'an empty list is {"data": []}');
select throws_ok($$ select api.list_user_journeys(null, 'title') $$, '22023', 'sort must be one of recent, progress, started',
  'an unknown sort is rejected');
reset role;

-- Roll the snapshot up: positions and their not-started elements are stored.
select lives_ok($$ select private.refresh_content_rollups('a3000000-0000-4000-8000-000000000001') $$,
  'rolling the snapshot up stores its positions');
select is(
  (select count(*)::int from app.trail_spark_positions p
   where p.snapshot_id = 'a3000000-0000-4000-8000-000000000001'
     and p.progress_json = jsonb_build_object('spark_id', p.spark_id, 'title', p.spark_title, 'status', 'not_started',
       'completed_at', null)::text),
  6,
  'each stored element is the jsonb printing of the not-started element');
select ok(
  (select bool_and(p.progress_json::json is not null) from app.trail_spark_positions p
   where p.snapshot_id = 'a3000000-0000-4000-8000-000000000001'),
  'each stored element is valid JSON');

-- acting as alice
select tests.authenticate_as('alice');
select pg_temp.details_match('stored positions: A''s details are the reference bytes');
select pg_temp.lists_match('stored positions: A''s lists are the reference bytes');
select is(
  (api.enroll_in_trail('b3000000-0000-4000-8000-000000000001'))::text,
  ((select doc from ref_detail where id = current_setting('test.a_quoted')::uuid)::jsonb
    || '{"created": false}'::jsonb)::text,
  'enrolling again returns the reference detail plus created false');

-- A completes the plain trail: status completed, no current concept.
select lives_ok(
  $$ select api.record_learning_event(s, 'completed', '2026-07-01 00:00:00+00')
     from unnest(array['e3000000-0000-4000-8000-000000000003', 'e3000000-0000-4000-8000-000000000005']::uuid[]) s $$,
  'A completes the plain trail through the api');
select results_eq(
  $$ select j ->> 'status', j ->> 'current_concept', (j ->> 'progress_percent')::int
     from api.get_user_journey(current_setting('test.a_plain')::uuid) j $$,
  $$ values ('completed', null::text, 100) $$,
  'the completed trail: completed, no current concept, 100 percent');
select pg_temp.details_match('after new events: A''s details are the reference bytes');
reset role;

-- Promote snapshot 2: spark 4 renamed, spark 1 dropped from the quoted trail.
update app.snapshots set status = 'archived' where id = 'a3000000-0000-4000-8000-000000000001';
insert into app.snapshots (id, name, version_label, status, published_at, parent_snapshot_id)
values ('a3000000-0000-4000-8000-000000000002', 'escapes', 'v2', 'published', now(), 'a3000000-0000-4000-8000-000000000001');
insert into app.domains (snapshot_id, id, slug, name)
select 'a3000000-0000-4000-8000-000000000002', id, slug, name from app.domains where snapshot_id = 'a3000000-0000-4000-8000-000000000001';
insert into app.trails (snapshot_id, id, domain_id, slug, title, difficulty_level)
select 'a3000000-0000-4000-8000-000000000002', id, domain_id, slug, title, difficulty_level
from app.trails where snapshot_id = 'a3000000-0000-4000-8000-000000000001';
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index)
select 'a3000000-0000-4000-8000-000000000002', id, trail_id, slug, title, order_index
from app.concepts where snapshot_id = 'a3000000-0000-4000-8000-000000000001';
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select 'a3000000-0000-4000-8000-000000000002', id, slug,
  case when slug = 's-4' then 'Four, "renamed"' else title end, difficulty, estimated_mins
from app.sparks where snapshot_id = 'a3000000-0000-4000-8000-000000000001';
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index)
select 'a3000000-0000-4000-8000-000000000002', concept_id, spark_id, order_index
from app.concept_sparks where snapshot_id = 'a3000000-0000-4000-8000-000000000001'
  and not (concept_id = 'c3000000-0000-4000-8000-000000000001' and spark_id = 'e3000000-0000-4000-8000-000000000001');
select lives_ok($$ select private.refresh_content_rollups('a3000000-0000-4000-8000-000000000002') $$,
  'snapshot 2 is rolled up');
select is(
  (select progress_json from app.trail_spark_positions
   where snapshot_id = 'a3000000-0000-4000-8000-000000000002' and spark_id = 'e3000000-0000-4000-8000-000000000004'),
  '{"title": "Four, \"renamed\"", "status": "not_started", "spark_id": "e3000000-0000-4000-8000-000000000004", "completed_at": null}',
  'the new snapshot stores the renamed spark''s element');

-- acting as alice
select tests.authenticate_as('alice');
select pg_temp.details_match('after the promote: A''s details are the reference bytes (read from snapshot 2)');
select pg_temp.lists_match('after the promote: A''s lists are the reference bytes');
reset role;

-- acting as anon
select tests.clear_authentication();
select throws_ok($$ select api.get_user_journey('a3000000-0000-4000-8000-000000000001') $$, 'PT401', 'Authentication required',
  'anon calling api.get_user_journey is unauthorized');

select * from finish();
rollback;
