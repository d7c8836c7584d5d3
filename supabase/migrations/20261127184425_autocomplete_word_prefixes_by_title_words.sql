-- Autocomplete's word-prefix tier finds its titles by the words a text needs at a word start
-- ("exploring bea" -> 'exploring' & 'bea':*) among the titles' words (private.search_title_words,
-- GIN on each content table) instead of reading every title that holds the text anywhere through
-- the trigram index: at 500,000 sparks "inc" (inside "principles") read 220,478 titles to
-- suggest none. The function comes before the indexes: they are built from it over the rows
-- already stored.
set check_function_bodies = off;

CREATE OR REPLACE FUNCTION private.search_title_word_query(normalized text)
 RETURNS tsquery
 LANGUAGE sql
 IMMUTABLE STRICT
 SET search_path TO ''
AS $function$
  select pg_catalog.string_agg(pg_catalog.quote_literal(w.word)
           || case when w.n = w.runs and search_title_word_query.normalized ~ '[[:alnum:]]$' then ':*' else '' end,
           ' & ' order by w.n)::tsquery
  from (select x.word, x.n, pg_catalog.count(*) over () as runs
        from pg_catalog.unnest(pg_catalog.array_remove(
               pg_catalog.regexp_split_to_array(search_title_word_query.normalized, '[^[:alnum:]]+'), '')) with ordinality x(word, n)) w
$function$
;

CREATE OR REPLACE FUNCTION private.search_title_words(search_title text)
 RETURNS tsvector
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
 SET search_path TO ''
AS $function$
  select pg_catalog.array_to_tsvector(pg_catalog.array_remove(
    pg_catalog.regexp_split_to_array(search_title_words.search_title, '[^[:alnum:]]+'), ''))
$function$
;

CREATE INDEX concepts_title_words ON app.concepts USING gin (snapshot_id, private.search_title_words(search_title));

CREATE INDEX domains_title_words ON app.domains USING gin (snapshot_id, private.search_title_words(search_title));

CREATE INDEX sparks_title_words ON app.sparks USING gin (snapshot_id, private.search_title_words(search_title));

CREATE INDEX trails_title_words ON app.trails USING gin (snapshot_id, private.search_title_words(search_title));

CREATE OR REPLACE FUNCTION private.suggest_title_word_candidates(snapshot uuid, normalized text, by_words boolean)
 RETURNS TABLE(type text, text text, norm text)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
declare
  pattern text := pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(suggest_title_word_candidates.normalized, '\', '\\'), '%', '\%'), '_', '\_');
  word_start text := '(^|[^[:alnum:]])' || pg_catalog.regexp_replace(suggest_title_word_candidates.normalized, '([^[:alnum:][:space:]])', '\\\1', 'g');
  words tsquery := case when suggest_title_word_candidates.by_words then private.search_title_word_query(suggest_title_word_candidates.normalized) end;
begin
  if words is not null then
    return query
      select x.* from (
        select 'spark'::text, s.title, s.search_title from app.sparks s
         where (suggest_title_word_candidates.snapshot is null or s.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_words(s.search_title) @@ words
        union all
        select 'concept', c.title, c.search_title from app.concepts c
         where (suggest_title_word_candidates.snapshot is null or c.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_words(c.search_title) @@ words
        union all
        select 'trail', t.title, t.search_title from app.trails t
         where (suggest_title_word_candidates.snapshot is null or t.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_words(t.search_title) @@ words
        union all
        select 'domain', d.name, d.search_title from app.domains d
         where (suggest_title_word_candidates.snapshot is null or d.snapshot_id = suggest_title_word_candidates.snapshot)
           and private.search_title_words(d.search_title) @@ words
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
$function$
;

CREATE OR REPLACE FUNCTION private.suggest_title_word_matches(snapshot uuid, normalized text, wanted integer, taken jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
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
$function$
;

revoke all on function private.search_title_words(search_title text) from public;
grant execute on function private.search_title_words(search_title text) to anon;
grant execute on function private.search_title_words(search_title text) to authenticated;
revoke all on function private.search_title_word_query(normalized text) from public;
grant execute on function private.search_title_word_query(normalized text) to anon;
grant execute on function private.search_title_word_query(normalized text) to authenticated;
revoke all on function private.suggest_title_word_candidates(snapshot uuid, normalized text, by_words boolean) from public;
grant execute on function private.suggest_title_word_candidates(snapshot uuid, normalized text, by_words boolean) to anon;
grant execute on function private.suggest_title_word_candidates(snapshot uuid, normalized text, by_words boolean) to authenticated;

comment on function private.search_title_word_query(pg_catalog.text) is 'The title words a text at a word start needs: its runs of letters and digits as words, the last as a prefix when the text ends with it (a tsquery for private.search_title_words), or null.';
comment on function private.search_title_words(pg_catalog.text) is 'The words (runs of letters and digits) of a normalised title as a tsvector of those words, unstemmed: what autocomplete looks up by prefix.';
comment on function private.suggest_title_word_candidates(pg_catalog.uuid,pg_catalog.text,boolean) is 'Autocomplete tier 1 candidates: titles not starting with the text but having it at a later word start, found by the title words the text needs (by_words) or by trigram index, then checked.';
comment on function private.suggest_title_word_matches(pg_catalog.uuid,pg_catalog.text,integer,pg_catalog.jsonb) is 'Autocomplete tier 1 for any text: the titles with a later word starting with it (private.suggest_title_word_candidates), best first.';
