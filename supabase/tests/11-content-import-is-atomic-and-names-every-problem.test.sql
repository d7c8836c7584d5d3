-- Content import: atomic, every problem listed by JSON path, prerequisite cycles named.
begin;
select plan(13);

create temporary table attempt (label text primary key, result jsonb);
-- Whatever content exists before (the seed's) is the baseline a failed import must not change.
create temporary table before_import as
select (select count(*)::int from app.snapshots) as snapshots,
       (select count(*)::int from app.domains) + (select count(*)::int from app.sparks) + (select count(*)::int from app.trails) as content_rows;

-- A bundle with many problems at once.
insert into attempt select 'broken', private.import_content_bundle('{
  "snapshot": {"name": "Broken", "version_label": "b1"},
  "domains": [
    {"slug": "data", "name": "Data", "color": "blue"},
    {"slug": "data", "name": "Data again", "category": "nope"}
  ],
  "trails": [{"slug": "sql", "domain": "missing", "title": "SQL", "difficulty_level": "impossible"}],
  "concepts": [{"slug": "select", "trail": "sql", "title": "Select", "sparks": ["ghost", "long", "long", "ghost"]}],
  "sparks": [
    {"slug": "Bad Slug", "title": "x", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "long", "title": "Long", "difficulty": "beginner", "estimated_mins": 900}
  ],
  "spark_links": [{"source": "long", "target": "nowhere", "type": "depends"}, "not a link"]
}'::jsonb);

select is((select result ->> 'status' from attempt where label = 'broken'), 'failed', 'an invalid bundle fails');
select is((select result -> 'snapshot_id' from attempt where label = 'broken'), 'null'::jsonb, 'a failed import has no snapshot');
select is((select count(*)::int from app.snapshots), (select snapshots from before_import), 'a failed import writes no snapshot');
select is((select count(*)::int from app.domains) + (select count(*)::int from app.sparks) + (select count(*)::int from app.trails),
          (select content_rows from before_import), 'a failed import writes no content rows');
select results_eq(
  $$ select status, error ->> 'code' from app.content_imports where id = (select (result ->> 'import_id')::uuid from attempt where label = 'broken') $$,
  $$ values ('failed', '22023') $$,
  'the failed attempt is recorded in app.content_imports with its error');
select bag_eq(
  $$ select p ->> 'path' from attempt, jsonb_array_elements(result -> 'error' -> 'problems') p where label = 'broken' $$,
  $$ values ('$.domains[0].color'), ('$.domains[1].slug'), ('$.domains[1].category'), ('$.trails[0].domain'),
            ('$.trails[0].difficulty_level'), ('$.concepts[0].sparks[0]'), ('$.concepts[0].sparks[2]'),
            ('$.concepts[0].sparks[3]'), ('$.sparks[0].slug'), ('$.sparks[1].estimated_mins'),
            ('$.spark_links[0].target'), ('$.spark_links[0].type'), ('$.spark_links[1]') $$,
  'validation lists every problem by JSON path, an item that is no object once');
select results_eq(
  $$ select p ->> 'path', p ->> 'message' from attempt, jsonb_array_elements(result -> 'error' -> 'problems') p
      where label = 'broken' and p ->> 'path' like '$.concepts[0].sparks[%' order by 1 $$,
  $$ values ('$.concepts[0].sparks[0]', 'unknown spark ''ghost'''),
            ('$.concepts[0].sparks[2]', 'spark ''long'' is listed twice in this concept'),
            ('$.concepts[0].sparks[3]', 'unknown spark ''ghost''') $$,
  'a concept''s sparks: unknown ones, and each repeat of a known one after its first place');
select is(
  (select p ->> 'message' from attempt, jsonb_array_elements(result -> 'error' -> 'problems') p
   where label = 'broken' and p ->> 'path' = '$.domains[1].slug'),
  'duplicate slug ''data'' (first at $.domains[0])', 'a duplicate slug names the first occurrence');
select is((select (result -> 'error' ->> 'problem_count')::int from attempt where label = 'broken'), 13, 'the problem count is reported');

-- A prerequisite cycle among otherwise valid sparks.
insert into attempt select 'cycle', private.import_content_bundle('{
  "snapshot": {"name": "Cycle", "version_label": "c1"},
  "sparks": [
    {"slug": "a", "title": "A", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "b", "title": "B", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "c", "title": "C", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "d", "title": "D", "difficulty": "beginner", "estimated_mins": 5}
  ],
  "spark_links": [
    {"source": "d", "target": "a"},
    {"source": "a", "target": "b"},
    {"source": "b", "target": "c"},
    {"source": "c", "target": "a"},
    {"source": "c", "target": "d", "type": "related"}
  ]
}'::jsonb);
select is(
  (select p ->> 'message' from attempt, jsonb_array_elements(result -> 'error' -> 'problems') p where label = 'cycle'),
  'prerequisite cycle: a -> b -> c -> a', 'a prerequisite cycle is rejected with the cycle named in order');
select is(
  (select p -> 'cycle' from attempt, jsonb_array_elements(result -> 'error' -> 'problems') p where label = 'cycle'),
  '["a", "b", "c", "a"]'::jsonb, 'the cycle is also given as a list of slugs');

-- Explicit ids are kept.
insert into attempt select 'ids', private.import_content_bundle('{
  "snapshot": {"name": "Ids", "version_label": "i1"},
  "sparks": [{"id": "11111111-2222-4333-8444-555555555555", "slug": "a", "title": "A", "difficulty": "expert", "estimated_mins": 600}]
}'::jsonb);
select is((select id from app.sparks where slug = 'a'), '11111111-2222-4333-8444-555555555555'::uuid, 'an id given in the bundle is kept');

-- Missing snapshot metadata is a problem too.
select is(
  (select jsonb_agg(p ->> 'path' order by p ->> 'path') from jsonb_array_elements(private.import_content_bundle('{}'::jsonb) -> 'error' -> 'problems') p),
  '["$.snapshot.name", "$.snapshot.version_label"]'::jsonb,
  'a bundle without name and version label is rejected');

select * from finish();
rollback;
