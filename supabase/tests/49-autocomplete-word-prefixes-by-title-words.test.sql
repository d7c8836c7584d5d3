-- Autocomplete's word-prefix tier (tier 1) finds its titles by the terms the text needs at a word
-- start (private.search_title_term_query over private.search_title_terms, words and adjacent
-- pairs of words, and their GIN indexes) instead of through the trigram index: the same titles,
-- for word prefixes, strings inside words and texts of several words, in a snapshot or in all
-- of them; and the indexes follow writes.
begin;
select plan(16);

-- The terms of a title: runs of letters and digits as written, each once, and each two adjacent.
select is(private.search_title_terms('install incremental a/b/testing node.js c++ 3d'),
          $$'3d' 'a' 'a b' 'b' 'b testing' 'c' 'c 3d' 'incremental' 'incremental a' 'install' 'install incremental'
            'js' 'js c' 'node' 'node js' 'testing' 'testing node'$$::tsvector,
  'a title''s terms are its runs of letters and digits, unstemmed, each once, and each two adjacent runs');
select is(private.search_title_terms('the data, the databases'), $$'data' 'data the' 'databases' 'the' 'the data' 'the databases'$$::tsvector,
  'stop words and repeated words are words like any other');
select is(private.search_title_terms('--'), ''::tsvector, 'a title without letters or digits has no terms');
select is(private.search_title_terms('ωmega дата 日本語 l ete'), $$'ete' 'l' 'l ete' 'ωmega' 'ωmega дата' 'дата' 'дата 日本語' '日本語' '日本語 l'$$::tsvector,
  'letters unaccent keeps are letters');

-- The terms a text needs at a word start: its one run, or its adjacent runs as pairs, the last as a
-- prefix when the text ends with it.
select is(array[private.search_title_term_query('exploring bea'), private.search_title_term_query('a/b tes'),
                private.search_title_term_query('c++'), private.search_title_term_query('l''ete'),
                private.search_title_term_query('habits of ')],
          array[$$'exploring bea':*$$, $$'a b' & 'b tes':*$$, $$'c'$$, $$'l ete':*$$, $$'habits of'$$]::tsquery[],
  'a text needs its run as a word, or its adjacent runs as pairs of words, the last as a prefix when the text ends with it');
select is(private.search_title_term_query('--'), null, 'a text without letters or digits needs no term (the trigram route takes it)');
-- Pairs keep words apart from each other out: "habits" and "hard" in one title, not side by side.
select is(array[private.search_title_terms('hard habits') @@ private.search_title_term_query('habits ha'),
                private.search_title_terms('good habits, hard work') @@ private.search_title_term_query('habits ha')],
          array[false, true], 'a title holding both words apart does not hold their pair; one with them side by side does');

