-- Snapshot lifecycle: import creates drafts, promote and rollback keep exactly one current.
begin;
select plan(22);

create temporary table bundle (body jsonb);
insert into bundle values ('{
  "categories": [{"slug": "tech", "name": "Technology"}],
  "domains": [{"slug": "data", "name": "Data", "category": "tech"}],
  "trails": [{"slug": "sql", "domain": "data", "title": "SQL", "difficulty_level": "beginner"}],
  "concepts": [{"slug": "select", "trail": "sql", "title": "Select", "sparks": ["select-star", "where"]}],
  "sparks": [
    {"slug": "select-star", "title": "SELECT *", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "where", "title": "WHERE", "difficulty": "beginner", "estimated_mins": 6}
  ],
  "spark_links": [{"source": "select-star", "target": "where"}]
}');

-- The lifecycle starts from an empty catalog's point of view: whatever was current steps aside,
-- and the assertions look at this file's snapshots only.
select tests.archive_current_snapshot();
create temporary table seeded as select id from app.snapshots;

create temporary table imported (label text primary key, result jsonb);
insert into imported
select 'first', private.import_content_bundle((select body from bundle), 'First', 'v1', 'the first', promote => true);

select is((select result ->> 'status' from imported where label = 'first'), 'succeeded', 'a valid bundle imports');
select results_eq(
  $$ select status, published_at is not null from app.snapshots where id = (select (result ->> 'snapshot_id')::uuid from imported where label = 'first') $$,
  $$ values ('published', true) $$,
  'import --promote makes the new snapshot published with a published_at');
select is((select parent_snapshot_id from app.snapshots where name = 'First'), null, 'the first snapshot has no parent');

insert into imported
select 'second', private.import_content_bundle((select body from bundle), 'Second', 'v2');
select results_eq(
  $$ select status, published_at from app.snapshots where name = 'Second' $$,
  $$ values ('draft'::text, null::timestamptz) $$,
  'an import without promote is a draft with no published_at');
select is((select parent_snapshot_id from app.snapshots where name = 'Second'),
          (select id from app.snapshots where name = 'First'),
          'parent_snapshot_id is the snapshot that was current when the import started');
select is((select status from app.content_imports where id = (select (result ->> 'import_id')::uuid from imported where label = 'second')),
          'succeeded', 'the import is recorded as succeeded');
select is((select counts from app.content_imports where snapshot_id = (select id from app.snapshots where name = 'Second')),
          '{"categories": 1, "domains": 1, "trails": 1, "concepts": 1, "sparks": 2, "concept_sparks": 2, "beacons": 0, "spark_links": 1, "concept_links": 0}'::jsonb,
          'the import records its row counts');

select is(
  (select s2.id = s1.id from app.sparks s1 join app.sparks s2 on s2.slug = s1.slug
   where s1.snapshot_id = (select id from app.snapshots where name = 'First')
     and s2.snapshot_id = (select id from app.snapshots where name = 'Second') and s1.slug = 'where'),
  true, 'an entity keeps its id across snapshots (derived from kind and slug)');
select is((select id from app.sparks where slug = 'where' limit 1), private.content_entity_id('spark', 'where'),
          'the derived id is private.content_entity_id(kind, slug)');

select lives_ok($$ select private.promote_snapshot((select id from app.snapshots where name = 'Second')) $$, 'a draft can be promoted');
select results_eq(
  $$ select name, status from app.snapshots where id not in (select id from seeded) order by created_at $$,
  $$ values ('First', 'archived'), ('Second', 'published') $$,
  'promote archives the previous current snapshot');
select is((select count(*)::int from app.snapshots where status = 'published'), 1, 'exactly one snapshot is current');

select throws_ok($$ select private.promote_snapshot((select id from app.snapshots where name = 'First')) $$,
  '22023', 'only a draft can be promoted; use rollback to make an archived snapshot current',
  'an archived snapshot cannot be promoted');
select throws_ok($$ select private.promote_snapshot('00000000-0000-4000-8000-000000000000') $$,
  'PT404', 'snapshot not found', 'promoting an unknown snapshot is not found');

insert into imported
select 'third', private.import_content_bundle((select body from bundle), 'Third', 'v3');
select throws_ok(
  $$ select private.promote_snapshot((select id from app.snapshots where name = 'Third'), (select (result ->> 'import_id')::uuid from imported where label = 'second')) $$,
  '22023', 'the import did not create this snapshot', 'promote by import id checks the import created the snapshot');
select lives_ok(
  $$ select private.promote_snapshot((select id from app.snapshots where name = 'Third'), (select (result ->> 'import_id')::uuid from imported where label = 'third')) $$,
  'promote by import id and snapshot id');

select lives_ok($$ select private.rollback_snapshot((select id from app.snapshots where name = 'First')) $$, 'an archived snapshot can be rolled back to');
select results_eq(
  $$ select name, status from app.snapshots where id not in (select id from seeded) order by created_at $$,
  $$ values ('First', 'published'), ('Second', 'archived'), ('Third', 'archived') $$,
  'rollback makes the archived snapshot current and archives the current one');

select is((private.rollback_snapshot() ->> 'snapshot_id')::uuid, (select id from app.snapshots where name = 'Third'),
  'rollback without an id returns to the most recently published archived snapshot');

insert into imported select 'fourth', private.import_content_bundle((select body from bundle), 'Fourth', 'v4');
select throws_ok($$ select private.rollback_snapshot((select id from app.snapshots where name = 'Fourth')) $$,
  '22023', 'only an archived snapshot can be rolled back to; use promote for a draft', 'a draft cannot be rolled back to');

select throws_ok(
  $$ update app.snapshots set status = 'published', published_at = now() where name = 'Second' $$,
  '23505', null, 'the database itself refuses a second published snapshot');
select throws_ok(
  $$ update app.snapshots set published_at = null where name = 'First' $$,
  '23514', null, 'a published snapshot must have published_at');

select * from finish();
rollback;
