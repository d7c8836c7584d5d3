-- A caller's journeys (api.list_user_journeys, api.get_user_journey) are exactly what the
-- reference views app.journey_progress and app.journey_spark_progress give for that caller, byte
-- for byte as the jsonb documents built from them print: on generated content with shared sparks,
-- order ties and empty trails, before the snapshot is rolled up (positions derived from the
-- content) and after (stored positions), once a trail is fully completed, and across a promote.
begin;
select plan(35);

select tests.create_user('alice');
select tests.create_user('bob');

select ok(
  not exists (
    select 1 from pg_catalog.pg_proc p
    where p.prosecdef and p.proname in ('journey_list_json', 'journey_detail_json', 'spark_progress_json',
      'derive_trail_spark_positions', 'list_user_journeys', 'get_user_journey')),
  'no per-caller journeys function is security definer');

-- Fixture (as the owner). Snapshot 1 (published): trail "big" with 6 concepts whose order_index
-- values tie in pairs (slug breaks the tie, in the opposite direction of the ids), 20 sparks placed
-- in one or more concepts with tied placement order_index values (spark slug breaks the tie);
-- trail "hollow" has a concept without sparks; trail "bare" has no concept at all; trail "marked"
-- holds sparks 23 and 24, which A only bookmarks. Spark 21 is in no trail.
-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a1000000-0000-4000-8000-000000000001', 'generated', 'v1', 'published', now() - interval '1 day');
insert into app.domains (snapshot_id, id, slug, name)
values ('a1000000-0000-4000-8000-000000000001', 'd1000000-0000-4000-8000-000000000001', 'gen', 'Generated');
insert into app.trails (snapshot_id, id, domain_id, slug, title, difficulty_level) values
  ('a1000000-0000-4000-8000-000000000001', 'b1000000-0000-4000-8000-000000000001', 'd1000000-0000-4000-8000-000000000001', 'big', 'Big', 'beginner'),
  ('a1000000-0000-4000-8000-000000000001', 'b1000000-0000-4000-8000-000000000002', 'd1000000-0000-4000-8000-000000000001', 'hollow', 'Hollow', null),
  ('a1000000-0000-4000-8000-000000000001', 'b1000000-0000-4000-8000-000000000003', 'd1000000-0000-4000-8000-000000000001', 'bare', 'Bare', 'advanced'),
  ('a1000000-0000-4000-8000-000000000001', 'b1000000-0000-4000-8000-000000000004', 'd1000000-0000-4000-8000-000000000001', 'marked', 'Marked', 'beginner');
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index)
select 'a1000000-0000-4000-8000-000000000001', ('c1000000-0000-4000-8000-0000000000' || lpad(k::text, 2, '0'))::uuid,
       'b1000000-0000-4000-8000-000000000001', 'k-' || (7 - k), 'Concept ' || k, k / 2
from generate_series(1, 6) k;
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index)
values ('a1000000-0000-4000-8000-000000000001', 'c1000000-0000-4000-8000-000000000099', 'b1000000-0000-4000-8000-000000000002', 'hollow-concept', 'Hollow concept', 0),
       ('a1000000-0000-4000-8000-000000000001', 'c1000000-0000-4000-8000-000000000098', 'b1000000-0000-4000-8000-000000000004', 'marked-concept', 'Marked concept', 0);
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select 'a1000000-0000-4000-8000-000000000001', ('e1000000-0000-4000-8000-0000000000' || lpad(n::text, 2, '0'))::uuid,
       's-' || lpad(((n * 7) % 29)::text, 2, '0'), 'Spark ' || n, 'beginner', 5
from generate_series(1, 24) n;
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index)
select 'a1000000-0000-4000-8000-000000000001', ('c1000000-0000-4000-8000-0000000000' || lpad(k::text, 2, '0'))::uuid,
       ('e1000000-0000-4000-8000-0000000000' || lpad(n::text, 2, '0'))::uuid, (n * 3 + k) % 5
from generate_series(1, 6) k cross join generate_series(1, 20) n
where (n + k) % 4 = 0 or n % 6 = k;
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('a1000000-0000-4000-8000-000000000001', 'c1000000-0000-4000-8000-000000000098', 'e1000000-0000-4000-8000-000000000023', 0),
  ('a1000000-0000-4000-8000-000000000001', 'c1000000-0000-4000-8000-000000000098', 'e1000000-0000-4000-8000-000000000024', 1);

