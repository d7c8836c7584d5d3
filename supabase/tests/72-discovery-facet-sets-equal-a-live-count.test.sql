-- Stored discovery facet sets: the import writes one per filter without a track or a text (no
-- domain or one, no level or one, each set of item types such a request counts), each equals the
-- facets private.discovery_facets counts live, the readers answer from them and count a track or
-- a text live, anyone reads them and nobody else writes them.
begin;
select plan(16);

-- ---------------------------------------------------------------------------------------------
-- Import: an unpublished domain, an empty one, a trail without a level, a level no trail has.
-- ---------------------------------------------------------------------------------------------
create temporary table attempt (label text primary key, result jsonb);
insert into attempt select 'facets', private.import_content_bundle('{
  "snapshot": {"name": "Facets", "version_label": "f1"},
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
    {"slug": "quiet", "domain": "hush", "title": "Quiet", "difficulty_level": "intermediate"}
  ],
  "concepts": [
    {"slug": "select", "trail": "sql", "title": "Select", "sparks": ["a", "b"]},
    {"slug": "joins", "trail": "sql", "title": "Joins", "sparks": ["b"]},
    {"slug": "cubes", "trail": "olap", "title": "Cubes", "sparks": ["c"]},
    {"slug": "tags", "trail": "html", "title": "Tags", "sparks": ["a"]},
    {"slug": "whisper", "trail": "quiet", "title": "Whisper", "sparks": []}
  ],
  "sparks": [
    {"slug": "a", "title": "A", "difficulty": "beginner", "estimated_mins": 5},
    {"slug": "b", "title": "B", "difficulty": "beginner", "estimated_mins": 7},
    {"slug": "c", "title": "C", "difficulty": "advanced", "estimated_mins": 11}
  ]
}'::jsonb, promote => true);
select is((select result ->> 'status' from attempt where label = 'facets'), 'succeeded', 'the bundle imports');
select set_config('facets.sid', (select result ->> 'snapshot_id' from attempt where label = 'facets'), true);

-- (4 domains + none) x (no level: 7 sets of types; each of the 4 levels: trails or nothing)
select is((select pg_catalog.count(*)::integer from app.discovery_facet_sets f
           where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid), 5 * (7 + 4 * 2),
  'the import stores a facet set per domain (and none), level (and none) and set of types');

-- ---------------------------------------------------------------------------------------------
-- The guard: every stored set equals the facets counted live (the sets removed first, so that
-- private.discovery_facets counts).
-- ---------------------------------------------------------------------------------------------
create temporary table stored_sets as
select f.domain_id, f.difficulty, f.included, f.facets from app.discovery_facet_sets f
where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid;
delete from app.discovery_facet_sets f where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid;
select is_empty($$
  select s.domain_id, s.difficulty, s.included from stored_sets s
  where s.facets is distinct from private.discovery_facets(pg_catalog.current_setting('facets.sid')::uuid,
          s.domain_id, null, s.difficulty, null, s.included) $$,
  'every stored facet set equals the facets counted live');
select is(private.refresh_discovery_facet_sets(pg_catalog.current_setting('facets.sid')::uuid), 75::bigint,
  'the refresh writes them again');
select is(private.refresh_discovery_facet_sets(pg_catalog.current_setting('facets.sid')::uuid), 75::bigint,
  'and again, replacing them (idempotent)');
select is_empty($$
  select s.domain_id, s.difficulty, s.included, s.facets from stored_sets s
  except
  select f.domain_id, f.difficulty, f.included, f.facets from app.discovery_facet_sets f
  where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid $$,
  'the refreshed sets are the imported ones');

-- ---------------------------------------------------------------------------------------------
-- /discovery/all and /discovery/facets answer the same bodies with the stored sets as without
-- them (everything counted live): the facets, and the page's totals and items, which /all takes
-- from a stored set's type counts.
-- ---------------------------------------------------------------------------------------------
create temporary table answers (stored boolean, call text, body text);
grant insert, select on answers to anon;
create temporary table calls as
select pg_catalog.format('all %s %s %s %s', coalesce(dm, '-'), coalesce(lv, '-'), coalesce(ty, '-'), p) as call,
       pg_catalog.format('api.list_discovery_items(page => %s, per_page => 2, include_facets => true%s%s%s)::text', p,
         ', domain => ' || pg_catalog.quote_literal(dm), ', difficulty => ' || pg_catalog.quote_literal(lv),
         ', types => ' || pg_catalog.quote_literal(ty)) as sql
