-- app.spark_rounds: Kahn rounds stored at import for api.get_learning_path; the path is the same
-- with and without them, link writes forget them, cycles get none, request roles only read them.
begin;
select plan(13);

select tests.create_user('learner');

-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('47000000-0000-0000-0000-000000000000', 'rounds fixture', 'v47', 'published', now()),
       ('47000000-0000-0000-0000-000000000001', 'rounds cycle fixture', 'v47c', 'draft', null);

-- top -> mid -> low -> goal, top -> goal, side -> low; alone has no links.
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select '47000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), s.slug, s.title, 'beginner', s.mins
from (values ('r-top', 'Top', 1), ('r-mid', 'Mid', 2), ('r-low', 'Low', 3), ('r-goal', 'Goal', 4),
             ('r-side', 'Side', 5), ('r-alone', 'Alone', 6), ('r-late', 'Late', 7)) s(slug, title, mins);
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select '47000000-0000-0000-0000-000000000001', extensions.gen_random_uuid(), s.slug, s.slug, 'beginner', 1
from (values ('c-a'), ('c-b'), ('c-free')) s(slug);

create function pg_temp.spark(slug text) returns uuid language sql as
  $$ select id from app.sparks where slug = $1 $$;
create function pg_temp.rounds() returns jsonb language sql as
  $$ select jsonb_object_agg(s.slug, r.round) from app.spark_rounds r join app.sparks s on s.snapshot_id = r.snapshot_id and s.id = r.spark_id
     where r.snapshot_id = '47000000-0000-0000-0000-000000000000' $$;

insert into app.spark_links (snapshot_id, source_id, target_id, type)
select '47000000-0000-0000-0000-000000000000', pg_temp.spark(l.source), pg_temp.spark(l.target), 'prerequisite'
from (values ('r-top', 'r-mid'), ('r-mid', 'r-low'), ('r-low', 'r-goal'), ('r-top', 'r-goal'), ('r-side', 'r-low')) l(source, target);
insert into app.spark_links (snapshot_id, source_id, target_id, type)
select '47000000-0000-0000-0000-000000000001', pg_temp.spark(l.source), pg_temp.spark(l.target), 'prerequisite'
from (values ('c-a', 'c-b'), ('c-b', 'c-a')) l(source, target);

-- The path before any rounds are stored: computed per request.
create temporary table computed as select api.get_learning_path('r-goal', false)::jsonb as body;

select is(private.refresh_spark_rounds('47000000-0000-0000-0000-000000000000'), 7,
  'every spark of the snapshot gets a round');
select is(pg_temp.rounds(),
  '{"r-top": 0, "r-side": 0, "r-alone": 0, "r-late": 0, "r-mid": 1, "r-low": 2, "r-goal": 3}'::jsonb,
  'the round is the longest prerequisite chain above a spark');
select is(api.get_learning_path('r-goal', false)::jsonb, (select body from computed),
  'the path read from stored rounds is the path computed per request');
select is((select array_agg(s ->> 'slug' order by o) from jsonb_array_elements(api.get_learning_path('r-goal', false)::jsonb -> 'path') with ordinality e(s, o)),
  array['r-side', 'r-top', 'r-mid', 'r-low', 'r-goal'],
  'stored rounds order the path: rounds first, then title');

-- A new link makes the stored rounds unknown; the path follows the new link at once.
insert into app.spark_links (snapshot_id, source_id, target_id, type)
values ('47000000-0000-0000-0000-000000000000', pg_temp.spark('r-late'), pg_temp.spark('r-top'), 'prerequisite');
select is_empty($$ select from app.spark_rounds where snapshot_id = '47000000-0000-0000-0000-000000000000' $$,
  'inserting a link forgets the snapshot''s rounds');
select is((select array_agg(s ->> 'slug' order by o) from jsonb_array_elements(api.get_learning_path('r-goal', false)::jsonb -> 'path') with ordinality e(s, o)),
  array['r-late', 'r-side', 'r-top', 'r-mid', 'r-low', 'r-goal'],
  'without stored rounds the path is computed with the new link');
select is(private.refresh_spark_rounds('47000000-0000-0000-0000-000000000000'), 7,
  'the rounds can be computed again');
select is(pg_temp.rounds() -> 'r-goal', '4'::jsonb, 'the recomputed rounds follow the new link');

delete from app.spark_links
where snapshot_id = '47000000-0000-0000-0000-000000000000' and source_id = pg_temp.spark('r-late');
select is_empty($$ select from app.spark_rounds where snapshot_id = '47000000-0000-0000-0000-000000000000' $$,
  'deleting a link forgets the snapshot''s rounds');

select is(private.refresh_spark_rounds('47000000-0000-0000-0000-000000000001'), 0,
  'a snapshot with a cycle gets no rounds (its path is computed per request)');

-- The import stores rounds when it writes the snapshot's rollups.
select private.refresh_content_rollups('47000000-0000-0000-0000-000000000000');
select is(pg_temp.rounds() -> 'r-goal', '3'::jsonb, 'writing the rollups of a snapshot stores its rounds');

-- acting as a signed-in learner
select tests.authenticate_as('learner');
select isnt_empty($$ select from app.spark_rounds $$, 'request roles read the rounds');
select throws_ok(
  $$ delete from app.spark_rounds $$,
  '42501', null, 'request roles cannot write the rounds');
reset role;

select * from finish();
rollback;