-- Reference documents built from the views (security invoker: RLS applies to the caller).
create temporary view ref_detail with (security_invoker = true) as
select p.id, private.journey_list_item(p) || jsonb_build_object(
  'current_concept', case when p.current_concept_id is null then null else
    jsonb_build_object('id', p.current_concept_id, 'title', p.current_concept_title, 'slug', p.current_concept_slug) end,
  'spark_progress', coalesce((
    select jsonb_agg(jsonb_build_object('spark_id', jsp.spark_id, 'title', jsp.spark_title, 'status', jsp.status,
      'completed_at', jsp.completed_at) order by jsp.concept_order, jsp.concept_slug, jsp.spark_order, jsp.spark_slug)
    from app.journey_spark_progress jsp where jsp.enrollment_id = p.id), '[]'::jsonb)) as doc
from app.journey_progress p;
grant select on ref_detail to authenticated;

-- acting as alice (user A): three enrollments
select tests.authenticate_as('alice');
select set_config('test.a_big', api.enroll_in_trail('b1000000-0000-4000-8000-000000000001') ->> 'id', true);
select set_config('test.a_hollow', api.enroll_in_trail('b1000000-0000-4000-8000-000000000002') ->> 'id', true);
select set_config('test.a_bare', api.enroll_in_trail('b1000000-0000-4000-8000-000000000003') ->> 'id', true);
select set_config('test.a_marked', api.enroll_in_trail('b1000000-0000-4000-8000-000000000004') ->> 'id', true);
-- acting as bob (user B): one enrollment
select tests.authenticate_as('bob');
select set_config('test.b_big', api.enroll_in_trail('b1000000-0000-4000-8000-000000000001') ->> 'id', true);
reset role;

-- Events (as the owner): every verb, repeated verbs at different times, completions before
-- starts, a spark outside every trail; B's events differ from A's.
insert into app.learning_events (user_id, spark_id, verb, occurred_at)
select tests.get_user_id('alice'), ('e1000000-0000-4000-8000-0000000000' || lpad(n::text, 2, '0'))::uuid,
       (array['started', 'completed', 'mastered', 'bookmarked'])[1 + (n + r) % 4],
       timestamptz '2026-01-01 00:00:00+00' + make_interval(hours => (n * 5 + r * 11) % 37)
from generate_series(1, 21) n cross join generate_series(0, n % 3) r
where n % 5 <> 0;
insert into app.learning_events (user_id, spark_id, verb, occurred_at) values
  (tests.get_user_id('alice'), 'e1000000-0000-4000-8000-000000000023', 'bookmarked', '2026-01-05 00:00:00+00');
insert into app.learning_events (user_id, spark_id, verb, occurred_at)
select tests.get_user_id('bob'), ('e1000000-0000-4000-8000-0000000000' || lpad(n::text, 2, '0'))::uuid,
       (array['completed', 'started', 'bookmarked'])[1 + n % 3],
       timestamptz '2026-02-01 00:00:00+00' + make_interval(hours => n)
from generate_series(1, 21, 2) n;

select ok(
  not exists (select 1 from app.snapshot_rollups where snapshot_id = 'a1000000-0000-4000-8000-000000000001'),
  'snapshot 1 has no rollups yet, so positions are derived from the content tables');

-- acting as alice (user A) (derived positions)
select tests.authenticate_as('alice');
select is(
  api.list_user_journeys(null, 'started')::text,
  (select jsonb_build_object('data', coalesce(jsonb_agg(private.journey_list_item(p)
     order by p.started_at desc, p.last_activity_at desc, p.id), '[]'::jsonb))::text from app.journey_progress p),
  'derived positions: A''s list equals the reference view, byte for byte');
select results_eq(
  $$ select j ->> 'status', (j ->> 'completed_sparks')::int, (j ->> 'last_activity_at')::timestamptz
     from api.get_user_journey(current_setting('test.a_marked')::uuid) j $$,
  $$ values ('not_started', 0, '2026-01-05 00:00:00+00'::timestamptz) $$,
  'a trail with only bookmarked sparks stays not_started, with the bookmark as its last activity');
