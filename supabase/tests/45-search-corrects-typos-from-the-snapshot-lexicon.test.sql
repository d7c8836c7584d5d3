-- Search corrects typos from the snapshot's lexicon: the edit distance counts a transposition as
-- one edit, the lexicon follows every content write (the import's replica mode too), a word is
-- corrected only within its typo budget and only to words of the selected snapshot, exact matches
-- come before prefixes before corrections, and meta.corrected_query names the correction.
begin;
select plan(82);

-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();

-- private.osa_distance: optimal string alignment (a transposition of adjacent characters is one edit)
select is(private.osa_distance('', ''), 0, 'two empty strings are zero edits apart');
select is(private.osa_distance('testing', 'testing'), 0, 'equal strings are zero edits apart');
select is(private.osa_distance('tesitng', 'testing'), 1, 'an adjacent transposition is one edit');
select is(private.osa_distance('recursoin', 'recursion'), 1, 'a transposition near the end is one edit');
select is(private.osa_distance('abcd', 'bacd'), 1, 'a transposition at the start is one edit');
select is(private.osa_distance('kitten', 'sitting'), 3, 'substitutions and an insertion count one edit each (levenshtein''s example)');
select is(private.osa_distance('ca', 'abc'), 3, 'no substring is edited twice (true Damerau-Levenshtein says 2)');
select is(private.osa_distance('', 'abc'), 3, 'insertions alone count one edit each');
select is(private.osa_distance('abc', ''), 3, 'deletions alone count one edit each');
select is(private.osa_distance('crème', 'creme'), 1, 'the distance compares characters, not bytes');
select is(private.osa_distance(null, 'abc'), null, 'a null argument gives a null distance');
select is(private.osa_distance('tesit', 'testing', true), 1, 'with prefix, "tesit" is one edit from the prefix "testi" of "testing"');
select is(private.osa_distance('test', 'testing', true), 0, 'with prefix, a true prefix is zero edits away');
select is(private.osa_distance('xyz', 'testing', true), 3, 'with prefix, a word with nothing in common is as far as its length');
select is(
  (select p.provolatile::text from pg_catalog.pg_proc p
   where p.oid = 'private.osa_distance(text, text, boolean, integer)'::regprocedure),
  'i', 'the distance is immutable, so the planner may fold it');
select is(array[private.osa_distance('abc', null), private.osa_distance('abc', 'abd', null)], array[null, null]::int[],
  'a null target or prefix gives a null distance too');
-- within: exact up to the bound, the bound + 1 beyond it
select is(array[private.osa_distance('kitten', 'sitting', false, 3), private.osa_distance('kitten', 'sitting', false, 2),
                private.osa_distance('kitten', 'sitting', false, 1), private.osa_distance('kitten', 'sitting', false, 0)],
          array[3, 3, 2, 1], 'within a bound the distance is exact, beyond it the bound + 1');
select is(array[private.osa_distance('tesitng', 'testing', false, 1), private.osa_distance('testing', 'testing', false, 0),
                private.osa_distance('abc', 'abcdef', false, 2), private.osa_distance('tesit', 'testingly', true, 1),
                private.osa_distance('xyz', 'testing', true, 1), private.osa_distance('abc', 'abd', false, -1)],
          array[1, 0, 3, 1, 2, 1], 'a transposition, equal words, lengths too far apart, prefixes, a negative bound (zero)');
-- 60 words over a four-letter alphabet (near neighbours, transpositions, prefixes), paired below.
create temporary table pair_words as
select pg_catalog.translate(pg_catalog.substr(pg_catalog.md5(i::text), 1, 1 + i % 9), '0123456789abcdef', 'abcdbacdabdcadbc') as w
from pg_catalog.generate_series(1, 60) i;

-- The bounded table gives the unbounded answer, capped: every pair of the 60 words, bounds 0 to
-- 3, both modes.
select is(
  (select count(*)::int
   from pair_words x
   cross join pair_words y
   cross join pg_catalog.generate_series(0, 3) k
   cross join (values (false), (true)) p(prefix)
   where private.osa_distance(x.w, y.w, p.prefix, k) <> least(private.osa_distance(x.w, y.w, p.prefix), k + 1)),
  0, 'over 28,800 comparisons, the bounded distance equals the unbounded one capped at the bound + 1');

-- private.search_near_misses: every deletion and adjacent transposition, each once, never the word
select is((select pg_catalog.array_agg(v order by v) from pg_catalog.unnest(private.search_near_misses('join')) v),
          array['jin', 'jion', 'joi', 'jon', 'joni', 'oin', 'ojin'], 'the deletions and transpositions of "join"');
select is(private.search_near_misses('aaaa'), array['aaa'], 'a variant equal to the word or to another is left out');

-- private.search_one_edit_patterns: exactly the words within one edit, whole or as a beginning
-- (every ordered pair of the 60 words above, both modes).
select is(
  (select count(*)::int
   from pair_words x
   cross join pair_words y
   cross join (values (false), (true)) p(prefix)
   where (private.osa_distance(x.w, y.w, p.prefix) <= 1) is distinct from (y.w like any (private.search_one_edit_patterns(x.w, p.prefix)))),
  0, 'over 7,200 pairs, a word matches a pattern exactly when it is within one edit (whole, or as a beginning)');
select is(array[pg_catalog.cardinality(private.search_one_edit_patterns('crmi', false)),
                pg_catalog.cardinality(private.search_one_edit_patterns('aaaa', true))],
          array[17, 11], 'at most 4 x length + 1 patterns, each once ("aaaa": itself, 1 deletion, 4 substitutions, 5 insertions)');
select ok(private.search_one_edit_patterns('a%b', false) is null and private.search_one_edit_patterns('a_b', true) is null
          and private.search_one_edit_patterns('ab c', false) is null,
          'a word with anything but letters and digits (LIKE wildcards among them) gets no patterns');

-- private.search_deletions and private.search_lexicon_deletions: the SymSpell keys correction
-- candidates are found by.
select is((select pg_catalog.array_agg(distinct v order by v) from pg_catalog.unnest(private.search_deletions('book', 1)) v),
          array['bok', 'boo', 'book', 'ook'], 'one deletion: the word and each string one character shorter');
select is(array[pg_catalog.cardinality(private.search_deletions('abcd', 2)), pg_catalog.cardinality(private.search_lexicon_deletions('abcde')),
                pg_catalog.cardinality(private.search_lexicon_deletions('abcdef'))],
          array[11, 6, 22], 'two deletions: 1 + n + n(n - 1)/2 strings; a lexicon word of 6+ characters gets two, a shorter one one');
-- Every word within a typed word's budget shares a key with it, so the index finds every
-- candidate: 96 words of 4 to 11 letters over two and three letters (many close pairs), every
-- ordered pair.
create temporary table budget_words as
select pg_catalog.translate(pg_catalog.substr(pg_catalog.md5(i::text), 1, 4 + i % 8), '0123456789abcdef',
                            case when i % 2 = 0 then 'abababababababab' else 'abcabcabcabcabca' end) as w
from pg_catalog.generate_series(1, 96) i;
create temporary table budget_pairs as
select x.w as typed, y.w as word, private.search_typo_budget(x.w) as budget,
       private.search_deletions(x.w, private.search_typo_budget(x.w)) operator(pg_catalog.&&) private.search_lexicon_deletions(y.w) as shares_key
from budget_words x
cross join budget_words y
where private.osa_distance(x.w, y.w) <= private.search_typo_budget(x.w);
select is((select count(*)::int from budget_pairs where not shares_key), 0,
          'every word within a typed word''s budget shares a deletion string with it');
select ok((select count(*) filter (where budget = 1 and typed <> word) >= 100 and count(*) filter (where budget = 2 and typed <> word) >= 100
           from budget_pairs),
          'over at least 100 pairs within one edit and 100 within two (not only equal words)');

-- private.search_typo_budget: none below 4 characters, 1 for 4-7, 2 for 8+
select is(array[private.search_typo_budget('abc'), private.search_typo_budget('abcd'), private.search_typo_budget('abcdefg'),
                private.search_typo_budget('abcdefgh'), private.search_typo_budget('linearizability')],
          array[0, 1, 1, 2, 2], 'a word of 1-3 characters gets no edit, 4-7 one, 8 or more two');

-- Fixture: a published snapshot and a draft with words of their own.
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('45000000-0000-0000-0000-000000000001', 'typo fixture', 'v45', 'published', now()),
  ('45000000-0000-0000-0000-000000000002', 'typo draft', 'v45-draft', 'draft', null);
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
select '45000000-0000-0000-0000-000000000001', extensions.gen_random_uuid(), s.slug, s.title, s.summary, s.difficulty, 5
from (values ('recursion', 'Recursion', 'A function that calls itself', 'intermediate'),
             ('testing-basics', 'Testing Basics', 'Why tests pay off', 'beginner'),
             ('unit-testing', 'Unit Testing', 'Small, fast tests', 'beginner'),
             ('tests-in-ci', 'Tests in CI', 'Run the suite on every push', 'intermediate'),
             ('creme', 'Crème Brûlée', 'A custard with a burnt sugar crust', 'beginner')) s(slug, title, summary, difficulty);
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
values ('45000000-0000-0000-0000-000000000002', extensions.gen_random_uuid(), 'kubernetes', 'Kubernetes Pods', 'Scheduling containers', 'advanced', 5);

create function pg_temp.lexicon() returns table (snapshot_id uuid, word text, docs integer) language sql as
  $$ select l.snapshot_id, l.word::text, l.docs from app.search_lexicon l where l.snapshot_id::text like '45000000-%' $$;
-- what the lexicon must hold: every word of every content row, counted once per row
create function pg_temp.lexicon_expected() returns table (snapshot_id uuid, word text, docs integer) language sql as $$
  select r.snapshot_id, w.word, count(*)::integer
  from (select s.snapshot_id, s.title, s.summary as body from app.sparks s
        union all select c.snapshot_id, c.title, c.description from app.concepts c
        union all select t.snapshot_id, t.title, t.description from app.trails t
        union all select d.snapshot_id, d.name, d.description from app.domains d) r
  cross join lateral private.search_words(r.title || ' ' || coalesce(r.body, '')) w(word)
  where r.snapshot_id::text like '45000000-%'
  group by r.snapshot_id, w.word $$;

select set_eq('select * from pg_temp.lexicon()', 'select * from pg_temp.lexicon_expected()',
  'the lexicon holds the words of every row, per snapshot, counted per row');
select is((select docs from app.search_lexicon where snapshot_id = '45000000-0000-0000-0000-000000000001' and word = 'creme'),
  1, 'words are stored normalised (unaccented, lower-case)');
select ok(exists (select from app.search_lexicon where snapshot_id = '45000000-0000-0000-0000-000000000001' and word = 'ci')
          and not exists (select from app.search_lexicon where snapshot_id = '45000000-0000-0000-0000-000000000001' and word = 'a'),
  'one-letter words are left out, two-letter words kept');

update app.sparks set summary = 'Functions calling themselves' where snapshot_id = '45000000-0000-0000-0000-000000000001' and slug = 'recursion';
delete from app.sparks where snapshot_id = '45000000-0000-0000-0000-000000000001' and slug = 'tests-in-ci';
select set_eq('select * from pg_temp.lexicon()', 'select * from pg_temp.lexicon_expected()',
  'updates and deletes are followed (words no row holds are gone)');
select ok(not exists (select from app.search_lexicon where snapshot_id = '45000000-0000-0000-0000-000000000001' and word = 'itself'),
  'a word removed from its only row leaves the lexicon');

-- The content import writes with session_replication_role = replica: the lexicon follows.
set local session_replication_role = replica;
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
values ('45000000-0000-0000-0000-000000000001', extensions.gen_random_uuid(), 'tests-in-ci', 'Tests in CI', 'Run the suite on every push', 'intermediate', 5);
reset session_replication_role;
select set_eq('select * from pg_temp.lexicon()', 'select * from pg_temp.lexicon_expected()',
  'writes in replica mode (the import) are followed (ENABLE ALWAYS)');

-- Corrections: within the budget, against the selected snapshot only.
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'recursoin'), 'recursion', 'a transposition is corrected');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'tesitng basics'), 'testing basics', 'each word is corrected on its own');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'tesit'), 'testing',
  'the last word is also read as a typed prefix ("tesit" -> "testing")');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'recursion'), null, 'a word of the snapshot is never corrected');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'tests'), null, 'a word whose stem the snapshot holds is not corrected');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'recur'), null, 'a prefix of a word of the snapshot is not corrected');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'uint'), 'unit', 'a 4-character word gets one edit');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'nuit'), 'unit', 'a transposition of the first two letters of a short word is found');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'tset basics'), null, 'words of 1-3 characters are never corrected');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'rcuresoin'), null, 'a 9-character word allows 2 edits, not 3');
