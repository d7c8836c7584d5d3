-- Search: full-text search with a trigram fallback, autocomplete, the postings that answer a
-- plain-word query without visiting every match, and typo correction against a per-snapshot
-- lexicon.

-- Led by the snapshot id (btree_gin): a search's bitmap holds the rows of its snapshot only,
-- so its heap visits do not grow with the archived snapshots beside it (with one release and
-- its next one, half the visits: 30 -> 12 ms for "tools metrics" at 50,000 sparks).
create index sparks_search on app.sparks using gin (snapshot_id, search_vector);

create index concepts_search on app.concepts using gin (snapshot_id, search_vector);

create index trails_search on app.trails using gin (snapshot_id, search_vector);

create index domains_search on app.domains using gin (snapshot_id, search_vector);

create index sparks_title_trgm on app.sparks using gin (search_title extensions.gin_trgm_ops);

create index concepts_title_trgm on app.concepts using gin (search_title extensions.gin_trgm_ops);

create index trails_title_trgm on app.trails using gin (search_title extensions.gin_trgm_ops);

create index domains_name_trgm on app.domains using gin (search_title extensions.gin_trgm_ops);

-- private.search_query
-- Purpose: the tsquery for a normalised search text: websearch_to_tsquery('english'), widened
--          with a prefix match on the last word when the text is plain words ("postgres ind"
--          also finds "postgres indexes"). Stop words never become prefixes.
create or replace function private.search_query(normalized text)
returns tsquery
language plpgsql
immutable parallel safe
set search_path = ''
as $$
declare
  words text[];
  word_count integer;
  last_word text;
  full_query tsquery := pg_catalog.websearch_to_tsquery('pg_catalog.english'::regconfig, search_query.normalized);
  prefix_query tsquery;
begin
  if search_query.normalized !~ '^[[:alnum:][:space:]]+$' then
    return full_query; -- quotes, "or", "-word": the caller wrote websearch syntax; honour it
  end if;
  words := pg_catalog.regexp_split_to_array(pg_catalog.btrim(search_query.normalized), '\s+');
  word_count := pg_catalog.array_length(words, 1);
  last_word := words[word_count];
  if pg_catalog.char_length(last_word) < 2
     or pg_catalog.to_tsvector('pg_catalog.english'::regconfig, last_word) = ''::tsvector then
    return full_query;
  end if;
  prefix_query := pg_catalog.to_tsquery('pg_catalog.simple'::regconfig, pg_catalog.quote_literal(last_word) || ':*');
  if word_count > 1 then
    prefix_query := pg_catalog.websearch_to_tsquery('pg_catalog.english'::regconfig,
                      pg_catalog.array_to_string(words[1:word_count - 1], ' ')) && prefix_query;
  end if;
  return full_query || prefix_query;
end
$$;
comment on function private.search_query(text) is
  'websearch_to_tsquery(english) of a normalised text, OR-ed with a prefix match on its last word when the text is plain words.';
grant execute on function private.search_query(text) to anon, authenticated;

-- private.search_matches
-- Purpose: every content row of the snapshot matching the query, without ranking: the set that
--          facets count and the ranked candidates are drawn from. title_hit (the query matches
--          the title alone, a cheap check on the stored vector) decides which rows are ranked
--          first when there are more matches than the rank cap. `fuzzy` switches from the
--          full-text match to the trigram word-similarity match on titles (typo fallback).
--          `kind` and `level` (null: any) keep one content type and one difficulty: tables they
--          rule out are not read (a gating filter, also in a generic plan). A match is narrow:
--          its key, difficulty, title_hit and search document number (the candidate order,
--          as in the postings). At 500,000 sparks a common word matches hundreds of thousands of
--          rows, and RETURN QUERY materialises each one; what ranking needs is read for the
--          ranked candidates only (private.search_hits). Plain words of one snapshot are
--          answered from app.search_postings instead (private.search_posted_matches).
create or replace function private.search_matches(snapshot uuid, query tsquery, normalized text, fuzzy boolean, kind text default null, level text default null)
returns table(type text, snapshot_id uuid, id uuid, difficulty text, title_hit boolean, doc integer)
language plpgsql
stable
set search_path = ''
set "pg_trgm.word_similarity_threshold" to '0.4'
as $$
declare
  -- The spec's "no current snapshot: no filter" as a list, searched one snapshot at a time so
  -- that every plan (generic ones included) gives the snapshot to the index. With
  -- `snapshot is null or …` no plan can; with `= any(list)` the generic plan filtered heap rows
  -- instead, visiting the matches of every snapshot (at 500,000 sparks with one release and its
  -- next, 43,580 heap pages instead of 21,874 for "principles tools").
  snapshots uuid[] := case when search_matches.snapshot is null then array(select x.id from app.snapshots x)
                           else array[search_matches.snapshot] end;
  one uuid;
begin
  foreach one in array snapshots loop
    if not search_matches.fuzzy then
      return query
        select 'spark'::text, s.snapshot_id, s.id, s.difficulty,
               pg_catalog.ts_filter(s.search_vector, '{a}') @@ search_matches.query, s.search_doc
          from app.sparks s
         where coalesce(search_matches.kind, 'spark') = 'spark'
           and s.snapshot_id = one
           and s.search_vector @@ search_matches.query
           and (search_matches.level is null or s.difficulty = search_matches.level)
        union all
        select 'concept', c.snapshot_id, c.id, null,
               pg_catalog.ts_filter(c.search_vector, '{a}') @@ search_matches.query, c.search_doc
          from app.concepts c
         where coalesce(search_matches.kind, 'concept') = 'concept' and search_matches.level is null
           and c.snapshot_id = one
           and c.search_vector @@ search_matches.query
        union all
        select 'trail', t.snapshot_id, t.id, t.difficulty_level,
               pg_catalog.ts_filter(t.search_vector, '{a}') @@ search_matches.query, t.search_doc
          from app.trails t
         where coalesce(search_matches.kind, 'trail') = 'trail'
           and t.snapshot_id = one
           and t.search_vector @@ search_matches.query
           and (search_matches.level is null or t.difficulty_level = search_matches.level)
        union all
        select 'domain', d.snapshot_id, d.id, null,
               pg_catalog.ts_filter(d.search_vector, '{a}') @@ search_matches.query, d.search_doc
          from app.domains d
         where coalesce(search_matches.kind, 'domain') = 'domain' and search_matches.level is null
           and d.snapshot_id = one
           and d.search_vector @@ search_matches.query;
    else
      return query
        select 'spark'::text, s.snapshot_id, s.id, s.difficulty, true, s.search_doc
          from app.sparks s
         where coalesce(search_matches.kind, 'spark') = 'spark'
           and s.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) s.search_title
           and (search_matches.level is null or s.difficulty = search_matches.level)
        union all
        select 'concept', c.snapshot_id, c.id, null, true, c.search_doc
          from app.concepts c
         where coalesce(search_matches.kind, 'concept') = 'concept' and search_matches.level is null
           and c.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) c.search_title
        union all
        select 'trail', t.snapshot_id, t.id, t.difficulty_level, true, t.search_doc
          from app.trails t
         where coalesce(search_matches.kind, 'trail') = 'trail'
           and t.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) t.search_title
           and (search_matches.level is null or t.difficulty_level = search_matches.level)
        union all
        select 'domain', d.snapshot_id, d.id, null, true, d.search_doc
          from app.domains d
         where coalesce(search_matches.kind, 'domain') = 'domain' and search_matches.level is null
           and d.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) d.search_title;
    end if;
  end loop;
end
$$;
comment on function private.search_matches(uuid,tsquery,text,boolean,text,text) is
  'Unranked matches (type, snapshot_id, id, difficulty, title_hit, search document number) of a search in one snapshot, optionally of one type and difficulty: full-text, or trigram on titles when fuzzy.';
grant execute on function private.search_matches(uuid,tsquery,text,boolean,text,text) to anon, authenticated;

-- private.search_key: one search hit's key, the content type, the row's snapshot and its search
-- document number (unique in the snapshot).
create type private.search_key as (
  type text,
  snapshot_id uuid,
  doc integer
);