select ok(
  (select count(distinct status) from app.journey_progress) >= 2
    and exists (select 1 from app.journey_progress where current_concept_id is not null and completed_sparks > 0),
  'the fixture exercises more than one status and a current concept past some completed sparks');
select results_eq(
  $$ select p.id, api.get_user_journey(p.id)::text from app.journey_progress p order by p.id $$,
  $$ select id, doc::text from ref_detail order by id $$,
  'derived positions: every detail document of A equals the one built from the views');
select is(
  (api.list_user_journeys(null, 'recent'))::text,
  (select jsonb_build_object('data', jsonb_agg(private.journey_list_item(p)
     order by p.last_activity_at desc, p.started_at desc, p.id)) from app.journey_progress p)::text,
  'derived positions: the recent list equals the reference, byte for byte');
select is(
  (api.list_user_journeys(null, 'progress'))::text,
  (select jsonb_build_object('data', jsonb_agg(private.journey_list_item(p)
     order by p.completed_sparks::numeric / nullif(p.total_sparks, 0) desc nulls last, p.last_activity_at desc, p.started_at desc, p.id))
   from app.journey_progress p)::text,
  'derived positions: the progress list equals the reference, byte for byte');
select is(
  (api.list_user_journeys('not_started', 'started'))::text,
  (select jsonb_build_object('data', coalesce(jsonb_agg(private.journey_list_item(p)
     order by p.started_at desc, p.last_activity_at desc, p.id), '[]'::jsonb))
   from app.journey_progress p where p.status = 'not_started')::text,
  'derived positions: a status-filtered list equals the reference, byte for byte');

-- acting as bob (user B)
select tests.authenticate_as('bob');
select is(
  api.list_user_journeys(null, 'started')::text,
  (select jsonb_build_object('data', coalesce(jsonb_agg(private.journey_list_item(p)
     order by p.started_at desc, p.last_activity_at desc, p.id), '[]'::jsonb))::text from app.journey_progress p),
  'derived positions: B''s list equals the reference view, byte for byte');
select results_eq(
  $$ select p.id, api.get_user_journey(p.id)::text from app.journey_progress p order by p.id $$,
  $$ select id, doc::text from ref_detail order by id $$,
  'derived positions: B''s detail equals the reference');
select ok(
  private.journey_detail_json(current_setting('test.a_hollow')::uuid, null::boolean) is null,
  'B gets no document for an enrollment id of A''s (RLS and the caller filter)');
select is(
  (select count(*)::int from json_array_elements(api.get_user_journey(current_setting('test.b_big')::uuid) -> 'spark_progress') s
   where s ->> 'status' <> 'not_started'),
  (select count(*)::int from app.journey_spark_progress where status <> 'not_started'),
  'B''s touched sparks come from B''s own events only');
reset role;

-- Roll snapshot 1 up (as an import does): the trigger stores the positions.
select lives_ok(
  $$ select private.refresh_content_rollups('a1000000-0000-4000-8000-000000000001') $$,
  'rolling snapshot 1 up fills its trail spark positions');
select set_eq(
  $$ select trail_id, ordinal, placement, spark_id, concept_id, spark_title, parents from app.trail_spark_positions
     where snapshot_id = 'a1000000-0000-4000-8000-000000000001' $$,
  $$ select * from private.derive_trail_spark_positions('a1000000-0000-4000-8000-000000000001', null) $$,
  'stored positions equal the derived ones');
select is(
  (select count(*)::int from app.trail_spark_positions where snapshot_id = 'a1000000-0000-4000-8000-000000000001'),
  (select count(distinct (c.trail_id, cs.spark_id))::int from app.concept_sparks cs
   join app.concepts c on c.snapshot_id = cs.snapshot_id and c.id = cs.concept_id
   where cs.snapshot_id = 'a1000000-0000-4000-8000-000000000001'),
  'one stored position per distinct spark of each trail');