-- Titles with what tier 1 must get right (as in pgTAP 44): whole words and longer words holding
-- the text, words that only end with it ("pandata"), the text inside a word ("nstal"), a title
-- whose first word starts with it (tier 0's), a title starting with punctuation, one-letter
-- words before punctuation, digits, accents and case, letters unaccent keeps, repeated words,
-- the same title on several rows and types.
insert into app.snapshots (id, name, version_label, status, published_at)
values ('49000000-0000-0000-0000-000000000000', 'word prefix fixture', 'v49', 'archived', now());
create temporary table fixture_titles as
select i, pg_catalog.concat_ws(' ', w[1 + i % n], pg_catalog.substr(pg_catalog.md5(i::text), 1, 3 + i % 6), w[1 + (i * 7) % n],
         case when i % 3 = 0 then w[1 + (i * 11) % n] end, case when i % 5 = 0 then (100 + i % 40)::text end) as title
from (select array['Data', 'Database', 'Pandata', 'Install', 'incremental', '"Quoted" Install', 'Doing', 'dodo',
                   'A/B Testing', 'C++', 'Éclair', 'écrit', 'ÉCOLE', 'Über', 'naïve', 'aaaa', '#1111', '2024',
                   'x-ray', 'Straße', 'Ωmega', 'Дата', '日本語', 'l''été', 'e-mail', 'R2-D2', '3D', 'node.js',
                   'principles', 'metrics'] as w) words,
     lateral (select pg_catalog.array_length(words.w, 1) as n) len,
     generate_series(1, 300) i;
insert into app.domains (snapshot_id, id, slug, name, description, is_published)
values ('49000000-0000-0000-0000-000000000000', '49000000-0000-0000-0000-0000000000d1', 'data-install', 'Data Install Data', 'A domain', true),
       ('49000000-0000-0000-0000-000000000000', '49000000-0000-0000-0000-0000000000d2', 'eclair', '(Draft) Éclair Data', 'Another', true);
select tests.insert_titled_content('49000000-0000-0000-0000-000000000000', '49000000-0000-0000-0000-0000000000d1',
  array(select f.title from fixture_titles f order by f.i));

-- The texts: every 3- and 5-character run of letters and digits in the fixture's titles (word
-- prefixes and strings inside words alike), every 8- and 12-character text starting at a word
-- start (several words, punctuation, a partial last word), the same in the current snapshot's
-- titles (the seed's, when loaded), and texts of nothing.
create temporary table texts as
with snapshots as (
  select s.id from app.snapshots s where s.id = '49000000-0000-0000-0000-000000000000' or s.status = 'published'
), titles as (
  select t.snapshot_id, t.search_title
  from (select s.snapshot_id, s.search_title from app.sparks s
        union all select c.snapshot_id, c.search_title from app.concepts c
        union all select t.snapshot_id, t.search_title from app.trails t
        union all select d.snapshot_id, d.search_title from app.domains d) t
  join snapshots n on n.id = t.snapshot_id
)
select distinct t.snapshot_id as snapshot, pg_catalog.btrim(pg_catalog.substr(t.search_title, i, k)) as q
from titles t
cross join unnest(array[3, 5]) k
cross join lateral generate_series(1, pg_catalog.char_length(t.search_title) - k + 1) i
where pg_catalog.substr(t.search_title, i, k) ~ '^[[:alnum:]]+$'
union
select distinct t.snapshot_id, pg_catalog.btrim(pg_catalog.substr(t.search_title, i, k))
from titles t
cross join unnest(array[8, 12]) k
cross join lateral generate_series(1, pg_catalog.char_length(t.search_title) - 1) i
where (i = 1 or pg_catalog.substr(t.search_title, i - 1, 1) !~ '[[:alnum:]]')
  and pg_catalog.char_length(pg_catalog.btrim(pg_catalog.substr(t.search_title, i, k))) >= 2
union
select n.id, x.q from snapshots n, unnest(array['zzz', 'q9x', 'installz', 'c+', 'c++ d', 'a/b tes', 'r2-d', 'data data',
                                                 'ata dat', '#11', '--']) x(q);

create function pg_temp.candidates(snapshot uuid, q text, by_words boolean) returns table (type text, text text, norm text)
language sql as $$
  select c.type, c.text, c.norm from private.suggest_title_word_candidates(snapshot, q, by_words) c
$$;

select ok((select pg_catalog.count(*) from texts where snapshot = '49000000-0000-0000-0000-000000000000') >= 500
          and (select pg_catalog.count(*) from texts where snapshot = '49000000-0000-0000-0000-000000000000' and q ~ '[^[:alnum:]]') >= 300,
  'the comparison covers many texts of the fixture, several hundred of them with more than one word');
select is_empty($$
  select x.snapshot, x.q from texts x
   where exists (select * from pg_temp.candidates(x.snapshot, x.q, true)
                 except all select * from pg_temp.candidates(x.snapshot, x.q, false))
      or exists (select * from pg_temp.candidates(x.snapshot, x.q, false)
                 except all select * from pg_temp.candidates(x.snapshot, x.q, true)) $$,
  'for every text, the title words find the titles the trigram route finds, row for row');
select is_empty($$
  select x.q from (select distinct q from texts where snapshot = '49000000-0000-0000-0000-000000000000' and pg_catalog.char_length(q) = 3) x
   where exists (select * from pg_temp.candidates(null, x.q, true)
                 except all select * from pg_temp.candidates(null, x.q, false))
      or exists (select * from pg_temp.candidates(null, x.q, false)
                 except all select * from pg_temp.candidates(null, x.q, true)) $$,
  'without a snapshot (every snapshot), the two routes find the same titles for every 3-character text');
select ok((select pg_catalog.count(*) from texts x
            where x.snapshot = '49000000-0000-0000-0000-000000000000'
              and exists (select from pg_temp.candidates(x.snapshot, x.q, true))) >= 200
          and (select pg_catalog.count(*) from texts x
                where x.snapshot = '49000000-0000-0000-0000-000000000000' and x.q ~ '[^[:alnum:]]'
                  and exists (select from pg_temp.candidates(x.snapshot, x.q, true))) >= 100
          and not exists (select from pg_temp.candidates('49000000-0000-0000-0000-000000000000', 'nstal', true)),
  'many texts have candidates, many of several words among them, and a text inside a word ("nstal") has none');
select is(array(select c.text from pg_temp.candidates('49000000-0000-0000-0000-000000000000', 'install', true) c where c.type = 'domain'),
          array['Data Install Data'],
  'a title with a later word starting with the text is a candidate');
select is_empty($$ select * from pg_temp.candidates('49000000-0000-0000-0000-000000000000', 'install', true) c
                    where c.norm like 'install%' $$,
  'a title starting with the text is not: tier 0 suggests it');
select ok(exists (select from pg_temp.candidates('49000000-0000-0000-0000-000000000000', 'quoted', true) c where c.text like '"Quoted"%'),
  'a word after leading punctuation is a later word: the title does not start with it');

-- The tier ranks the candidates once, whichever way they were found.
select is(private.suggest_title_word_matches('49000000-0000-0000-0000-000000000000', 'data', 20, '[]'),
          (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', u.text, 'type', u.type)
                    order by u.similarity desc, pg_catalog.char_length(u.text), u.text collate app.alphabetical, u.type)
           from (select d.* from (select distinct on (c.text, c.type) c.type, c.text, extensions.word_similarity('data', c.norm) as similarity
                                  from pg_temp.candidates('49000000-0000-0000-0000-000000000000', 'data', false) c
                                  order by c.text, c.type) d
                 order by d.similarity desc, pg_catalog.char_length(d.text), d.text collate app.alphabetical, d.type
                 limit 20) u),
  'tier 1 for one word gives the trigram route''s titles in tier 1''s order');

-- The indexes follow writes: a renamed title is found by its new words only.
update app.sparks set title = 'Marsupial Zygote ' || slug
 where snapshot_id = '49000000-0000-0000-0000-000000000000' and slug in ('spark-1', 'spark-2');
select set_eq($$ select text from pg_temp.candidates('49000000-0000-0000-0000-000000000000', 'zyg', true) $$,
              $$ values ('Marsupial Zygote spark-1'), ('Marsupial Zygote spark-2') $$,
  'after a rename the new words find the title');

select * from finish();
rollback;
