-- api.get_learning_path: the ancestor closure in Kahn order (rounds, then title, then id),
-- mastered sparks skipped for the caller only; api.list_spark_links filters.
begin;
select plan(13);

select tests.create_user('learner-one');
select tests.create_user('learner-two');

-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('41000000-0000-0000-0000-000000000000', 'path fixture', 'v41', 'published', now());

insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
values ('41000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'd-top', 'D Top', 'beginner', 5),
       ('41000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'd-left', 'D Left', 'beginner', 7),
       ('41000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'd-right', 'D Right', 'beginner', 11),
       ('41000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'd-bottom', 'D Bottom', 'beginner', 13),
       ('41000000-0000-0000-0000-000000000000', 'a1000000-0000-0000-0000-000000000002', 'twin-b', 'Twin', 'beginner', 1),
       ('41000000-0000-0000-0000-000000000000', 'a1000000-0000-0000-0000-000000000001', 'twin-a', 'Twin', 'beginner', 1),
       ('41000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'goal', 'Goal', 'beginner', 2),
       ('41000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'unrelated', 'Unrelated', 'beginner', 2);

create function pg_temp.spark(slug text) returns uuid language sql as
  $$ select id from app.sparks where snapshot_id = '41000000-0000-0000-0000-000000000000' and slug = $1 $$;
create function pg_temp.slugs(path jsonb) returns text[] language sql as
  $$ select array_agg(s ->> 'slug' order by o) from jsonb_array_elements(path -> 'path') with ordinality e(s, o) $$;

insert into app.spark_links (snapshot_id, source_id, target_id, type)
select '41000000-0000-0000-0000-000000000000', pg_temp.spark(l.source), pg_temp.spark(l.target), l.type
from (values ('d-top', 'd-left', 'prerequisite'), ('d-top', 'd-right', 'prerequisite'),
             ('d-left', 'd-bottom', 'prerequisite'), ('d-right', 'd-bottom', 'prerequisite'),
             ('twin-b', 'goal', 'prerequisite'), ('twin-a', 'goal', 'prerequisite'),
             ('unrelated', 'goal', 'related')) l(source, target, type);

-- the request roles call these test helpers too
grant execute on function pg_temp.spark(text) to anon, authenticated;
grant execute on function pg_temp.slugs(jsonb) to anon, authenticated;

-- Learner 1 mastered d-left (twice: counted once) and completed d-right; learner 2 mastered d-top.
insert into app.learning_events (user_id, spark_id, verb, occurred_at)
values (tests.get_user_id('learner-one'), pg_temp.spark('d-left'), 'mastered', now() - interval '2 days'),
       (tests.get_user_id('learner-one'), pg_temp.spark('d-left'), 'mastered', now() - interval '1 day'),
       (tests.get_user_id('learner-one'), pg_temp.spark('d-right'), 'completed', now()),
       (tests.get_user_id('learner-two'), pg_temp.spark('d-top'), 'mastered', now());

-- acting as learner 1
select tests.authenticate_as('learner-one');

select is(pg_temp.slugs(api.get_learning_path('d-bottom', false)::jsonb), array['d-top', 'd-left', 'd-right', 'd-bottom'],
  'diamond: prerequisites first, ties in a round by title');
select is((api.get_learning_path('d-bottom', false)::jsonb ->> 'total_mins')::int, 5 + 7 + 11 + 13,
  'total_mins sums the returned steps');
select is(api.get_learning_path('d-bottom', false)::jsonb -> 'path' -> 0,
  '{"slug":"d-top","title":"D Top","estimated_mins":5}'::jsonb,
  'a step is {slug,title,estimated_mins}');
select is(pg_temp.slugs(api.get_learning_path('d-bottom')::jsonb), array['d-top', 'd-right', 'd-bottom'],
  'skip_mastered (the default) leaves out the caller''s mastered sparks');
select is((api.get_learning_path('d-bottom')::jsonb ->> 'skipped_count')::int, 1,
  'skipped_count counts mastered sparks once, not events');
select is((api.get_learning_path('d-bottom')::jsonb ->> 'total_mins')::int, 5 + 11 + 13,
  'total_mins leaves out skipped sparks');
select is(pg_temp.slugs(api.get_learning_path('goal')::jsonb), array['twin-a', 'twin-b', 'goal'],
  'equal titles fall back to id order; related links are not prerequisites');
select throws_ok($$ select api.get_learning_path('nowhere') $$, 'PT404', 'spark not found',
  'an unknown target is not found');
select is(jsonb_array_length(api.list_spark_links(spark => 'goal', direction => 'incoming') -> 'data'), 3,
  'incoming links of a spark include every link type');
select is(jsonb_array_length(api.list_spark_links(spark => 'goal', type => 'related') -> 'data'), 1,
  'links filter by type');
select throws_ok($$ select api.list_spark_links(direction => 'outgoing') $$, '22023', 'direction needs a spark',
  'direction without a spark is invalid input');

-- acting as learner 2: learner 1's events are invisible
select tests.authenticate_as('learner-two');
select is(pg_temp.slugs(api.get_learning_path('d-bottom')::jsonb), array['d-left', 'd-right', 'd-bottom'],
  'only the caller''s own mastered events count');
reset role;

-- acting as anon: a path is one learner's, so an anonymous caller gets none
select tests.clear_authentication();
select throws_ok($$ select api.get_learning_path('d-bottom') $$, 'PT401', 'Authentication required',
  'anonymous callers get no path');
reset role;

select * from finish();
rollback;