select results_eq(
  $$ select ordinal from app.trail_spark_positions
     where snapshot_id = 'a1000000-0000-4000-8000-000000000001' and trail_id = 'b1000000-0000-4000-8000-000000000001'
     order by ordinal $$,
  $$ select generate_series(1, (select count(*)::int from app.trail_spark_positions
       where snapshot_id = 'a1000000-0000-4000-8000-000000000001' and trail_id = 'b1000000-0000-4000-8000-000000000001')) $$,
  'ordinals run 1..n without gaps inside a trail');
select is(
  (select count(*)::int from (
     select p.placement, lag(p.placement) over (partition by p.trail_id order by p.ordinal) as previous
     from app.trail_spark_positions p where p.snapshot_id = 'a1000000-0000-4000-8000-000000000001') x
   where x.placement < x.previous or x.placement > x.previous + 1 or (x.previous is null and x.placement <> 1)),
  0,
  'placements start at 1 in each trail and never fall or skip in ordinal order');
select is(
  (select count(*)::int from app.trail_spark_positions p
   join app.concept_sparks cs on cs.snapshot_id = p.snapshot_id and cs.concept_id = p.concept_id and cs.spark_id = p.spark_id
   join app.trail_spark_positions q on q.snapshot_id = p.snapshot_id and q.trail_id = p.trail_id and q.concept_id = p.concept_id
   join app.concept_sparks ct on ct.snapshot_id = q.snapshot_id and ct.concept_id = q.concept_id and ct.spark_id = q.spark_id
   where p.snapshot_id = 'a1000000-0000-4000-8000-000000000001'
     and (ct.order_index = cs.order_index) <> (q.placement = p.placement)),
  0,
  'two positions of one concept share a placement exactly when their order_index is equal');
select lives_ok(
  $$ select private.refresh_content_rollups('a1000000-0000-4000-8000-000000000001') $$,
  'rolling up again is idempotent');
select is(
  (select count(*)::int from app.trail_spark_positions where snapshot_id = 'a1000000-0000-4000-8000-000000000001'),
  (select count(*)::int from private.derive_trail_spark_positions('a1000000-0000-4000-8000-000000000001', null)),
  'a second roll-up replaces the positions instead of adding to them');

-- acting as alice (user A) (stored positions)
select tests.authenticate_as('alice');
select is(
  api.list_user_journeys(null, 'started')::text,
  (select jsonb_build_object('data', coalesce(jsonb_agg(private.journey_list_item(p)
     order by p.started_at desc, p.last_activity_at desc, p.id), '[]'::jsonb))::text from app.journey_progress p),
  'stored positions: A''s list equals the reference view, byte for byte');
select results_eq(
  $$ select p.id, api.get_user_journey(p.id)::text from app.journey_progress p order by p.id $$,
  $$ select id, doc::text from ref_detail order by id $$,
  'stored positions: every detail document of A equals the reference');

-- A completes the whole big trail (through the api, as the app does).
select lives_ok(
  $$ select api.record_learning_event(p.spark_id, 'completed', timestamptz '2026-03-01 00:00:00+00' + make_interval(mins => p.ordinal))
     from app.trail_spark_positions p
     where p.snapshot_id = 'a1000000-0000-4000-8000-000000000001' and p.trail_id = 'b1000000-0000-4000-8000-000000000001' $$,
  'A completes every spark of the big trail');
select results_eq(
  $$ select j ->> 'status', (j ->> 'progress_percent')::int, j ->> 'current_concept', j ->> 'completed_at' is not null
     from api.get_user_journey(current_setting('test.a_big')::uuid) j $$,
  $$ values ('completed', 100, null::text, true) $$,
  'the completed trail is completed, 100 percent, without a current concept');
select is(
  api.list_user_journeys(null, 'started')::text,
  (select jsonb_build_object('data', coalesce(jsonb_agg(private.journey_list_item(p)
     order by p.started_at desc, p.last_activity_at desc, p.id), '[]'::jsonb))::text from app.journey_progress p),
  'completed trail: A''s list equals the reference view, byte for byte');
select results_eq(
  $$ select p.id, api.get_user_journey(p.id)::text from app.journey_progress p order by p.id $$,
  $$ select id, doc::text from ref_detail order by id $$,
  'completed trail: every detail document of A equals the reference');
reset role;

