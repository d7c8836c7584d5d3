-- Content rollups: an import computes them in its transaction, they equal a from-scratch
-- aggregate (distinct sparks per trail and domain), anyone reads them, nobody else writes them,
-- and discovery answers from them.
begin;
select plan(21);

-- ---------------------------------------------------------------------------------------------
-- The guard: every rollup row of every snapshot equals the figures computed from scratch from
-- the content rows (written independently of private.refresh_content_rollups, one correlated
-- aggregate per entity), and every entity has exactly one rollup row.
-- ---------------------------------------------------------------------------------------------
create temporary view rollup_mismatches as
with live_concepts as (
  select c.snapshot_id, c.id,
         (select pg_catalog.count(*) from app.concept_sparks cs
          where cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id)::integer as spark_count,
         (select coalesce(pg_catalog.sum(s.estimated_mins), 0) from app.concept_sparks cs
          join app.sparks s on s.snapshot_id = cs.snapshot_id and s.id = cs.spark_id
          where cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id)::integer as estimated_mins
  from app.concepts c
), live_trails as (
  select t.snapshot_id, t.id,
         (select pg_catalog.count(*) from app.concepts c where c.snapshot_id = t.snapshot_id and c.trail_id = t.id)::integer as concept_count,
         (select pg_catalog.count(*) from app.sparks s where s.snapshot_id = t.snapshot_id and exists (
            select 1 from app.concept_sparks cs join app.concepts c on c.snapshot_id = cs.snapshot_id and c.id = cs.concept_id
            where cs.snapshot_id = s.snapshot_id and cs.spark_id = s.id and c.trail_id = t.id))::integer as spark_count,
         (select coalesce(pg_catalog.sum(s.estimated_mins), 0) from app.sparks s where s.snapshot_id = t.snapshot_id and exists (
            select 1 from app.concept_sparks cs join app.concepts c on c.snapshot_id = cs.snapshot_id and c.id = cs.concept_id
            where cs.snapshot_id = s.snapshot_id and cs.spark_id = s.id and c.trail_id = t.id))::integer as estimated_mins
  from app.trails t
), live_domains as (
  select d.snapshot_id, d.id,
         (select pg_catalog.count(*) from app.trails t where t.snapshot_id = d.snapshot_id and t.domain_id = d.id)::integer as trail_count,
         (select pg_catalog.count(*) from app.concepts c join app.trails t on t.snapshot_id = c.snapshot_id and t.id = c.trail_id
          where c.snapshot_id = d.snapshot_id and t.domain_id = d.id)::integer as concept_count,
         (select pg_catalog.count(*) from app.sparks s where s.snapshot_id = d.snapshot_id and exists (
            select 1 from app.concept_sparks cs join app.concepts c on c.snapshot_id = cs.snapshot_id and c.id = cs.concept_id
            join app.trails t on t.snapshot_id = c.snapshot_id and t.id = c.trail_id
            where cs.snapshot_id = s.snapshot_id and cs.spark_id = s.id and t.domain_id = d.id))::integer as spark_count,
         (select coalesce(pg_catalog.sum(s.estimated_mins), 0) from app.sparks s where s.snapshot_id = d.snapshot_id and exists (
            select 1 from app.concept_sparks cs join app.concepts c on c.snapshot_id = cs.snapshot_id and c.id = cs.concept_id
            join app.trails t on t.snapshot_id = c.snapshot_id and t.id = c.trail_id
            where cs.snapshot_id = s.snapshot_id and cs.spark_id = s.id and t.domain_id = d.id))::integer as estimated_mins
  from app.domains d
)
select 'concept' as kind, coalesce(l.snapshot_id, r.snapshot_id) as snapshot_id, coalesce(l.id, r.concept_id) as id
from live_concepts l full join app.concept_rollups r on r.snapshot_id = l.snapshot_id and r.concept_id = l.id
where (l.spark_count, l.estimated_mins) is distinct from (r.spark_count, r.estimated_mins)
union all
select 'trail', coalesce(l.snapshot_id, r.snapshot_id), coalesce(l.id, r.trail_id)
from live_trails l full join app.trail_rollups r on r.snapshot_id = l.snapshot_id and r.trail_id = l.id
where (l.concept_count, l.spark_count, l.estimated_mins) is distinct from (r.concept_count, r.spark_count, r.estimated_mins)
union all
select 'domain', coalesce(l.snapshot_id, r.snapshot_id), coalesce(l.id, r.domain_id)
from live_domains l full join app.domain_rollups r on r.snapshot_id = l.snapshot_id and r.domain_id = l.id
where (l.trail_count, l.concept_count, l.spark_count, l.estimated_mins)
      is distinct from (r.trail_count, r.concept_count, r.spark_count, r.estimated_mins);

