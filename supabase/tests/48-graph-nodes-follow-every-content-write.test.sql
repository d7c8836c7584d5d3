-- app.spark_graph_nodes follows every write: after every kind of write to sparks, prerequisite
-- links, stored rounds and snapshots, its rows equal their derivation from app.sparks,
-- app.spark_links and app.spark_rounds, and the graph and path bodies built from them stay the
-- documents of the spec.
begin;
select plan(27);

select tests.create_user('learner');

-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('48000000-0000-0000-0000-000000000000', 'graph nodes fixture', 'v48', 'published', now()),
       ('48000000-0000-0000-0000-000000000001', 'graph nodes draft', 'v48b', 'draft', null);

-- The reference: every column derived from the base tables, JSON text from jsonb (the format
-- the bodies have always had, pinned by 46-graph-body).
create function pg_temp.expected() returns table (
  snapshot_id uuid, spark_id uuid, parents uuid[], edges_in text[], children uuid[],
  node_text text, sort_title text, path_step text, estimated_mins integer, round integer)
language sql as $$
  select s.snapshot_id, s.id,
    coalesce((select array_agg(l.source_id order by l.source_id) from app.spark_links l
              where l.snapshot_id = s.snapshot_id and l.target_id = s.id and l.type = 'prerequisite'), '{}'),
    coalesce((select array_agg(jsonb_build_object('type', 'prerequisite', 'source', l.source_id, 'target', l.target_id,
                                                  'weight', l.weight::double precision)::text order by l.source_id)
              from app.spark_links l
              where l.snapshot_id = s.snapshot_id and l.target_id = s.id and l.type = 'prerequisite'), '{}'),
    coalesce((select array_agg(l.target_id order by l.target_id) from app.spark_links l
              where l.snapshot_id = s.snapshot_id and l.source_id = s.id and l.type = 'prerequisite'), '{}'),
    jsonb_build_object('id', s.id, 'slug', s.slug, 'depth', 7, 'title', s.title)::text,
    lower(s.title),
    jsonb_build_object('slug', s.slug, 'title', s.title, 'estimated_mins', s.estimated_mins)::text,
    s.estimated_mins,
    r.round
  from app.sparks s
  left join app.spark_rounds r on r.snapshot_id = s.snapshot_id and r.spark_id = s.id
  where s.snapshot_id::text like '48000000-%'
$$;
create function pg_temp.stored() returns table (
  snapshot_id uuid, spark_id uuid, parents uuid[], edges_in text[], children uuid[],
  node_text text, sort_title text, path_step text, estimated_mins integer, round integer)
language sql as $$
  select g.snapshot_id, g.spark_id, g.parents, g.edges_in, g.children, g.node_head || '7' || g.node_tail,
    g.sort_title, g.path_step, g.estimated_mins, g.round
  from app.spark_graph_nodes g
  where g.snapshot_id::text like '48000000-%'
$$;
create function pg_temp.spark(slug text, snap text default '48000000-0000-0000-0000-000000000000') returns uuid
language sql as $$ select id from app.sparks where slug = $1 and snapshot_id = $2::uuid $$;

-- Sparks in one statement: rows without links.
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select '48000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), s.slug, s.title, 'beginner', s.mins
from (values ('n-a', 'Alpha "quoted"', 1), ('n-b', 'Bravo \ back', 2), ('n-c', 'Charlie é', 3),
             ('n-d', 'Delta', 4), ('n-e', 'echo', 5)) s(slug, title, mins);
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()',
  'inserted sparks get their rows (fragments escaped like jsonb)');
select is((select count(*)::integer from pg_temp.stored()), 5, 'one row per spark');

-- Links in one statement, several types and weights.
insert into app.spark_links (snapshot_id, source_id, target_id, type, weight)
select '48000000-0000-0000-0000-000000000000', pg_temp.spark(l.s), pg_temp.spark(l.t), l.type, l.w
from (values ('n-a', 'n-b', 'prerequisite', 1.0), ('n-b', 'n-c', 'prerequisite', 0.25),
             ('n-a', 'n-c', 'prerequisite', 2.5), ('n-c', 'n-d', 'prerequisite', 0.1),
             ('n-d', 'n-e', 'related', 1.0), ('n-a', 'n-e', 'extends', 1.0)) l(s, t, type, w);
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()',
  'inserted links update the rows of both ends; related and extends links are not adjacency');
select is((select parents from app.spark_graph_nodes where spark_id = pg_temp.spark('n-c')),
  (select array_agg(x order by x) from unnest(array[pg_temp.spark('n-a'), pg_temp.spark('n-b')]) x),
  'parents hold the prerequisite sources in id order');

-- One more link, alone.
insert into app.spark_links (snapshot_id, source_id, target_id, type)
values ('48000000-0000-0000-0000-000000000000', pg_temp.spark('n-e'), pg_temp.spark('n-d'), 'prerequisite');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a single inserted link');

