-- Full-text search and autocomplete over the content of one snapshot.
--
-- Design (docs/search-graph.md has the user-facing version):
--   * Text is normalised by private.search_normalize: unaccented and lower-cased, so "Résumé"
--     and "resume" are the same word. unaccent() is only stable (its dictionary could change),
--     so the wrapper pins the dictionary and is declared immutable to be usable in indexes.
--   * Documents are weighted tsvectors in the 'english' configuration: title (domain name) at
--     weight A, summary/description at weight B. 'english' stems ("joins" finds "join") and drops
--     stop words, so "the basics of sql" means "basic & sql" instead of demanding the literal
--     "the" and "of". A query made only of stop words has no lexeme and matches nothing.
--   * The documents are stored generated columns (search_vector, search_title) with GIN indexes:
--     computed once per written row, never per query. Writers name their columns, so they are
--     unaffected.
--   * Titles also get a trigram GIN index for autocomplete (prefix and typo-tolerant matches)
--     and for the search fallback when the full-text query finds nothing (typos).

-- private.search_normalize
-- Purpose: the one text normalisation of search: unaccent (pinned dictionary) and lower-case.
create function private.search_normalize(value text)
returns text
language sql
immutable
parallel safe
set search_path = ''
as $$
  select pg_catalog.lower(extensions.unaccent('extensions.unaccent'::regdictionary, coalesce(value, '')))
$$;
comment on function private.search_normalize(text) is
  'Search normalisation: unaccent with a pinned dictionary, then lower-case. Immutable so indexes can use it.';
grant execute on function private.search_normalize(text) to anon, authenticated;

-- private.search_document
-- Purpose: the weighted search document of one content row: title A, body B.
create function private.search_document(title text, body text)
returns tsvector
language sql
immutable
parallel safe
set search_path = ''
as $$
  select pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, private.search_normalize(search_document.title)), 'A')
      || pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, private.search_normalize(search_document.body)), 'B')
$$;
comment on function private.search_document(text, text) is
  'Weighted english tsvector of a content row: title at weight A, summary/description at weight B.';
grant execute on function private.search_document(text, text) to anon, authenticated;

-- Stored generated columns, so matching, counting and ranking read a precomputed vector instead
-- of running unaccent + to_tsvector per row (a seq scan over many matches stays cheap). The
-- content writers (import, test builder) name their columns, so the extra columns are invisible
-- to them.
alter table app.sparks
  add column search_vector tsvector generated always as (private.search_document(title, summary)) stored,
  add column search_title text generated always as (private.search_normalize(title)) stored;
alter table app.concepts
  add column search_vector tsvector generated always as (private.search_document(title, description)) stored,
  add column search_title text generated always as (private.search_normalize(title)) stored;
alter table app.trails
  add column search_vector tsvector generated always as (private.search_document(title, description)) stored,
  add column search_title text generated always as (private.search_normalize(title)) stored;
alter table app.domains
  add column search_vector tsvector generated always as (private.search_document(name, description)) stored,
  add column search_title text generated always as (private.search_normalize(name)) stored;

create index sparks_search on app.sparks using gin (search_vector);
create index concepts_search on app.concepts using gin (search_vector);
create index trails_search on app.trails using gin (search_vector);
create index domains_search on app.domains using gin (search_vector);

create index sparks_title_trgm on app.sparks using gin (search_title extensions.gin_trgm_ops);
create index concepts_title_trgm on app.concepts using gin (search_title extensions.gin_trgm_ops);
create index trails_title_trgm on app.trails using gin (search_title extensions.gin_trgm_ops);
create index domains_name_trgm on app.domains using gin (search_title extensions.gin_trgm_ops);