-- Two transpositions leave few trigrams in common (trigram candidates missed this one): every
-- word within the budget is a candidate.
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'rceursoin'), 'recursion', 'two transpositions in a 9-character word are found');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'rceursion'), 'recursion', 'a 9-character word allows 2 edits');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'cremme brulee'), 'creme brulee', 'accents are ignored as in search');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', '"recursoin"'), null, 'websearch syntax is not corrected');
select is(private.search_correct('45000000-0000-0000-0000-000000000001', 'kubrenetes'), null,
  'a draft''s words never correct a query of another snapshot');
select is(private.search_correct('45000000-0000-0000-0000-000000000002', 'kubrenetes'), 'kubernetes', 'the draft''s own words correct its queries');

-- A query that matches nothing as a whole keeps its longest matching run of leading words (matching strategy "last").
select is(private.search_leading_words('45000000-0000-0000-0000-000000000001', 'unit testing custard'), 'unit testing',
  'words that never meet in one row: the last ones are dropped until the rest matches');
select is(private.search_leading_words('45000000-0000-0000-0000-000000000001', 'unit custard brulee'), 'unit',
  'several words may be dropped, the last first');
select is(private.search_leading_words('45000000-0000-0000-0000-000000000001', 'zzzz recursion'), null,
  'the first word is never dropped: when it matches nothing, nothing is kept');