-- ---------------------------------------------------------------------------------------------
-- Import: sparks shared between concepts, trails and domains; empty concept, trail and domain;
-- an unpublished domain; an unplaced spark.
-- ---------------------------------------------------------------------------------------------
create temporary table attempt (label text primary key, result jsonb);
insert into attempt select 'rollups', private.import_content_bundle('{
  "snapshot": {"name": "Rollups", "version_label": "r1"},
  "domains": [
    {"slug": "data", "name": "Data"},
    {"slug": "web", "name": "Web"},
    {"slug": "empty", "name": "Empty"},
    {"slug": "hush", "name": "Hush", "is_published": false}
  ],
  "trails": [
    {"slug": "sql", "domain": "data", "title": "SQL", "difficulty_level": "beginner"},
    {"slug": "olap", "domain": "data", "title": "OLAP", "difficulty_level": "advanced"},
    {"slug": "html", "domain": "web", "title": "HTML", "difficulty_level": "beginner"},
    {"slug": "css", "domain": "web", "title": "CSS", "difficulty_level": null},
    {"slug": "quiet", "domain": "hush", "title": "Quiet", "difficulty_level": "expert"}
  ],
  "concepts": [
    {"slug": "select", "trail": "sql", "title": "Select", "sparks": ["a", "b"]},
    {"slug": "joins", "trail": "sql", "title": "Joins", "sparks": ["b", "c"]},
    {"slug": "cubes", "trail": "olap", "title": "Cubes", "sparks": ["c", "d"]},
    {"slug": "theory", "trail": "olap", "title": "Theory", "sparks": []},
    {"slug": "tags", "trail": "html", "title": "Tags", "sparks": ["a"]},
    {"slug": "whisper", "trail": "quiet", "title": "Whisper", "sparks": ["e"]}
  ],
  "sparks": [
    {"slug": "a", "title": "A", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "b", "title": "B", "difficulty": "beginner", "estimated_mins": 7},
    {"slug": "c", "title": "C", "difficulty": "intermediate", "estimated_mins": 11},
    {"slug": "d", "title": "D", "difficulty": "advanced", "estimated_mins": 13},
    {"slug": "e", "title": "E", "difficulty": "expert", "estimated_mins": 17},
    {"slug": "f", "title": "F", "difficulty": "expert", "estimated_mins": 19}
  ]
}'::jsonb, promote => true);
-- the new snapshot's id, readable by anon too
do $$ begin
  perform pg_catalog.set_config('rollups.sid', (select a.result ->> 'snapshot_id' from pg_temp.attempt a where a.label = 'rollups'), true);
end $$;

select is((select result ->> 'status' from attempt where label = 'rollups'), 'succeeded', 'the fixture imports');

select results_eq($$
  select c.slug, r.spark_count, r.estimated_mins from app.concept_rollups r
  join app.concepts c on c.snapshot_id = r.snapshot_id and c.id = r.concept_id
  where r.snapshot_id = pg_catalog.current_setting('rollups.sid')::uuid order by c.slug $$,
  $$ values ('cubes', 2, 24), ('joins', 2, 18), ('select', 2, 12), ('tags', 1, 5), ('theory', 0, 0), ('whisper', 1, 17) $$,
  'the import computes every concept''s spark count and minutes (zeros for an empty concept)');

select results_eq($$
  select t.slug, r.concept_count, r.spark_count, r.estimated_mins from app.trail_rollups r
  join app.trails t on t.snapshot_id = r.snapshot_id and t.id = r.trail_id
  where r.snapshot_id = pg_catalog.current_setting('rollups.sid')::uuid order by t.slug $$,
  $$ values ('css', 0, 0, 0), ('html', 1, 1, 5), ('olap', 2, 2, 24), ('quiet', 1, 1, 17), ('sql', 2, 3, 23) $$,
  'trail rollups count distinct sparks: b, placed in two concepts of sql, counts once');