-- private.search_query
-- Purpose: the tsquery for a normalised search text: websearch_to_tsquery('english'), widened
--          with a prefix match on the last word when the text is plain words ("postgres ind"
--          also finds "postgres indexes"). Stop words never become prefixes.
create function private.search_query(normalized text)
returns tsquery
language plpgsql
immutable
parallel safe
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
create function private.search_matches(snapshot uuid, query tsquery, normalized text, fuzzy boolean)
returns table (type text, snapshot_id uuid, id uuid, difficulty text, title_hit boolean)
language plpgsql
stable
security invoker
set search_path = ''
set pg_trgm.word_similarity_threshold = 0.4
as $$
begin
  if not search_matches.fuzzy then
    return query
      select 'spark'::text, s.snapshot_id, s.id, s.difficulty,
             pg_catalog.ts_filter(s.search_vector, '{a}') @@ search_matches.query
        from app.sparks s
       where (search_matches.snapshot is null or s.snapshot_id = search_matches.snapshot)
         and s.search_vector @@ search_matches.query
      union all
      select 'concept', c.snapshot_id, c.id, null,
             pg_catalog.ts_filter(c.search_vector, '{a}') @@ search_matches.query
        from app.concepts c
       where (search_matches.snapshot is null or c.snapshot_id = search_matches.snapshot)
         and c.search_vector @@ search_matches.query
      union all
      select 'trail', t.snapshot_id, t.id, t.difficulty_level,
             pg_catalog.ts_filter(t.search_vector, '{a}') @@ search_matches.query
        from app.trails t
       where (search_matches.snapshot is null or t.snapshot_id = search_matches.snapshot)
         and t.search_vector @@ search_matches.query
      union all
      select 'domain', d.snapshot_id, d.id, null,
             pg_catalog.ts_filter(d.search_vector, '{a}') @@ search_matches.query
        from app.domains d
       where (search_matches.snapshot is null or d.snapshot_id = search_matches.snapshot)
         and d.search_vector @@ search_matches.query;
  else
    return query
      select 'spark'::text, s.snapshot_id, s.id, s.difficulty, true from app.sparks s
       where (search_matches.snapshot is null or s.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) s.search_title
      union all
      select 'concept', c.snapshot_id, c.id, null, true from app.concepts c
       where (search_matches.snapshot is null or c.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) c.search_title
      union all
      select 'trail', t.snapshot_id, t.id, t.difficulty_level, true from app.trails t
       where (search_matches.snapshot is null or t.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) t.search_title
      union all
      select 'domain', d.snapshot_id, d.id, null, true from app.domains d
       where (search_matches.snapshot is null or d.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) d.search_title;
  end if;
end
$$;
comment on function private.search_matches(uuid, tsquery, text, boolean) is
  'Unranked matches (type, snapshot_id, id, difficulty, title_hit) of a search in one snapshot: full-text, or trigram on titles when fuzzy.';
grant execute on function private.search_matches(uuid, tsquery, text, boolean) to anon, authenticated;

-- api.search_content
-- Purpose: full-text search across sparks, concepts, trails and domains of the selected snapshot.
-- Params:  q (1..200 characters after trimming), type (spark|concept|trail|domain, optional),
--          difficulty (beginner|intermediate|advanced|expert, optional: sparks by difficulty,
--          trails by difficulty_level; concepts and domains have none and drop out),
--          page (>= 1, default 1), per_page (1..50, default 20), snapshot_id (optional).
-- Returns: {data: [{type,id,slug,title,summary,score}], meta: {total,page,per_page,total_pages,
--          has_next,has_prev}, facets: {types: {spark,concept,trail,domain}, difficulties:
--          {beginner,intermediate,advanced,expert}}}. Ordered by score desc, then lower(title),
--          type, id. At most 1000 matches are ranked (title matches first, then type and id);
--          pages beyond them are empty;
--          meta.total and the facets count every match. facets.types ignores the type filter and
--          facets.difficulties ignores the difficulty filter (each facet shows its alternatives).
--          When the full-text query matches nothing, titles are matched by trigram word
--          similarity instead (typo tolerance) and score is that similarity.
-- Errors:  22023 invalid q, type, difficulty, page or per_page; P0002 unknown snapshot_id.
create function api.search_content(
  q text,
  type text default null,
  difficulty text default null,
  page integer default 1,
  per_page integer default 20,
  snapshot_id uuid default null
)
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  rank_cap constant integer := 1000;
  normalized text := pg_catalog.btrim(private.search_normalize(search_content.q));
  snapshot uuid;
  query tsquery;
  fuzzy boolean := false;
  result jsonb;
