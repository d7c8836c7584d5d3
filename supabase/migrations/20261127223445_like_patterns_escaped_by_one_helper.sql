-- One helper, private.like_escape, escapes a text for LIKE (backslash, % and _), where four
-- functions wrote the same three nested replace() calls: the discovery list and its facets (q)
-- and autocomplete's title prefixes and word-prefix candidates. Same patterns, same answers.

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION private.like_escape(value text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
 SET search_path TO ''
AS $function$
  select pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(like_escape.value, '\', '\\'), '%', '\%'), '_', '\_')
$function$
;

CREATE OR REPLACE FUNCTION api.list_discovery_items(page integer DEFAULT 1, per_page integer DEFAULT 20, types text DEFAULT NULL::text, domain text DEFAULT NULL::text, track text DEFAULT NULL::text, difficulty text DEFAULT NULL::text, q text DEFAULT NULL::text, include_facets boolean DEFAULT false, nested_limit integer DEFAULT 3, snapshot_id uuid DEFAULT NULL::uuid)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
declare
  caller_role constant text := private.authorize('list_discovery_items');
  sid uuid;
  did uuid;
  tid uuid;
  requested text[];
  included boolean[];
  pattern text;
  quotas integer[];
  caps bigint[];
  total bigint;
  before_page bigint[];
  through_page bigint[];
  nested integer := case when list_discovery_items.nested_limit = 0 then null else list_discovery_items.nested_limit end;
  domain_part text;
  trail_part text;
  concept_part text;
begin
  perform private.require_range('page', list_discovery_items.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_items.per_page, 1, 100);
  perform private.require_range('nested_limit', list_discovery_items.nested_limit, 0, 10);
  perform private.require_difficulty('difficulty', list_discovery_items.difficulty);
  if list_discovery_items.types is null then
    requested := array['domain', 'trail', 'concept'];
  else
    requested := pg_catalog.string_to_array(pg_catalog.lower(list_discovery_items.types), ',');
    if pg_catalog.cardinality(requested) = 0
       or exists (select 1 from pg_catalog.unnest(requested) r where r not in ('domain', 'trail', 'concept')) then
      raise exception using
        errcode = '22023',
        message = 'types must be a comma-separated subset of domain, trail, concept',
        detail = pg_catalog.jsonb_build_object('field', 'types', 'value', list_discovery_items.types)::text;
    end if;
  end if;
  sid := private.resolve_snapshot_id(list_discovery_items.snapshot_id);
  if list_discovery_items.domain is not null then
    did := private.find_entity_id('domain', sid, list_discovery_items.domain, 'domain');
  end if;
  if list_discovery_items.track is not null then
    tid := private.find_entity_id('trail', sid, list_discovery_items.track, 'track');
  end if;

  -- Rule 5: a track keeps only concepts; rule 6: a difficulty keeps only trails; rule 7: types.
  included := array[
    'domain' = any(requested) and tid is null and list_discovery_items.difficulty is null,
    'trail' = any(requested) and tid is null,
    'concept' = any(requested) and list_discovery_items.difficulty is null];
  if list_discovery_items.q is not null then
    pattern := '%' || private.like_escape(list_discovery_items.q) || '%';
  end if;

  caps := array[
    case when included[1] then (
      select pg_catalog.count(*) from app.domains d
      where (sid is null or d.snapshot_id = sid) and d.is_published
        and (did is null or d.id = did)
        and (pattern is null or d.name ilike pattern)) else 0 end,
    case when included[2] then (
      select pg_catalog.count(*) from app.trails t
      where (sid is null or t.snapshot_id = sid)
        and (did is null or t.domain_id = did)
        and (list_discovery_items.difficulty is null or t.difficulty_level = list_discovery_items.difficulty)
        and (pattern is null or t.title ilike pattern)) else 0 end,
    case when not included[3] then 0
         -- no text filter: the concepts of the domains (or of the track) are in the rollups
         when pattern is null and tid is null then (
      select coalesce(pg_catalog.sum(r.concept_count), 0)::bigint from app.domain_rollups r
      where (sid is null or r.snapshot_id = sid) and (did is null or r.domain_id = did))
         when pattern is null then (
      select coalesce(pg_catalog.sum(r.concept_count), 0)::bigint from app.trails t
      join app.trail_rollups r on r.snapshot_id = t.snapshot_id and r.trail_id = t.id
      where (sid is null or t.snapshot_id = sid) and t.id = tid and (did is null or t.domain_id = did))
         else (
      select pg_catalog.count(*) from app.concepts c
      where (sid is null or c.snapshot_id = sid)
        and (tid is null or c.trail_id = tid)
        and (did is null or exists (select 1 from app.trails t
                                    where t.snapshot_id = c.snapshot_id and t.id = c.trail_id and t.domain_id = did))
        and (pattern is null or c.title ilike pattern)) end];
  total := caps[1] + caps[2] + caps[3];
  quotas := private.discovery_quotas(list_discovery_items.per_page, included);
  before_page := private.discovery_allocation(
    least((list_discovery_items.page - 1)::bigint * list_discovery_items.per_page, total), caps, quotas);
  through_page := private.discovery_allocation(
    least(list_discovery_items.page::bigint * list_discovery_items.per_page, total), caps, quotas);

  if through_page[1] > before_page[1] then
    select private.discovery_items_json('domain',
             pg_catalog.array_agg(page.snapshot_id order by page.name collate app.alphabetical, page.id),
             pg_catalog.array_agg(page.id order by page.name collate app.alphabetical, page.id), null, 'DOMAIN')
    into domain_part
    from (
      select d.snapshot_id, d.id, d.name from app.domains d
      where (sid is null or d.snapshot_id = sid) and d.is_published
        and (did is null or d.id = did)
        and (pattern is null or d.name ilike pattern)
      order by d.name collate app.alphabetical, d.id
      limit through_page[1] - before_page[1] offset before_page[1]
    ) page;
  end if;
  if through_page[2] > before_page[2] then
    select private.discovery_items_json('trail',
             pg_catalog.array_agg(page.snapshot_id order by page.title collate app.alphabetical, page.id),
             pg_catalog.array_agg(page.id order by page.title collate app.alphabetical, page.id), nested, 'TRAIL')
    into trail_part
    from (
      select t.snapshot_id, t.id, t.title from app.trails t
      where (sid is null or t.snapshot_id = sid)
        and (did is null or t.domain_id = did)
        and (list_discovery_items.difficulty is null or t.difficulty_level = list_discovery_items.difficulty)
        and (pattern is null or t.title ilike pattern)
      order by t.title collate app.alphabetical, t.id
      limit through_page[2] - before_page[2] offset before_page[2]
    ) page;
  end if;
  if through_page[3] > before_page[3] then
    select private.discovery_items_json('concept',
             pg_catalog.array_agg(page.snapshot_id order by page.title collate app.alphabetical, page.id),
             pg_catalog.array_agg(page.id order by page.title collate app.alphabetical, page.id), nested, 'CONCEPT')
    into concept_part
    from (
      select c.snapshot_id, c.id, c.title from app.concepts c
      where (sid is null or c.snapshot_id = sid)
        and (tid is null or c.trail_id = tid)
        and (did is null or exists (select 1 from app.trails t
                                    where t.snapshot_id = c.snapshot_id and t.id = c.trail_id and t.domain_id = did))
        and (pattern is null or c.title ilike pattern)
      order by c.title collate app.alphabetical, c.id
      limit through_page[3] - before_page[3] offset before_page[3]
    ) page;
  end if;

  -- The page's items are JSON text (stored items joined): the body is parsed once.
  return ('{"data": [' || pg_catalog.concat_ws(', ', domain_part, trail_part, concept_part) || '], "meta": '
          || private.page_meta(total, list_discovery_items.page, list_discovery_items.per_page)::text
          || case when list_discovery_items.include_facets
                  then ', "facets": ' || private.discovery_facets(sid, did, tid, list_discovery_items.difficulty,
                                                                  list_discovery_items.q, included)::text
                  else '' end
          || '}')::jsonb;
end
$function$
;

CREATE OR REPLACE FUNCTION private.discovery_facets(sid uuid, domain_id uuid, trail_id uuid, difficulty text, q text, included boolean[])
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
declare
  pattern text := '%' || private.like_escape(discovery_facets.q) || '%';
  result jsonb;
begin
  -- No filter at all: the snapshot's facets were computed at import (app.snapshot_rollups).
  if discovery_facets.sid is not null and discovery_facets.domain_id is null and discovery_facets.trail_id is null
     and discovery_facets.difficulty is null and discovery_facets.q is null
     and discovery_facets.included = array[true, true, true] then
    select r.facets into result from app.snapshot_rollups r where r.snapshot_id = discovery_facets.sid;
    if result is not null then
      return result;
    end if;
  end if;
  with matching_domains as (
    select d.id, d.snapshot_id from app.domains d
    where discovery_facets.included[1]
      and (discovery_facets.sid is null or d.snapshot_id = discovery_facets.sid)
      and d.is_published
      and (discovery_facets.domain_id is null or d.id = discovery_facets.domain_id)
      and (pattern is null or d.name ilike pattern)
  ), matching_trails as (
    select t.id, t.snapshot_id, t.domain_id, t.difficulty_level from app.trails t
    where discovery_facets.included[2]
      and (discovery_facets.sid is null or t.snapshot_id = discovery_facets.sid)
      and (discovery_facets.domain_id is null or t.domain_id = discovery_facets.domain_id)
      and (discovery_facets.difficulty is null or t.difficulty_level = discovery_facets.difficulty)
      and (pattern is null or t.title ilike pattern)
  ), concept_groups as (
    -- The matching concepts, counted per trail: from the rollups when no text filter applies
    -- (one row per trail instead of one per concept), else from the concepts themselves.
    select t.snapshot_id, t.id as trail_id, t.domain_id, r.concept_count::bigint as n
    from app.trails t
    join app.trail_rollups r on r.snapshot_id = t.snapshot_id and r.trail_id = t.id
    where discovery_facets.included[3] and pattern is null
      and (discovery_facets.sid is null or t.snapshot_id = discovery_facets.sid)
      and (discovery_facets.trail_id is null or t.id = discovery_facets.trail_id)
      and (discovery_facets.domain_id is null or t.domain_id = discovery_facets.domain_id)
      and r.concept_count > 0
    union all
    select c.snapshot_id, c.trail_id, t.domain_id, pg_catalog.count(*) as n from app.concepts c
    join app.trails t on t.snapshot_id = c.snapshot_id and t.id = c.trail_id
    where discovery_facets.included[3] and pattern is not null
      and (discovery_facets.sid is null or c.snapshot_id = discovery_facets.sid)
      and (discovery_facets.trail_id is null or c.trail_id = discovery_facets.trail_id)
      and (discovery_facets.domain_id is null or t.domain_id = discovery_facets.domain_id)
      and c.title ilike pattern
    group by c.snapshot_id, c.trail_id, t.domain_id
  ), per_domain as (
    select x.snapshot_id, x.domain_id, pg_catalog.sum(x.n)::bigint as n from (
      select md.snapshot_id, md.id as domain_id, 1::bigint as n from matching_domains md
      union all select mt.snapshot_id, mt.domain_id, 1::bigint from matching_trails mt
      union all select cg.snapshot_id, cg.domain_id, cg.n from concept_groups cg) x
    group by x.snapshot_id, x.domain_id
  ), per_trail as (
    select x.snapshot_id, x.trail_id, pg_catalog.sum(x.n)::bigint as n from (
      select mt.snapshot_id, mt.id as trail_id, 1::bigint as n from matching_trails mt
      union all select cg.snapshot_id, cg.trail_id, cg.n from concept_groups cg) x
    group by x.snapshot_id, x.trail_id
  )
  select pg_catalog.jsonb_build_object(
    'domains', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                  'slug', d.slug, 'name', d.name, 'count', pd.n) order by d.name collate app.alphabetical, d.slug), '[]'::jsonb)
                from per_domain pd join app.domains d on d.snapshot_id = pd.snapshot_id and d.id = pd.domain_id
                where d.is_published),
    'tracks', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                  'slug', t.slug, 'name', t.title, 'count', pt.n) order by t.title collate app.alphabetical, t.slug), '[]'::jsonb)
               from per_trail pt join app.trails t on t.snapshot_id = pt.snapshot_id and t.id = pt.trail_id),
    'difficulties', (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                        'level', l.value,
                        'count', (select pg_catalog.count(*) from matching_trails mt where mt.difficulty_level = l.value))
                      order by l.sort_order)
                     from app.difficulty_levels l),
    'types', pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('type', 'DOMAIN', 'count', (select pg_catalog.count(*) from matching_domains)),
      pg_catalog.jsonb_build_object('type', 'TRAIL', 'count', (select pg_catalog.count(*) from matching_trails)),
      pg_catalog.jsonb_build_object('type', 'CONCEPT', 'count', (select coalesce(pg_catalog.sum(cg.n), 0)::bigint from concept_groups cg))))
  into result;
  return result;
end
$function$
;

CREATE OR REPLACE FUNCTION private.suggest_title_prefix_list(snapshot uuid, normalized text, wanted integer, taken jsonb)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
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
$function$
;

CREATE OR REPLACE FUNCTION private.suggest_title_word_candidates(snapshot uuid, normalized text, by_words boolean)
 RETURNS TABLE(type text, text text, norm text)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
declare
  pattern text := private.like_escape(suggest_title_word_candidates.normalized);
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

revoke all on function private.like_escape(value text) from public;
grant execute on function private.like_escape(value text) to anon;
grant execute on function private.like_escape(value text) to authenticated;

comment on function private.like_escape(pg_catalog.text) is 'A text as a LIKE pattern that matches exactly it: backslash, % and _ escaped.';
