-- The public catalog functions: paging math of /discovery/all, filters, derived counts,
-- related-domain fallback, /discovery/sparks and /discovery/browse, snapshot selection and what
-- anon may do.
begin;
select plan(61);

-- ---------------------------------------------------------------------------------------------
-- An entity named by slug or id
-- ---------------------------------------------------------------------------------------------

select is(array[private.uuid_or_null('b1500000-0000-4000-8000-00000000000a'), private.uuid_or_null('B1500000-0000-4000-8000-00000000000A')],
  array['b1500000-0000-4000-8000-00000000000a', 'b1500000-0000-4000-8000-00000000000a']::uuid[],
  'a uuid in either case is that uuid');
select is(array[private.uuid_or_null('trail-000326'), private.uuid_or_null('b1500000-0000-4000-8000-00000000000'),
                private.uuid_or_null(' b1500000-0000-4000-8000-00000000000a'), private.uuid_or_null('b15000000000400080000000000000000a'),
                private.uuid_or_null('g1500000-0000-4000-8000-00000000000a'), private.uuid_or_null(null)],
  array[null, null, null, null, null, null]::uuid[],
  'a slug, a short or padded uuid, one without hyphens, a non-hex digit and null are no uuid, and never an error');

-- ---------------------------------------------------------------------------------------------
-- Paging math
-- ---------------------------------------------------------------------------------------------

select is(private.discovery_quotas(20, array[true, true, true]), array[2, 5, 13],
  'per_page 20 is split 2 domains, 5 trails, 13 concepts');
select is(private.discovery_quotas(10, array[true, true, true]), array[1, 3, 6],
  'per_page 10 is split 1, 3, 6 (round half up, the last type takes the rest)');
select is(private.discovery_quotas(20, array[false, true, true]), array[0, 6, 14],
  'the shares are renormalised over the included types');
select is(private.discovery_quotas(1, array[true, true, true]), array[0, 0, 1],
  'per_page 1 gives its slot to concepts');

select is(private.discovery_allocation(40, array[4, 12, 50]::bigint[], array[2, 5, 13]),
  array[4, 10, 26]::bigint[],
  'after two pages of 20 the exhausted domains stop and trails and concepts continue at their share');
select is(private.discovery_allocation(60, array[4, 12, 50]::bigint[], array[2, 5, 13]),
  array[4, 12, 44]::bigint[],
  'the slots of exhausted types go to the remaining type');

-- For many shapes: allocations never decrease page to page, fill every page, stay within the
-- counts, end exactly at the counts, and equal k * quota while no type is exhausted.
select is((
  with shapes as (
    select per_page, d, t, c, private.discovery_quotas(per_page, array[true, true, true]) as q
    from pg_catalog.unnest(array[1, 2, 3, 5, 7, 10, 13, 20, 33, 100]) per_page,
         pg_catalog.unnest(array[0, 1, 4, 9]) d,
         pg_catalog.unnest(array[0, 2, 12, 31]) t,
         pg_catalog.unnest(array[0, 5, 50, 97]) c
  ), steps as (
    select s.*, k,
           private.discovery_allocation(least((k - 1)::bigint * per_page, d + t + c), array[d, t, c]::bigint[], q) as a0,
           private.discovery_allocation(least(k::bigint * per_page, d + t + c), array[d, t, c]::bigint[], q) as a1
    from shapes s, pg_catalog.generate_series(1, (s.d + s.t + s.c + s.per_page - 1) / s.per_page + 1) k
  )
  select pg_catalog.count(*) from steps
  where a1[1] < a0[1] or a1[2] < a0[2] or a1[3] < a0[3]
     or a1[1] > d or a1[2] > t or a1[3] > c
     or (a1[1] + a1[2] + a1[3]) <> least(k::bigint * per_page, d + t + c)
     or (k::bigint * q[1] <= d and k::bigint * q[2] <= t and k::bigint * q[3] <= c
         and (a1[1] <> k * q[1] or a1[2] <> k * q[2] or a1[3] <> k * q[3]))
), 0::bigint, 'the allocation is monotone, fills each page, ends at the counts and keeps the shares until a type runs out');

-- ---------------------------------------------------------------------------------------------
-- A small catalog (as the owner, the way imports write content)
-- ---------------------------------------------------------------------------------------------
-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('10000000-0000-4000-8000-000000000001', 'current', 'v1', 'published', pg_catalog.now()),
  ('10000000-0000-4000-8000-000000000002', 'draft', 'v2', 'draft', null);
