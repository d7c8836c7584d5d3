-- Snapshot entity counts are computed once, when a snapshot's rollups are written.
begin;
select plan(5);

create temporary table imported (result jsonb);
insert into imported select private.import_content_bundle('{
  "categories": [{"slug": "tech", "name": "Technology"}],
  "domains": [{"slug": "data", "name": "Data", "category": "tech"}],
  "trails": [{"slug": "sql", "domain": "data", "title": "SQL", "difficulty_level": "beginner"}],
  "concepts": [{"slug": "select", "trail": "sql", "title": "Select", "sparks": ["select-star", "where"]}],
  "sparks": [
    {"slug": "select-star", "title": "SELECT *", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "where", "title": "WHERE", "difficulty": "beginner", "estimated_mins": 6}
  ],
  "spark_links": [{"source": "select-star", "target": "where"}]
}'::jsonb, 'Counted', 'v1', '', promote => true);
create temporary table counted as select (result ->> 'snapshot_id')::uuid as id from imported;
grant select on counted to anon;

select is(
  (select entity_counts from app.snapshot_rollups where snapshot_id = (select id from counted)),
  '{"domains":1,"trails":1,"concepts":1,"sparks":2,"beacons":0,"concept_sparks":2,"spark_links":1,"concept_links":0}'::jsonb,
  'an import stores the snapshot''s entity counts with its rollups');
select is(
  (select entity_counts from app.snapshot_rollups where snapshot_id = (select id from counted)),
  private.snapshot_entity_counts((select id from counted)),
  'the stored counts equal a live count');

-- acting as a service caller
select tests.authenticate_as_service();
select is(
  api.get_current_snapshot() -> 'entity_counts',
  '{"domains":1,"trails":1,"concepts":1,"sparks":2,"beacons":0,"concept_sparks":2,"spark_links":1,"concept_links":0}'::jsonb,
  'the current snapshot shows all eight counts');
select is(
  api.get_snapshot((select id from counted)) -> 'entity_counts',
  '{"domains":1,"trails":1,"concepts":1,"sparks":2}'::jsonb,
  'the by-id shape shows the four content counts');
reset role;

-- A hand-edited rollup shows up: reads use the stored counts, not a live count.
alter table app.snapshot_rollups disable trigger snapshot_rollups_entity_counts;
update app.snapshot_rollups set entity_counts = entity_counts || '{"sparks": 99}' where snapshot_id = (select id from counted);
alter table app.snapshot_rollups enable trigger snapshot_rollups_entity_counts;
select is((api.get_snapshot((select id from counted)) -> 'entity_counts' ->> 'sparks')::int, 99, 'reads take the counts from the rollup row');

select * from finish();
rollback;