select is(private.search_leading_words('45000000-0000-0000-0000-000000000001', '"unit custard"'), null, 'websearch syntax is never shortened');
select is(private.search_leading_words('45000000-0000-0000-0000-000000000001', 'kubernetes pods'), null,
  'a draft''s words never shorten a query of another snapshot');

-- private.search_has_match and private.search_matches
select is(array[private.search_has_match('45000000-0000-0000-0000-000000000001', private.search_query('custard crust')),
                private.search_has_match('45000000-0000-0000-0000-000000000001', private.search_query('custard recursion')),
                private.search_has_match('45000000-0000-0000-0000-000000000002', private.search_query('custard'))],
  array[true, false, false], 'has_match is true only when one row of the snapshot holds every word');
select ok((select p.proconfig @> array['enable_seqscan=off'] from pg_catalog.pg_proc p
            where p.oid = 'private.search_has_match(uuid, tsquery)'::regprocedure),
  'has_match never plans a sequential scan that reads every row when the words never meet');
select is((select array_agg(m.type || ':' || coalesce(m.difficulty, '-') order by m.type, m.difficulty)
             from private.search_matches('45000000-0000-0000-0000-000000000001', private.search_query('tests'), 'tests', false) m),
  array['spark:beginner', 'spark:beginner', 'spark:intermediate'], 'search_matches without filters returns every match');