insert into app.categories (snapshot_id, id, slug, name) values
  ('10000000-0000-4000-8000-000000000001', '20000000-0000-4000-8000-000000000001', 'tech', 'Tech');
insert into app.domains (snapshot_id, id, slug, name, category_id, is_published) values
  ('10000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000001', 'data', 'Data', '20000000-0000-4000-8000-000000000001', true),
  ('10000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000002', 'web', 'Web', '20000000-0000-4000-8000-000000000001', true),
  ('10000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000003', 'art', 'Art', null, true),
  ('10000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000004', 'hush', 'Hush', '20000000-0000-4000-8000-000000000001', false),
  ('10000000-0000-4000-8000-000000000002', '30000000-0000-4000-8000-000000000001', 'data', 'Data draft', null, true);
-- (the trails' order_index is not their title order)
insert into app.trails (snapshot_id, id, domain_id, slug, title, difficulty_level, order_index) values
  ('10000000-0000-4000-8000-000000000001', '40000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000001', 'sql', 'SQL', 'beginner', 0),
  ('10000000-0000-4000-8000-000000000001', '40000000-0000-4000-8000-000000000002', '30000000-0000-4000-8000-000000000001', 'olap', 'OLAP', 'advanced', 1);
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index) values
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000001', '40000000-0000-4000-8000-000000000001', 'select', 'Select', 0),
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000002', '40000000-0000-4000-8000-000000000001', 'joins', 'Joins', 1);
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins) values
  ('10000000-0000-4000-8000-000000000001', '60000000-0000-4000-8000-000000000001', 'star', 'Star', 'beginner', 5),
  ('10000000-0000-4000-8000-000000000001', '60000000-0000-4000-8000-000000000002', 'inner', 'Inner', 'beginner', 7);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000001', '60000000-0000-4000-8000-000000000001', 0),
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000002', '60000000-0000-4000-8000-000000000002', 0),
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000002', '60000000-0000-4000-8000-000000000001', 1);
-- the import computes each snapshot's rollups after writing its content; so does this fixture
do $$ begin
  perform private.refresh_content_rollups('10000000-0000-4000-8000-000000000001');
  perform private.refresh_content_rollups('10000000-0000-4000-8000-000000000002');
end $$;

-- acting as anon
select tests.clear_authentication();

select is(api.list_discovery_trails(domain => 'data') -> 'data' -> 1 -> 'spark_count', '2'::jsonb,
  'a trail counts a spark placed in two of its concepts once');
select is(api.list_discovery_trails(domain => 'data') -> 'data' -> 1 -> 'estimated_mins', '12'::jsonb,
  'a trail sums the minutes of its distinct sparks');
select is(api.list_discovery_concepts(trail => 'sql') -> 'data' -> 1 -> 'estimated_mins', '12'::jsonb,
  'a concept sums the minutes of its sparks');
select is(api.list_discovery_domains()::jsonb -> 'data' -> 1 -> 'concept_count', '2'::jsonb,
  'a domain counts the concepts of all its trails');
select is(api.list_domains() -> 'meta' -> 'total', '3'::jsonb,
  'the domains list counts published domains only');

select is(
  (select pg_catalog.jsonb_agg(i -> 'type') from pg_catalog.jsonb_array_elements(api.list_discovery_items(per_page => 10)::jsonb -> 'data') i),
  '["DOMAIN", "DOMAIN", "DOMAIN", "TRAIL", "TRAIL", "CONCEPT", "CONCEPT"]'::jsonb,
  '/all gives the slots of exhausted trails and concepts to domains (per_page 10 would give 1 domain)');
select is(api.list_discovery_items(difficulty => 'advanced')::jsonb -> 'meta' -> 'total', '1'::jsonb,
  'the difficulty filter keeps only trails');
select is(api.list_discovery_items(track => 'sql')::jsonb -> 'meta' -> 'total', '2'::jsonb,
  'the track filter keeps only the concepts of the trail');
select is(api.list_discovery_items(types => 'trail', q => 'ola')::jsonb -> 'data' -> 0 -> 'slug', '"olap"'::jsonb,
  'types and q combine');
select throws_ok($$ select api.list_discovery_items(types => 'domain,spark') $$, '22023', null,
  'an unknown type is invalid input');
select throws_ok($$ select api.list_discovery_trails(domain => 'nope') $$, 'PT404', 'domain nope not found',
  'an unknown domain slug in a filter is not found');