-- Link updates: weight, then type (the link leaves the adjacency), then the ends.
update app.spark_links set weight = 3.125
where snapshot_id = '48000000-0000-0000-0000-000000000000' and source_id = pg_temp.spark('n-a') and target_id = pg_temp.spark('n-b');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a weight update rewrites the edge text');
update app.spark_links set type = 'related'
where snapshot_id = '48000000-0000-0000-0000-000000000000' and source_id = pg_temp.spark('n-a') and target_id = pg_temp.spark('n-c');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a prerequisite turned related leaves both rows');
update app.spark_links set target_id = pg_temp.spark('n-b')
where snapshot_id = '48000000-0000-0000-0000-000000000000' and source_id = pg_temp.spark('n-e') and target_id = pg_temp.spark('n-d');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'moving a link rewrites old and new ends');

-- Link delete.
delete from app.spark_links
where snapshot_id = '48000000-0000-0000-0000-000000000000' and source_id = pg_temp.spark('n-b') and target_id = pg_temp.spark('n-c');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a deleted link leaves both rows');

-- Spark updates: title, slug, minutes.
update app.sparks set title = 'ZULU <b>', slug = 'n-z', estimated_mins = 42
where snapshot_id = '48000000-0000-0000-0000-000000000000' and slug = 'n-d';
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a spark update rewrites its fragments');

-- Spark delete (its links first: foreign keys).
delete from app.spark_links
where snapshot_id = '48000000-0000-0000-0000-000000000000'
  and (source_id = pg_temp.spark('n-z') or target_id = pg_temp.spark('n-z'));
delete from app.sparks where snapshot_id = '48000000-0000-0000-0000-000000000000' and slug = 'n-z';
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a deleted spark loses its row');
select is((select count(*)::integer from pg_temp.stored()), 4, 'no row is left behind');

-- A second snapshot with the same slugs: its rows are its own.
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
select '48000000-0000-0000-0000-000000000001', extensions.gen_random_uuid(), s.slug, s.title || ' v2', 'beginner', 9
from app.sparks s where s.snapshot_id = '48000000-0000-0000-0000-000000000000';
insert into app.spark_links (snapshot_id, source_id, target_id, type)
values ('48000000-0000-0000-0000-000000000001',
        pg_temp.spark('n-b', '48000000-0000-0000-0000-000000000001'), pg_temp.spark('n-a', '48000000-0000-0000-0000-000000000001'), 'prerequisite');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a second snapshot gets rows of its own');
select is(api.get_learning_path('n-a', false, '48000000-0000-0000-0000-000000000001')::jsonb -> 'path',
  '[{"slug": "n-b", "title": "Bravo \\ back v2", "estimated_mins": 9}, {"slug": "n-a", "title": "Alpha \"quoted\" v2", "estimated_mins": 9}]'::jsonb,
  'the path of the second snapshot reads its own rows');
select is((select jsonb_agg(n ->> 'slug' order by n ->> 'slug') from jsonb_array_elements(api.get_spark_graph('n-a')::jsonb -> 'nodes') n),
  '["n-a"]'::jsonb, 'the published snapshot is unaffected (n-a has no prerequisite there)');

-- Stored rounds are copied, and forgotten with them.
select is(private.refresh_spark_rounds('48000000-0000-0000-0000-000000000000'), 4, 'rounds stored');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'stored rounds are copied into the rows');
select isnt((select round from app.spark_graph_nodes where spark_id = pg_temp.spark('n-b')), null, 'a round is there');
insert into app.spark_links (snapshot_id, source_id, target_id, type)
values ('48000000-0000-0000-0000-000000000000', pg_temp.spark('n-e'), pg_temp.spark('n-a'), 'prerequisite');
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a link write forgets the copied rounds too');
select is((select count(round)::integer from app.spark_graph_nodes where snapshot_id = '48000000-0000-0000-0000-000000000000'), 0,
  'no round is left in the snapshot');

-- The content import writes with session_replication_role = replica: the rows follow.
set local session_replication_role = replica;
insert into app.spark_links (snapshot_id, source_id, target_id, type)
values ('48000000-0000-0000-0000-000000000000', pg_temp.spark('n-c'), pg_temp.spark('n-b'), 'prerequisite');
reset session_replication_role;
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'writes in replica mode are followed (ENABLE ALWAYS)');
select is((select count(*)::integer from pg_trigger t where t.tgname like '%graph_nodes%' and t.tgenabled = 'A'), 12,
  'all twelve maintenance triggers fire always');

-- Truncating the links empties every adjacency.
truncate app.spark_links;
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a truncate of the links is followed');

-- A snapshot's rows go with it.
delete from app.sparks where snapshot_id = '48000000-0000-0000-0000-000000000001';
delete from app.snapshots where id = '48000000-0000-0000-0000-000000000001';
select set_eq('select * from pg_temp.stored()', 'select * from pg_temp.expected()', 'a deleted snapshot leaves no rows');

-- Request roles read, never write.
-- acting as a signed-in learner
select tests.authenticate_as('learner');
select isnt_empty('select 1 from app.spark_graph_nodes', 'signed-in users read the rows');
select throws_ok($$ delete from app.spark_graph_nodes $$, '42501', null, 'signed-in users cannot write them');
reset role;
-- acting as anon
select tests.clear_authentication();
select throws_ok($$ select private.refresh_spark_graph_nodes('{}', '{}') $$, '42501', null,
  'request roles cannot run the refresh');
reset role;

select * from finish();
rollback;
