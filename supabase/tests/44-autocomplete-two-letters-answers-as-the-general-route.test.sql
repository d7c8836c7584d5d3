-- Autocomplete's word-prefix tier (tier 1) answers two letters or digits from
-- app.search_title_word_starts: exactly the suggestions, in exactly the order, of the general
-- route that reads every title holding the prefix, for every two-character prefix of the titles,
-- any number wanted and any suggestions already taken. The table equals a recount from the
-- content rows after any write.
begin;
select plan(12);

-- Titles with what tier 1 must get right: whole words and longer words with the prefix, words
-- that only end with it ("pandata"), one-letter words before punctuation ("c++", "a/b"), digits
-- ("#111", "11"), accents and case ("Éclair", "ÉCOLE"), letters unaccent keeps (Greek, Cyrillic,
-- CJK), repeated letters ("aaa"), the same title on several rows of a type and on several types;
-- and, for many prefixes with many titles each, a hexadecimal word.
insert into app.snapshots (id, name, version_label, status, published_at)
values ('44000000-0000-0000-0000-000000000000', 'autocomplete fixture', 'v44', 'archived', now());
create temporary table fixture_titles as
select i, pg_catalog.concat_ws(' ', w[1 + i % n], pg_catalog.substr(pg_catalog.md5(i::text), 1, 2 + i % 6), w[1 + (i * 7) % n],
         case when i % 3 = 0 then w[1 + (i * 11) % n] end, case when i % 5 = 0 then (i % 40)::text end) as title
from (select array['Data', 'Database', 'Pandata', 'do', 'Doing', 'dodo', 'A/B', 'C++', 'C#', 'Éclair', 'écrit',
                   'ÉCOLE', 'Über', 'naïve', 'aaa', 'aa', 'a', '11', '#111', '2024', 'x-ray', 'X', 'ab', 'tab',
                   'abab', 'Straße', 'Ωmega', 'Дата', '日本語', 'l''été', 'e-mail', 'Q&A', 'R2-D2', '3D'] as w) words,
     lateral (select pg_catalog.array_length(words.w, 1) as n) len,
     generate_series(1, 700) i;
insert into app.domains (snapshot_id, id, slug, name, description, is_published)
values ('44000000-0000-0000-0000-000000000000', '44000000-0000-0000-0000-0000000000d1', 'data-do', 'Data do Data', 'A domain', true),
       ('44000000-0000-0000-0000-000000000000', '44000000-0000-0000-0000-0000000000d2', 'eclair', 'Éclair Data', 'Another', true);
select tests.insert_titled_content('44000000-0000-0000-0000-000000000000', '44000000-0000-0000-0000-0000000000d1',
  array(select f.title from fixture_titles f order by f.i));

-- The rows the table must hold, recounted the general route's way: every two-letter or -digit
-- substring of a normalised title that starts a word after the title's beginning.
create function pg_temp.recount(snapshot uuid) returns table (word_start text, type text, id uuid, similarity real, title text)
language sql as $$
  select x.p collate "C", r.type, r.id, extensions.word_similarity(x.p, r.search_title), r.title collate "C"
  from (select 'spark' as type, s.id, s.title, s.search_title from app.sparks s where s.snapshot_id = recount.snapshot
        union all select 'concept', c.id, c.title, c.search_title from app.concepts c where c.snapshot_id = recount.snapshot
        union all select 'trail', t.id, t.title, t.search_title from app.trails t where t.snapshot_id = recount.snapshot
        union all select 'domain', d.id, d.name, d.search_title from app.domains d where d.snapshot_id = recount.snapshot) r
  cross join lateral (select distinct pg_catalog.substr(r.search_title, i, 2) as p
                      from generate_series(1, pg_catalog.char_length(r.search_title) - 1) i) x
  where x.p ~ '^[[:alnum:]]{2}$' and r.search_title ~ ('(^|[^[:alnum:]])' || x.p) and r.search_title not like x.p || '%'
$$;
create function pg_temp.stored(snapshot uuid) returns table (word_start text, type text, id uuid, similarity real, title text)
language sql as $$
  select w.word_start, w.type, w.id, w.similarity, w.title collate "C"
  from app.search_title_word_starts w where w.snapshot_id = stored.snapshot
$$;

select bag_eq($$ select * from pg_temp.stored('44000000-0000-0000-0000-000000000000') $$,
              $$ select * from pg_temp.recount('44000000-0000-0000-0000-000000000000') $$,
  'after inserts the word starts equal a recount of the titles');
select ok((select pg_catalog.count(distinct w.similarity) from app.search_title_word_starts w
            where w.snapshot_id = '44000000-0000-0000-0000-000000000000') >= 3,
  'the fixture''s word starts have several similarities (a whole word, the start of a longer word, ...)');