select throws_ok($$ select api.get_domain('nope') $$, 'PT404', 'domain nope not found',
  'an unknown domain slug is not found');

select is(
  (select pg_catalog.jsonb_agg(d -> 'slug') from pg_catalog.jsonb_array_elements(api.list_related_domains('data') -> 'data') d),
  '["web"]'::jsonb,
  'related domains share the category; the requested one and unpublished ones are excluded');
select is(
  (select pg_catalog.count(*) from pg_catalog.jsonb_array_elements(api.list_related_domains('art') -> 'data')),
  2::bigint,
  'a domain without a category gets other published domains instead');

select is(api.get_domain('data', '10000000-0000-4000-8000-000000000002') -> 'name', '"Data draft"'::jsonb,
  'snapshot_id selects a draft snapshot');
select is(api.get_domain('30000000-0000-4000-8000-000000000001') -> 'name', '"Data"'::jsonb,
  'a domain is found by UUID in the current snapshot');
select is(api.resolve_snapshot() -> 'snapshot_id', '"10000000-0000-4000-8000-000000000001"'::jsonb,
  'resolve_snapshot names the current snapshot');

-- ---------------------------------------------------------------------------------------------
-- /discovery/browse: domains by name, each with its trails and their concepts, in their orders
-- ---------------------------------------------------------------------------------------------

select is(
  (select pg_catalog.jsonb_agg(d -> 'slug') from pg_catalog.jsonb_array_elements(api.browse_catalog() -> 'data') d),
  '["art", "data", "web"]'::jsonb,
  'browse lists the published domains in name order');
select is(api.browse_catalog() -> 'meta',
  '{"total": 3, "page": 1, "per_page": 20, "total_pages": 1, "has_next": false, "has_prev": false}'::jsonb,
  'browse pages over the published domains');
select is(
  (select pg_catalog.jsonb_agg(t -> 'slug') from pg_catalog.jsonb_array_elements(api.browse_catalog(domain => 'data') -> 'data' -> 0 -> 'trails') t),
  '["sql", "olap"]'::jsonb,
  'a domain''s trails come in their order (order_index), not title order');
select is(
  (select pg_catalog.jsonb_agg(c -> 'slug')
   from pg_catalog.jsonb_array_elements(api.browse_catalog(domain => 'data') -> 'data' -> 0 -> 'trails' -> 0 -> 'concepts') c),
  '["select", "joins"]'::jsonb,
  'a trail''s concepts come in position order, not title order');
select is(
  (api.browse_catalog(domain => 'data') -> 'data' -> 0 -> 'trails' -> 0) - 'concepts',
  (api.list_discovery_trails(domain => 'data') -> 'data' -> 1) - 'description' - 'concepts',
  'a trail in browse carries the figures /discovery/trails gives it (no description)');
select is(
  (select pg_catalog.jsonb_build_array(
     (select pg_catalog.jsonb_agg(d -> 'slug') from pg_catalog.jsonb_array_elements(b.data) d),
     (select pg_catalog.jsonb_agg(t -> 'slug') from pg_catalog.jsonb_array_elements(b.data -> 0 -> 'trails') t))
   from (select api.browse_catalog(difficulty => 'advanced') -> 'data' as data) b),
  '[["data"], ["olap"]]'::jsonb,
  'a difficulty keeps the domains that have a trail of that level, and only those trails');
select is(
  pg_catalog.jsonb_build_array(
    pg_catalog.jsonb_array_length(api.browse_catalog(domain => 'data', trail_limit => 1) -> 'data' -> 0 -> 'trails'),
    pg_catalog.jsonb_array_length(api.browse_catalog(domain => 'data', concept_limit => 1) -> 'data' -> 0 -> 'trails' -> 0 -> 'concepts'),
    api.browse_catalog(domain => 'data', trail_limit => 0) -> 'data' -> 0 -> 'trails'),
  '[1, 1, []]'::jsonb,
  'trail_limit and concept_limit cut the nested lists; 0 gives none');
select is(
  (select pg_catalog.jsonb_agg(d -> 'slug') from pg_catalog.jsonb_array_elements(api.browse_catalog(page => 2, per_page => 2) -> 'data') d),
  '["web"]'::jsonb,
  'browse''s second page of two domains holds the third');
select is(api.browse_catalog(snapshot_id => '10000000-0000-4000-8000-000000000002') -> 'data' -> 0 -> 'name', '"Data draft"'::jsonb,
  'browse reads the snapshot it is given, a draft included');