-- private.search_hits
-- Purpose: what search and autocomplete show or rank of the hits they picked, read from the
--          four content tables by key in one call: id, slug, title (a domain's name), summary
--          (a concept's, trail's or domain's description), the normalised title and the search
--          document. The one place these fields are mapped from the content tables.
--          Each table is read with one scan of its (snapshot_id, search_doc) index for all its
--          keys: rows are written in document order, so 1000 candidates sit on a few hundred
--          pages (683 buffers for 1000 sparks at 500,000, against 4,010 looked up one by one),
--          once per snapshot of the keys (one, unless no snapshot is current).
-- Params:  keys (a page, the ranked candidates, or autocomplete's similar titles).
-- Returns: one row per key found, in no particular order.
create or replace function private.search_hits(keys private.search_key[])
returns table(type text, snapshot_id uuid, doc integer, id uuid, slug text, title text, summary text, search_title text, document tsvector)
language sql
stable
set search_path = ''
as $$
  with wanted as materialized (
    select k.type, k.snapshot_id, k.doc from pg_catalog.unnest(search_hits.keys) k
  ),
  snapshots as (
    select distinct w.snapshot_id from wanted w
  )
  select 'spark', s.snapshot_id, s.search_doc, s.id, s.slug, s.title, s.summary, s.search_title, s.search_vector
    from snapshots x
    join app.sparks s on s.snapshot_id = x.snapshot_id
     and s.search_doc = any(array(select w.doc from wanted w where w.type = 'spark' and w.snapshot_id = x.snapshot_id))
  union all
  select 'concept', c.snapshot_id, c.search_doc, c.id, c.slug, c.title, c.description, c.search_title, c.search_vector
    from snapshots x
    join app.concepts c on c.snapshot_id = x.snapshot_id
     and c.search_doc = any(array(select w.doc from wanted w where w.type = 'concept' and w.snapshot_id = x.snapshot_id))
  union all
  select 'trail', t.snapshot_id, t.search_doc, t.id, t.slug, t.title, t.description, t.search_title, t.search_vector
    from snapshots x
    join app.trails t on t.snapshot_id = x.snapshot_id
     and t.search_doc = any(array(select w.doc from wanted w where w.type = 'trail' and w.snapshot_id = x.snapshot_id))
  union all
  select 'domain', d.snapshot_id, d.search_doc, d.id, d.slug, d.name, d.description, d.search_title, d.search_vector
    from snapshots x
    join app.domains d on d.snapshot_id = x.snapshot_id
     and d.search_doc = any(array(select w.doc from wanted w where w.type = 'domain' and w.snapshot_id = x.snapshot_id))
$$;
comment on function private.search_hits(private.search_key[]) is
  'Id, slug, title, summary, normalised title and search document of search hits, by (type, snapshot_id, search document number), from the four content tables.';
grant execute on function private.search_hits(private.search_key[]) to anon, authenticated;

-- Autocomplete's first tier walks these in order and stops after `limit` rows: title-prefix
-- suggestions cost the same however many titles share the prefix. Collation "C" makes the
-- btree serve both `like 'prefix%'` and the order.
create index sparks_search_title on app.sparks (snapshot_id, search_title collate "C");

create index concepts_search_title on app.concepts (snapshot_id, search_title collate "C");

create index trails_search_title on app.trails (snapshot_id, search_title collate "C");

create index domains_search_title on app.domains (snapshot_id, search_title collate "C");

-- Autocomplete's word-prefix tier for two-letter prefixes (private.suggest_title_word_starts):
-- no trigram covers fewer than 3 letters, so without this table "do" would read every title of
-- the snapshot and compute its word similarity.
create table app.search_title_word_starts (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  word_start text collate "C" not null,
  type text not null,
  id uuid not null,
  similarity real not null,
  title text collate app.alphabetical not null
);
comment on table app.search_title_word_starts is
  'Autocomplete: one row per (content row, first two characters of a word of 2+ letters or digits of its normalised title), leaving out the two the title starts with (tier 0 suggests those titles), with the row''s title (a domain''s name) and extensions.word_similarity(word_start, search_title). Maintained by triggers.';
-- In tier 1's order (similarity, shorter title, title, type): the best suggestions of a prefix
-- are the first entries of its range. id last: the remove statement finds each row by its key.
create index search_title_word_starts_order on app.search_title_word_starts
  (snapshot_id, word_start, similarity desc, pg_catalog.char_length(title), title, type, id);
alter table app.search_title_word_starts enable row level security;
create policy "anyone reads search title word starts" on app.search_title_word_starts
  for select to anon, authenticated
  using (true);
grant select on app.search_title_word_starts to anon, authenticated;

-- private.suggest_title_prefixes
-- Purpose: autocomplete tier 0: distinct {text, type} whose normalised title starts with the
--          pattern, in normalised-title order, at most `wanted` per content type (index walks).
create or replace function private.suggest_title_prefixes(snapshot uuid, pattern text, wanted integer)
returns table(type text, text text, norm text)
language sql
stable
set search_path = ''
as $$
  (select distinct on (s.search_title collate "C", s.title) 'spark'::text, s.title, s.search_title
   from app.sparks s
   where (suggest_title_prefixes.snapshot is null or s.snapshot_id = suggest_title_prefixes.snapshot)
     and (s.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by s.search_title collate "C", s.title
   limit suggest_title_prefixes.wanted)
  union all
  (select distinct on (c.search_title collate "C", c.title) 'concept', c.title, c.search_title
   from app.concepts c
   where (suggest_title_prefixes.snapshot is null or c.snapshot_id = suggest_title_prefixes.snapshot)
     and (c.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by c.search_title collate "C", c.title
   limit suggest_title_prefixes.wanted)
  union all
  (select distinct on (t.search_title collate "C", t.title) 'trail', t.title, t.search_title
   from app.trails t
   where (suggest_title_prefixes.snapshot is null or t.snapshot_id = suggest_title_prefixes.snapshot)
     and (t.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by t.search_title collate "C", t.title
   limit suggest_title_prefixes.wanted)
  union all
  (select distinct on (d.search_title collate "C", d.name) 'domain', d.name, d.search_title
   from app.domains d
   where (suggest_title_prefixes.snapshot is null or d.snapshot_id = suggest_title_prefixes.snapshot)
     and (d.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by d.search_title collate "C", d.name
   limit suggest_title_prefixes.wanted)
$$;
comment on function private.suggest_title_prefixes(uuid,text,integer) is
  'Autocomplete tier 0: titles starting with a LIKE-escaped pattern, at most `wanted` per content type, via the (snapshot_id, search_title collate C) indexes.';
grant execute on function private.suggest_title_prefixes(uuid,text,integer) to anon, authenticated;

-- private.search_title_terms
-- Purpose: the terms of a normalised title, for the GIN indexes below: its words (maximal runs
--          of letters and digits, as written: not stemmed, no stop word left out) and each two
--          adjacent words joined by a space, as the lexemes of a tsvector. `'inc':*` finds the
--          titles holding a word that starts with "inc", `'habits ha':*` those where "habits"
--          is followed by a word starting with "ha".
create or replace function private.search_title_terms(search_title text)
returns tsvector
language plpgsql
immutable
strict
parallel safe
set search_path = ''
as $$
-- plpgsql: the index computes it for every title at import, and the loop costs what the words
-- alone cost (about 5 us a title) where a set-based SQL function cost 36
declare
  words constant text[] := pg_catalog.array_remove(
    pg_catalog.regexp_split_to_array(search_title_terms.search_title, '[^[:alnum:]]+'), '');
  terms text[] := words;
begin
  for i in 1 .. pg_catalog.cardinality(words) - 1 loop
    terms := terms || (words[i] || ' ' || words[i + 1]);
  end loop;
  return pg_catalog.array_to_tsvector(terms);
end
$$;
comment on function private.search_title_terms(text) is
  'The words (runs of letters and digits) of a normalised title and each two adjacent words, as a tsvector of those terms, unstemmed: what autocomplete looks up by prefix.';
grant execute on function private.search_title_terms(text) to anon, authenticated;

-- Autocomplete's word-prefix tier (private.suggest_title_word_candidates): the titles holding
-- the terms a text needs at a word start ('exploring bea':*). The trigram index finds every
-- title holding the text anywhere, inside words too: at 500,000 sparks "inc" (inside
-- "principles") matched 220,478 titles and suggested none, in 1.6 s. Words alone found every
-- title holding both words of "habits ha" anywhere (thousands for a common word); adjacent
-- pairs find the titles where they stand together.
create index sparks_title_terms on app.sparks using gin (snapshot_id, private.search_title_terms(search_title));

create index concepts_title_terms on app.concepts using gin (snapshot_id, private.search_title_terms(search_title));

create index trails_title_terms on app.trails using gin (snapshot_id, private.search_title_terms(search_title));

create index domains_title_terms on app.domains using gin (snapshot_id, private.search_title_terms(search_title));

-- private.search_title_term_query
-- Purpose: what a title must hold among its terms (private.search_title_terms) to have
--          `normalized` at a word start: a text of one run of letters and digits, that word;
--          of several, each two adjacent runs as a pair of words. The last term is a prefix when
--          the text ends with a letter or digit, which may go on ("exploring bea" ->
--          'exploring bea':*). A title holding the pairs may still hold them apart or with
--          other punctuation between: the caller checks the text itself.
-- Params:  normalized (private.search_normalize'd, trimmed).
-- Returns: the tsquery, or null when the text has no letter or digit.
create or replace function private.search_title_term_query(normalized text)
returns tsquery
language sql
immutable
strict
set search_path = ''
as $$
  select pg_catalog.string_agg(pg_catalog.quote_literal(t.term)
           || case when t.n = t.runs and search_title_term_query.normalized ~ '[[:alnum:]]$' then ':*' else '' end,
           ' & ' order by t.n)::tsquery
  from (
    select case when w.runs = 1 then w.word else pg_catalog.lag(w.word) over (order by w.n) || ' ' || w.word end as term,
           w.n, w.runs
    from (select x.word, x.n, pg_catalog.count(*) over () as runs
          from pg_catalog.unnest(pg_catalog.array_remove(
                 pg_catalog.regexp_split_to_array(search_title_term_query.normalized, '[^[:alnum:]]+'), '')) with ordinality x(word, n)) w
  ) t
  -- the first of several runs has no pair of its own (the second's pair holds it)
  where t.term is not null
$$;
comment on function private.search_title_term_query(text) is
  'The title terms a text at a word start needs: its one run of letters and digits, or each two adjacent runs as a pair, the last as a prefix when the text ends with it (a tsquery for private.search_title_terms), or null.';
grant execute on function private.search_title_term_query(text) to anon, authenticated;

-- private.suggest_title_word_candidates
-- Purpose: autocomplete tier 1's candidates: the titles (type, text, normalised text) that do
--          not start with `normalized` but have it at the start of a later word, found one of
--          two ways with the same answer (pgTAP 49 compares them): by_words, the titles holding
--          the terms the text needs there (private.search_title_term_query; the indexes above);
--          otherwise the titles holding the text anywhere (trigram index). Either way each is
--          then checked for the text at a word start. Two statements, not one with both
--          predicates: a generic plan of one statement could use neither index (the reason
--          private.search_matches keeps two too).
-- Params:  snapshot (null: every snapshot), normalized (trimmed), by_words (for a text with a
--          letter or digit; without one the trigram index is used).
-- Returns: one row per content row found.
create or replace function private.suggest_title_word_candidates(snapshot uuid, normalized text, by_words boolean)
returns table(type text, text text, norm text)
language plpgsql
stable
set search_path = ''
as $$
declare
  pattern text := private.like_escape(suggest_title_word_candidates.normalized);
  word_start text := '(^|[^[:alnum:]])' || pg_catalog.regexp_replace(suggest_title_word_candidates.normalized, '([^[:alnum:][:space:]])', '\\\1', 'g');
  words tsquery := case when suggest_title_word_candidates.by_words then private.search_title_term_query(suggest_title_word_candidates.normalized) end;
begin
  if words is not null then
    return query
      select x.* from (
        select 'spark'::text, s.title, s.search_title from app.sparks s
         where (suggest_title_word_candidates.snapshot is null or s.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_terms(s.search_title) @@ words
        union all
        select 'concept', c.title, c.search_title from app.concepts c
         where (suggest_title_word_candidates.snapshot is null or c.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_terms(c.search_title) @@ words
        union all
        select 'trail', t.title, t.search_title from app.trails t
         where (suggest_title_word_candidates.snapshot is null or t.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_terms(t.search_title) @@ words
        union all
        select 'domain', d.name, d.search_title from app.domains d
         where (suggest_title_word_candidates.snapshot is null or d.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_terms(d.search_title) @@ words
        -- keeps the check below out of the scans: the planner would add the trigram index for it,
        -- which reads what the words spare
        offset 0
      ) x(type, text, norm)
      where x.norm ~ word_start
        and not (x.norm like pattern || '%'); -- tier 0
  else
    return query
      select x.* from (
        select 'spark'::text, s.title, s.search_title from app.sparks s
         where (suggest_title_word_candidates.snapshot is null or s.snapshot_id = suggest_title_word_candidates.snapshot)
           and s.search_title like '%' || pattern || '%'
        union all
        select 'concept', c.title, c.search_title from app.concepts c
         where (suggest_title_word_candidates.snapshot is null or c.snapshot_id = suggest_title_word_candidates.snapshot)
           and c.search_title like '%' || pattern || '%'
        union all
        select 'trail', t.title, t.search_title from app.trails t
         where (suggest_title_word_candidates.snapshot is null or t.snapshot_id = suggest_title_word_candidates.snapshot)
           and t.search_title like '%' || pattern || '%'
        union all
        select 'domain', d.name, d.search_title from app.domains d
         where (suggest_title_word_candidates.snapshot is null or d.snapshot_id = suggest_title_word_candidates.snapshot)
           and d.search_title like '%' || pattern || '%'
      ) x(type, text, norm)
      -- a substring inside a word ("ql" in "sql") is not a word prefix
      where x.norm ~ word_start
        and not (x.norm like pattern || '%'); -- tier 0
  end if;
end
$$;
comment on function private.suggest_title_word_candidates(uuid, text, boolean) is
  'Autocomplete tier 1 candidates: titles not starting with the text but having it at a later word start, found by the title terms the text needs (by_words) or by trigram index, then checked.';
grant execute on function private.suggest_title_word_candidates(uuid, text, boolean) to anon, authenticated;

-- private.suggest_title_word_matches
-- Purpose: autocomplete tier 1 for any text (private.suggest_title_words): ranks the candidates
--          of private.suggest_title_word_candidates (by the title words for a text with a letter
--          or digit, else by the trigram index).
-- Params, Returns: those of private.suggest_title_words.
create or replace function private.suggest_title_word_matches(snapshot uuid, normalized text, wanted integer, taken jsonb)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  result jsonb;
begin
  with word_prefixes as (
    select distinct on (t.text, t.type) t.type, t.text,
           extensions.word_similarity(suggest_title_word_matches.normalized, t.norm) as similarity
    from private.suggest_title_word_candidates(suggest_title_word_matches.snapshot, suggest_title_word_matches.normalized,
           suggest_title_word_matches.normalized ~ '[[:alnum:]]') t
    where not (suggest_title_word_matches.taken @> pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('text', t.text, 'type', t.type)))
    order by t.text, t.type
  )
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', u.text, 'type', u.type)
           order by u.similarity desc, pg_catalog.char_length(u.text), u.text collate app.alphabetical, u.type), '[]'::jsonb)
  into result
  from (
    select * from word_prefixes u
    order by u.similarity desc, pg_catalog.char_length(u.text), u.text collate app.alphabetical, u.type
    limit suggest_title_word_matches.wanted
  ) u;
  return result;
end
$$;
comment on function private.suggest_title_word_matches(uuid, text, integer, jsonb) is
  'Autocomplete tier 1 for any text: the titles with a later word starting with it (private.suggest_title_word_candidates), best first.';
grant execute on function private.suggest_title_word_matches(uuid, text, integer, jsonb) to anon, authenticated;

-- private.suggest_title_word_starts
-- Purpose: autocomplete tier 1 for two letters or digits (private.suggest_title_words): the first
--          `wanted` entries of the prefix's range of app.search_title_word_starts, which holds
--          tier 1's candidates with their word similarity, in tier 1's order. Costs an index walk
--          of `wanted` entries however many titles have a word starting with the prefix.
-- Params, Returns: those of private.suggest_title_words (snapshot not null, normalized two
--          [[:alnum:]] characters).
create or replace function private.suggest_title_word_starts(snapshot uuid, normalized text, wanted integer, taken jsonb)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', u.title, 'type', u.type)
           order by u.similarity desc, pg_catalog.char_length(u.title), u.title, u.type), '[]'::jsonb)
  from (
    -- a title held by several rows of a type is one suggestion; its entries are adjacent
    select distinct on (w.similarity, pg_catalog.char_length(w.title), w.title, w.type) w.similarity, w.title, w.type
    from app.search_title_word_starts w
    where w.snapshot_id = suggest_title_word_starts.snapshot
      and w.word_start = suggest_title_word_starts.normalized
      and not (suggest_title_word_starts.taken @> pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('text', w.title, 'type', w.type)))
    order by w.similarity desc, pg_catalog.char_length(w.title), w.title, w.type
    limit suggest_title_word_starts.wanted
  ) u
$$;
comment on function private.suggest_title_word_starts(uuid, text, integer, jsonb) is
  'Autocomplete tier 1 for two letters or digits: an index walk of app.search_title_word_starts, the same suggestions as private.suggest_title_word_matches.';
grant execute on function private.suggest_title_word_starts(uuid, text, integer, jsonb) to anon, authenticated;

-- private.suggest_title_words
-- Purpose: autocomplete tier 1: titles whose normalised text does not start with `normalized`
--          but has a later word starting with it. Suggestions already in `taken` ([{text,type}])
--          are left out. Two letters or digits (no trigram covers them: the general route would
--          read every title of the snapshot) are looked up in app.search_title_word_starts;
--          any other text takes the general route (private.suggest_title_word_matches: by the
--          title words when it has a letter or digit, else by the trigram index).
-- Params:  snapshot (null: every snapshot), normalized (trimmed), wanted, taken.
-- Returns: jsonb array of {text, type}, best first (pg_trgm word similarity desc, shorter text,
--          text, type), at most `wanted`.
create or replace function private.suggest_title_words(snapshot uuid, normalized text, wanted integer, taken jsonb)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select case when suggest_title_words.snapshot is not null and suggest_title_words.normalized ~ '^[[:alnum:]]{2}$'
              then private.suggest_title_word_starts(suggest_title_words.snapshot, suggest_title_words.normalized,
                     suggest_title_words.wanted, suggest_title_words.taken)
              else private.suggest_title_word_matches(suggest_title_words.snapshot, suggest_title_words.normalized,
                     suggest_title_words.wanted, suggest_title_words.taken) end
$$;
comment on function private.suggest_title_words(uuid, text, integer, jsonb) is
  'Autocomplete tier 1: titles with a later word starting with q, leaving out the suggestions already taken; two letters or digits by index walk (private.suggest_title_word_starts).';
grant execute on function private.suggest_title_words(uuid, text, integer, jsonb) to anon, authenticated;

-- private.suggest_title_prefix_list
-- Purpose: autocomplete tier 0 as a jsonb array: titles starting with `normalized`, in
--          alphabetical order of the normalised title, leaving out suggestions in `taken`.
create or replace function private.suggest_title_prefix_list(snapshot uuid, normalized text, wanted integer, taken jsonb)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', p.text, 'type', p.type)
                    order by p.norm collate "C", p.text, p.type), '[]'::jsonb)
  from (
    select x.* from private.suggest_title_prefixes(
      suggest_title_prefix_list.snapshot,
      private.like_escape(suggest_title_prefix_list.normalized),
      suggest_title_prefix_list.wanted + pg_catalog.jsonb_array_length(suggest_title_prefix_list.taken)) x
    where not (suggest_title_prefix_list.taken @> pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('text', x.text, 'type', x.type)))
    order by x.norm collate "C", x.text, x.type
    limit suggest_title_prefix_list.wanted
  ) p
$$;
comment on function private.suggest_title_prefix_list(uuid, text, integer, jsonb) is
  'Autocomplete tier 0 as a jsonb array of {text,type}: titles starting with the normalised text, alphabetical, leaving out suggestions already taken.';
grant execute on function private.suggest_title_prefix_list(uuid, text, integer, jsonb) to anon, authenticated;

-- api.list_search_suggestions
-- Purpose: autocomplete: titles (domain names) matching what the user has typed so far.
-- Params:  q (2..100 characters after trimming), limit_count (1..20, default 5), snapshot_id.
-- Returns: {suggestions: [{text, type}][, meta: {corrected_query}]}, best first, each
--          {text, type} once:
--          tier 0, titles starting with q (in alphabetical order of the normalised title);
--          tier 1, titles with a later word starting with q (similarity, shorter text, text,
--          type); then, when a word of q matches nothing in the snapshot, tiers 0 and 1 for the
--          typo-corrected text (private.search_correct: "tesitng" -> "testing", the last word
--          also as a typed prefix, "tesit" -> "testing"), and meta.corrected_query names it;
--          last, for q of one word of 4+ characters, titles holding a lexicon word close to it by
--          trigram word similarity >= 0.5 (private.suggest_similar_titles). Each tier is
--          computed only when the earlier ones leave room, so a common prefix costs an index walk
--          of `limit` rows.
-- Errors:  22023 q shorter than 2 characters or limit_count out of range; PT404 unknown snapshot_id.
create or replace function api.list_search_suggestions(q text, limit_count integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_search_suggestions');
  normalized text := pg_catalog.btrim(private.search_normalize(list_search_suggestions.q));
  snapshot uuid;
  corrected text;
  suggestions jsonb;
  from_correction jsonb := '[]'::jsonb;
begin
  if list_search_suggestions.q is null or pg_catalog.char_length(normalized) not between 2 and 100 then
    raise exception using errcode = '22023', message = 'q must be 2 to 100 characters',
      detail = pg_catalog.jsonb_build_object('field', 'q')::text;
  end if;
  if list_search_suggestions.limit_count is null or list_search_suggestions.limit_count not between 1 and 20 then
    raise exception using errcode = '22023', message = 'limit must be between 1 and 20',
      detail = pg_catalog.jsonb_build_object('field', 'limit')::text;
  end if;
  snapshot := private.resolve_snapshot_id(list_search_suggestions.snapshot_id);

  -- Exact tiers: title prefixes, then word prefixes.
  suggestions := private.suggest_title_prefix_list(snapshot, normalized, list_search_suggestions.limit_count, '[]'::jsonb);
  if pg_catalog.jsonb_array_length(suggestions) < list_search_suggestions.limit_count then
    suggestions := suggestions || private.suggest_title_words(snapshot, normalized,
      list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions), suggestions);
  end if;
  -- Typo tiers: the same two for the corrected text.
  if pg_catalog.jsonb_array_length(suggestions) < list_search_suggestions.limit_count then
    corrected := private.search_correct(snapshot, normalized);
    if corrected is not null then
      from_correction := private.suggest_title_prefix_list(snapshot, corrected,
        list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions), suggestions);
      if pg_catalog.jsonb_array_length(suggestions) + pg_catalog.jsonb_array_length(from_correction) < list_search_suggestions.limit_count then
        from_correction := from_correction || private.suggest_title_words(snapshot, corrected,
          list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions) - pg_catalog.jsonb_array_length(from_correction),
          suggestions || from_correction);
      end if;
      suggestions := suggestions || from_correction;
    end if;
  end if;
  -- Last resort, for one word of 4+ characters: titles holding a word of the snapshot close to
  -- it by trigram similarity. After a whole word ("designing plut") the exact and typo tiers
  -- have said what there is: titles merely like the whole text would be noise.
  if pg_catalog.jsonb_array_length(suggestions) < list_search_suggestions.limit_count
     and pg_catalog.char_length(normalized) >= 4 and normalized !~ '\s' then
    suggestions := suggestions || private.suggest_similar_titles(snapshot, normalized,
      list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions), suggestions);
  end if;

  return pg_catalog.jsonb_build_object('suggestions', suggestions)
    || case when pg_catalog.jsonb_array_length(from_correction) > 0
            then pg_catalog.jsonb_build_object('meta', pg_catalog.jsonb_build_object('corrected_query', corrected))
            else '{}'::jsonb end;
end
$$;
comment on function api.list_search_suggestions(text, integer, uuid) is
  'Autocomplete. Params: q (min 2 chars), limit_count (1..20, default 5), snapshot_id. Returns {suggestions:[{text,type}], meta:{corrected_query} when typo-corrected suggestions are included}: title prefixes (index walk), word prefixes, the same for the typo-corrected text, then titles holding a lexicon word close by trigram similarity (one word of 4+ chars); de-duplicated. Errors: 22023 invalid q/limit, PT404 unknown snapshot.';
grant execute on function api.list_search_suggestions(text, integer, uuid) to anon, authenticated, service_role;

-- Search postings: for each lexeme of a snapshot, the document numbers (app.sparks.search_doc
-- and the like) of the rows holding it, per content type and difficulty, as sorted int4 sets
-- (intarray). A search of plain words is a union of intersections of these sets, so its total
-- and facets are set sizes and its ranked candidates the first numbers of the sets: two common
-- words at 500,000 sparks intersect two sets of about 50,000 numbers in C instead of visiting
-- every matching row (private.search_posted_matches).
create table app.search_postings (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  lexeme text collate "C" not null,
  type text not null,
  difficulty text,
  docs integer[] not null,
  title_docs integer[] not null,
  constraint search_postings_key unique nulls not distinct (snapshot_id, lexeme, type, difficulty)
);
comment on table app.search_postings is
  'Search postings: the search document numbers (sorted int4 sets) of the rows of one snapshot, type and difficulty whose search_vector holds a lexeme (docs), and of those with the lexeme in the title (title_docs). Maintained by triggers.';
alter table app.search_postings enable row level security;
create policy "anyone reads search postings" on app.search_postings
  for select to anon, authenticated
  using (true);
grant select on app.search_postings to anon, authenticated;

-- private.search_word_starts_sql
-- Purpose: the statements that add (sign 1) or remove (sign -1) the app.search_title_word_starts
--          rows of the rows of `source` (a content table or a trigger transition table).
-- Params:  kind (spark|concept|trail|domain), title_column, source, sign (1 or -1).
-- Returns: the SQL text. A word start is the first two letters of a maximal run of [[:alnum:]]
--          (the class tier 1 uses to find a word start), so an alphanumeric two-letter prefix
--          starts a later word of a title exactly when the title has a row for it.
create or replace function private.search_word_starts_sql(kind text, title_column text, source text, sign integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.replace(
    case when search_word_starts_sql.sign > 0 then $add$
      insert into app.search_title_word_starts (snapshot_id, word_start, type, id, similarity, title)
        select d.snapshot_id, d.word_start, d.type, d.id, d.similarity, d.title from (DELTA) d;
    $add$ else $remove$
      delete from app.search_title_word_starts w
       using (DELTA) d
       where w.snapshot_id = d.snapshot_id and w.word_start = d.word_start and w.similarity = d.similarity
         and pg_catalog.char_length(w.title) = pg_catalog.char_length(d.title) and w.title = d.title
         and w.type = d.type and w.id = d.id;
    $remove$ end,
    'DELTA',
    pg_catalog.format(
      $delta$select r.snapshot_id, w.word_start, %1$L::text as type, r.id,
                    extensions.word_similarity(w.word_start, r.search_title) as similarity,
                    r.%3$I collate app.alphabetical as title
               from %2$s r
               cross join lateral (
                 select distinct pg_catalog.left(x.word, 2) collate "C" as word_start
                 from pg_catalog.regexp_split_to_table(r.search_title, '[^[:alnum:]]+') x(word)
                 where pg_catalog.char_length(x.word) >= 2) w
              where not pg_catalog.starts_with(r.search_title, w.word_start)$delta$,
      search_word_starts_sql.kind, search_word_starts_sql.source, search_word_starts_sql.title_column))
$$;
comment on function private.search_word_starts_sql(text, text, text, integer) is
  'SQL adding (sign 1) or removing (sign -1) the autocomplete word starts (app.search_title_word_starts) of the rows of a source relation.';

-- private.search_postings_sql
-- Purpose: the statements that add (sign 1) or remove (sign -1) the document numbers of the
--          rows of `source` (a content table or a trigger transition table) of one content type
--          in app.search_postings.
-- Params:  kind (spark|concept|trail|domain), level_column (difficulty column or ''), source,
--          sign (1 or -1).
-- Returns: the SQL text (one or two statements; each reads `source` again).
create or replace function private.search_postings_sql(kind text, level_column text, source text, sign integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.replace(
    case when search_postings_sql.sign > 0 then $add$
      insert into app.search_postings as p (snapshot_id, lexeme, type, difficulty, docs, title_docs)
        select d.snapshot_id, d.lexeme, d.type, d.difficulty,
               pg_catalog.array_agg(d.doc order by d.doc),
               coalesce(pg_catalog.array_agg(d.doc order by d.doc) filter (where d.in_title), '{}')
        from (DELTA) d
        group by d.snapshot_id, d.lexeme, d.type, d.difficulty
        order by d.snapshot_id, d.lexeme, d.type, d.difficulty
      on conflict on constraint search_postings_key
        do update set docs = p.docs operator(extensions.|) excluded.docs,
                      title_docs = p.title_docs operator(extensions.|) excluded.title_docs;
    $add$ else $remove$
      update app.search_postings p
         set docs = p.docs operator(extensions.-) g.docs,
             title_docs = p.title_docs operator(extensions.-) g.docs
        from (select d.snapshot_id, d.lexeme, d.type, d.difficulty, pg_catalog.array_agg(d.doc) as docs
                from (DELTA) d group by d.snapshot_id, d.lexeme, d.type, d.difficulty) g
       where p.snapshot_id = g.snapshot_id and p.lexeme = g.lexeme and p.type = g.type
         and p.difficulty is not distinct from g.difficulty;
      delete from app.search_postings p
       using (select distinct d.snapshot_id, d.lexeme, d.type from (DELTA) d) g
       where p.snapshot_id = g.snapshot_id and p.lexeme = g.lexeme and p.type = g.type and p.docs = '{}';
    $remove$ end,
    'DELTA',
    pg_catalog.format(
      $delta$select r.snapshot_id, l.lexeme collate "C" as lexeme, %1$L::text as type, r.search_doc as doc,
                    %2$s as difficulty, 'A' = any(l.weights) as in_title
               from %3$s r cross join lateral pg_catalog.unnest(r.search_vector) l$delta$,
      search_postings_sql.kind,
      case when search_postings_sql.level_column = '' then 'null::text'
           else 'r.' || pg_catalog.quote_ident(search_postings_sql.level_column) end,
      search_postings_sql.source))
$$;
comment on function private.search_postings_sql(text,text,text,integer) is
  'SQL adding (sign 1) or removing (sign -1) the document numbers of the rows of a source relation in the search postings.';

-- private.search_index_sql
-- Purpose: the statements that add (sign 1) or remove (sign -1) the search figures of the rows
--          of `source` (a content table or a trigger transition table) of one content type:
--          postings (private.search_postings_sql) and title word starts
--          (private.search_word_starts_sql).
-- Params:  kind (spark|concept|trail|domain), level_column (difficulty column or ''),
--          title_column, source, sign (1 or -1).
-- Returns: the SQL text (several statements; each reads `source` again).
create or replace function private.search_index_sql(kind text, level_column text, title_column text, source text, sign integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select private.search_postings_sql(search_index_sql.kind, search_index_sql.level_column,
           search_index_sql.source, search_index_sql.sign)
      || private.search_word_starts_sql(search_index_sql.kind, search_index_sql.title_column,
           search_index_sql.source, search_index_sql.sign)
$$;
comment on function private.search_index_sql(text,text,text,text,integer) is
  'SQL adding (sign 1) or removing (sign -1) the search figures (postings, title word starts) of the rows of a source relation.';

-- private.maintain_search_index
-- Purpose: statement trigger of sparks, concepts, trails and domains: keeps
--          app.search_postings and app.search_title_word_starts equal to the content rows.
--          tg_argv: content type, difficulty column ('' when none), title column. Transition tables:
--          old_rows, new_rows. Security definer: writers need no rights on the figures.
create or replace function private.maintain_search_index()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' and private.content_derivation_deferred() then
    return null;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    execute private.search_index_sql(tg_argv[0], tg_argv[1], tg_argv[2], 'old_rows', -1);
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    execute private.search_index_sql(tg_argv[0], tg_argv[1], tg_argv[2], 'new_rows', 1);
  end if;
  return null;
end
$$;
comment on function private.maintain_search_index() is
  'Trigger: applies the inserted/updated/deleted content rows to the search figures (app.search_postings, app.search_title_word_starts).';

create trigger sparks_search_index_insert
  after insert on app.sparks referencing new table as new_rows
  for each statement execute function private.maintain_search_index('spark', 'difficulty', 'title');
alter table app.sparks enable always trigger sparks_search_index_insert;

create trigger sparks_search_index_update
  after update on app.sparks referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('spark', 'difficulty', 'title');
alter table app.sparks enable always trigger sparks_search_index_update;

create trigger sparks_search_index_delete
  after delete on app.sparks referencing old table as old_rows
  for each statement execute function private.maintain_search_index('spark', 'difficulty', 'title');
alter table app.sparks enable always trigger sparks_search_index_delete;

create trigger concepts_search_index_insert
  after insert on app.concepts referencing new table as new_rows
  for each statement execute function private.maintain_search_index('concept', '', 'title');
alter table app.concepts enable always trigger concepts_search_index_insert;

create trigger concepts_search_index_update
  after update on app.concepts referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('concept', '', 'title');
alter table app.concepts enable always trigger concepts_search_index_update;

create trigger concepts_search_index_delete
  after delete on app.concepts referencing old table as old_rows
  for each statement execute function private.maintain_search_index('concept', '', 'title');
alter table app.concepts enable always trigger concepts_search_index_delete;

create trigger trails_search_index_insert
  after insert on app.trails referencing new table as new_rows
  for each statement execute function private.maintain_search_index('trail', 'difficulty_level', 'title');
alter table app.trails enable always trigger trails_search_index_insert;

create trigger trails_search_index_update
  after update on app.trails referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('trail', 'difficulty_level', 'title');
alter table app.trails enable always trigger trails_search_index_update;

create trigger trails_search_index_delete
  after delete on app.trails referencing old table as old_rows
  for each statement execute function private.maintain_search_index('trail', 'difficulty_level', 'title');
alter table app.trails enable always trigger trails_search_index_delete;

create trigger domains_search_index_insert
  after insert on app.domains referencing new table as new_rows
  for each statement execute function private.maintain_search_index('domain', '', 'name');
alter table app.domains enable always trigger domains_search_index_insert;

create trigger domains_search_index_update
  after update on app.domains referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('domain', '', 'name');
alter table app.domains enable always trigger domains_search_index_update;

create trigger domains_search_index_delete
  after delete on app.domains referencing old table as old_rows
  for each statement execute function private.maintain_search_index('domain', '', 'name');
alter table app.domains enable always trigger domains_search_index_delete;

-- Typo tolerance (docs/search-graph.md, "Typo tolerance"): app.search_lexicon holds the
-- normalised words (unaccented, lower-case, letters and digits) of every title, summary and
-- description, per snapshot, with the number of rows holding each. Statement triggers on the four
-- content tables keep it (ENABLE ALWAYS: the content import writes with
-- session_replication_role = replica), so it is written when content is imported, never by a
-- request; promote and rollback change no content. A snapshot's words go with it (on delete
-- cascade). A query word that matches nothing in the snapshot is replaced by the closest lexicon
-- word within its typo budget (private.search_correct); candidates are the lexicon words that
-- share a string of deletions with the typed word (SymSpell, through an index of each word's
-- deletions), and are confirmed by private.osa_distance (fuzzystrmatch has only levenshtein,
-- which counts a transposition as two edits).

-- private.osa_distance
-- Purpose: optimal string alignment distance (restricted Damerau-Levenshtein): the fewest
--          insertions, deletions, substitutions and transpositions of two adjacent characters
--          turning `source` into `target`, no substring edited twice. With `prefix`, the fewest
--          edits turning `source` into some prefix of `target` (what the user typed so far).
--          With `within`, only distances up to it are worked out: the answer is exact when it is
--          at most `within`, and `within` + 1 otherwise. A correction keeps only words within
--          its typo budget, so it needs no more: the table is then filled only along its
--          diagonal (|i - j| <= within; a cell further off is more than `within` edits, a
--          distance being at least the difference of the lengths), and the work stops at the
--          first row whose every cell is above `within` (a row's minimum never falls in the
--          next). Five typed letters against a 12-letter word: 15 cells instead of 60.
-- Params:  source, target (compared character by character, case-sensitive), prefix, within
--          (null: no bound).
-- Returns: integer (null when source, target or prefix is null).
create or replace function private.osa_distance(source text, target text, prefix boolean default false, within integer default null)
returns integer
language plpgsql
immutable
parallel safe
set search_path = ''
as $$
declare
  a text[] := pg_catalog.string_to_array(osa_distance.source, null);
  b text[] := pg_catalog.string_to_array(osa_distance.target, null);
  m integer := coalesce(pg_catalog.cardinality(a), 0);
  n integer := coalesce(pg_catalog.cardinality(b), 0);
  -- the band; with no bound it holds every cell, and no distance exceeds the longer length
  k integer := case when osa_distance.within is null then greatest(m, n) else greatest(osa_distance.within, 0) end;
  width integer := n + 1;
  -- d[i * width + j + 1] = distance between the first i characters of source and first j of
  -- target, or k + 1 for any distance above k (cells outside the band keep that fill)
  d integer[];
  best integer;
  row_best integer;
  cost integer;
  i integer;
  j integer;
begin
  if osa_distance.source is null or osa_distance.target is null or osa_distance.prefix is null then
    return null;
  end if;
  if not osa_distance.prefix and pg_catalog.abs(m - n) > k then
    return k + 1;
  end if;
  d := pg_catalog.array_fill(k + 1, array[(m + 1) * width]);
  for j in 0 .. least(n, k) loop
    d[j + 1] := j;
  end loop;
  for i in 1 .. m loop
    row_best := k + 1;
    if i <= k then
      d[i * width + 1] := i;
      row_best := i;
    end if;
    for j in greatest(1, i - k) .. least(n, i + k) loop
      cost := case when a[i] = b[j] then 0 else 1 end;
      best := least(d[(i - 1) * width + j + 1] + 1,  -- delete a[i]
                    d[i * width + j] + 1,            -- insert b[j]
                    d[(i - 1) * width + j] + cost);  -- substitute
      if i > 1 and j > 1 and a[i] = b[j - 1] and a[i - 1] = b[j] then
        best := least(best, d[(i - 2) * width + j - 1] + 1); -- transpose
      end if;
      best := least(best, k + 1);
      d[i * width + j + 1] := best;
      row_best := least(row_best, best);
    end loop;
    if row_best > k then
      return k + 1;
    end if;
  end loop;
  if osa_distance.prefix then
    select pg_catalog.min(v) into best from pg_catalog.unnest(d[m * width + 1 : m * width + width]) v;
    return best;
  end if;
  return d[(m + 1) * width];
end
$$;
comment on function private.osa_distance(text, text, boolean, integer) is
  'Optimal string alignment distance (Damerau-Levenshtein, a transposition of adjacent characters is one edit); with prefix, the distance to the closest prefix of target; with within, exact up to within and within + 1 beyond.';
grant execute on function private.osa_distance(text, text, boolean, integer) to anon, authenticated;

-- private.search_typo_budget
-- Purpose: how many edits a typed word of this length may be away from the word meant
--          (Typesense/Meilisearch defaults): none below 4 characters, 1 for 4-7, 2 for 8 or more.
create or replace function private.search_typo_budget(word text)
returns integer
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select case when pg_catalog.char_length(search_typo_budget.word) >= 8 then 2
              when pg_catalog.char_length(search_typo_budget.word) >= 4 then 1
              else 0 end
$$;
comment on function private.search_typo_budget(text) is
  'Edits a typed word may have: 0 below 4 characters, 1 for 4-7, 2 for 8 or more.';
grant execute on function private.search_typo_budget(text) to anon, authenticated;

-- private.search_words
-- Purpose: the distinct lexicon words of a text: normalised (private.search_normalize), split on
--          everything but letters and digits, 2-40 characters, not only digits.
create or replace function private.search_words(value text)
returns setof text
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select distinct w
  from pg_catalog.regexp_split_to_table(private.search_normalize(search_words.value), '[^[:alnum:]]+') w
  where pg_catalog.char_length(w) between 2 and 40 and w !~ '^[0-9]+$'
$$;
comment on function private.search_words(text) is
  'Distinct normalised words (2-40 characters, not only digits) of a text: what the search lexicon holds.';
grant execute on function private.search_words(text) to anon, authenticated;

create table app.search_lexicon (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  word text collate "C" not null,
  docs integer not null,
  -- (snapshot_id, word) also serves "is this the prefix of a word of the snapshot" (range scan)
  constraint search_lexicon_pkey primary key (snapshot_id, word)
);
comment on table app.search_lexicon is
  'Typo tolerance: the normalised words of the titles, summaries and descriptions of a snapshot, with the number of content rows holding each. Maintained by triggers at content import.';
alter table app.search_lexicon enable row level security;
create policy "anyone reads the search lexicon" on app.search_lexicon
  for select to anon, authenticated
  using (true);
grant select on app.search_lexicon to anon, authenticated;

-- Words a typed text may begin (private.search_correct's prefix reading) or resemble
-- (private.suggest_similar_titles): trigram word similarity.
create index search_lexicon_word_trgm on app.search_lexicon using gin (word extensions.gin_trgm_ops);

-- private.search_deletions
-- Purpose: the strings left by deleting up to `depth` (1 or 2) characters of a word, the word
--          itself included (SymSpell): two words are at most k edits apart (insertions,
--          deletions, substitutions, adjacent transpositions; private.osa_distance) only if
--          deleting at most k characters from each leaves a common string. A string reached
--          twice ("book" less either o) is listed twice: a GIN index keeps each key once.
-- Returns: text[], 1 + n strings at depth 1, 1 + n + n(n - 1)/2 at depth 2 (n characters).
create or replace function private.search_deletions(word text, depth integer)
returns text[]
language plpgsql
immutable
strict
parallel safe
set search_path = ''
as $$
declare
  n constant integer := pg_catalog.char_length(search_deletions.word);
  variants text[] := array[search_deletions.word];
  shorter text;
begin
  for i in 1 .. n loop
    shorter := pg_catalog.substr(search_deletions.word, 1, i - 1) || pg_catalog.substr(search_deletions.word, i + 1);
    variants := variants || shorter;
    if search_deletions.depth >= 2 then
      -- the second deletion after the first, so each pair of positions is deleted once
      for j in i .. n - 1 loop
        variants := variants || (pg_catalog.substr(shorter, 1, j - 1) || pg_catalog.substr(shorter, j + 1));
      end loop;
    end if;
  end loop;
  return variants;
end
$$;
comment on function private.search_deletions(text, integer) is
  'The strings left by deleting up to depth characters of a word, the word included (SymSpell keys; repeats possible).';
grant execute on function private.search_deletions(text, integer) to anon, authenticated;

-- private.search_lexicon_deletions
-- Purpose: the deletion strings a lexicon word is found by: depth 2 for words of 6 or more
--          characters (a typed word of 8 or more, budget 2, is within two edits only of words of
--          6 or more), else depth 1 (a typed word of 4 to 7 characters has a budget of one edit;
--          see private.search_typo_budget).
create or replace function private.search_lexicon_deletions(word text)
returns text[]
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select private.search_deletions(search_lexicon_deletions.word,
                                  case when pg_catalog.char_length(search_lexicon_deletions.word) >= 6 then 2 else 1 end)
$$;
comment on function private.search_lexicon_deletions(text) is
  'The deletion strings (private.search_deletions) a lexicon word is indexed by: depth 2 for words of 6+ characters, else 1.';
grant execute on function private.search_lexicon_deletions(text) to anon, authenticated;

-- Typo candidates (private.search_correct): every word sharing a deletion string with the typed
-- word. Not led by the snapshot: a snapshot key's posting list holds every word of the snapshot,
-- and the few candidates of other snapshots are dropped on the heap row.
create index search_lexicon_word_deletions on app.search_lexicon using gin (private.search_lexicon_deletions(word));

-- private.search_lexicon_sql
-- Purpose: the statements that add (sign 1) or remove (sign -1) the words of the rows of
--          `source` (a content table or a trigger transition table) to or from the lexicon.
-- Params:  title_column, body_column, source, sign.
-- Returns: the SQL text.
create or replace function private.search_lexicon_sql(title_column text, body_column text, source text, sign integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.replace(
    case when search_lexicon_sql.sign > 0 then $add$
      insert into app.search_lexicon as l (snapshot_id, word, docs)
        select d.snapshot_id, d.word, pg_catalog.count(*) from (DELTA) d
        group by d.snapshot_id, d.word
        order by d.snapshot_id, d.word
      on conflict (snapshot_id, word) do update set docs = l.docs + excluded.docs;
    $add$ else $remove$
      update app.search_lexicon l set docs = l.docs - g.docs
        from (select d.snapshot_id, d.word, pg_catalog.count(*) as docs from (DELTA) d group by d.snapshot_id, d.word) g
       where l.snapshot_id = g.snapshot_id and l.word = g.word;
      delete from app.search_lexicon l
       using (select distinct d.snapshot_id, d.word from (DELTA) d) g
       where l.snapshot_id = g.snapshot_id and l.word = g.word and l.docs <= 0;
    $remove$ end,
    'DELTA',
    pg_catalog.format(
      $delta$select r.snapshot_id, w.word collate "C" as word
               from %3$s r
               cross join lateral private.search_words(r.%1$I || ' ' || coalesce(r.%2$I, '')) w(word)$delta$,
      search_lexicon_sql.title_column, search_lexicon_sql.body_column, search_lexicon_sql.source))
$$;
comment on function private.search_lexicon_sql(text, text, text, integer) is
  'SQL adding (sign 1) or removing (sign -1) the words of the rows of a source relation to or from app.search_lexicon.';

-- private.maintain_search_lexicon
-- Purpose: statement trigger of sparks, concepts, trails and domains: keeps app.search_lexicon
--          equal to the words of the content rows. tg_argv: title column, body column.
--          Security definer: writers need no rights on the lexicon.
create or replace function private.maintain_search_lexicon()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' and private.content_derivation_deferred() then
    return null;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    execute private.search_lexicon_sql(tg_argv[0], tg_argv[1], 'old_rows', -1);
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    execute private.search_lexicon_sql(tg_argv[0], tg_argv[1], 'new_rows', 1);
  end if;
  return null;
end
$$;
comment on function private.maintain_search_lexicon() is
  'Trigger: applies the inserted/updated/deleted content rows to app.search_lexicon.';

create trigger sparks_search_lexicon_insert
  after insert on app.sparks referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'summary');
alter table app.sparks enable always trigger sparks_search_lexicon_insert;

create trigger sparks_search_lexicon_update
  after update on app.sparks referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'summary');
alter table app.sparks enable always trigger sparks_search_lexicon_update;

create trigger sparks_search_lexicon_delete
  after delete on app.sparks referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('title', 'summary');
alter table app.sparks enable always trigger sparks_search_lexicon_delete;

create trigger concepts_search_lexicon_insert
  after insert on app.concepts referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.concepts enable always trigger concepts_search_lexicon_insert;

create trigger concepts_search_lexicon_update
  after update on app.concepts referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.concepts enable always trigger concepts_search_lexicon_update;

create trigger concepts_search_lexicon_delete
  after delete on app.concepts referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.concepts enable always trigger concepts_search_lexicon_delete;

create trigger trails_search_lexicon_insert
  after insert on app.trails referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.trails enable always trigger trails_search_lexicon_insert;

create trigger trails_search_lexicon_update
  after update on app.trails referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.trails enable always trigger trails_search_lexicon_update;

create trigger trails_search_lexicon_delete
  after delete on app.trails referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.trails enable always trigger trails_search_lexicon_delete;

create trigger domains_search_lexicon_insert
  after insert on app.domains referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('name', 'description');
alter table app.domains enable always trigger domains_search_lexicon_insert;

create trigger domains_search_lexicon_update
  after update on app.domains referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('name', 'description');
alter table app.domains enable always trigger domains_search_lexicon_update;

create trigger domains_search_lexicon_delete
  after delete on app.domains referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('name', 'description');
alter table app.domains enable always trigger domains_search_lexicon_delete;

-- private.search_near_misses
-- Purpose: the strings one adjacent transposition or one deletion away from a word: exact
--          lookups that find the typos trigram similarity misses in short words ("jion" ->
--          "join", "ojin" -> "join"; at most 2n - 1 strings for a word of n characters).
--          plpgsql: every corrected word asks for them, and the loop costs about 10 us a call
--          where a set-based SQL function cost about 130.
create or replace function private.search_near_misses(word text)
returns text[]
language plpgsql
immutable
strict
parallel safe
set search_path = ''
as $$
declare
  variants text[] := '{}';
  variant text;
begin
  for i in 1 .. pg_catalog.char_length(search_near_misses.word) loop
    variant := pg_catalog.substr(search_near_misses.word, 1, i - 1) || pg_catalog.substr(search_near_misses.word, i + 1);
    if not variant = any (variants) then
      variants := variants || variant;
    end if;
    variant := pg_catalog.substr(search_near_misses.word, 1, i - 1) || pg_catalog.substr(search_near_misses.word, i + 1, 1)
               || pg_catalog.substr(search_near_misses.word, i, 1) || pg_catalog.substr(search_near_misses.word, i + 2);
    if variant <> search_near_misses.word and not variant = any (variants) then
      variants := variants || variant;
    end if;
  end loop;
  return variants;
end
$$;
comment on function private.search_near_misses(text) is
  'The strings one adjacent transposition or one deletion away from a word (typo candidates trigram similarity misses in short words).';
grant execute on function private.search_near_misses(text) to anon, authenticated;

-- private.search_one_edit_patterns
-- Purpose: LIKE patterns matching exactly the words one edit or less from a word of letters and
--          digits (private.osa_distance <= 1): the word itself, its deletions and adjacent
--          transpositions (private.search_near_misses), and `_` for one substituted or inserted
--          character. With `prefix`, each pattern ends in `%`: the words with such a beginning,
--          i.e. private.osa_distance(word, w, true) <= 1. A typo correction filters its candidates
--          with them before computing any distance, which costs far more than a LIKE.
-- Params:  word (letters and digits only: null for anything else, which holds LIKE wildcards),
--          prefix.
-- Returns: text[], 4 * length + 1 patterns at most.
create or replace function private.search_one_edit_patterns(word text, prefix boolean)
returns text[]
language plpgsql
immutable
strict
parallel safe
set search_path = ''
as $$
declare
  tail constant text := case when search_one_edit_patterns.prefix then '%' else '' end;
  patterns text[];
  pattern text;
begin
  if search_one_edit_patterns.word !~ '^[[:alnum:]]+$' then
    return null;
  end if;
  patterns := array[search_one_edit_patterns.word || tail];
  foreach pattern in array private.search_near_misses(search_one_edit_patterns.word) loop
    patterns := patterns || (pattern || tail);
  end loop;
  for i in 1 .. pg_catalog.char_length(search_one_edit_patterns.word) + 1 loop
    if i <= pg_catalog.char_length(search_one_edit_patterns.word) then
      patterns := patterns || (pg_catalog.substr(search_one_edit_patterns.word, 1, i - 1) || '_'
                               || pg_catalog.substr(search_one_edit_patterns.word, i + 1) || tail);
    end if;
    patterns := patterns || (pg_catalog.substr(search_one_edit_patterns.word, 1, i - 1) || '_'
                             || pg_catalog.substr(search_one_edit_patterns.word, i) || tail);
  end loop;
  return patterns;
end
$$;
comment on function private.search_one_edit_patterns(text, boolean) is
  'LIKE patterns matching exactly the words at most one edit (osa_distance) from a word of letters and digits; with prefix, the words beginning within one edit of it.';
grant execute on function private.search_one_edit_patterns(text, boolean) to anon, authenticated;

-- private.search_correct
-- Purpose: the typo-corrected form of a normalised query, or null when no word needed (or got)
--          a correction. Only plain words (letters, digits, spaces) are corrected: websearch
--          syntax is the caller's own. A word is kept when it is shorter than 4 characters, a
--          word of the snapshot, a stop word, a word whose english stems are all lexemes of the
--          snapshot, or (the last word) the prefix of a word of the snapshot. Otherwise it is
--          replaced by the best word of the snapshot's lexicon within its typo budget (see
--          private.search_typo_budget): fewest edits (private.osa_distance), then the most
--          frequent, the shorter, alphabetical; when no whole word is within the budget, the last
--          word is read as a typed prefix ("tesit" -> "testing") and the best completion taken.
--          A word with no candidate is kept.
-- Params:  snapshot (null: no correction), normalized (private.search_normalize'd, trimmed).
--          Candidates: the words sharing a string of up to `budget` deletions with the typed
--          word (private.search_lexicon_deletions), which include every word within the budget;
--          for the last word, when no whole word is close enough, words it begins like (word
--          similarity >= 0.3), whose distance is computed, with a budget of one edit, only when
--          they match one of private.search_one_edit_patterns (the only words within it).
-- Returns: text or null.
create or replace function private.search_correct(snapshot uuid, normalized text)
returns text
language plpgsql
stable
set search_path = ''
set "pg_trgm.word_similarity_threshold" to '0.3'
as $$
declare
  words text[];
  word_count integer;
  typed text;
  budget integer;
  -- With a budget of one edit, LIKE patterns of the only words beginning within it
  -- (private.search_one_edit_patterns): a LIKE costs far less than a distance.
  near_beginnings text[];
  best text;
  changed boolean := false;
begin
  if search_correct.snapshot is null or search_correct.normalized !~ '^[[:alnum:][:space:]]+$' then
    return null;
  end if;
  words := pg_catalog.regexp_split_to_array(pg_catalog.btrim(search_correct.normalized), '\s+');
  word_count := pg_catalog.cardinality(words);
  for word_index in 1 .. word_count loop
    typed := words[word_index];
    budget := private.search_typo_budget(typed);
    continue when budget = 0;
    continue when exists (select from app.search_lexicon l
                           where l.snapshot_id = search_correct.snapshot and l.word = typed collate "C");
    -- stop words (no lexeme) and words whose stems the snapshot holds already match as typed
    continue when not exists (
      select from pg_catalog.unnest(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, typed)) v
       where not exists (select from app.search_postings p
                          where p.snapshot_id = search_correct.snapshot and p.lexeme = v.lexeme collate "C"));
    continue when word_index = word_count and exists (
      select from app.search_lexicon l
       where l.snapshot_id = search_correct.snapshot
         and l.word >= typed collate "C" and l.word < (typed || pg_catalog.chr(1114111)) collate "C");

    -- Whole words: every lexicon word within the budget shares a string of up to `budget`
    -- deletions with the typed word, so the index of deletions finds them all (and a few more,
    -- which the distance drops). Materialized, so the snapshot is tested on the few rows found:
    -- a plan adding the snapshot's primary-key range to the bitmap read every word of it.
    with candidates as materialized (
      select l.snapshot_id, l.word, l.docs from app.search_lexicon l
       where private.search_lexicon_deletions(l.word) operator(pg_catalog.&&) private.search_deletions(typed, budget)
    )
    select c.word into best
    from candidates c
    cross join lateral (select private.osa_distance(typed, c.word, false, budget) as edits) d
    where c.snapshot_id = search_correct.snapshot
      and d.edits <= budget
    order by d.edits, c.docs desc, pg_catalog.char_length(c.word), c.word
    limit 1;
    -- The last word may be unfinished: the beginnings of longer words ("tesit" -> "testing").
    if best is null and word_index = word_count then
      near_beginnings := case when budget = 1 then private.search_one_edit_patterns(typed, true) end;
      select l.word into best
      from app.search_lexicon l
      cross join lateral (select case when near_beginnings is null or l.word like any (near_beginnings)
                                      then private.osa_distance(typed, l.word, true, budget) else budget + 1 end as edits) d
      where l.snapshot_id = search_correct.snapshot
        and pg_catalog.char_length(l.word) > pg_catalog.char_length(typed)
        and typed operator(extensions.<%) l.word
        and d.edits <= budget
      order by d.edits, l.docs desc, pg_catalog.char_length(l.word), l.word
      limit 1;
    end if;

    if best is not null then
      words[word_index] := best;
      changed := true;
      best := null;
    end if;
  end loop;
  return case when changed then pg_catalog.array_to_string(words, ' ') end;
end
$$;
comment on function private.search_correct(uuid, text) is
  'Typo correction of a normalised plain-words query against the snapshot''s lexicon (candidates sharing a deletion string, SymSpell; optimal string alignment distance within 1 edit for 4-7 characters, 2 for 8+; the last word also as a prefix); null when nothing was corrected.';
grant execute on function private.search_correct(uuid, text) to anon, authenticated;

-- private.suggest_similar_titles
-- Purpose: autocomplete's last tier, for a single word of 4+ characters: titles holding a word
--          of the snapshot's lexicon that pg_trgm word similarity (>= 0.5) finds close to it
--          ("testi" -> "tests"). The lexicon (a few thousand words) is searched instead of every
--          title, so the cost follows the vocabulary, not the catalog: the 10 closest words,
--          their stems, and the first 50 titles (in postings order) holding each stem.
-- Params:  snapshot, typed (one normalised word), wanted, taken ([{text,type}] left out).
-- Returns: jsonb array of {text, type}, best first (similarity of the word desc, shorter text,
--          text, type), at most `wanted`.
create or replace function private.suggest_similar_titles(snapshot uuid, typed text, wanted integer, taken jsonb)
returns jsonb
language sql
stable
set search_path = ''
set "pg_trgm.word_similarity_threshold" to '0.5'
as $$
  with similar_words as (
    select l.word, extensions.word_similarity(suggest_similar_titles.typed, l.word) as similarity
    from app.search_lexicon l
    where l.snapshot_id = suggest_similar_titles.snapshot
      and suggest_similar_titles.typed operator(extensions.<%) l.word
    order by similarity desc, l.docs desc, l.word
    limit 10
  ),
  similar_stems as (
    select v.lexeme, pg_catalog.max(w.similarity) as similarity
    from similar_words w
    cross join lateral pg_catalog.unnest(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, w.word)) v
    group by v.lexeme
  ),
  holders as (
    select x.similarity, p.type, p.doc
    from similar_stems x
    cross join lateral (
      select p.type, d.doc from app.search_postings p
      cross join lateral pg_catalog.unnest(extensions.subarray(p.title_docs, 1, 50)) d(doc)
       where p.snapshot_id = suggest_similar_titles.snapshot and p.lexeme = x.lexeme collate "C"
       order by d.doc
       limit 50
    ) p
  ),
  suggestions as (
    select distinct on (t.title, h.type) h.type, t.title as text, h.similarity
    from holders h
    join private.search_hits((select pg_catalog.array_agg(distinct row(k.type, suggest_similar_titles.snapshot, k.doc)::private.search_key)
                                from holders k)) t
      on t.type = h.type and t.doc = h.doc
    where not (suggest_similar_titles.taken @> pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('text', t.title, 'type', h.type)))
    order by t.title, h.type, h.similarity desc
  )
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', u.text, 'type', u.type)
           order by u.similarity desc, pg_catalog.char_length(u.text), u.text collate app.alphabetical, u.type), '[]'::jsonb)
  from (
    select * from suggestions u
    order by u.similarity desc, pg_catalog.char_length(u.text), u.text collate app.alphabetical, u.type
    limit suggest_similar_titles.wanted
  ) u