select is((select array_agg(m.difficulty) from private.search_matches('45000000-0000-0000-0000-000000000001', private.search_query('tests'), 'tests', false, 'spark', 'intermediate') m),
  array['intermediate'], 'search_matches keeps one type and difficulty when asked');
select is((select count(*)::integer from private.search_matches('45000000-0000-0000-0000-000000000001', private.search_query('tests'), 'tests', false, 'concept') m),
  0, 'search_matches of another type reads nothing');
select is((select array_agg(m.snapshot_id::text order by m.snapshot_id)
             from private.search_matches(null, private.search_query('kubernetes or recursion'), 'kubernetes or recursion', false) m
            where m.snapshot_id::text like '45000000-%'),
  array['45000000-0000-0000-0000-000000000001', '45000000-0000-0000-0000-000000000002'],
  'with no snapshot (nothing published yet) search_matches reads every snapshot');
select is((select array_agg(m.snapshot_id::text) from private.search_matches(null, null, 'kubernetes pods', true) m
            where m.snapshot_id::text like '45000000-%'),
  array['45000000-0000-0000-0000-000000000002'], 'and so does its trigram pass on titles');

-- private.suggest_similar_titles: titles holding a lexicon word close to one typed word
select is(private.suggest_similar_titles('45000000-0000-0000-0000-000000000001', 'testi', 5, '[]'),
  '[{"text": "Tests in CI", "type": "spark"}, {"text": "Unit Testing", "type": "spark"}, {"text": "Testing Basics", "type": "spark"}]'::jsonb,
  'similar titles: every title holding a stem of a close word, the closest word first, then the shorter title');