select throws_ok($$ select api.browse_catalog(per_page => 51) $$, '22023', 'per_page must be an integer between 1 and 50',
  'browse pages hold at most 50 domains');
select throws_ok($$ select api.browse_catalog(trail_limit => 21) $$, '22023', 'trail_limit must be an integer between 0 and 20',
  'trail_limit is at most 20');
select throws_ok($$ select api.browse_catalog(concept_limit => -1) $$, '22023', 'concept_limit must be an integer between 0 and 20',
  'concept_limit is at least 0');
select throws_ok($$ select api.browse_catalog(difficulty => 'hard') $$, '22023', null, 'browse knows the difficulty levels');
select throws_ok($$ select api.browse_catalog(domain => 'nope') $$, 'PT404', 'domain nope not found',
  'browse of an unknown domain is not found');

select throws_ok($$ insert into app.domains (snapshot_id, id, slug, name) values
  ('10000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000009', 'x', 'X') $$,
  '42501', null, 'anon cannot write content');
reset role;

-- ---------------------------------------------------------------------------------------------
-- /discovery/sparks: title order, or a concept's position order
-- ---------------------------------------------------------------------------------------------
-- An advanced spark placed first in a new concept whose position order is not its title order,
-- and a spark of the draft only.
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins) values
  ('10000000-0000-4000-8000-000000000001', '60000000-0000-4000-8000-000000000003', 'window', 'Window', 'Frames over rows', 'advanced', 9),
  ('10000000-0000-4000-8000-000000000002', '60000000-0000-4000-8000-000000000004', 'sketch', 'Sketch', '', 'beginner', 3);
insert into app.concepts (snapshot_id, id, trail_id, slug, title, order_index) values
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000003', '40000000-0000-4000-8000-000000000002', 'windows', 'Windows', 0);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000003', '60000000-0000-4000-8000-000000000003', 0),
  ('10000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000003', '60000000-0000-4000-8000-000000000001', 1);
do $$ begin
  perform private.refresh_content_rollups('10000000-0000-4000-8000-000000000001');
  perform private.refresh_content_rollups('10000000-0000-4000-8000-000000000002');
end $$;

-- acting as anon
select tests.clear_authentication();

select is(
  (select pg_catalog.jsonb_agg(x -> 'slug') from pg_catalog.jsonb_array_elements(api.list_discovery_sparks() -> 'data') x),
  '["inner", "star", "window"]'::jsonb,
  'without a concept, the current snapshot''s sparks come in title order');
select is(api.list_discovery_sparks() -> 'data' -> 2,
  '{"id": "60000000-0000-4000-8000-000000000003", "slug": "window", "title": "Window", "summary": "Frames over rows", "difficulty": "advanced", "estimated_mins": 9}'::jsonb,
  'a spark item carries id, slug, title, summary, difficulty and estimated_mins');
select is(
  (select pg_catalog.jsonb_agg(x -> 'slug') from pg_catalog.jsonb_array_elements(api.list_discovery_sparks(concept => 'windows') -> 'data') x),
  '["window", "star"]'::jsonb,
  'a concept''s sparks come in their position order, not title order');
select is(
  (select pg_catalog.jsonb_agg(x -> 'slug') from pg_catalog.jsonb_array_elements(api.list_discovery_sparks(concept => 'windows', difficulty => 'beginner') -> 'data') x),
  '["star"]'::jsonb,
  'a concept and a difficulty combine');
select is(api.list_discovery_sparks(difficulty => 'advanced') -> 'meta' -> 'total', '1'::jsonb,
  'the difficulty filter counts only sparks of that level');
select is(api.list_discovery_sparks(page => 2, per_page => 1),
  '{"data": [{"id": "60000000-0000-4000-8000-000000000001", "slug": "star", "title": "Star", "summary": "", "difficulty": "beginner", "estimated_mins": 5}],
    "meta": {"total": 3, "page": 2, "per_page": 1, "total_pages": 3, "has_next": true, "has_prev": true}}'::jsonb,
  'a page of one spark, with the meta of three');
select is(
  (select pg_catalog.jsonb_agg(x -> 'slug')
   from pg_catalog.jsonb_array_elements(api.list_discovery_sparks(snapshot_id => '10000000-0000-4000-8000-000000000002') -> 'data') x),
  '["sketch"]'::jsonb,
  'snapshot_id reads that snapshot''s sparks only');