begin
  if search_content.q is null or pg_catalog.char_length(pg_catalog.btrim(search_content.q)) not between 1 and 200 then
    raise exception using errcode = '22023', message = 'q must be 1 to 200 characters',
      detail = pg_catalog.jsonb_build_object('field', 'q')::text;
  end if;
  if search_content.type is not null and search_content.type not in ('spark', 'concept', 'trail', 'domain') then
    raise exception using errcode = '22023', message = 'type must be one of spark, concept, trail, domain',
      detail = pg_catalog.jsonb_build_object('field', 'type', 'value', search_content.type)::text;
  end if;
  if search_content.difficulty is not null
     and not exists (select from app.difficulty_levels d where d.value = search_content.difficulty) then
    raise exception using errcode = '22023', message = 'difficulty must be one of beginner, intermediate, advanced, expert',
      detail = pg_catalog.jsonb_build_object('field', 'difficulty', 'value', search_content.difficulty)::text;
  end if;
  if search_content.page is null or search_content.page < 1 then
    raise exception using errcode = '22023', message = 'page must be at least 1',
      detail = pg_catalog.jsonb_build_object('field', 'page')::text;
  end if;
  if search_content.per_page is null or search_content.per_page not between 1 and 50 then
    raise exception using errcode = '22023', message = 'per_page must be between 1 and 50',
      detail = pg_catalog.jsonb_build_object('field', 'per_page')::text;
  end if;

  snapshot := private.resolve_snapshot_id(search_content.snapshot_id);
  query := private.search_query(normalized);
  -- Typo fallback: only when the words mean something (not only stop words) and find nothing.
  if pg_catalog.numnode(query) > 0 and pg_catalog.char_length(normalized) >= 3
     and not exists (select from private.search_matches(snapshot, query, normalized, false)) then
    fuzzy := true;
  end if;

  with matched as materialized (
    select m.type, m.snapshot_id, m.id, m.difficulty, m.title_hit
    from private.search_matches(snapshot, query, normalized, fuzzy) m
    where pg_catalog.numnode(query) > 0
  ),
  filtered as (
    select m.* from matched m
    where (search_content.type is null or m.type = search_content.type)
      and (search_content.difficulty is null or m.difficulty = search_content.difficulty)
  ),
  -- Rank only what can reach a page: title matches first (they carry weight A), then a stable
  -- order, up to the cap. Counting above never ranks.
  candidates as (
    select f.* from filtered f order by f.title_hit desc, f.type, f.id limit rank_cap
  ),
  ranked as (
    select c.type, c.id, x.slug, x.title, x.summary,
           pg_catalog.round((case when fuzzy
             then extensions.word_similarity(normalized, x.normalized_title)
             else pg_catalog.ts_rank(x.document, query, 1)
                  + case when x.normalized_title = normalized then 1.0
                         when x.normalized_title like
                              pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(normalized, '\', '\\'), '%', '\%'), '_', '\_') || '%'
                           then 0.5
                         else 0 end
             end)::numeric, 6)::double precision as score
    from candidates c
    cross join lateral (
      select s.slug, s.title, s.summary, s.search_vector as document, s.search_title as normalized_title
        from app.sparks s where c.type = 'spark' and s.snapshot_id = c.snapshot_id and s.id = c.id
      union all
      select k.slug, k.title, k.description, k.search_vector, k.search_title
        from app.concepts k where c.type = 'concept' and k.snapshot_id = c.snapshot_id and k.id = c.id
      union all
      select t.slug, t.title, t.description, t.search_vector, t.search_title
        from app.trails t where c.type = 'trail' and t.snapshot_id = c.snapshot_id and t.id = c.id
      union all
      select d.slug, d.name, d.description, d.search_vector, d.search_title
        from app.domains d where c.type = 'domain' and d.snapshot_id = c.snapshot_id and d.id = c.id
    ) x
  ),
  page_rows as (
    select r.* from ranked r
    order by r.score desc, pg_catalog.lower(r.title), r.type, r.id
    offset (search_content.page - 1) * search_content.per_page
    limit search_content.per_page
  ),
  total as (
    select pg_catalog.count(*)::integer as n from filtered
  )
  select pg_catalog.jsonb_build_object(
    'data', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'type', p.type, 'id', p.id, 'slug', p.slug, 'title', p.title,
               'summary', p.summary, 'score', p.score)
             order by p.score desc, pg_catalog.lower(p.title), p.type, p.id)
      from page_rows p), '[]'::jsonb),
    'meta', (
      select pg_catalog.jsonb_build_object(
        'total', t.n,
        'page', search_content.page,
        'per_page', search_content.per_page,
        'total_pages', ((least(t.n, rank_cap) + search_content.per_page - 1) / search_content.per_page),
        'has_next', search_content.page * search_content.per_page < least(t.n, rank_cap),
        'has_prev', search_content.page > 1)
      from total t),
    'facets', pg_catalog.jsonb_build_object(
      'types', (
        select pg_catalog.jsonb_object_agg(kinds.kind, coalesce(counts.n, 0) order by kinds.position)
        from unnest(array['spark', 'concept', 'trail', 'domain']) with ordinality as kinds(kind, position)
        left join (
          select m.type, pg_catalog.count(*)::integer as n from matched m
          where search_content.difficulty is null or m.difficulty = search_content.difficulty
          group by m.type
        ) counts on counts.type = kinds.kind),
      'difficulties', (
        select pg_catalog.jsonb_object_agg(levels.value, coalesce(counts.n, 0) order by levels.sort_order)
        from app.difficulty_levels levels
        left join (
          select m.difficulty, pg_catalog.count(*)::integer as n from matched m
          where (search_content.type is null or m.type = search_content.type) and m.difficulty is not null
          group by m.difficulty
        ) counts on counts.difficulty = levels.value))
  ) into result;
  return result;
