-- The import writes a snapshot's content with the derived-figure triggers deferred, then derives
-- the whole snapshot once (private.derive_snapshot_figures). Its figures must be exactly those the
-- triggers keep: after a no-op update of every content row (update triggers are never deferred:
-- they take each row's figures out and put them back), nothing may differ.
begin;
select plan(12);

create temporary table imported (result jsonb);
insert into imported select private.import_content_bundle('{
  "snapshot": {"name": "Derived", "version_label": "d1"},
  "categories": [{"slug": "tech", "name": "Technology"}],
  "domains": [{"slug": "data", "name": "Data Craft", "category": "tech", "description": "Tables and queries"}],
  "trails": [
    {"slug": "sql", "domain": "data", "title": "SQL Basics", "difficulty_level": "beginner", "description": "Asking questions"},
    {"slug": "nosql", "domain": "data", "title": "Documents", "description": "Without tables"}
  ],
  "concepts": [
    {"slug": "select", "trail": "sql", "title": "Selecting Rows", "sparks": ["select-star", "where"]},
    {"slug": "joins", "trail": "sql", "title": "Joining Tables", "sparks": ["inner-join", "where"]},
    {"slug": "documents", "trail": "nosql", "title": "Storing Documents", "sparks": ["where"]}
  ],
  "sparks": [
    {"slug": "select-star", "title": "Selecting Everything", "summary": "All the columns", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "where", "title": "Filtering Rows", "summary": "Keep some rows", "difficulty": "beginner", "estimated_mins": 6},
    {"slug": "inner-join", "title": "Inner Joins", "summary": "Matching rows of two tables", "difficulty": "intermediate", "estimated_mins": 8},
    {"slug": "loner", "title": "Lonely Spark", "summary": "In no concept", "difficulty": "expert", "estimated_mins": 9}
  ],
  "spark_links": [
    {"source": "select-star", "target": "where"},
    {"source": "where", "target": "inner-join"},
    {"source": "select-star", "target": "inner-join", "type": "related"}
  ]
}'::jsonb, promote => true);
create temporary table derived_snapshot as select (result ->> 'snapshot_id')::uuid as id from imported;

select is((select result ->> 'status' from imported), 'succeeded', 'the bundle imports');
select isnt(pg_catalog.current_setting('sparkpath.defer_derived', true), 'on',
  'the deferral ends with the write: later inserts in the transaction keep their figures');

create temporary table figures_after_import as
select 'postings' as kind, pg_catalog.to_jsonb(p) - 'snapshot_id' as row from app.search_postings p where p.snapshot_id = (select id from derived_snapshot)
union all select 'lexicon', pg_catalog.to_jsonb(l) - 'snapshot_id' from app.search_lexicon l where l.snapshot_id = (select id from derived_snapshot)
union all select 'word starts', pg_catalog.to_jsonb(w) - 'snapshot_id' from app.search_title_word_starts w where w.snapshot_id = (select id from derived_snapshot)
union all select 'graph', pg_catalog.to_jsonb(g) - 'snapshot_id' from app.spark_graph_nodes g where g.snapshot_id = (select id from derived_snapshot);

select ok((select pg_catalog.count(*) from figures_after_import where kind = 'postings') > 0
          and (select pg_catalog.count(*) from figures_after_import where kind = 'lexicon') > 0
          and (select pg_catalog.count(*) from figures_after_import where kind = 'word starts') > 0,
  'the import derived search postings, lexicon words and autocomplete word starts');
select is((select pg_catalog.count(*)::int from figures_after_import where kind = 'graph'), 4, 'one graph node row per spark');
select is((select pg_catalog.count(*)::int from figures_after_import where kind = 'graph' and row ->> 'round' is null), 0,
  'every graph node row carries its stored round');

-- The import stores every trail's digest in one grouped pass; each equals its own trail's recount
-- (a spark placed in both trails belongs to both).
select set_eq(
  $$ select d.trail_id, d.digest from app.trail_content_digests d where d.snapshot_id = (select id from derived_snapshot) $$,
  $$ select t.id, (select r.digest from private.derive_trail_digests(t.snapshot_id, t.id) r)
     from app.trails t where t.snapshot_id = (select id from derived_snapshot) $$,
  'every trail''s stored digest, written in one pass, equals the recount of that trail alone');
-- The trail digests are grouped over the stored trail entity digests; those must be what the
-- trail scope and the entity digests give, and a snapshot not rolled up yet (no rollup row: its
-- digests are derived from the content tables) must get the same trail digests.
select set_eq(
  $$ select d.trail_id, d.kind, d.entity_id, d.digest from app.trail_entity_digests d where d.snapshot_id = (select id from derived_snapshot) $$,
  $$ select d.trail_id, d.kind, d.entity_id, d.digest from private.derive_trail_entity_digests((select id from derived_snapshot), null) d $$,
  'the stored trail entity digests are each trail''s scope with its entities'' digests');
savepoint not_rolled_up;
delete from app.snapshot_rollups r where r.snapshot_id = (select id from derived_snapshot);
select set_eq(
  $$ select d.trail_id, d.digest from private.derive_trail_digests((select id from derived_snapshot), null) d $$,
  $$ select d.trail_id, d.digest from app.trail_content_digests d where d.snapshot_id = (select id from derived_snapshot) $$,
  'without the rollup row the trail digests are derived from the content tables, and equal the stored ones');
rollback to savepoint not_rolled_up;

-- Every row again through the update triggers.
update app.sparks set title = title where snapshot_id = (select id from derived_snapshot);
update app.concepts set title = title where snapshot_id = (select id from derived_snapshot);
update app.trails set title = title where snapshot_id = (select id from derived_snapshot);
update app.domains set name = name where snapshot_id = (select id from derived_snapshot);

create temporary table figures_after_triggers as
select 'postings' as kind, pg_catalog.to_jsonb(p) - 'snapshot_id' as row from app.search_postings p where p.snapshot_id = (select id from derived_snapshot)
union all select 'lexicon', pg_catalog.to_jsonb(l) - 'snapshot_id' from app.search_lexicon l where l.snapshot_id = (select id from derived_snapshot)
union all select 'word starts', pg_catalog.to_jsonb(w) - 'snapshot_id' from app.search_title_word_starts w where w.snapshot_id = (select id from derived_snapshot)
union all select 'graph', pg_catalog.to_jsonb(g) - 'snapshot_id' from app.spark_graph_nodes g where g.snapshot_id = (select id from derived_snapshot);

select set_eq('select kind, row from figures_after_import where kind = ''postings''',
              'select kind, row from figures_after_triggers where kind = ''postings''',
  'the postings the import derived are those the triggers keep');
select set_eq('select kind, row from figures_after_import where kind = ''lexicon''',
              'select kind, row from figures_after_triggers where kind = ''lexicon''',
  'the lexicon words the import derived are those the triggers keep');
select set_eq('select kind, row from figures_after_import where kind = ''word starts''',
              'select kind, row from figures_after_triggers where kind = ''word starts''',
  'the autocomplete word starts the import derived are those the triggers keep');
select set_eq('select kind, row from figures_after_import where kind = ''graph''',
              'select kind, row from figures_after_triggers where kind = ''graph''',
  'the graph node rows the import derived are those the triggers keep');

select * from finish();
rollback;