select is(api.list_discovery_sparks(page => 9) -> 'data', '[]'::jsonb, 'a page past the end is empty, not an error');
select throws_ok($$ select api.list_discovery_sparks(per_page => 101) $$, '22023', 'per_page must be an integer between 1 and 100',
  'a sparks page holds at most 100');
select throws_ok($$ select api.list_discovery_sparks(page => 0) $$, '22023', 'page must be an integer between 1 and 100000',
  'pages start at 1');
select throws_ok($$ select api.list_discovery_sparks(difficulty => 'hard') $$, '22023', null, 'the sparks list knows the difficulty levels');
select throws_ok($$ select api.list_discovery_sparks(concept => 'nope') $$, 'PT404', 'concept nope not found',
  'an unknown concept slug is not found');
select throws_ok($$ select api.list_discovery_sparks(snapshot_id => '10000000-0000-4000-8000-0000000000ff') $$, 'PT404', 'snapshot not found',
  'an unknown snapshot is not found');
reset role;

-- Selection rule 3: with nothing published, /discovery/domains lists every snapshot's published
-- domains (its own statements: the usual ones are planned for one snapshot).
select tests.archive_current_snapshot();
select tests.clear_authentication();
select is(
  (select pg_catalog.jsonb_agg(x.page order by p) from pg_catalog.generate_series(1, 3) p,
     lateral (select pg_catalog.array_agg(d ->> 'name') as page
              from pg_catalog.json_array_elements(api.list_discovery_domains(page => p, per_page => 2, trail_limit => 0) -> 'data') d) x),
  (select pg_catalog.jsonb_agg(x.page order by p) from pg_catalog.generate_series(1, 3) p,
     lateral (select pg_catalog.array_agg(d.name order by d.name collate app.alphabetical, d.id) as page
              from (select d.name, d.id from app.domains d where d.is_published
                    order by d.name collate app.alphabetical, d.id limit 2 offset (p - 1) * 2) d) x),
  'nothing published: the domains pages walk every snapshot''s published domains in name order');
select is(api.list_discovery_domains()::jsonb -> 'meta' -> 'total',
  (select pg_catalog.to_jsonb(pg_catalog.count(*)) from app.domains d where d.is_published),
  'nothing published: the total counts every snapshot''s published domains');
-- The facets read every snapshot too (their snapshot filter is an array: every snapshot here).
select is(api.get_discovery_facets()::jsonb -> 'types',
  pg_catalog.jsonb_build_array(
    pg_catalog.jsonb_build_object('type', 'DOMAIN', 'count', (select pg_catalog.count(*) from app.domains d where d.is_published)),
    pg_catalog.jsonb_build_object('type', 'TRAIL', 'count', (select pg_catalog.count(*) from app.trails)),
    pg_catalog.jsonb_build_object('type', 'CONCEPT', 'count', (select pg_catalog.count(*) from app.concepts))),
  'nothing published: the facets count every snapshot''s domains, trails and concepts');
select is((select pg_catalog.jsonb_object_agg(l ->> 'level', l -> 'count') from pg_catalog.jsonb_array_elements(api.get_discovery_facets()::jsonb -> 'difficulties') l),
  (select pg_catalog.jsonb_object_agg(l.value, (select pg_catalog.count(*) from app.trails t where t.difficulty_level = l.value)) from app.difficulty_levels l),
  'nothing published: trails per difficulty over every snapshot');
select is(api.get_discovery_facets(difficulty => 'beginner')::jsonb -> 'types' -> 1 -> 'count',
  (select pg_catalog.to_jsonb(pg_catalog.count(*)) from app.trails t where t.difficulty_level = 'beginner'),
  'nothing published: a difficulty filter counts that level''s trails of every snapshot');
-- A text filter is planned per call (its pattern picks the scan); the rest keeps one generic plan.
select ok((select p.proconfig @> array['plan_cache_mode=force_generic_plan'] from pg_catalog.pg_proc p
            where p.oid = 'private.discovery_facets(uuid, uuid, uuid, text, text, boolean[])'::regprocedure),
  'the facets statement keeps one generic plan');
select pg_catalog.set_config('tests.plan_cache_mode', pg_catalog.current_setting('plan_cache_mode'), true);
select is((select pg_catalog.current_setting('plan_cache_mode')
            from (select private.discovery_facets(null, null, null, null, 'a', array[true, true, true]) as body offset 0) x
            where x.body is not null),
  pg_catalog.current_setting('tests.plan_cache_mode'), 'the custom plans of a text filter end with the call');
reset role;

select * from finish();
rollback;