$$;
comment on function private.suggest_similar_titles(uuid, text, integer, jsonb) is
  'Autocomplete last tier: titles holding one of the 10 lexicon words closest to a single typed word (pg_trgm word similarity >= 0.5), leaving out the suggestions already taken.';
grant execute on function private.suggest_similar_titles(uuid, text, integer, jsonb) to anon, authenticated;

-- private.search_has_match
-- Purpose: whether a full-text query matches any content row of the snapshot (null: any
--          snapshot), through the GIN indexes.
-- Why enable_seqscan off: `exists (... @@ query)` tempts the planner into a sequential scan
-- that stops at the first match (the generic plan assumes 0.5 % of rows match; a custom plan
-- multiplies the words' frequencies). When the words never meet in one row, that scan reads
-- every row of every snapshot: 65 ms at 50,000 sparks for one misspelled word. The GIN probe
-- costs the words' posting lists, a few milliseconds at most.
create or replace function private.search_has_match(snapshot uuid, query tsquery)
returns boolean
language sql
stable
set search_path = ''
set enable_seqscan = off
as $$
  select pg_catalog.numnode(search_has_match.query) > 0 and (
       exists (select from app.sparks s where (search_has_match.snapshot is null or s.snapshot_id = search_has_match.snapshot) and s.search_vector @@ search_has_match.query)
    or exists (select from app.concepts c where (search_has_match.snapshot is null or c.snapshot_id = search_has_match.snapshot) and c.search_vector @@ search_has_match.query)
    or exists (select from app.trails t where (search_has_match.snapshot is null or t.snapshot_id = search_has_match.snapshot) and t.search_vector @@ search_has_match.query)
    or exists (select from app.domains d where (search_has_match.snapshot is null or d.snapshot_id = search_has_match.snapshot) and d.search_vector @@ search_has_match.query))
$$;
comment on function private.search_has_match(uuid, tsquery) is
  'Whether a full-text search query matches any content row of a snapshot (null: of any snapshot).';
grant execute on function private.search_has_match(uuid, tsquery) to anon, authenticated;

-- private.search_candidate: a match to rank, with what ranking needs (read once per
-- candidate): its type and key (snapshot, search document number, id), lower(title) for ties,
-- its normalised title for the title boosts and the trigram score, and its search document (the
-- content row's search_vector).
create type private.search_candidate as (
  type text,
  snapshot_id uuid,
  doc integer,
  id uuid,
  sort_title text,
  search_title text,
  document tsvector
);

-- private.search_candidates
-- Purpose: the candidates to rank for matches picked by key (private.search_matches is narrow):
--          what ranking needs, read by private.search_hits.
-- Params:  keys (at most the rank cap).
-- Returns: search_candidate[] in no particular order (ranking orders them).
create or replace function private.search_candidates(keys private.search_key[])
returns private.search_candidate[]
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.array_agg(row(h.type, h.snapshot_id, h.doc, h.id, pg_catalog.lower(h.title), h.search_title, h.document)::private.search_candidate), '{}')
  from private.search_hits(search_candidates.keys) h
$$;
comment on function private.search_candidates(private.search_key[]) is
  'Search candidates (type, key, lower(title), normalised title, search document) for matches picked by key.';
grant execute on function private.search_candidates(private.search_key[]) to anon, authenticated;

-- private.search_term: one lexeme atom of a search query: the clause (AND group) it belongs
-- to, its lexeme, and whether it matches as a prefix ('tools':*).
create type private.search_term as (
  clause integer,
  lexeme text collate "C",
  prefix boolean
);

-- private.search_query_terms
-- Purpose: a search query as clauses OR-ed together, each of lexeme atoms AND-ed together: the
--          shape plain words take ('principl' & 'tool' | 'principl' & 'tools':*), which the
--          postings answer. Any other shape (NOT, phrase, weights, parentheses: websearch syntax
--          the caller wrote) is left to the general path. In tsquery text & binds tighter than
--          |, so without parentheses every | separates two clauses.
-- Params:  query.
-- Returns: search_term[] in query order, or null when the query has another shape or no atom.
create or replace function private.search_query_terms(query tsquery)
returns private.search_term[]
language plpgsql
immutable
set search_path = ''
as $$
declare
  query_text text := search_query_terms.query::text;
  terms private.search_term[] := '{}';
  clause integer := 1;
  token text[];
begin
  -- Outside the quoted lexemes only '|', '&', ':*' and spaces may appear.
  if pg_catalog.numnode(search_query_terms.query) = 0
     or pg_catalog.regexp_replace(query_text, '''(?:[^'']|'''')*''', '', 'g') !~ '^[|&:* ]*$' then
    return null;
  end if;
  for token in
    select m.parts from pg_catalog.regexp_matches(query_text, '''((?:[^'']|'''')*)''(:\*)?|(\|)', 'g') m(parts)
  loop
    if token[3] is not null then
      clause := clause + 1;
    else
      terms := terms || row(clause, pg_catalog.regexp_replace(token[1], '([''\\])\1', '\1', 'g'), token[2] is not null)::private.search_term;
    end if;
  end loop;
  return terms;
end
$$;
comment on function private.search_query_terms(tsquery) is
  'A search query as OR-ed clauses of AND-ed lexeme atoms (clause, lexeme, prefix), or null when it has another shape (NOT, phrase, weights, parentheses).';
grant execute on function private.search_query_terms(tsquery) to anon, authenticated;

-- private.search_match_set: the document numbers of a search's matches of one content type and
-- difficulty (docs), and of those matching in the title alone (title_docs), sorted.
create type private.search_match_set as (
  type text,
  difficulty text,
  docs integer[],
  title_docs integer[]
);

-- private.search_term_postings
-- Purpose: the postings a search term reads: its lexeme's, or (a prefix term) those of every
--          lexeme it begins.
-- Params:  snapshot, term.
-- Returns: app.search_postings rows.
create or replace function private.search_term_postings(snapshot uuid, term private.search_term)
returns setof app.search_postings
language sql
stable
set search_path = ''
as $$
  select p.* from app.search_postings p
   where p.snapshot_id = search_term_postings.snapshot
     and p.lexeme >= (search_term_postings.term).lexeme
     and p.lexeme <= case when (search_term_postings.term).prefix then (search_term_postings.term).lexeme || pg_catalog.chr(1114111)
                          else (search_term_postings.term).lexeme end
     and pg_catalog.starts_with(p.lexeme, (search_term_postings.term).lexeme)
$$;
comment on function private.search_term_postings(uuid, private.search_term) is
  'The postings of a search term in a snapshot: its lexeme''s, or every lexeme it begins when it is a prefix term.';
grant execute on function private.search_term_postings(uuid, private.search_term) to anon, authenticated;

-- private.search_posted_matches
-- Purpose: the matches of a query of terms (private.search_query_terms) in one snapshot, from
--          the postings alone: a term's set is its lexeme's, or the union of the sets of the
--          lexemes it is a prefix of; a clause's set the intersection of its terms' sets; the
--          query's the union of its clauses'. Per content type and difficulty, because the
--          postings are, so the facets are set sizes. The title matches are the same sets over
--          the titles' postings: what ts_filter(search_vector, '{a}') @@ query keeps. The sets
--          are merged by intarray's & and | (sorted int4 sets, in C). A clause reads its
--          smallest term first (stored sizes, read without fetching the sets) and stops at an
--          empty intersection: "principles tools" is also 'principl' & 'tools':*, and no
--          lexeme begins with "tools", so the 270,000 numbers of 'principl' at 500,000 sparks
--          are not read a second time.
-- Params:  snapshot, terms.
-- Returns: one search_match_set per content type and difficulty with a match.
create or replace function private.search_posted_matches(snapshot uuid, terms private.search_term[])
returns setof private.search_match_set
language plpgsql
stable
set search_path = ''
as $$
declare
  clause_count constant integer := (select pg_catalog.max(t.clause) from pg_catalog.unnest(search_posted_matches.terms) t);
  term private.search_term;
  -- A prefix term of at most this many postings (lexemes times types and difficulties) has its
  -- sets folded by | in C, each fold copying the sets so far; more are unnested and sorted once.
  -- At 500,000 sparks "trade" ('trade', 'trade-off': 42,000 numbers) took 25 ms unnested.
  fold_limit constant integer := 256;
  term_sets private.search_match_set[];
  posting record;
  folded private.search_match_set;
  clause_sets private.search_match_set[];
  query_sets private.search_match_set[] := '{}';
begin
  for clause_no in 1 .. clause_count loop
    clause_sets := null;
    for term in
      select t.* from pg_catalog.unnest(search_posted_matches.terms) t
       where t.clause = clause_no
       order by (select coalesce(pg_catalog.sum(pg_catalog.pg_column_size(p.docs)), 0)
                   from private.search_term_postings(search_posted_matches.snapshot, t) p)
    loop
      if term.prefix and (select pg_catalog.count(*) from private.search_term_postings(search_posted_matches.snapshot, term)) <= fold_limit then
        -- one lexeme or a few: each type and difficulty's sets folded by intarray's | (in C)
        term_sets := '{}';
        folded := null;
        for posting in
          select p.type, p.difficulty, p.docs, p.title_docs
            from private.search_term_postings(search_posted_matches.snapshot, term) p
           order by p.type, p.difficulty
        loop
          if folded.type is distinct from posting.type or folded.difficulty is distinct from posting.difficulty then
            if folded.type is not null then
              term_sets := term_sets || folded;
            end if;
            folded := row(posting.type, posting.difficulty, posting.docs, posting.title_docs);
          else
            folded := row(folded.type, folded.difficulty, folded.docs operator(extensions.|) posting.docs,
                          folded.title_docs operator(extensions.|) posting.title_docs);
          end if;
        end loop;
        if folded.type is not null then
          term_sets := term_sets || folded;
        end if;
      elsif term.prefix then
        -- many lexemes; a row may hold more than one of them ('tooling', 'toolkit')
        term_sets := array(
          select row(p.type, p.difficulty,
                     extensions.uniq(extensions.sort(pg_catalog.array_agg(x.doc) filter (where not x.in_title))),
                     coalesce(extensions.uniq(extensions.sort(pg_catalog.array_agg(x.doc) filter (where x.in_title))), '{}'))::private.search_match_set
            from private.search_term_postings(search_posted_matches.snapshot, term) p
            cross join lateral (select d, false from pg_catalog.unnest(p.docs) d
                                union all
                                select d, true from pg_catalog.unnest(p.title_docs) d) x(doc, in_title)
           group by p.type, p.difficulty);
      else
        term_sets := array(
          select row(p.type, p.difficulty, p.docs, p.title_docs)::private.search_match_set
            from private.search_term_postings(search_posted_matches.snapshot, term) p);
      end if;
      -- a type and difficulty lacking one of the clause's terms has no match of the clause
      clause_sets := case when clause_sets is null then term_sets else array(
        select row(a.type, a.difficulty, a.docs operator(extensions.&) b.docs,
                   a.title_docs operator(extensions.&) b.title_docs)::private.search_match_set
          from pg_catalog.unnest(clause_sets) a
          join pg_catalog.unnest(term_sets) b on b.type = a.type and b.difficulty is not distinct from a.difficulty) end;
      exit when pg_catalog.cardinality(clause_sets) = 0;
    end loop;
    query_sets := case when pg_catalog.cardinality(clause_sets) = 0 then query_sets
                       when pg_catalog.cardinality(query_sets) = 0 then clause_sets else array(
      select row(coalesce(a.type, b.type), coalesce(a.difficulty, b.difficulty),
                 coalesce(a.docs, '{}') operator(extensions.|) coalesce(b.docs, '{}'),
                 coalesce(a.title_docs, '{}') operator(extensions.|) coalesce(b.title_docs, '{}'))::private.search_match_set
        from pg_catalog.unnest(query_sets) a
        full join pg_catalog.unnest(clause_sets) b  -- a full join needs a hashable condition
          on b.type = a.type and coalesce(b.difficulty, '') = coalesce(a.difficulty, '')) end;
  end loop;
  return query select m.* from pg_catalog.unnest(query_sets) m where pg_catalog.cardinality(m.docs) > 0;
end
$$;
comment on function private.search_posted_matches(uuid, private.search_term[]) is
  'The matches (document numbers, all and in the title) per content type and difficulty of a query of OR-ed clauses of AND-ed lexeme terms in one snapshot, from app.search_postings.';
grant execute on function private.search_posted_matches(uuid, private.search_term[]) to anon, authenticated;

-- private.search_posted_candidates
-- Purpose: the candidates to rank of a posted search: title matches first, then the others,
--          each in document order, at most `wanted`, of the sets the type and difficulty
--          filters keep. A set is sorted, so only its first `wanted` numbers can be picked:
--          the cost follows `wanted`, not the matches.
-- Params:  snapshot, sets (private.search_posted_matches), kind and level (null: any), wanted.
-- Returns: search_candidate[] (private.search_candidates).
create or replace function private.search_posted_candidates(snapshot uuid, sets private.search_match_set[], kind text, level text, wanted integer)
returns private.search_candidate[]
language sql
stable
set search_path = ''
as $$
  with kept as (
    select s.* from pg_catalog.unnest(search_posted_candidates.sets) s
     where (search_posted_candidates.kind is null or s.type = search_posted_candidates.kind)
       and (search_posted_candidates.level is null or s.difficulty = search_posted_candidates.level)
  ),
  picked as (
    select x.type, x.doc from (
      select k.type, d.doc, 0 as tier
        from kept k cross join lateral pg_catalog.unnest(extensions.subarray(k.title_docs, 1, search_posted_candidates.wanted)) d(doc)
      union all
      select k.type, d.doc, 1
        -- the first `wanted` numbers outside the titles lie among the first wanted + |titles|
        from kept k cross join lateral pg_catalog.unnest(extensions.subarray(
               extensions.subarray(k.docs, 1, search_posted_candidates.wanted + pg_catalog.cardinality(k.title_docs))
                 operator(extensions.-) k.title_docs,
               1, search_posted_candidates.wanted)) d(doc)
    ) x
    order by x.tier, x.doc
    limit search_posted_candidates.wanted
  )
  select private.search_candidates(array(select row(p.type, search_posted_candidates.snapshot, p.doc)::private.search_key from picked p))
$$;
comment on function private.search_posted_candidates(uuid, private.search_match_set[], text, text, integer) is
  'The candidates to rank of a search answered from the postings: title matches first, then the others, each in document order, at most `wanted`, of the sets the filters keep.';
grant execute on function private.search_posted_candidates(uuid, private.search_match_set[], text, text, integer) to anon, authenticated;

-- private.search_page_rows
-- Purpose: ranks the candidates of a search and returns one page of results; only the page's
--          rows are read from the content tables.
-- Params:  candidates, query, normalized, fuzzy, page, per_page.
-- Returns: jsonb array of {type,id,slug,title,summary,score}, ordered by score desc,
--          lower(title) (in the reader's alphabet), type, id. score = ts_rank(document, query,
--          1) + 1.0 when the normalised title equals the text + 0.5 when it starts with it, or
--          (fuzzy) the trigram word similarity of the text to the title; rounded to 6 decimals.
create or replace function private.search_page_rows(candidates private.search_candidate[], query tsquery, normalized text, fuzzy boolean, page integer, per_page integer)
returns jsonb
language sql
stable
set search_path = ''
as $$
  with scored as (
    select c.type, c.snapshot_id, c.doc, c.id, c.sort_title,
           -- = round(x::numeric, 6)::double precision without two numeric conversions per
           -- candidate: x is a float4 plus 0, 0.5 or 1 (exact in float8), never within float8
           -- error of a half-way point unless exactly on it, where both round half away from zero.
           pg_catalog.trunc((case when search_page_rows.fuzzy
               then extensions.word_similarity(search_page_rows.normalized, c.search_title)::double precision
               else pg_catalog.ts_rank(c.document, search_page_rows.query, 1)
                    + case when c.search_title = search_page_rows.normalized then 1.0::double precision
                           when pg_catalog.starts_with(c.search_title, search_page_rows.normalized) then 0.5::double precision
                           else 0::double precision end
             end) * 1000000::double precision + 0.5::double precision) / 1000000::double precision as score
    from pg_catalog.unnest(search_page_rows.candidates) c
  ),
  page_rows as (
    select r.* from scored r
    -- score ties in the reader's alphabet, like every title order (app.alphabetical)
    order by r.score desc, r.sort_title collate app.alphabetical, r.type, r.id
    offset (search_page_rows.page - 1) * search_page_rows.per_page
    limit search_page_rows.per_page
  )
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
           'type', p.type, 'id', p.id, 'slug', h.slug, 'title', h.title,
           'summary', h.summary, 'score', p.score)
         order by p.score desc, p.sort_title collate app.alphabetical, p.type, p.id), '[]'::jsonb)
  from page_rows p
  join private.search_hits((select pg_catalog.array_agg(row(r.type, r.snapshot_id, r.doc)::private.search_key) from page_rows r)) h
    on h.type = p.type and h.snapshot_id = p.snapshot_id and h.doc = p.doc