select results_eq($$
  select d.slug, r.trail_count, r.concept_count, r.spark_count, r.estimated_mins from app.domain_rollups r
  join app.domains d on d.snapshot_id = r.snapshot_id and d.id = r.domain_id
  where r.snapshot_id = pg_catalog.current_setting('rollups.sid')::uuid order by d.slug $$,
  $$ values ('data', 2, 4, 4, 36), ('empty', 0, 0, 0, 0), ('hush', 1, 1, 1, 17), ('web', 2, 1, 1, 5) $$,
  'domain rollups count distinct sparks: c, in both trails of data, counts once; a, in two domains, counts in each');

select is_empty('select * from pg_temp.rollup_mismatches', 'the imported rollups equal the from-scratch aggregate');

-- The refresh stores the facets too (app.discovery_facet_sets: pgTAP 72), from these rollups.
select is((select f.facets -> 'types' from app.discovery_facet_sets f
           where f.snapshot_id = pg_catalog.current_setting('rollups.sid')::uuid
             and f.domain_id is null and f.difficulty is null and f.included = '{t,t,t}'),
  '[{"type": "DOMAIN", "count": 3}, {"type": "TRAIL", "count": 5}, {"type": "CONCEPT", "count": 6}]'::jsonb,
  'the import stores the snapshot''s unfiltered facets');
select is(api.get_discovery_facets(difficulty => 'beginner') -> 'types' -> 1, '{"type": "TRAIL", "count": 2}'::jsonb,
  'filtered facets count the trails of the level');

-- A failed import writes no rollups.
create temporary table rollups_before as select count(*)::integer as domain_rollups from app.domain_rollups;
insert into attempt select 'broken', private.import_content_bundle('{
  "snapshot": {"name": "Broken", "version_label": "b1"},
  "domains": [{"slug": "x", "name": "X"}],
  "trails": [{"slug": "t", "domain": "missing", "title": "T"}]
}'::jsonb);
select is((select result ->> 'status' from attempt where label = 'broken'), 'failed', 'an invalid bundle fails');
select is((select pg_catalog.count(*)::integer from app.domain_rollups), (select domain_rollups from rollups_before),
  'a failed import leaves no rollup rows');

-- ---------------------------------------------------------------------------------------------
-- Rows written directly (the way the test builder writes them), then refreshed.
-- ---------------------------------------------------------------------------------------------
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('71000000-0000-4000-8000-000000000001', 'direct', 'v1', 'archived', pg_catalog.now());
insert into app.domains (snapshot_id, id, slug, name) values
  ('71000000-0000-4000-8000-000000000001', '72000000-0000-4000-8000-000000000001', 'math', 'Math');
insert into app.trails (snapshot_id, id, domain_id, slug, title) values
  ('71000000-0000-4000-8000-000000000001', '73000000-0000-4000-8000-000000000001', '72000000-0000-4000-8000-000000000001', 'algebra', 'Algebra'),
  ('71000000-0000-4000-8000-000000000001', '73000000-0000-4000-8000-000000000002', '72000000-0000-4000-8000-000000000001', 'geometry', 'Geometry');
insert into app.concepts (snapshot_id, id, trail_id, slug, title) values
  ('71000000-0000-4000-8000-000000000001', '74000000-0000-4000-8000-000000000001', '73000000-0000-4000-8000-000000000001', 'groups', 'Groups'),
  ('71000000-0000-4000-8000-000000000001', '74000000-0000-4000-8000-000000000002', '73000000-0000-4000-8000-000000000002', 'angles', 'Angles');
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('71000000-0000-4000-8000-000000000001', '75000000-0000-4000-8000-000000000001', 'sets', 'Sets', 'beginner', 3),
  ('71000000-0000-4000-8000-000000000001', '75000000-0000-4000-8000-000000000002', 'lines', 'Lines', 'beginner', 4);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('71000000-0000-4000-8000-000000000001', '74000000-0000-4000-8000-000000000001', '75000000-0000-4000-8000-000000000001', 0),
  ('71000000-0000-4000-8000-000000000001', '74000000-0000-4000-8000-000000000002', '75000000-0000-4000-8000-000000000001', 0),
  ('71000000-0000-4000-8000-000000000001', '74000000-0000-4000-8000-000000000002', '75000000-0000-4000-8000-000000000002', 1);