-- Promote snapshot 2: the big trail gains a new spark 25 in its second concept, the bare trail is gone
-- (still shown from archived snapshot 1).
update app.snapshots set status = 'archived' where id = 'a1000000-0000-4000-8000-000000000001';
insert into app.snapshots (id, name, version_label, status, published_at, parent_snapshot_id)
values ('a1000000-0000-4000-8000-000000000002', 'generated', 'v2', 'published', now(), 'a1000000-0000-4000-8000-000000000001');
insert into app.domains (snapshot_id, id, slug, name)
select 'a1000000-0000-4000-8000-000000000002', id, slug, name from app.domains where snapshot_id = 'a1000000-0000-4000-8000-000000000001';
insert into app.trails (snapshot_id, id, domain_id, slug, title, difficulty_level)
select 'a1000000-0000-4000-8000-000000000002', id, domain_id, slug, title || ' (v2)', difficulty_level
from app.trails where snapshot_id = 'a1000000-0000-4000-8000-000000000001' and slug <> 'bare';
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index)
select 'a1000000-0000-4000-8000-000000000002', id, trail_id, slug, title, order_index
from app.concepts where snapshot_id = 'a1000000-0000-4000-8000-000000000001';
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select 'a1000000-0000-4000-8000-000000000002'::uuid, id, slug, title || ' (v2)', difficulty, estimated_mins
from app.sparks where snapshot_id = 'a1000000-0000-4000-8000-000000000001'
union all
select 'a1000000-0000-4000-8000-000000000002', 'e1000000-0000-4000-8000-000000000025', 's-new', 'Spark 25', 'beginner', 5;
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index)
select 'a1000000-0000-4000-8000-000000000002'::uuid, concept_id, spark_id, order_index
from app.concept_sparks where snapshot_id = 'a1000000-0000-4000-8000-000000000001'
union all
select 'a1000000-0000-4000-8000-000000000002', 'c1000000-0000-4000-8000-000000000002', 'e1000000-0000-4000-8000-000000000025', 0;
select lives_ok(
  $$ select private.refresh_content_rollups('a1000000-0000-4000-8000-000000000002') $$,
  'snapshot 2 is rolled up');
select ok(
  (select count(*) from app.trail_spark_positions where snapshot_id = 'a1000000-0000-4000-8000-000000000001') > 0
    and (select count(*) from app.trail_spark_positions where snapshot_id = 'a1000000-0000-4000-8000-000000000002') > 0,
  'each snapshot keeps its own positions');

-- acting as alice (user A) (after the promote)
select tests.authenticate_as('alice');
select results_eq(
  $$ select j -> 'trail' ->> 'title', j ->> 'status', (j ->> 'total_sparks')::int - (j ->> 'completed_sparks')::int
     from api.get_user_journey(current_setting('test.a_big')::uuid) j $$,
  $$ values ('Big (v2)', 'in_progress', 1) $$,
  'after the promote the big trail is read from snapshot 2: one new spark to do');
select is(
  api.list_user_journeys(null, 'started')::text,
  (select jsonb_build_object('data', coalesce(jsonb_agg(private.journey_list_item(p)
     order by p.started_at desc, p.last_activity_at desc, p.id), '[]'::jsonb))::text from app.journey_progress p),
  'after the promote: A''s list equals the reference view, byte for byte (the bare trail from snapshot 1)');
select results_eq(
  $$ select p.id, api.get_user_journey(p.id)::text from app.journey_progress p order by p.id $$,
  $$ select id, doc::text from ref_detail order by id $$,
  'after the promote: every detail document of A equals the reference');
select is(
  (api.list_user_journeys())::text,
  (select jsonb_build_object('data', jsonb_agg(private.journey_list_item(p)
     order by p.last_activity_at desc, p.started_at desc, p.id)) from app.journey_progress p)::text,
  'after the promote: the list equals the reference, byte for byte');

-- acting as anon
reset role;
select tests.clear_authentication();
select throws_ok($$ select private.journey_list_json(null, 'recent') $$, '42501', null,
  'anon cannot read enrollments or learning events, so the list statement fails');
select ok(
  (select count(*) from app.trail_spark_positions) > 0,
  'trail spark positions are content: anyone reads them');

select * from finish();
rollback;
