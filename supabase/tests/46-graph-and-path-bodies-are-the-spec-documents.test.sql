-- The graph and learning-path bodies are returned as the JSON text they are built as: the exact
-- documents, the exact text (the bytes jsonb would print), the links between nodes of the last
-- level, the links only the outgoing walk of `both` finds, and escaped strings.
begin;
select plan(15);

select tests.create_user('learner');

select is(array(select pg_catalog.pg_get_function_result(p.oid) from pg_catalog.pg_proc p
                where p.oid in ('api.get_spark_graph(text, text, integer, uuid)'::regprocedure,
                                'api.get_learning_path(text, boolean, uuid)'::regprocedure)),
  array['json', 'json'], 'both functions return json: the built text, never parsed into jsonb');

-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('46000000-0000-0000-0000-000000000000', 'graph body fixture', 'v46', 'published', now());

-- Fixed ids so the expected documents can be written out.
--   a -> r, b -> r, b -> a: with max_depth 1, a and b are both at depth 1 and b -> a links them.
--   r -> d, x -> r, x -> d: with both directions, x (ancestor) -> d (descendant) is inside.
--   q has a title that needs escaping.
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
values ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-00000000000a', 'g-a', 'Alpha', 'beginner', 3),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-00000000000b', 'g-b', 'beta', 'beginner', 4),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-000000000001', 'g-r', 'Root', 'beginner', 5),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-00000000000d', 'g-d', 'Down', 'beginner', 6),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-0000000000ee', 'g-x', 'Cross', 'beginner', 7),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-0000000000ff', 'g-q',
        E'Say "hi" \\ to caf\u00e9\ttabs', 'beginner', 8);

insert into app.spark_links (snapshot_id, source_id, target_id, type, weight)
values ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-00000000000a', '46000000-0000-0000-0000-000000000001', 'prerequisite', 0.5),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-00000000000b', '46000000-0000-0000-0000-000000000001', 'prerequisite', 1),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-00000000000b', '46000000-0000-0000-0000-00000000000a', 'prerequisite', 2.125),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-000000000001', '46000000-0000-0000-0000-00000000000d', 'prerequisite', 1),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-0000000000ee', '46000000-0000-0000-0000-000000000001', 'prerequisite', 1),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-0000000000ee', '46000000-0000-0000-0000-00000000000d', 'prerequisite', 1),
       ('46000000-0000-0000-0000-000000000000', '46000000-0000-0000-0000-0000000000ff', '46000000-0000-0000-0000-00000000000a', 'prerequisite', 0.001);

create function pg_temp.edges(graph jsonb) returns text[] language sql as
  $$ select coalesce(array_agg(right(e ->> 'source', 2) || '>' || right(e ->> 'target', 2) order by o), '{}')
     from jsonb_array_elements(graph -> 'edges') with ordinality x(e, o) $$;
grant execute on function pg_temp.edges(jsonb) to anon, authenticated;

-- acting as a signed-in learner
select tests.authenticate_as('learner');