select is((select pg_catalog.count(*)::integer from pg_temp.rollup_mismatches
           where snapshot_id = '71000000-0000-4000-8000-000000000001'), 5,
  'the guard notices content without rollups (one domain, two trails, two concepts)');
select is(private.refresh_content_rollups('71000000-0000-4000-8000-000000000001'),
  '{"domains": 1, "trails": 2, "concepts": 2}'::jsonb, 'the refresh reports the rows it wrote');
select is((select pg_catalog.to_jsonb(r) - 'snapshot_id' - 'domain_id' from app.domain_rollups r
           where r.snapshot_id = '71000000-0000-4000-8000-000000000001'),
  '{"trail_count": 2, "concept_count": 2, "spark_count": 2, "estimated_mins": 7}'::jsonb,
  'a spark shared by two trails counts once in the domain');
select is(private.refresh_content_rollups('71000000-0000-4000-8000-000000000001'),
  '{"domains": 1, "trails": 2, "concepts": 2}'::jsonb, 'refreshing again replaces the rows (idempotent)');
select is_empty('select * from pg_temp.rollup_mismatches', 'after the refresh every snapshot''s rollups equal the from-scratch aggregate');

-- ---------------------------------------------------------------------------------------------
-- Access: anyone reads, nobody else writes; discovery answers from the rollups.
-- ---------------------------------------------------------------------------------------------
select is((select pg_catalog.count(*)::integer from pg_catalog.pg_class c
           join pg_catalog.pg_namespace n on n.oid = c.relnamespace
           where n.nspname = 'app' and c.relrowsecurity
             and c.relname in ('domain_rollups', 'trail_rollups', 'concept_rollups', 'snapshot_rollups')), 4,
  'row level security is on for the four rollup tables');

-- acting as anon
select tests.clear_authentication();
select is((select pg_catalog.count(*)::integer from app.trail_rollups where snapshot_id = pg_catalog.current_setting('rollups.sid')::uuid), 5,
  'anon reads the rollups');
select throws_ok($$ insert into app.domain_rollups values (pg_catalog.current_setting('rollups.sid')::uuid, extensions.gen_random_uuid(), 0, 0, 0, 0) $$,
  '42501', null, 'anon cannot write rollups');
select throws_ok($$ select private.refresh_content_rollups(pg_catalog.current_setting('rollups.sid')::uuid) $$,
  '42501', null, 'anon cannot refresh rollups');

select is((select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(x ->> 'slug', x -> 'trail_count', x -> 'concept_count',
                                                                      x -> 'spark_count', x -> 'estimated_mins'))
           from pg_catalog.jsonb_array_elements(api.list_discovery_domains()::jsonb -> 'data') x),
  '[["data", 2, 4, 4, 36], ["empty", 0, 0, 0, 0], ["web", 2, 1, 1, 5]]'::jsonb,
  '/discovery/domains reports the rollup figures');
select is(api.get_domain_trails('data') -> 'trail_meta' -> 'total_concept_count', '4'::jsonb,
  'total_concept_count comes from the domain rollup');
reset role;

-- Discovery reads the stored figures: a rollup row changed by hand shows (proves the read path).
update app.trail_rollups r set estimated_mins = 999
where r.snapshot_id = pg_catalog.current_setting('rollups.sid')::uuid
  and r.trail_id = (select t.id from app.trails t where t.snapshot_id = pg_catalog.current_setting('rollups.sid')::uuid and t.slug = 'sql');
-- acting as anon
select tests.clear_authentication();
select is((select x -> 'estimated_mins' from pg_catalog.jsonb_array_elements(api.list_discovery_trails(domain => 'data') -> 'data') x
           where x ->> 'slug' = 'sql'), '999'::jsonb, '/discovery/trails reads the trail rollup');
reset role;

select * from finish();
rollback;