end
$$;
comment on function api.search_content(text, text, text, integer, integer, uuid) is
  'Full-text search (english, accent-insensitive, title A > summary/description B) over sparks, concepts, trails, domains of a snapshot. Params: q, type, difficulty, page, per_page (max 50), snapshot_id. Returns {data:[{type,id,slug,title,summary,score}], meta, facets:{types,difficulties}}. Errors: 22023 invalid parameter, P0002 unknown snapshot.';
grant execute on function api.search_content(text, text, text, integer, integer, uuid) to anon, authenticated;

-- Autocomplete's first tier walks these in order and stops after `limit` rows: title-prefix
-- suggestions cost the same however many titles share the prefix. Collation "C" makes the
-- btree serve both `like 'prefix%'` and the order.
create index sparks_search_title on app.sparks (snapshot_id, (search_title collate "C"));
create index concepts_search_title on app.concepts (snapshot_id, (search_title collate "C"));
create index trails_search_title on app.trails (snapshot_id, (search_title collate "C"));
create index domains_search_title on app.domains (snapshot_id, (search_title collate "C"));

-- private.suggest_title_prefixes
-- Purpose: autocomplete tier 0: distinct {text, type} whose normalised title starts with the
--          pattern, in normalised-title order, at most `wanted` per content type (index walks).
create function private.suggest_title_prefixes(snapshot uuid, pattern text, wanted integer)
returns table (type text, text text, norm text)
language sql
stable
security invoker
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
comment on function private.suggest_title_prefixes(uuid, text, integer) is
  'Autocomplete tier 0: titles starting with a LIKE-escaped pattern, at most `wanted` per content type, via the (snapshot_id, search_title collate C) indexes.';
grant execute on function private.suggest_title_prefixes(uuid, text, integer) to anon, authenticated;

