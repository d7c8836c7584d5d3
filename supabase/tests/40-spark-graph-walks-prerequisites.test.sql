-- api.get_spark_graph walks prerequisite links: each node once at its shortest depth, only the
-- edges inside the subgraph, a depth cut-off, and an end on cyclic data.
begin;
select plan(17);

select tests.create_user('learner');

-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('40000000-0000-0000-0000-000000000000', 'graph fixture', 'v40', 'published', now());

-- Diamond d-top -> {d-left, d-right} -> d-bottom; chain c1 -> ... -> c5; lone; cycle y1 -> y2 -> y3 -> y1.
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select '40000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), s.slug, s.title, 'beginner', 5
from (values ('d-top', 'D Top'), ('d-left', 'D Left'), ('d-right', 'D Right'), ('d-bottom', 'D Bottom'),
             ('c1', 'C1'), ('c2', 'C2'), ('c3', 'C3'), ('c4', 'C4'), ('c5', 'C5'), ('lone', 'Lone'),
             ('y1', 'Y1'), ('y2', 'Y2'), ('y3', 'Y3')) s(slug, title);

create function pg_temp.spark(slug text) returns uuid language sql as
  $$ select id from app.sparks where snapshot_id = '40000000-0000-0000-0000-000000000000' and slug = $1 $$;

insert into app.spark_links (snapshot_id, source_id, target_id, type)
select '40000000-0000-0000-0000-000000000000', pg_temp.spark(l.source), pg_temp.spark(l.target), l.type
from (values ('d-top', 'd-left', 'prerequisite'), ('d-top', 'd-right', 'prerequisite'),
             ('d-left', 'd-bottom', 'prerequisite'), ('d-right', 'd-bottom', 'prerequisite'),
             ('c1', 'c2', 'prerequisite'), ('c2', 'c3', 'prerequisite'), ('c3', 'c4', 'prerequisite'),
             ('c4', 'c5', 'prerequisite'), ('c2', 'lone', 'related'),
             -- imports reject cycles; this one is inserted directly to prove the walk still ends
             ('y1', 'y2', 'prerequisite'), ('y2', 'y3', 'prerequisite'), ('y3', 'y1', 'prerequisite')) l(source, target, type);

create function pg_temp.depths(graph jsonb) returns jsonb language sql as
  $$ select jsonb_object_agg(n ->> 'slug', (n ->> 'depth')::int) from jsonb_array_elements(graph -> 'nodes') n $$;

-- the request roles call these test helpers too
grant execute on function pg_temp.spark(text) to anon, authenticated;
grant execute on function pg_temp.depths(jsonb) to anon, authenticated;

-- acting as a signed-in learner
select tests.authenticate_as('learner');

select is(pg_temp.depths(api.get_spark_graph('d-bottom')::jsonb),
  '{"d-bottom":0,"d-left":1,"d-right":1,"d-top":2}'::jsonb,
  'diamond ancestors: each node once, at its shortest depth');
select is(jsonb_array_length(api.get_spark_graph('d-bottom')::jsonb -> 'edges'), 4,
  'diamond ancestors: all four edges lie inside the subgraph');
select is(api.get_spark_graph('d-bottom')::jsonb ->> 'root_id', pg_temp.spark('d-bottom')::text,
  'root_id is the id of the requested spark');
select is(pg_temp.depths(api.get_spark_graph('d-top', 'descendants')::jsonb),
  '{"d-top":0,"d-left":1,"d-right":1,"d-bottom":2}'::jsonb,
  'diamond descendants mirror the ancestors');
select is(pg_temp.depths(api.get_spark_graph('c5', 'ancestors', 2)::jsonb),
  '{"c5":0,"c4":1,"c3":2}'::jsonb,
  'chain: max_depth cuts the walk off');
select is(jsonb_array_length(api.get_spark_graph('c5', 'ancestors', 2)::jsonb -> 'edges'), 2,
  'chain: only edges between returned nodes are listed');
select is(pg_temp.depths(api.get_spark_graph('c1', 'descendants')::jsonb),
  '{"c1":0,"c2":1,"c3":2,"c4":3}'::jsonb,
  'chain: max_depth defaults to 3');
select is(pg_temp.depths(api.get_spark_graph('c3', 'both', 1)::jsonb),
  '{"c3":0,"c2":1,"c4":1}'::jsonb,
  'both directions combine ancestors and descendants');
select is(pg_temp.depths(api.get_spark_graph('c2', 'descendants', 10)::jsonb) ? 'lone', false,
  'related links are not traversed');
select is(api.get_spark_graph('lone', 'both', 10)::jsonb -> 'edges', '[]'::jsonb,
  'a disconnected spark is a graph of one node without edges');
select is(pg_temp.depths(api.get_spark_graph('y1', 'both', 10)::jsonb),
  '{"y1":0,"y2":1,"y3":1}'::jsonb,
  'a cycle terminates and every node appears once');
select is(jsonb_array_length(api.get_spark_graph('y1', 'ancestors', 10)::jsonb -> 'edges'), 3,
  'a cycle keeps its three edges once each');
select is((select array_agg(s ->> 'slug' order by s ->> 'slug') from jsonb_array_elements(api.get_learning_path('y1')::jsonb -> 'path') s),
  array['y1', 'y2', 'y3'],
  'a learning path over a cycle ends and lists each member once');
select throws_ok($$ select api.get_spark_graph('no-such-spark') $$, 'PT404', 'spark not found',
  'an unknown slug is not found');
select throws_ok($$ select api.get_spark_graph('c1', 'sideways') $$, '22023', null,
  'an unknown direction is invalid input');
select throws_ok($$ select api.get_spark_graph('c1', 'ancestors', 11) $$, '22023', null,
  'max_depth above 10 is invalid input');
reset role;

-- acting as a service caller: content is the same for every caller (anon may not walk the graph)
select tests.authenticate_as_service();
select is(jsonb_array_length(api.get_spark_graph('d-bottom')::jsonb -> 'nodes'), 4,
  'a service caller reads the same graph');
reset role;

select * from finish();
rollback;