from (values (null), ('data'), ('web'), ('empty'), ('hush')) d(dm),
     (values (null), ('beginner'), ('advanced'), ('expert')) l(lv),
     (values (null), ('domain'), ('trail,concept'), ('concept')) t(ty),
     pg_catalog.generate_series(1, 3) p
union all
select pg_catalog.format('facets %s %s', coalesce(dm, '-'), coalesce(lv, '-')),
       pg_catalog.format('api.get_discovery_facets(snapshot_id => null%s%s)::text',
         ', domain => ' || pg_catalog.quote_literal(dm), ', difficulty => ' || pg_catalog.quote_literal(lv))
from (values (null), ('data'), ('web'), ('empty'), ('hush')) d(dm),
     (values (null), ('beginner'), ('advanced'), ('expert')) l(lv);
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
delete from app.discovery_facet_sets f where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid;
-- acting as anon
select tests.clear_authentication();
select pg_temp.collect(false);
reset role;
select private.refresh_discovery_facet_sets(pg_catalog.current_setting('facets.sid')::uuid);
select is((select pg_catalog.count(*)::integer from answers where stored), 260, 'every call answered');
select is_empty($$ select s.call from answers s join answers l on l.call = s.call and not l.stored
                   where s.stored and s.body is distinct from l.body $$,
  'the bodies with the stored sets are the bodies counted live, for every domain, level, set of types and page');

-- ---------------------------------------------------------------------------------------------
-- The readers answer from the stored sets: a marker written into two of them comes back for
-- those filters; a track or a text is counted live.
-- ---------------------------------------------------------------------------------------------
update app.discovery_facet_sets f set facets = '{"stored": "data"}'
where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid and f.difficulty is null
  and f.domain_id = (select d.id from app.domains d where d.snapshot_id = f.snapshot_id and d.slug = 'data');
update app.discovery_facet_sets f set facets = '{"stored": "beginner"}'
where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid and f.domain_id is null and f.difficulty = 'beginner';

-- acting as anon
select tests.clear_authentication();
select is(api.get_discovery_facets(domain => 'data'), '{"stored": "data"}'::jsonb,
  'GET /discovery/facets?domain= reads its stored set');
select is(api.list_discovery_items(domain => 'data', types => 'trail', include_facets => true)::jsonb -> 'facets',
  '{"stored": "data"}'::jsonb, '/discovery/all reads the set of the types it counts');
select is(api.list_discovery_items(difficulty => 'beginner', include_facets => true)::jsonb -> 'facets',
  '{"stored": "beginner"}'::jsonb, 'with a level, /discovery/all reads the set that counts trails only');
select is(api.get_discovery_facets(domain => 'data', track => 'sql') -> 'types',
  '[{"type": "DOMAIN", "count": 0}, {"type": "TRAIL", "count": 0}, {"type": "CONCEPT", "count": 2}]'::jsonb,
  'a track is counted live');
select is(api.list_discovery_items(domain => 'data', q => 'e', include_facets => true)::jsonb -> 'facets' -> 'types',
  '[{"type": "DOMAIN", "count": 0}, {"type": "TRAIL", "count": 0}, {"type": "CONCEPT", "count": 2}]'::jsonb,
  'a text is counted live (Select and Cubes have an e; Data, SQL, OLAP and Joins have none)');

-- ---------------------------------------------------------------------------------------------
-- Access: anyone reads, nobody else writes.
-- ---------------------------------------------------------------------------------------------
select is((select pg_catalog.count(*)::integer from app.discovery_facet_sets f
           where f.snapshot_id = pg_catalog.current_setting('facets.sid')::uuid), 75, 'anon reads the facet sets');
select throws_ok($$ insert into app.discovery_facet_sets (snapshot_id, included, facets)
                    values (pg_catalog.current_setting('facets.sid')::uuid, '{t,t,t}', '{}') $$,
  '42501', null, 'anon cannot write facet sets');
select throws_ok($$ select private.refresh_discovery_facet_sets(pg_catalog.current_setting('facets.sid')::uuid) $$,
  '42501', null, 'anon cannot refresh facet sets');
reset role;

select * from finish();
rollback;