select is(api.get_spark_graph('g-r', 'ancestors', 1)::jsonb,
  '{"root_id": "46000000-0000-0000-0000-000000000001", "direction": "ancestors", "max_depth": 1,
    "nodes": [{"id": "46000000-0000-0000-0000-000000000001", "slug": "g-r", "title": "Root", "depth": 0},
              {"id": "46000000-0000-0000-0000-00000000000a", "slug": "g-a", "title": "Alpha", "depth": 1},
              {"id": "46000000-0000-0000-0000-00000000000b", "slug": "g-b", "title": "beta", "depth": 1},
              {"id": "46000000-0000-0000-0000-0000000000ee", "slug": "g-x", "title": "Cross", "depth": 1}],
    "edges": [{"source": "46000000-0000-0000-0000-00000000000a", "target": "46000000-0000-0000-0000-000000000001", "weight": 0.5, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-00000000000b", "target": "46000000-0000-0000-0000-000000000001", "weight": 1, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-00000000000b", "target": "46000000-0000-0000-0000-00000000000a", "weight": 2.125, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-0000000000ee", "target": "46000000-0000-0000-0000-000000000001", "weight": 1, "type": "prerequisite"}]}'::jsonb,
  'the whole graph document: nodes by depth then lower(title), edges by source then target, a link between two last-level nodes included');
select is(api.get_spark_graph('g-b', 'descendants', 10)::jsonb,
  '{"root_id": "46000000-0000-0000-0000-00000000000b", "direction": "descendants", "max_depth": 10,
    "nodes": [{"id": "46000000-0000-0000-0000-00000000000b", "slug": "g-b", "title": "beta", "depth": 0},
              {"id": "46000000-0000-0000-0000-00000000000a", "slug": "g-a", "title": "Alpha", "depth": 1},
              {"id": "46000000-0000-0000-0000-000000000001", "slug": "g-r", "title": "Root", "depth": 1},
              {"id": "46000000-0000-0000-0000-00000000000d", "slug": "g-d", "title": "Down", "depth": 2}],
    "edges": [{"source": "46000000-0000-0000-0000-000000000001", "target": "46000000-0000-0000-0000-00000000000d", "weight": 1, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-00000000000a", "target": "46000000-0000-0000-0000-000000000001", "weight": 0.5, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-00000000000b", "target": "46000000-0000-0000-0000-000000000001", "weight": 1, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-00000000000b", "target": "46000000-0000-0000-0000-00000000000a", "weight": 2.125, "type": "prerequisite"}]}'::jsonb,
  'the whole descendants document: each node at its shortest depth, every link between returned nodes');
select is(pg_temp.edges(api.get_spark_graph('g-r', 'ancestors', 0)::jsonb), '{}'::text[],
  'max_depth 0 is the root alone, without edges');
select is(pg_temp.edges(api.get_spark_graph('g-d', 'ancestors', 1)::jsonb), array['01>0d', 'ee>01', 'ee>0d'],
  'ancestors: the link between the two depth-1 nodes is listed');
select is(pg_temp.edges(api.get_spark_graph('g-b', 'descendants', 1)::jsonb), array['0a>01', '0b>01', '0b>0a'],
  'descendants: the link between the two depth-1 nodes is listed');
select is(pg_temp.edges(api.get_spark_graph('g-r', 'both', 1)::jsonb),
  array['01>0d', '0a>01', '0b>01', '0b>0a', 'ee>01', 'ee>0d'],
  'both: a link from an ancestor to a descendant is inside the subgraph');
select is((select n ->> 'title' from jsonb_array_elements(api.get_spark_graph('g-q', 'descendants', 1)::jsonb -> 'nodes') n
           where n ->> 'slug' = 'g-q'),
  E'Say "hi" \\ to caf\u00e9\ttabs',
  'titles with quotes, backslashes, tabs and accents come back unchanged');
select is((select e ->> 'weight' from jsonb_array_elements(api.get_spark_graph('g-q', 'descendants', 1)::jsonb -> 'edges') e),
  '0.001', 'the smallest weight is printed as a plain number');

select is(api.get_learning_path('g-r', false)::jsonb,
  '{"target_id": "46000000-0000-0000-0000-000000000001", "total_mins": 27, "skipped_count": 0,
    "path": [{"slug": "g-b", "title": "beta", "estimated_mins": 4},
             {"slug": "g-x", "title": "Cross", "estimated_mins": 7},
             {"slug": "g-q", "title": "Say \"hi\" \\ to caf\u00e9\ttabs", "estimated_mins": 8},
             {"slug": "g-a", "title": "Alpha", "estimated_mins": 3},
             {"slug": "g-r", "title": "Root", "estimated_mins": 5}]}'::jsonb,
  'the whole path document: Kahn rounds, then lower(title), escaped titles intact');
select is(api.get_spark_graph('g-q', 'both', 10)::jsonb,
  '{"root_id": "46000000-0000-0000-0000-0000000000ff", "direction": "both", "max_depth": 10,
    "nodes": [{"id": "46000000-0000-0000-0000-0000000000ff", "slug": "g-q", "title": "Say \"hi\" \\ to café\ttabs", "depth": 0},
              {"id": "46000000-0000-0000-0000-00000000000a", "slug": "g-a", "title": "Alpha", "depth": 1},
              {"id": "46000000-0000-0000-0000-000000000001", "slug": "g-r", "title": "Root", "depth": 2},
              {"id": "46000000-0000-0000-0000-00000000000d", "slug": "g-d", "title": "Down", "depth": 3}],
    "edges": [{"source": "46000000-0000-0000-0000-000000000001", "target": "46000000-0000-0000-0000-00000000000d", "weight": 1, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-00000000000a", "target": "46000000-0000-0000-0000-000000000001", "weight": 0.5, "type": "prerequisite"},
              {"source": "46000000-0000-0000-0000-0000000000ff", "target": "46000000-0000-0000-0000-00000000000a", "weight": 0.001, "type": "prerequisite"}]}'::jsonb,
  'the whole both-directions document with an escaped title and fractional weights');
select is(api.get_learning_path('g-a', false)::jsonb,
  '{"target_id": "46000000-0000-0000-0000-00000000000a", "total_mins": 15, "skipped_count": 0,
    "path": [{"slug": "g-b", "title": "beta", "estimated_mins": 4},
             {"slug": "g-q", "title": "Say \"hi\" \\ to café\ttabs", "estimated_mins": 8},
             {"slug": "g-a", "title": "Alpha", "estimated_mins": 3}]}'::jsonb,
  'the whole path document of an inner spark: its ancestors only');
select is(api.get_learning_path('g-b', false)::jsonb -> 'path',
  '[{"slug": "g-b", "title": "beta", "estimated_mins": 4}]'::jsonb,
  'a spark without prerequisites is a path of one step');
reset role;

insert into app.learning_events (user_id, spark_id, verb, occurred_at)
values (tests.get_user_id('learner'), '46000000-0000-0000-0000-00000000000a', 'mastered', now());
-- acting as the learner again
select tests.authenticate_as('learner');
select is(api.get_learning_path('g-r')::jsonb - 'path',
  '{"target_id": "46000000-0000-0000-0000-000000000001", "total_mins": 24, "skipped_count": 1}'::jsonb,
  'a mastered step is skipped, counted and left out of total_mins');
reset role;

-- acting as anon
select tests.clear_authentication();
select throws_ok($$ select api.get_learning_path('g-r') $$, 'PT401', 'Authentication required',
  'anon gets no path');
reset role;

select * from finish();
rollback;
