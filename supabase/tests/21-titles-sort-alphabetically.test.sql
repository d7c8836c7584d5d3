-- "Sorted alphabetically" (spec, discovery) is a reader's alphabet: app.alphabetical, the ICU root
-- collation, orders titles case-insensitively with accented letters among their base letters,
-- and the catalog functions and their indexes use it.
begin;
select plan(7);

select is((select collprovider::text from pg_collation where collname = 'alphabetical' and collnamespace = 'app'::regnamespace), 'i',
  'app.alphabetical is an ICU collation');
select is(
  (select array_agg(t order by t collate app.alphabetical)
   from unnest(array['LLM Applications', 'Layout', 'HTTP Fundamentals', 'How Transformers Work', 'apis', 'Éclairs', 'Edges', 'zebra']) t),
  array['apis', 'Éclairs', 'Edges', 'How Transformers Work', 'HTTP Fundamentals', 'Layout', 'LLM Applications', 'zebra'],
  'it orders case-insensitively with accents among their letters');
select is(
  (select array_agg(c.collname::text) from pg_index i
   join pg_class x on x.oid = i.indexrelid and x.relnamespace = 'app'::regnamespace
   cross join lateral unnest(i.indcollation::oid[]) as k(coll)
   join pg_collation c on c.oid = k.coll
   where x.relname = 'sparks_title'),
  array['alphabetical'], 'the title index sorts in the same collation, so paging by title walks it');

-- A current snapshot of our own with mixed-case and accented names.
select tests.archive_current_snapshot();
create temp table fixture as select gen_random_uuid() as snapshot_id;
insert into app.snapshots (id, name, version_label, status, published_at)
select snapshot_id, 'alphabet', 'alphabet-v1', 'published', now() from fixture;
insert into app.domains (snapshot_id, id, slug, name, is_published)
select snapshot_id, gen_random_uuid(), slug, name, true from fixture,
  (values ('web', 'web'), ('ethics', 'Éthique'), ('english', 'English'), ('data', 'Data'),
          -- same shape, so search scores them alike and the title breaks the tie
          ('ezra', 'Ezrael Zorblax'), ('eclair', 'Éclair Zorblax')) d(slug, name);
grant select on fixture to anon;

-- acting as anon
select tests.clear_authentication();
select is(
  (select array_agg(d ->> 'name') from jsonb_array_elements(api.list_domains(1, 20, (select snapshot_id from fixture)) -> 'data') d),
  array['Data', 'Éclair Zorblax', 'English', 'Éthique', 'Ezrael Zorblax', 'web'],
  'api.list_domains lists domains in that order');
select is(
  (select array_agg(d ->> 'name') from jsonb_array_elements(api.list_discovery_domains(1, 20, 0, null)::jsonb -> 'data') d),
  array['Data', 'Éclair Zorblax', 'English', 'Éthique', 'Ezrael Zorblax', 'web'],
  'and so does /discovery/domains on the current snapshot');
-- acting as a service caller (anon may not search)
select tests.authenticate_as_service();
select is(
  (select array_agg(d ->> 'title') from jsonb_array_elements(api.search_content('zorblax', 'domain') -> 'data') d),
  array['Éclair Zorblax', 'Ezrael Zorblax'],
  'search breaks equal scores by title in the same order (bytes would put Ezrael first)');
select is(
  (select array_agg(d ->> 'text') from jsonb_array_elements(api.list_search_suggestions('zorbl') -> 'suggestions') d
   where d ->> 'text' like '%Zorblax'),
  array['Éclair Zorblax', 'Ezrael Zorblax'],
  'and so does autocomplete');
reset role;

select * from finish();
rollback;
