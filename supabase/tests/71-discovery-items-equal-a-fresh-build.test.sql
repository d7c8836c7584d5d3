-- Stored discovery items: the import writes them in its transaction, each equals the item its
-- builder (private.domain_items, trail_items, concept_items) makes from scratch, the lists cut
-- their previews exactly as the builders would and answer the text jsonb would print, content
-- written without them is still listed alike, anyone reads them and nobody else writes them.
begin;
select plan(14);

-- ---------------------------------------------------------------------------------------------
-- The guard: every stored item of every snapshot equals a fresh build with every child preview
-- (the item, with the placeholders "type": 0 and the previews key with 0, as jsonb prints it,
-- and the previews in order), and every domain, trail and concept has exactly one.
-- ---------------------------------------------------------------------------------------------
create temporary view discovery_item_mismatches as
with fresh as (
  select s.id as snapshot_id, 'domain' as kind, e.item
  from app.snapshots s,
       pg_catalog.jsonb_array_elements(private.domain_items(array(select d from app.domains d where d.snapshot_id = s.id), 2147483647)) e(item)
  union all
  select s.id, 'trail', e.item
  from app.snapshots s,
       pg_catalog.jsonb_array_elements(private.trail_items(array(select t from app.trails t where t.snapshot_id = s.id), 2147483647)) e(item)
  union all
  select s.id, 'concept', e.item
  from app.snapshots s,
       pg_catalog.jsonb_array_elements(private.concept_items(array(select c from app.concepts c where c.snapshot_id = s.id), 2147483647)) e(item)
), fresh_split as (
  select f.snapshot_id, f.kind, (f.item ->> 'id')::uuid as id,
         f.item || pg_catalog.jsonb_build_object('type', 0, private.discovery_preview_key(f.kind), 0) as item,
         f.item -> private.discovery_preview_key(f.kind) as previews
  from fresh f
)
select coalesce(f.snapshot_id, x.snapshot_id) as snapshot_id, coalesce(f.kind, x.kind) as kind, coalesce(f.id, x.id) as id
from fresh_split f
full join app.discovery_items x on x.snapshot_id = f.snapshot_id and x.kind = f.kind and x.id = f.id
where f.item::text is distinct from x.item::text
   or f.previews is distinct from pg_catalog.array_to_json(x.previews)::jsonb;

-- ---------------------------------------------------------------------------------------------
-- Import: shared sparks, an empty concept, trail and domain, an unpublished domain, text that
-- JSON must escape.
-- ---------------------------------------------------------------------------------------------
create temporary table attempt (label text primary key, result jsonb);
insert into attempt select 'items', private.import_content_bundle('{
  "snapshot": {"name": "Items", "version_label": "i1"},
  "domains": [
    {"slug": "data", "name": "Data \"quoted\" \\ back", "description": "Ünïcode ☃ and\nnew line"},
    {"slug": "web", "name": "Web"},
    {"slug": "empty", "name": "Empty"},
    {"slug": "hush", "name": "Hush", "is_published": false}
  ],
  "trails": [
    {"slug": "sql", "domain": "data", "title": "SQL", "difficulty_level": "beginner"},
    {"slug": "olap", "domain": "data", "title": "OLAP", "difficulty_level": "advanced"},
    {"slug": "etl", "domain": "data", "title": "ETL \"pipes\"", "difficulty_level": "beginner"},
    {"slug": "html", "domain": "web", "title": "HTML", "difficulty_level": "beginner"},
    {"slug": "css", "domain": "web", "title": "CSS", "difficulty_level": null},
    {"slug": "quiet", "domain": "hush", "title": "Quiet", "difficulty_level": "expert"}
  ],
  "concepts": [
    {"slug": "select", "trail": "sql", "title": "Select", "sparks": ["a", "b", "c", "d"]},
    {"slug": "joins", "trail": "sql", "title": "Joins", "sparks": ["b", "c"]},
    {"slug": "where", "trail": "sql", "title": "Where", "sparks": ["d"]},
    {"slug": "cubes", "trail": "olap", "title": "Cubes", "sparks": ["c", "d"]},
    {"slug": "theory", "trail": "olap", "title": "Theory", "sparks": []},
    {"slug": "tags", "trail": "html", "title": "Tags \\ <b>", "sparks": ["a"]},
    {"slug": "whisper", "trail": "quiet", "title": "Whisper", "sparks": ["e"]}
  ],
  "sparks": [
    {"slug": "a", "title": "A \"one\"", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "b", "title": "B", "difficulty": "beginner", "estimated_mins": 7},
    {"slug": "c", "title": "C", "difficulty": "intermediate", "estimated_mins": 11},
    {"slug": "d", "title": "D", "difficulty": "advanced", "estimated_mins": 13},
    {"slug": "e", "title": "E", "difficulty": "expert", "estimated_mins": 17}
  ]
}'::jsonb, promote => true);
select is((select result ->> 'status' from attempt where label = 'items'), 'succeeded', 'the bundle imports');
select is((select pg_catalog.jsonb_object_agg(x.kind, x.n) from (
             select i.kind, pg_catalog.count(*) as n from app.discovery_items i
             where i.snapshot_id = (select (result ->> 'snapshot_id')::uuid from attempt where label = 'items')
             group by i.kind) x),
  '{"domain": 4, "trail": 6, "concept": 7}'::jsonb, 'the import stores one item per domain, trail and concept');