-- api.list_search_suggestions
-- Purpose: autocomplete: titles (domain names) matching what the user has typed so far.
-- Params:  q (2..100 characters after trimming), limit_count (1..20, default 5), snapshot_id.
-- Returns: {suggestions: [{text, type}]}, best first, each {text, type} once:
--          tier 0, titles starting with q (in alphabetical order of the normalised title);
--          tier 1, titles with a later word starting with q; tier 2 (q of 4+ characters),
--          typo-tolerant trigram matches (word similarity >= 0.5). Tiers 1 and 2 are ordered by
--          similarity, shorter text, text, type, and are only computed when the earlier tiers
--          leave room, so a common prefix costs an index walk of `limit` rows.
-- Errors:  22023 q shorter than 2 characters or limit_count out of range; P0002 unknown snapshot_id.
create function api.list_search_suggestions(q text, limit_count integer default 5, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
set pg_trgm.word_similarity_threshold = 0.5
as $$
declare
  normalized text := pg_catalog.btrim(private.search_normalize(list_search_suggestions.q));
  pattern text;
  word_start text;
  snapshot uuid;
  wanted integer := list_search_suggestions.limit_count;
  suggestions jsonb := '[]'::jsonb;
  more jsonb;
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
  pattern := pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(normalized, '\', '\\'), '%', '\%'), '_', '\_');
  word_start := '(^|[^[:alnum:]])' || pg_catalog.regexp_replace(normalized, '([^[:alnum:][:space:]])', '\\\1', 'g');

  -- Tier 0: title prefixes. Each type's list holds its first `wanted` in order (one title per
  -- type once), so the first `wanted` of the merged lists are the first overall.
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', p.text, 'type', p.type)
                    order by p.norm collate "C", p.text, p.type), '[]'::jsonb)
  into suggestions
  from (
    select x.* from private.suggest_title_prefixes(snapshot, pattern, wanted) x
    order by x.norm collate "C", x.text, x.type
    limit wanted
  ) p;
  wanted := wanted - pg_catalog.jsonb_array_length(suggestions);

  -- Tiers 1 and 2: a later word starts with q, or (4+ characters) a trigram match; only when
  -- there is room left. Rows whose title starts with q belong to tier 0 and are excluded.
  if wanted > 0 then
    with titles as (
      select 'spark'::text as type, s.title as text, s.search_title as norm from app.sparks s
       where (snapshot is null or s.snapshot_id = snapshot)
         and (s.search_title like '%' || pattern || '%'
              or (pg_catalog.char_length(normalized) >= 4 and normalized operator(extensions.<%) s.search_title))
      union all
      select 'concept', c.title, c.search_title from app.concepts c
       where (snapshot is null or c.snapshot_id = snapshot)
         and (c.search_title like '%' || pattern || '%'
              or (pg_catalog.char_length(normalized) >= 4 and normalized operator(extensions.<%) c.search_title))
      union all
      select 'trail', t.title, t.search_title from app.trails t
       where (snapshot is null or t.snapshot_id = snapshot)
         and (t.search_title like '%' || pattern || '%'
              or (pg_catalog.char_length(normalized) >= 4 and normalized operator(extensions.<%) t.search_title))
      union all
      select 'domain', d.name, d.search_title from app.domains d
       where (snapshot is null or d.snapshot_id = snapshot)
         and (d.search_title like '%' || pattern || '%'
              or (pg_catalog.char_length(normalized) >= 4 and normalized operator(extensions.<%) d.search_title))
    ),
    tiered as (
      select t.type, t.text,
             case when t.norm ~ word_start then 1 else 2 end as tier,
             extensions.word_similarity(normalized, t.norm) as similarity
      from titles t
      where not (t.norm like pattern || '%')
    ),
    -- a substring inside a word ("ql" in "sql") is neither a word prefix nor a typo unless
    -- trigram similarity vouches for it
    kept as (
      select * from tiered t
      where t.tier = 1 or (pg_catalog.char_length(normalized) >= 4 and t.similarity >= 0.5)
    ),
    unique_suggestions as (
      select distinct on (k.text, k.type) k.* from kept k
      order by k.text, k.type, k.tier, k.similarity desc
    )
    select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', u.text, 'type', u.type)
             order by u.tier, u.similarity desc, pg_catalog.char_length(u.text), u.text, u.type), '[]'::jsonb)
    into more
    from (
      select * from unique_suggestions u
      order by u.tier, u.similarity desc, pg_catalog.char_length(u.text), u.text, u.type
      limit wanted
    ) u;
    suggestions := suggestions || more;
  end if;

  return pg_catalog.jsonb_build_object('suggestions', suggestions);
end
$$;
comment on function api.list_search_suggestions(text, integer, uuid) is
  'Autocomplete. Params: q (min 2 chars), limit_count (1..20, default 5), snapshot_id. Returns {suggestions:[{text,type}]}: title prefixes (index walk), then word prefixes, then trigram typo matches (q of 4+ chars); de-duplicated. Errors: 22023 invalid q/limit, P0002 unknown snapshot.';
grant execute on function api.list_search_suggestions(text, integer, uuid) to anon, authenticated;
