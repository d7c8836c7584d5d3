-- Search ranks weighted English full-text matches, ignores accents, counts facets over all
-- matches, falls back to typo-tolerant matches, and completes prefixes in tiers.
begin;
select plan(19);

select tests.create_user('learner');

-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('42000000-0000-0000-0000-000000000000', 'search fixture', 'v42', 'published', now());
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
select '42000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), s.slug, s.title, s.summary, s.difficulty, 5
from (values ('window-functions', 'Window Functions', 'Rank rows over a partition', 'advanced'),
             ('partitions', 'Table Partitioning', 'Split big tables; window functions are unrelated', 'expert'),
             ('creme', 'Crème Anglaise', 'A pouring custard', 'beginner'),
             ('functions-intro', 'Functions', 'Reusable blocks of code', 'beginner')) s(slug, title, summary, difficulty);

-- 1200 sparks that mention "zebra" only in their summary, and one that has it in its title:
-- more matches than the rank cap (1000).
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
select '42000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'filler-' || i, 'Filler ' || i,
       'a long note that mentions a zebra once among many other words', 'beginner', 5
from generate_series(1, 1200) i;
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
values ('42000000-0000-0000-0000-000000000000', 'ffffffff-0000-0000-0000-000000000000', 'zebra-crossing', 'Zebra Crossing', 'Road safety', 'beginner', 5);

create function pg_temp.slugs(result jsonb) returns text[] language sql as
  $$ select array_agg(d ->> 'slug' order by o) from jsonb_array_elements(result -> 'data') with ordinality e(d, o) $$;

-- the request roles call these test helpers too
grant execute on function pg_temp.slugs(jsonb) to anon, authenticated;

select is(
  (select array_agg(c.relname || ':' || a.amname order by c.relname)
   from pg_catalog.pg_index i
   join pg_catalog.pg_class c on c.oid = i.indexrelid
   join pg_catalog.pg_am a on a.oid = c.relam
   where c.relname in ('sparks_search', 'concepts_search', 'trails_search', 'domains_search',
                       'sparks_title_trgm', 'concepts_title_trgm', 'trails_title_trgm', 'domains_name_trgm')),
  array['concepts_search:gin', 'concepts_title_trgm:gin', 'domains_name_trgm:gin', 'domains_search:gin',
        'sparks_search:gin', 'sparks_title_trgm:gin', 'trails_search:gin', 'trails_title_trgm:gin'],
  'every searchable table has a GIN full-text index and a GIN trigram index on its title');
select ok(
  (select pg_catalog.pg_get_indexdef(c.oid) like '%(search_title %gin_trgm_ops)%'
   from pg_catalog.pg_class c where c.relname = 'sparks_title_trgm'),
  'the title index uses trigram operators on the normalised title');
select ok(
  (select pg_catalog.pg_get_indexdef(c.oid) like '%USING gin (snapshot_id, search_vector)'
   from pg_catalog.pg_class c where c.relname = 'sparks_search'),
  'the full-text index leads with the snapshot, so a search reads its own snapshot''s rows');

-- A zebra in another (archived) snapshot: found only when no snapshot is current.
insert into app.snapshots (id, name, version_label, status, published_at)
values ('42000000-0000-0000-0000-000000000001', 'older search fixture', 'v41', 'archived', now() - interval '1 day');
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
values ('42000000-0000-0000-0000-000000000001', extensions.gen_random_uuid(), 'old-zebra', 'Old Zebra', 'An archived one', 'beginner', 5);

-- acting as a signed-in learner
select tests.authenticate_as('learner');

select is((pg_temp.slugs(api.search_content('window functions')))[1], 'window-functions',
  'a title match outranks the same words in a summary');
select is((pg_temp.slugs(api.search_content('functions')))[1], 'functions-intro',
  'an exact title match ranks first');
select is(pg_temp.slugs(api.search_content('creme anglaise')), array['creme'],
  'search is accent-insensitive');
select is((pg_temp.slugs(api.search_content('wind')))[1], 'window-functions',
  'the last word of a plain query also matches as a prefix');
-- typo-corrected to "partitioning" (45-search-corrects-typos-from-the-snapshot-lexicon), whose stem also matches a summary
select is((pg_temp.slugs(api.search_content('partitoning')))[1], 'partitions',
  'a typo still finds its title first');
select is((api.search_content('the and of') -> 'meta' ->> 'total')::int, 0,
  'a query of stop words only matches nothing');
select is(api.search_content('functions', per_page => 1) -> 'facets' -> 'types',
  '{"spark":3,"concept":0,"trail":0,"domain":0}'::jsonb,
  'facets count every match, not the page');
select is((api.search_content('functions', difficulty => 'beginner') -> 'meta' ->> 'total')::int, 1,
  'difficulty filters sparks');
select is((pg_temp.slugs(api.search_content('zebra', per_page => 50)))[1], 'zebra-crossing',
  'beyond the rank cap, title matches are still ranked first');
select is(api.search_content('zebra', per_page => 50) -> 'meta',
  '{"total":1201,"page":1,"per_page":50,"total_pages":20,"has_next":true,"has_prev":false}'::jsonb,
  'meta.total counts every match while pages stop at the 1000 ranked ones');
select is(api.search_content('zebra', page => 21, per_page => 50) -> 'data', '[]'::jsonb,
  'a page past the rank cap is empty');
select throws_ok($$ select api.search_content('x', difficulty => 'easy') $$, '22023', null,
  'an unknown difficulty is invalid input');
select throws_ok($$ select api.search_content('x', per_page => 51) $$, '22023', null,
  'per_page above 50 is invalid input');
select is(api.list_search_suggestions('fun') -> 'suggestions' -> 0,
  '{"text":"Functions","type":"spark"}'::jsonb,
  'autocomplete puts title prefixes first');
select throws_ok($$ select api.list_search_suggestions('f') $$, '22023', null,
  'autocomplete needs at least 2 characters');
reset role;

-- No current snapshot: the spec's rule 3, no snapshot filter.
update app.snapshots set status = 'archived' where id = '42000000-0000-0000-0000-000000000000';
select tests.authenticate_as('learner');
select is((api.search_content('zebra') -> 'meta' ->> 'total')::int, 1202,
  'with no current snapshot, search matches the rows of every snapshot');
reset role;

select * from finish();
rollback;