select is(private.suggest_similar_titles('45000000-0000-0000-0000-000000000001', 'testi', 5, '[{"text": "Tests in CI", "type": "spark"}]'),
  '[{"text": "Unit Testing", "type": "spark"}, {"text": "Testing Basics", "type": "spark"}]'::jsonb,
  'similar titles leave out the suggestions already taken');
select is(private.suggest_similar_titles('45000000-0000-0000-0000-000000000001', 'kubernetis', 5, '[]'), '[]'::jsonb,
  'similar titles never come from a draft''s words');
select is(api_free.n, 0, 'autocomplete after a whole word has no similarity tier: the exact and typo tiers say what there is')
  from (select jsonb_array_length(api.list_search_suggestions('recursion zz') -> 'suggestions') as n) api_free;

-- Through the API
-- acting as a service caller
select tests.authenticate_as_service();
select is(api.search_content('recursoin') #>> '{data,0,slug}', 'recursion', 'search for "recursoin" finds Recursion');
select is(api.search_content('recursoin') #>> '{meta,corrected_query}', 'recursion', 'search names the corrected query in meta.corrected_query');
select ok(not (api.search_content('recursion') -> 'meta' ? 'corrected_query'), 'search has no corrected_query when nothing was corrected');
select is(api.search_content('recursiooonn') -> 'data' -> 0 ->> 'slug' || coalesce(api.search_content('recursiooonn') #>> '{meta,corrected_query}', ''),
  'recursion', 'beyond the typo budget, the trigram title fallback still answers, uncorrected');
select is(api.search_content('kubrenetes') -> 'data', '[]'::jsonb, 'search in the current snapshot never corrects to a draft''s words');
select is(api.search_content('unit testing custard') #>> '{meta,corrected_query}', 'unit testing',
  'search for words that never meet names the words it kept in meta.corrected_query');
select is(api.search_content('recursoin custard') #>> '{meta,corrected_query}', 'recursion',
  'a correction that matches nothing as a whole keeps its leading words that match');
select ok(not (api.search_content('zzzz recursoin') -> 'meta' ? 'corrected_query'),
  'when neither the correction nor its leading words match, the trigram fallback answers the text as typed');
select is(api.search_content('kubrenetes', snapshot_id => '45000000-0000-0000-0000-000000000002') #>> '{data,0,slug}', 'kubernetes',
  'search in a selected draft corrects to the draft''s own words');
select is(api.list_search_suggestions('tesitng'),
  '{"suggestions": [{"text": "Testing Basics", "type": "spark"}, {"text": "Unit Testing", "type": "spark"}], "meta": {"corrected_query": "testing"}}'::jsonb,
  'autocomplete for "tesitng" suggests the titles with "testing" and names the correction');
select is(api.list_search_suggestions('testi', 5),
  '{"suggestions": [{"text": "Testing Basics", "type": "spark"}, {"text": "Unit Testing", "type": "spark"}, {"text": "Tests in CI", "type": "spark"}]}'::jsonb,
  'autocomplete ranks a title prefix, then a word prefix, then a trigram match, and leaves a known prefix uncorrected');
select is(api.list_search_suggestions('tests', 5),
  '{"suggestions": [{"text": "Tests in CI", "type": "spark"}, {"text": "Unit Testing", "type": "spark"}, {"text": "Testing Basics", "type": "spark"}]}'::jsonb,
  'autocomplete leaves a known word uncorrected: its exact match first, then trigram neighbours');
select is(api.list_search_suggestions('tesitng', 5) #>> '{suggestions,0,text}', 'Testing Basics',
  'autocomplete puts a corrected title prefix before word prefixes of the correction');
select throws_ok($$ insert into app.search_lexicon values ('45000000-0000-0000-0000-000000000001', 'x', 1) $$, '42501', null,
  'request roles cannot write the lexicon');
reset role;

delete from app.snapshots where id = '45000000-0000-0000-0000-000000000002';
select ok(not exists (select from app.search_lexicon where snapshot_id = '45000000-0000-0000-0000-000000000002'),
  'a snapshot''s words go with it');

select * from finish();
rollback;