$$;
comment on function private.search_page_rows(private.search_candidate[],tsquery,text,boolean,integer,integer) is
  'Ranks search candidates (score = ts_rank + exact/prefix title boost, or trigram similarity when fuzzy) and returns one page as a jsonb array, reading only the page''s rows.';
grant execute on function private.search_page_rows(private.search_candidate[],tsquery,text,boolean,integer,integer) to anon, authenticated;

-- private.search_count: how many matches of one content type and difficulty a search has.
create type private.search_count as (
  type text,
  difficulty text,
  n integer
);

-- private.search_facets
-- Purpose: a search's total and facets from its match counts by type and difficulty, whichever
--          way they were counted (the postings' set sizes or the listed matches).
-- Params:  counts, kind and level (the type and difficulty filters; null: any).
-- Returns: total (the matches both filters keep), types ({spark,concept,trail,domain}: the type
--          filter ignored) and difficulties ({beginner,...,expert}: the difficulty filter
--          ignored); every key present, 0 when none.
create or replace function private.search_facets(counts private.search_count[], kind text, level text, out total integer, out types jsonb, out difficulties jsonb)
returns record
language sql
stable
set search_path = ''
as $$
  select
    (select coalesce(pg_catalog.sum(c.n), 0)::integer from pg_catalog.unnest(search_facets.counts) c
      where (search_facets.kind is null or c.type = search_facets.kind)
        and (search_facets.level is null or c.difficulty = search_facets.level)),
    (select pg_catalog.jsonb_object_agg(kinds.kind, coalesce(x.n, 0) order by kinds.position)
       from unnest(array['spark', 'concept', 'trail', 'domain']) with ordinality as kinds(kind, position)
       left join (
         select c.type, pg_catalog.sum(c.n)::integer as n from pg_catalog.unnest(search_facets.counts) c
          where search_facets.level is null or c.difficulty = search_facets.level
          group by c.type
       ) x on x.type = kinds.kind),
    (select pg_catalog.jsonb_object_agg(levels.value, coalesce(x.n, 0) order by levels.sort_order)
       from app.difficulty_levels levels
       left join (
         select c.difficulty, pg_catalog.sum(c.n)::integer as n from pg_catalog.unnest(search_facets.counts) c
          where (search_facets.kind is null or c.type = search_facets.kind) and c.difficulty is not null
          group by c.difficulty
       ) x on x.difficulty = levels.value)
$$;
comment on function private.search_facets(private.search_count[], text, text) is
  'A search''s total and facets (types ignoring the type filter, difficulties ignoring the difficulty filter) from its match counts by type and difficulty.';
grant execute on function private.search_facets(private.search_count[], text, text) to anon, authenticated;

-- private.search_leading_words
-- Purpose: the longest run of leading words of `normalized` that matches in the snapshot (the
--          matching strategy "last", Meilisearch's default), for a text that matches nothing as
--          a whole: "window functions kubernetes" -> "window functions". The first word is never
--          dropped. Each try is one GIN probe per table (private.search_has_match), so words that
--          never meet in one row cost a few probes instead of a trigram pass over every title.
-- Params:  snapshot (null: no shortening), normalized (private.search_normalize'd, trimmed, and
--          matching nothing as a whole). Websearch syntax (quotes, or, -word) is the caller's
--          own: such a text is never shortened.
-- Returns: text or null (no shorter run matches).
create or replace function private.search_leading_words(snapshot uuid, normalized text)
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
  words text[];
begin
  if search_leading_words.snapshot is null or search_leading_words.normalized !~ '^[[:alnum:][:space:]]+$' then
    return null;
  end if;
  words := pg_catalog.regexp_split_to_array(search_leading_words.normalized, '\s+');
  for kept in reverse pg_catalog.cardinality(words) - 1 .. 1 loop
    if private.search_has_match(search_leading_words.snapshot,
                                private.search_query(pg_catalog.array_to_string(words[1:kept], ' '))) then
      return pg_catalog.array_to_string(words[1:kept], ' ');
    end if;
  end loop;
  return null;
end
$$;
comment on function private.search_leading_words(uuid, text) is
  'The longest run of leading words of a search text that matches in a snapshot (matching strategy "last"; the first word is kept); null when none does.';
grant execute on function private.search_leading_words(uuid, text) to anon, authenticated;

-- api.search_content
-- Plain words in one snapshot are answered from the postings (private.search_posted_matches):
-- totals and facets are set sizes, candidates the sets' first numbers; other queries (websearch
-- syntax, no current snapshot, the trigram fallback) list every match (private.search_matches).
-- A query that matches nothing as typed is relaxed: its typo correction (private.search_correct)
-- is searched, then, when that matches nothing either, its longest matching run of leading words
-- (private.search_leading_words); meta.corrected_query names the text searched.
-- Purpose: full-text search across sparks, concepts, trails and domains of the selected snapshot.
-- Params:  q (1..200 characters after trimming), type (spark|concept|trail|domain, optional),
--          difficulty (beginner|intermediate|advanced|expert, optional: sparks by difficulty,
--          trails by difficulty_level; concepts and domains have none and drop out),
--          page (1..100000, default 1), per_page (1..50, default 20), snapshot_id (optional).
-- Returns: {data: [{type,id,slug,title,summary,score}], meta: {total,page,per_page,total_pages,
--          has_next,has_prev[,corrected_query]}, facets: {types: {spark,concept,trail,domain},
--          difficulties: {beginner,intermediate,advanced,expert}}}. Ordered by score desc, then
--          lower(title), type, id. At most 1000 matches are ranked (title matches first, then
--          in document order: search_doc, the order rows were written); pages beyond them are empty; meta.total and the facets count every
--          match. facets.types ignores the type filter and facets.difficulties ignores the
--          difficulty filter. meta.corrected_query (normalised text) is present when q was
--          relaxed: typo-corrected, or its last words dropped. When nothing relaxed matches
--          either, titles are matched by trigram word similarity instead and score is that
--          similarity.
-- Errors:  22023 invalid q, type, difficulty, page or per_page; PT404 unknown snapshot_id.
create or replace function api.search_content(q text, type text default null::text, difficulty text default null::text, page integer default 1, per_page integer default 20, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('search_content');
  rank_cap constant integer := 1000;
  typed constant text := pg_catalog.btrim(private.search_normalize(search_content.q));
  normalized text := typed;
  snapshot uuid;
  query tsquery;
  fuzzy boolean := false;
  corrected text;
  terms private.search_term[];
  sets private.search_match_set[];
  total integer := 0;
  type_counts jsonb;
  level_counts jsonb;
  counts private.search_count[] := '{}';
  candidates private.search_candidate[] := '{}';
  -- whether the general path matched anything (before the type and difficulty filters)
  found_any boolean := false;
  -- the text searched: typed, corrected, shortened (leading words); then titles by trigram
  stage text := 'typed';
  retry text;
begin
  if search_content.q is null or pg_catalog.char_length(pg_catalog.btrim(search_content.q)) not between 1 and 200 then
    raise exception using errcode = '22023', message = 'q must be 1 to 200 characters',
      detail = pg_catalog.jsonb_build_object('field', 'q')::text;
  end if;
  if search_content.type is not null and search_content.type not in ('spark', 'concept', 'trail', 'domain') then
    raise exception using errcode = '22023', message = 'type must be one of spark, concept, trail, domain',
      detail = pg_catalog.jsonb_build_object('field', 'type', 'value', search_content.type)::text;
  end if;
  perform private.require_difficulty('difficulty', search_content.difficulty);
  perform private.require_range('page', search_content.page, 1, 100000);
  perform private.require_range('per_page', search_content.per_page, 1, 50);

  snapshot := private.resolve_snapshot_id(search_content.snapshot_id);

  -- Runs once, or again while nothing matches: the text as typed, its typo correction, its
  -- longest matching run of leading words (each named by meta.corrected_query), then, when the
  -- typed words mean something (not only stop words), titles by trigram similarity. Whether
  -- anything matched is known from the search itself, not from a probe before it: a probe of
  -- two common words costs as much as the search (at 500,000 sparks, probing a corrected word
  -- before searching it cost 50-70 ms of a 60-80 ms typo search).
  loop
    -- The query of the text as typed, or as relaxed; the trigram pass keeps the last one.
    if not fuzzy then
      query := private.search_query(normalized);
      terms := case when snapshot is not null then private.search_query_terms(query) end;
    end if;
    if pg_catalog.numnode(query) = 0 then
      null; -- only stop words: nothing matches
    elsif terms is not null and not fuzzy then
      -- Plain words in one snapshot: sets of document numbers from the postings.
      sets := array(select m from private.search_posted_matches(snapshot, terms) m);
      counts := array(select row(m.type, m.difficulty, pg_catalog.cardinality(m.docs))::private.search_count
                        from pg_catalog.unnest(sets) m);
      candidates := private.search_posted_candidates(snapshot, sets, search_content.type, search_content.difficulty, rank_cap);
      found_any := pg_catalog.cardinality(sets) > 0;
    else
      -- General path: every match is listed once (narrow), counted by type and difficulty, and
      -- its first rank_cap rows (title matches first) become the candidates.
      with matched as materialized (
        select m.* from private.search_matches(snapshot, query, normalized, fuzzy) m
      )
      select array(select row(m.type, m.difficulty, pg_catalog.count(*))::private.search_count
                     from matched m group by m.type, m.difficulty),
             private.search_candidates(array(
               select row(m.type, m.snapshot_id, m.doc)::private.search_key from matched m
                where (search_content.type is null or m.type = search_content.type)
                  and (search_content.difficulty is null or m.difficulty = search_content.difficulty)
                order by m.title_hit desc, m.doc
                limit rank_cap))
        into counts, candidates;
      found_any := pg_catalog.cardinality(counts) > 0;
    end if;

    exit when found_any or fuzzy or (stage = 'typed' and pg_catalog.numnode(query) = 0);
    -- Nothing matched: the next text to search.
    retry := null;
    if stage = 'typed' then
      retry := private.search_correct(snapshot, typed);
      stage := 'corrected';
    end if;
    if retry is null and stage = 'corrected' then
      retry := private.search_leading_words(snapshot, coalesce(corrected, typed));
      stage := 'shortened';
    end if;
    if retry is not null then
      corrected := retry;
      normalized := retry;
      continue;
    end if;
    -- nothing relaxed matches: titles by trigram similarity to the text as typed
    corrected := null;
    normalized := typed;
    exit when pg_catalog.char_length(typed) < 3;
    fuzzy := true;
  end loop;

  select f.total, f.types, f.difficulties into total, type_counts, level_counts
    from private.search_facets(counts, search_content.type, search_content.difficulty) f;

  return pg_catalog.jsonb_build_object(
    'data', private.search_page_rows(candidates, query, normalized, fuzzy, search_content.page, search_content.per_page),
    -- Pages stop at the rank cap; the total counts every match.
    'meta', private.page_meta(least(total, rank_cap), search_content.page, search_content.per_page)
            || pg_catalog.jsonb_build_object('total', total)
            || case when corrected is not null then pg_catalog.jsonb_build_object('corrected_query', corrected) else '{}'::jsonb end,
    'facets', pg_catalog.jsonb_build_object('types', type_counts, 'difficulties', level_counts));
end
$$;
comment on function api.search_content(text, text, text, integer, integer, uuid) is
  'Full-text search (english, accent-insensitive, typo-tolerant, title A > summary/description B) over sparks, concepts, trails, domains of a snapshot. Params: q, type, difficulty, page, per_page (max 50), snapshot_id. Returns {data:[{type,id,slug,title,summary,score}], meta (corrected_query when q was corrected), facets:{types,difficulties}}. Errors: 22023 invalid parameter, PT404 unknown snapshot.';
grant execute on function api.search_content(text, text, text, integer, integer, uuid) to anon, authenticated, service_role;