-- Both routes over every two-character prefix of the fixture's titles and of the current
-- snapshot's (the seed's, when loaded), plus prefixes of nothing; one, three and twenty
-- wanted; nothing taken, or the general route's two best taken already.
create temporary table answers as
with snapshots as (
  select s.id from app.snapshots s where s.id = '44000000-0000-0000-0000-000000000000' or s.status = 'published'
), prefixes as (
  select distinct t.snapshot_id as snapshot, pg_catalog.substr(t.search_title, i, 2) as p
  from (select s.snapshot_id, s.search_title from app.sparks s
        union all select c.snapshot_id, c.search_title from app.concepts c
        union all select t.snapshot_id, t.search_title from app.trails t
        union all select d.snapshot_id, d.search_title from app.domains d) t
  join snapshots n on n.id = t.snapshot_id
  cross join lateral generate_series(1, pg_catalog.char_length(t.search_title) - 1) i
  where pg_catalog.substr(t.search_title, i, 2) ~ '^[[:alnum:]]{2}$'
  union
  select n.id, x.p from snapshots n, unnest(array['zz', 'q9']) x(p)
)
select p.snapshot, p.p, w.wanted, k.taken,
       private.suggest_title_word_starts(p.snapshot, p.p, w.wanted, k.taken) as fast,
       private.suggest_title_word_matches(p.snapshot, p.p, w.wanted, k.taken) as general
from prefixes p
cross join unnest(array[1, 3, 20]) w(wanted)
cross join lateral (values ('[]'::jsonb), (private.suggest_title_word_matches(p.snapshot, p.p, 2, '[]'::jsonb))) k(taken);

select is_empty($$ select snapshot, p, wanted, taken, fast, general from answers where fast is distinct from general $$,
  'for every two-character prefix, number wanted and suggestions taken, the word starts give the general route''s suggestions in its order');
select ok((select pg_catalog.count(*) from answers
             where snapshot = '44000000-0000-0000-0000-000000000000' and pg_catalog.jsonb_array_length(general) = 20) >= 40
          and (select pg_catalog.count(distinct p) from answers
                where snapshot = '44000000-0000-0000-0000-000000000000' and pg_catalog.jsonb_array_length(general) > 0) >= 200,
  'the comparison covers many prefixes with suggestions, many of them full pages');
select ok(exists (select from answers a, pg_catalog.jsonb_array_elements(a.general) e
                   where a.snapshot = '44000000-0000-0000-0000-000000000000'
                     and (select pg_catalog.count(*) from app.sparks s
                           where s.snapshot_id = a.snapshot and s.title = e ->> 'text') > 1),
  'the compared suggestions include titles held by several rows, suggested once');

-- The route: two letters or digits of a snapshot read the table, anything else reads the titles.
savepoint without_word_starts;
delete from app.search_title_word_starts w where w.snapshot_id = '44000000-0000-0000-0000-000000000000';
select is(private.suggest_title_words('44000000-0000-0000-0000-000000000000', 'ab', 5, '[]'), '[]'::jsonb,
  'two letters of a snapshot are answered from the word starts');
select isnt(private.suggest_title_words('44000000-0000-0000-0000-000000000000', 'aba', 5, '[]'), '[]'::jsonb,
  'three letters read the titles');
select isnt(private.suggest_title_words('44000000-0000-0000-0000-000000000000', 'c+', 5, '[]'), '[]'::jsonb,
  'two characters that are not both letters or digits read the titles');
rollback to savepoint without_word_starts;

update app.sparks set title = 'Dodo Renamed ' || slug
 where snapshot_id = '44000000-0000-0000-0000-000000000000' and slug in ('spark-1', 'spark-2', 'spark-3');
update app.domains set name = 'Marsupial ab Land' where id = '44000000-0000-0000-0000-0000000000d1';
select bag_eq($$ select * from pg_temp.stored('44000000-0000-0000-0000-000000000000') $$,
              $$ select * from pg_temp.recount('44000000-0000-0000-0000-000000000000') $$,
  'after title and name updates the word starts equal a recount');

delete from app.sparks where snapshot_id = '44000000-0000-0000-0000-000000000000' and slug in ('spark-10', 'spark-11');
-- The content writer runs with session_replication_role = replica: the triggers still fire.
set local session_replication_role = replica;
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
values ('44000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'replica-ab', 'Replica ab Abacus', 'Copied', 'beginner', 5);
set local session_replication_role = origin;
select bag_eq($$ select * from pg_temp.stored('44000000-0000-0000-0000-000000000000') $$,
              $$ select * from pg_temp.recount('44000000-0000-0000-0000-000000000000') $$,
  'after deletes and replica-mode inserts the word starts equal a recount');

select is(api.list_search_suggestions('ab', 3, '44000000-0000-0000-0000-000000000000') -> 'suggestions',
          private.suggest_title_prefix_list('44000000-0000-0000-0000-000000000000', 'ab', 3, '[]')
          || private.suggest_title_word_matches('44000000-0000-0000-0000-000000000000', 'ab', 3
               - pg_catalog.jsonb_array_length(private.suggest_title_prefix_list('44000000-0000-0000-0000-000000000000', 'ab', 3, '[]')),
               private.suggest_title_prefix_list('44000000-0000-0000-0000-000000000000', 'ab', 3, '[]')),
  'autocomplete of two letters gives the title prefixes, then the general route''s word prefixes');

delete from app.snapshots where id = '44000000-0000-0000-0000-000000000000';
select is((select pg_catalog.count(*)::int from app.search_title_word_starts w
            where w.snapshot_id = '44000000-0000-0000-0000-000000000000'), 0,
  'deleting a snapshot deletes its word starts');

select * from finish();
rollback;