select is_empty('select * from pg_temp.discovery_item_mismatches',
  'every stored item of every snapshot equals a fresh build with all of its previews');

-- ---------------------------------------------------------------------------------------------
-- The lists answer from the stored items exactly what the builders answer: the same body texts
-- with the stored items and without them (then every item is built), for every preview limit,
-- and each is the text jsonb prints for it (the lists return json without a jsonb pass).
-- ---------------------------------------------------------------------------------------------
create temporary table answers (stored boolean, call text, body text);
grant insert, select on answers to anon;
create temporary table calls as
select pg_catalog.format('domains %s %s %s', p, pp, tl) as call, pg_catalog.format('api.list_discovery_domains(page => %s, per_page => %s, trail_limit => %s)', p, pp, tl) as sql
from (values (1, 2), (2, 2), (1, 20)) v(p, pp), pg_catalog.generate_series(0, 4) tl
union all
select pg_catalog.format('all %s %s %s %s', p, pp, nl, coalesce(f, '-')), pg_catalog.format('api.list_discovery_items(page => %s, per_page => %s, nested_limit => %s, include_facets => true%s)', p, pp, nl, coalesce(', ' || f, ''))
from (values (1, 3), (2, 3), (1, 20)) v(p, pp), pg_catalog.generate_series(0, 4) nl,
     (values (null), ('domain => ''data'''), ('track => ''sql'''), ('types => ''trail,concept'''), ('q => ''e''')) filters(f);
grant select on calls to anon;
create function pg_temp.collect(stored boolean) returns void language plpgsql as $$
declare c record;
begin
  for c in select * from pg_temp.calls loop
    execute 'insert into pg_temp.answers select $1, $2, ' || c.sql using stored, c.call;
  end loop;
end $$;
-- acting as anon
select tests.clear_authentication();
select pg_temp.collect(true);
reset role;
delete from app.discovery_items x where x.snapshot_id = (select (result ->> 'snapshot_id')::uuid from attempt where label = 'items');
-- acting as anon
select tests.clear_authentication();
select pg_temp.collect(false);
reset role;
select is((select pg_catalog.count(*)::integer from answers where stored), (select pg_catalog.count(*)::integer from calls),
  'every list call answered');
select is_empty($$ select s.call from answers s join answers b on b.call = s.call and not b.stored
                   where s.stored and s.body is distinct from b.body $$,
  'stored items give the same body texts as items built on the spot, for every preview limit and filter');
select is_empty($$ select a.call, a.stored from answers a where a.body is distinct from a.body::jsonb::text $$,
  'every body is the text jsonb prints for it: keys in jsonb''s order, its spacing');
select is((select pg_catalog.jsonb_agg(pg_catalog.jsonb_array_length(d -> 'trails') order by d ->> 'name')
           from answers a, pg_catalog.jsonb_array_elements(a.body::jsonb -> 'data') d where a.stored and a.call = 'domains 1 20 2'),
  '[2, 0, 2]'::jsonb, 'previews are cut to the limit (data has three trails, web two)');
select is((select s.body::jsonb -> 'data' -> 0 ->> 'name' from answers s where s.stored and s.call = 'domains 1 20 0'),
  'Data "quoted" \ back', 'escaped text reads back exactly');

-- The refresh writes them again; content written without the derivation gets them from it.
select is(private.refresh_discovery_items((select (result ->> 'snapshot_id')::uuid from attempt where label = 'items')), 17::bigint,
  'the refresh writes one item per domain, trail and concept');
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('76000000-0000-4000-8000-000000000001', 'direct', 'v1', 'archived', pg_catalog.now());
insert into app.domains (snapshot_id, id, slug, name) values
  ('76000000-0000-4000-8000-000000000001', '77000000-0000-4000-8000-000000000001', 'math', 'Math');
insert into app.trails (snapshot_id, id, domain_id, slug, title) values
  ('76000000-0000-4000-8000-000000000001', '78000000-0000-4000-8000-000000000001', '77000000-0000-4000-8000-000000000001', 'algebra', 'Algebra');
select private.refresh_content_rollups('76000000-0000-4000-8000-000000000001');
select is_empty('select * from pg_temp.discovery_item_mismatches',
  'after the rollup refresh of directly written content every snapshot''s items equal a fresh build');

-- Every list body above came from its generic plan: the plan cache would plan it on every call.
select ok((select p.proconfig @> array['plan_cache_mode=force_generic_plan'] from pg_catalog.pg_proc p
            where p.oid = 'private.discovery_items_json(text, uuid[], uuid[], integer, text)'::regprocedure),
  'a page of stored items is read with one generic plan, not planned on every call');

-- acting as anon
select tests.clear_authentication();
select is((select pg_catalog.count(*)::integer from app.discovery_items where snapshot_id = '76000000-0000-4000-8000-000000000001'), 2,
  'anon reads the stored items');
select throws_ok($$ delete from app.discovery_items $$, '42501', null, 'anon cannot write them');
select throws_ok($$ select private.refresh_discovery_items('76000000-0000-4000-8000-000000000001') $$,
  '42501', null, 'anon cannot refresh them');
reset role;

select * from finish();
rollback;
