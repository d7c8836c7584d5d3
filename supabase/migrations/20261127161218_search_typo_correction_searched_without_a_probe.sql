-- search_typo_correction_searched_without_a_probe: a search that matches nothing as typed
-- searches its typo correction straight away; the GIN probe that checked the correction first
-- (private.search_relaxed) cost as much as the search for a common word. Shortening to the
-- leading words that match keeps its probes (private.search_leading_words).

drop function if exists "private"."search_relaxed"(snapshot uuid, normalized text);

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION private.search_leading_words(snapshot uuid, normalized text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
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
$function$
;

CREATE OR REPLACE FUNCTION api.search_content(q text, type text DEFAULT NULL::text, difficulty text DEFAULT NULL::text, page integer DEFAULT 1, per_page integer DEFAULT 20, snapshot_id uuid DEFAULT NULL::uuid)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
declare
  caller_role constant text := private.authorize('search_content');
  rank_cap constant integer := 1000;
  typed constant text := pg_catalog.btrim(private.search_normalize(search_content.q));
  normalized text := typed;
  snapshot uuid;
  query tsquery;
  fuzzy boolean := false;
  corrected text;
  single_lexeme text;
  lexeme_matches integer;
  total integer := 0;
  title_total integer := 0;
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
      single_lexeme := null;
      lexeme_matches := 2;
      if pg_catalog.numnode(query) > 0 then
        select l.lexeme, l.match_count into single_lexeme, lexeme_matches from private.search_single_lexeme(snapshot, query) l;
      end if;
    end if;
    if pg_catalog.numnode(query) = 0 then
      null; -- only stop words: nothing matches
    elsif lexeme_matches = 0 and not fuzzy then
      null; -- no lexeme of the snapshot matches: relaxed below
    elsif lexeme_matches = 1 and not fuzzy then
      -- One lexeme: counts from the lexeme figures, candidates from the title postings.
      counts := array(
        select row(c.type, c.difficulty, pg_catalog.sum(c.docs))::private.search_count
          from app.search_lexeme_counts c
         where c.snapshot_id = snapshot and c.lexeme = single_lexeme
         group by c.type, c.difficulty);
      select coalesce(pg_catalog.sum(c.docs), 0), coalesce(pg_catalog.sum(c.title_docs), 0)
        into total, title_total
        from app.search_lexeme_counts c
       where c.snapshot_id = snapshot and c.lexeme = single_lexeme
         and (search_content.type is null or c.type = search_content.type)
         and (search_content.difficulty is null or c.difficulty = search_content.difficulty);
      -- Candidates: title matches in (type, id) order, read with their search documents from one
      -- range of the postings index, then (when they leave room) the other matches in the same
      -- order.
      select coalesce(pg_catalog.array_agg(row(p.type, p.snapshot_id, p.id, p.sort_title, p.search_title, p.rank_vector)::private.search_candidate
                                           order by p.type, p.id), '{}')
        into candidates
        from (
          select p.* from app.search_title_postings p
           where p.snapshot_id = snapshot and p.lexeme = single_lexeme
             and (search_content.type is null or p.type = search_content.type)
             and (search_content.difficulty is null or p.difficulty = search_content.difficulty)
           order by p.type, p.id
           limit rank_cap
        ) p;
      if title_total < rank_cap and total > title_total then
        candidates := candidates || private.search_candidates(array(
          select row(m.type, m.snapshot_id, m.id)::private.search_key
            from private.search_matches(snapshot, query, normalized, false, search_content.type, search_content.difficulty) m
           where not m.title_hit
           order by m.type, m.id
           limit rank_cap - title_total));
      end if;
    else
      -- General path: every match is listed once (narrow), counted by type and difficulty, and
      -- its first rank_cap rows (title matches first) become the candidates.
      with matched as materialized (
        select m.* from private.search_matches(snapshot, query, normalized, fuzzy) m
      )
      select array(select row(m.type, m.difficulty, pg_catalog.count(*))::private.search_count
                     from matched m group by m.type, m.difficulty),
             private.search_candidates(array(
               select row(m.type, m.snapshot_id, m.id)::private.search_key from matched m
                where (search_content.type is null or m.type = search_content.type)
                  and (search_content.difficulty is null or m.difficulty = search_content.difficulty)
                order by m.title_hit desc, m.type, m.id
                limit rank_cap))
        into counts, candidates;
      found_any := pg_catalog.cardinality(counts) > 0;
    end if;

    exit when found_any or lexeme_matches = 1 or fuzzy or (stage = 'typed' and pg_catalog.numnode(query) = 0);
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
$function$
;

revoke all on function private.search_leading_words(snapshot uuid, normalized text) from public;
grant execute on function private.search_leading_words(snapshot uuid, normalized text) to anon;
grant execute on function private.search_leading_words(snapshot uuid, normalized text) to authenticated;

comment on function private.search_leading_words(pg_catalog.uuid,pg_catalog.text) is 'The longest run of leading words of a search text that matches in a snapshot (matching strategy "last"; the first word is kept); null when none does.';
