-- Discovery: the public catalog reads (domains, trails, concepts, sparks, /all, facets, browse).

-- Published domains in name order (domain lists, /all, browse, related fallback). Titles and
-- names sort in app.alphabetical everywhere, and an index serves only its own collation.
create index discovery_domains_published_name on app.domains (snapshot_id, name collate app.alphabetical, id) where is_published;

-- Trails filtered by difficulty in title order (/discovery/trails, /discovery/all).
create index discovery_trails_difficulty_title on app.trails (snapshot_id, difficulty_level, title collate app.alphabetical, id);

-- Sparks filtered by difficulty in title order (/discovery/sparks).
create index discovery_sparks_difficulty_title on app.sparks (snapshot_id, difficulty, title collate app.alphabetical, id);

-- Index-only minutes lookup for the spark sums.
create index discovery_sparks_minutes on app.sparks (snapshot_id, id) include (estimated_mins);

-- Sparks of a concept in their position order.
create index discovery_concept_sparks_order on app.concept_sparks (snapshot_id, concept_id, order_index) include (spark_id);

-- `q` text filter of /discovery/all (substring match, case-insensitive).
create index discovery_domains_name_trgm on app.domains using gin (name extensions.gin_trgm_ops);

create index discovery_trails_title_trgm on app.trails using gin (title extensions.gin_trgm_ops);

create index discovery_concepts_title_trgm on app.concepts using gin (title extensions.gin_trgm_ops);

-- app.discovery_items
-- Each domain, trail and concept of a snapshot as the discovery lists show it, written once per
-- snapshot by private.refresh_discovery_items (the import's derivation; snapshot content never
-- changes): the item that private.domain_items, private.trail_items or private.concept_items
-- build, as JSON text without its child previews (`item`), and the JSON text of every child
-- preview in order (`previews`: a domain's trails, a trail's concepts, a concept's sparks). A
-- list reads its page by primary key and joins the texts (private.discovery_items_json): no item
-- is rebuilt and nothing is parsed into jsonb. The item text holds two placeholders, `"type": 0`
-- and the previews key with 0 (`"trails": 0`), where jsonb's key order puts those keys: a list
-- swaps them for the values or drops them, so the body it joins is already the text jsonb would
-- print, and the list returns it as json.
create table app.discovery_items (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  kind text not null,
  id uuid not null,
  item json not null,
  previews json[] not null,
  constraint discovery_items_pkey primary key (snapshot_id, kind, id),
  constraint discovery_items_kind check (kind in ('domain', 'trail', 'concept'))
);
comment on table app.discovery_items is
  'Discovery list items (domain, trail, concept) as JSON text with every child preview, computed once per snapshot by private.refresh_discovery_items. item holds "type": 0 and the previews key with 0 where jsonb''s key order puts them (private.discovery_items_json replaces them).';
alter table app.discovery_items enable row level security;
create policy "anyone reads discovery items" on app.discovery_items
  for select to anon, authenticated
  using (true);
grant select on app.discovery_items to anon, authenticated;

-- app.discovery_facet_sets
-- The facets of every filter without a track or a text, per snapshot: no domain or one, no
-- level or one, and each set of item types such a request can count (private.discovery_facets'
-- `included`: with a level only trails count, rule 6). Written once per snapshot by
-- private.refresh_discovery_facet_sets with the reader itself, so a filtered catalog page reads
-- its facets by key instead of counting the snapshot's trails and concepts on every call (0.4 ms
-- at 50,000 sparks). 315 rows and 0.3 MB a snapshot at 50,000 sparks, ten times that at
-- 500,000; a track or a text filter is counted when asked.
create table app.discovery_facet_sets (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  domain_id uuid, -- null: every domain
  difficulty text references app.difficulty_levels (value), -- null: every level
  included boolean[] not null,
  facets jsonb not null,
  constraint discovery_facet_sets_domain_fkey foreign key (snapshot_id, domain_id)
    references app.domains (snapshot_id, id) on delete cascade
);
comment on table app.discovery_facet_sets is
  'Per snapshot: the discovery facets of every filter without a track or a text (domain or none, level or none, the item types counted), computed once by private.refresh_discovery_facet_sets.';
-- The key: "every domain" and "every level" are one row each (an expression, not a nullable
-- column, so that a lookup by parameters is one index probe in a generic plan).
create unique index discovery_facet_sets_key on app.discovery_facet_sets
  (snapshot_id, included, coalesce(domain_id::text, ''), coalesce(difficulty, ''));
alter table app.discovery_facet_sets enable row level security;
create policy "anyone reads discovery facet sets" on app.discovery_facet_sets
  for select to anon, authenticated
  using (true);
grant select on app.discovery_facet_sets to anon, authenticated;

-- Entity lookups by slug inside the selected snapshot; PT404 naming the parameter when absent.
-- One generic plan: each lookup reads the (snapshot_id, slug) key, and apart, under selection
-- rule 3 (no snapshot), any snapshot's row with that slug. Planned per call, these lookups cost
-- more to plan than to run.
create or replace function private.find_entity_id(kind text, sid uuid, slug text, field text)
returns uuid
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_generic_plan'
as $$
declare
  found_id uuid;
begin
  if find_entity_id.kind = 'domain' then
    select x.id into found_id from (
      select d.id from app.domains d where d.snapshot_id = find_entity_id.sid and d.slug = find_entity_id.slug
      union all
      select d.id from app.domains d where find_entity_id.sid is null and d.slug = find_entity_id.slug) x
    limit 1;
  elsif find_entity_id.kind = 'trail' then
    select x.id into found_id from (
      select t.id from app.trails t where t.snapshot_id = find_entity_id.sid and t.slug = find_entity_id.slug
      union all
      select t.id from app.trails t where find_entity_id.sid is null and t.slug = find_entity_id.slug) x
    limit 1;
  else
    select x.id into found_id from (
      select c.id from app.concepts c where c.snapshot_id = find_entity_id.sid and c.slug = find_entity_id.slug
      union all
      select c.id from app.concepts c where find_entity_id.sid is null and c.slug = find_entity_id.slug) x
    limit 1;
  end if;
  if found_id is null then
    raise exception using
      errcode = 'PT404',
      message = pg_catalog.format('%s %s not found', find_entity_id.kind, find_entity_id.slug),
      detail = pg_catalog.jsonb_build_object(find_entity_id.field, find_entity_id.slug)::text;
  end if;
  return found_id;
end
$$;
comment on function private.find_entity_id(text,uuid,text,text) is
  'The id of a domain, trail or concept by slug in the selected snapshot (null: any); PT404 naming the parameter when none matches.';
grant execute on function private.find_entity_id(text,uuid,text,text) to anon, authenticated;

-- A page of concepts (in the given order) with their figures; `sparks` previews (id, slug,
-- title, estimated_mins, position order) only when spark_limit is not null.
create or replace function private.concept_items(page app.concepts[], spark_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(concept_items.page) r);
  concept_ids uuid[] := array(select r.id from pg_catalog.unnest(concept_items.page) r);
  result jsonb;
begin
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'title', p.title, 'description', p.description,
        'order_index', p.order_index,
        'spark_count', coalesce(f.spark_count, 0), 'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when concept_items.spark_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('sparks', (
                select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                         'id', sp.id, 'slug', sp.slug, 'title', sp.title, 'estimated_mins', sp.estimated_mins)
                       order by x.order_index, x.spark_id), '[]'::jsonb)
                from (
                  select cs.spark_id, cs.order_index from app.concept_sparks cs
                  where cs.snapshot_id = p.snapshot_id and cs.concept_id = p.id
                  order by cs.order_index, cs.spark_id
                  limit concept_items.spark_limit
                ) x
                join app.sparks sp on sp.snapshot_id = p.snapshot_id and sp.id = x.spark_id)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(concept_items.page) with ordinality as p
  left join private.concept_figures(snapshots, concept_ids) f
    on f.snapshot_id = p.snapshot_id and f.concept_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
comment on function private.concept_items(app.concepts[],integer) is
  'Discovery items of a page of concepts, in the given order, with their figures; sparks previews only when spark_limit is not null.';
grant execute on function private.concept_items(app.concepts[],integer) to anon, authenticated;

-- private.child_previews
-- Purpose: the preview of each parent's children: its first preview_limit trails (of a domain)
--          or concepts (of a trail) in their order (order_index, title, id), each as
--          {id, slug, title, estimated_mins}. The one rule behind the `trails` of a domain and
--          the `concepts` of a trail in every discovery list.
-- Params:  child_kind 'trail' | 'concept'; parent_snapshots, parent_ids: the parents (parallel
--          arrays); preview_limit (null: no previews).
-- Returns: (snapshot_id, parent_id, items) for each parent that has children.
create or replace function private.child_previews(child_kind text, parent_snapshots uuid[], parent_ids uuid[], preview_limit integer)
returns table(snapshot_id uuid, parent_id uuid, items jsonb)
language plpgsql
stable
set search_path = ''
-- Planned with the kind known, so only that kind's branch is planned and run.
set plan_cache_mode to 'force_custom_plan'
as $$
begin
  if child_previews.preview_limit is null then
    return;
  end if;
  return query
  with children as materialized (
    select p.snapshot_id, p.parent_id, c.id, c.slug, c.title, c.order_index
    from rows from (pg_catalog.unnest(child_previews.parent_snapshots), pg_catalog.unnest(child_previews.parent_ids)) p(snapshot_id, parent_id)
    cross join lateral (
      select k.id, k.slug, k.title, k.order_index
      from (
        select x.id, x.slug, x.title, x.order_index from app.trails x
        where child_previews.child_kind = 'trail' and x.snapshot_id = p.snapshot_id and x.domain_id = p.parent_id
        union all
        select x.id, x.slug, x.title, x.order_index from app.concepts x
        where child_previews.child_kind = 'concept' and x.snapshot_id = p.snapshot_id and x.trail_id = p.parent_id
      ) k
      order by k.order_index, k.title collate app.alphabetical, k.id
      limit child_previews.preview_limit
    ) c
  ),
  figures as materialized (
    select f.snapshot_id, f.trail_id as id, f.estimated_mins
    from private.trail_figures(array(select distinct c.snapshot_id from children c), array(select c.id from children c)) f
    where child_previews.child_kind = 'trail'
    union all
    select f.snapshot_id, f.concept_id, f.estimated_mins
    from private.concept_figures(array(select distinct c.snapshot_id from children c), array(select c.id from children c)) f
    where child_previews.child_kind = 'concept'
  )
  select c.snapshot_id, c.parent_id,
    pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object('id', c.id, 'slug', c.slug, 'title', c.title,
                                    'estimated_mins', coalesce(f.estimated_mins, 0))
      order by c.order_index, c.title collate app.alphabetical, c.id)
  from children c
  left join figures f on f.snapshot_id = c.snapshot_id and f.id = c.id
  group by c.snapshot_id, c.parent_id;
end
$$;
comment on function private.child_previews(text,uuid[],uuid[],integer) is
  'The first preview_limit trails of each domain, or concepts of each trail (order_index, title, id), as {id, slug, title, estimated_mins}: one row per parent with children, none when preview_limit is null. The rule behind the trails and concepts previews.';
grant execute on function private.child_previews(text,uuid[],uuid[],integer) to anon, authenticated;

-- A page of trails (in the given order) with their figures; `concepts` previews (see
-- private.child_previews) only when concept_limit is not null.
create or replace function private.trail_items(page app.trails[], concept_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(trail_items.page) r);
  trail_ids uuid[] := array(select r.id from pg_catalog.unnest(trail_items.page) r);
  result jsonb;
begin
  with previews as materialized (
    select * from private.child_previews('concept', array(select r.snapshot_id from pg_catalog.unnest(trail_items.page) r), trail_ids,
                                   trail_items.concept_limit)
  )
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'title', p.title, 'description', p.description,
        'difficulty_level', p.difficulty_level,
        'concept_count', coalesce(f.concept_count, 0), 'spark_count', coalesce(f.spark_count, 0),
        'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when trail_items.concept_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('concepts', coalesce(pv.items, '[]'::jsonb)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(trail_items.page) with ordinality as p
  left join private.trail_figures(snapshots, trail_ids) f
    on f.snapshot_id = p.snapshot_id and f.trail_id = p.id
  left join previews pv on pv.snapshot_id = p.snapshot_id and pv.parent_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
comment on function private.trail_items(app.trails[],integer) is
  'Discovery items of a page of trails, in the given order, with their figures; concepts previews only when concept_limit is not null.';
grant execute on function private.trail_items(app.trails[],integer) to anon, authenticated;

create or replace function private.discovery_quotas(per_page integer, included boolean[])
returns integer[]
language plpgsql
immutable
set search_path = ''
as $$
declare
  weights constant integer[] := array[10, 25, 65];
  total_weight integer := 0;
  last_included integer := 0;
  quotas integer[] := array[0, 0, 0];
  used integer := 0;
begin
  for i in 1..3 loop
    if discovery_quotas.included[i] then
      total_weight := total_weight + weights[i];
      last_included := i;
    end if;
  end loop;
  if last_included = 0 then
    return quotas;
  end if;
  for i in 1..3 loop
    if discovery_quotas.included[i] then
      if i = last_included then
        quotas[i] := discovery_quotas.per_page - used;
      else
        quotas[i] := (2 * discovery_quotas.per_page * weights[i] + total_weight) / (2 * total_weight);
        used := used + quotas[i];
      end if;
    end if;
  end loop;
  return quotas;
end
$$;
comment on function private.discovery_quotas(integer,boolean[]) is
  '/discovery/all: the slots of a page for domains, trails and concepts (weights 10, 25, 65 over the included types, rounded half up; the last included type takes the rest).';
grant execute on function private.discovery_quotas(integer,boolean[]) to anon, authenticated;

create or replace function private.discovery_allocation(budget bigint, caps bigint[], quotas integer[])
returns bigint[]
language plpgsql
immutable
set search_path = ''
as $$
declare
  fallback_weights constant integer[] := array[10, 25, 65];
  alloc bigint[] := array[0, 0, 0];
  open boolean[] := array[true, true, true];
  weights bigint[];
  remaining bigint := discovery_allocation.budget;
  total_weight bigint;
  saturating boolean[];
  any_saturated boolean;
  given bigint;
  best integer;
  best_remainder bigint;
begin
  for i in 1..3 loop
    if discovery_allocation.caps[i] <= 0 then
      open[i] := false;
    end if;
  end loop;
  loop
    total_weight := 0;
    for i in 1..3 loop
      if open[i] then total_weight := total_weight + discovery_allocation.quotas[i]; end if;
    end loop;
    if total_weight = 0 then
      weights := array[0, 0, 0];
      for i in 1..3 loop
        if open[i] then weights[i] := fallback_weights[i]; total_weight := total_weight + fallback_weights[i]; end if;
      end loop;
    else
      weights := array[discovery_allocation.quotas[1], discovery_allocation.quotas[2], discovery_allocation.quotas[3]];
    end if;
    exit when total_weight = 0;
    -- Every type whose proportional share reaches its count is exhausted at this level.
    saturating := array[false, false, false];
    any_saturated := false;
    for i in 1..3 loop
      if open[i] and remaining * weights[i] >= discovery_allocation.caps[i] * total_weight then
        saturating[i] := true;
        any_saturated := true;
      end if;
    end loop;
    if not any_saturated then
      -- Largest remainder among the open types; ties go to the earlier type.
      given := 0;
      for i in 1..3 loop
        if open[i] then
          alloc[i] := remaining * weights[i] / total_weight;
          given := given + alloc[i];
        end if;
      end loop;
      while given < remaining loop
        best := 0;
        best_remainder := -1;
        for i in 1..3 loop
          if open[i] and (remaining * weights[i]) % total_weight > best_remainder then
            best := i;
            best_remainder := (remaining * weights[i]) % total_weight;
          end if;
        end loop;
        alloc[best] := alloc[best] + 1;
        open[best] := false; -- each type gets at most one extra slot
        given := given + 1;
      end loop;
      exit;
    end if;
    for i in 1..3 loop
      if saturating[i] then
        alloc[i] := discovery_allocation.caps[i];
        remaining := remaining - discovery_allocation.caps[i];
        open[i] := false;
      end if;
    end loop;
  end loop;
  return alloc;
end
$$;
comment on function private.discovery_allocation(bigint,bigint[],integer[]) is
  '/discovery/all: how many domains, trails and concepts the first `budget` items hold, by quota, the slots of exhausted types going to the others.';
grant execute on function private.discovery_allocation(bigint,bigint[],integer[]) to anon, authenticated;

-- private.resolve_snapshot_version
-- Purpose: the cheap first step of every cached catalog read: which snapshot a read would use,
--          and a version key that changes whenever that answer could change.
-- Params:  snapshot_id (uuid, optional).
-- Returns: {snapshot_id: uuid|null, version: text}. version is the snapshot id, or, when no
--          snapshot is published (no filter), a digest of every snapshot's id and status.
-- Errors:  PT404 when an explicit snapshot_id names no snapshot.
-- api.resolve_snapshot (the Data API's) and private.dispatch_snapshot_read (which has already
-- authorized its call) both answer with it.
create or replace function private.resolve_snapshot_version(snapshot_id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  sid uuid := private.resolve_snapshot_id(resolve_snapshot_version.snapshot_id);
begin
  return pg_catalog.jsonb_build_object(
    'snapshot_id', sid,
    'version', coalesce(sid::text, (
      select 'all:' || pg_catalog.md5(coalesce(pg_catalog.string_agg(s.id::text || s.status, ',' order by s.id), ''))
      from app.snapshots s)));
end
$$;
comment on function private.resolve_snapshot_version(uuid) is
  'Snapshot a catalog read uses and a cache version key: {snapshot_id, version}. PT404 for an unknown explicit snapshot_id.';
grant execute on function private.resolve_snapshot_version(uuid) to anon, authenticated;

-- api.resolve_snapshot: private.resolve_snapshot_version for any caller; with for_function,
-- only for a caller that function accepts. It is the version read of a snapshot read through the
-- Data API (DATA_API=supabase, src/db/data-api-rpc.ts), where there is no dispatcher: the API
-- serves a body it holds for that version only after this call, so a held body never reaches a
-- caller the function would refuse.
-- Params:  snapshot_id (uuid, optional); for_function (text, optional): the api function whose
--          read this resolves, whose access rule then applies too (private.authorize).
-- Returns: {snapshot_id: uuid|null, version: text}.
-- Errors:  PT404 when an explicit snapshot_id names no snapshot; 22023 when for_function names
--          no api function; for_function's refusals.
create or replace function api.resolve_snapshot(snapshot_id uuid default null::uuid, for_function text default null::text)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('resolve_snapshot');
begin
  if resolve_snapshot.for_function is not null then
    if (private.api_access_rule(resolve_snapshot.for_function)).audience is null then
      raise exception using errcode = '22023', message = 'for_function must name an api function',
        detail = pg_catalog.jsonb_build_object('field', 'for_function', 'value', resolve_snapshot.for_function)::text;
    end if;
    perform private.authorize(resolve_snapshot.for_function);
  end if;
  return private.resolve_snapshot_version(resolve_snapshot.snapshot_id);
end
$$;
comment on function api.resolve_snapshot(uuid,text) is
  'Snapshot a catalog read uses and a cache version key. Params: snapshot_id (optional), for_function (optional: that function''s access rule applies too). Returns {snapshot_id, version}. Errors: PT404 unknown snapshot_id, 22023 unknown for_function.';
grant execute on function api.resolve_snapshot(uuid,text) to anon, authenticated, service_role;

-- api.list_discovery_domains
-- Purpose: GET /discovery/domains: published domains in name order with counts and trail previews.
-- Params:  page (>=1), per_page (1-100), trail_limit (0-100, trails previewed per domain),
--          snapshot_id (optional; selection rule).
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count,concept_count,spark_count,
--          estimated_mins,trails:[{id,slug,title,estimated_mins}]}], meta: pagination}, as json
--          (the body text as joined, in jsonb's key order).
-- Errors:  22023 out-of-range numbers; PT404 unknown snapshot_id.
create or replace function api.list_discovery_domains(page integer default 1, per_page integer default 20, trail_limit integer default 5, snapshot_id uuid default null::uuid)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_discovery_domains');
  skipped constant bigint := (list_discovery_domains.page - 1)::bigint * list_discovery_domains.per_page;
  sid uuid;
  total bigint;
  snapshots uuid[];
  ids uuid[];
begin
  perform private.require_range('page', list_discovery_domains.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_domains.per_page, 1, 100);
  perform private.require_range('trail_limit', list_discovery_domains.trail_limit, 0, 100);
  sid := private.resolve_snapshot_id(list_discovery_domains.snapshot_id);

  -- The page's domains. With a snapshot (the usual case) each statement keeps one cached plan
  -- that walks the published-name index in order; written `(sid is null or d.snapshot_id = sid)`
  -- they would need a plan per call (the other readers' force_custom_plan), and so would every
  -- statement of the functions called from here.
  if sid is not null then
    select pg_catalog.count(*) into total from app.domains d where d.snapshot_id = sid and d.is_published;
    select pg_catalog.array_agg(page.snapshot_id order by page.name collate app.alphabetical, page.id),
           pg_catalog.array_agg(page.id order by page.name collate app.alphabetical, page.id)
    into snapshots, ids
    from (
      select d.snapshot_id, d.id, d.name from app.domains d
      where d.snapshot_id = sid and d.is_published
      order by d.name collate app.alphabetical, d.id
      limit list_discovery_domains.per_page offset skipped
    ) page;
  else
    -- nothing published: every snapshot's domains (selection rule 3)
    select pg_catalog.count(*) into total from app.domains d where d.is_published;
    select pg_catalog.array_agg(page.snapshot_id order by page.name collate app.alphabetical, page.id),
           pg_catalog.array_agg(page.id order by page.name collate app.alphabetical, page.id)
    into snapshots, ids
    from (
      select d.snapshot_id, d.id, d.name from app.domains d
      where d.is_published
      order by d.name collate app.alphabetical, d.id
      limit list_discovery_domains.per_page offset skipped
    ) page;
  end if;

  -- The stored items joined as text (private.discovery_items_json): the body is jsonb's print
  -- already, so it is only checked as json, not parsed into jsonb and printed again.
  return ('{"data": ['
          || coalesce(private.discovery_items_json('domain', snapshots, ids, list_discovery_domains.trail_limit, null), '')
          || '], "meta": '
          || private.page_meta(total, list_discovery_domains.page, list_discovery_domains.per_page)::text || '}')::json;
end
$$;
comment on function api.list_discovery_domains(integer,integer,integer,uuid) is
  'GET /discovery/domains. Params: page, per_page (max 100), trail_limit (0-100), snapshot_id. Returns {data: Domain with counts and trails preview, meta}. Errors: 22023, PT404.';
grant execute on function api.list_discovery_domains(integer,integer,integer,uuid) to anon, authenticated, service_role;

-- api.list_discovery_trails
-- Purpose: GET /discovery/trails: trails in title order with counts and concept previews.
-- Params:  page, per_page (1-100), domain (slug, optional), difficulty (optional),
--          concept_limit (0-50), snapshot_id (optional).
-- Returns: {data: [{id,slug,title,description,difficulty_level,concept_count,spark_count,
--          estimated_mins,concepts:[{id,slug,title,estimated_mins}]}], meta: pagination}.
-- Errors:  22023 invalid numbers or difficulty; PT404 unknown domain slug or snapshot_id.
create or replace function api.list_discovery_trails(page integer default 1, per_page integer default 20, domain text default null::text, difficulty text default null::text, concept_limit integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  caller_role constant text := private.authorize('list_discovery_trails');
  sid uuid;
  did uuid;
  total bigint;
  items jsonb;
begin
  perform private.require_range('page', list_discovery_trails.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_trails.per_page, 1, 100);
  perform private.require_range('concept_limit', list_discovery_trails.concept_limit, 0, 50);
  perform private.require_difficulty('difficulty', list_discovery_trails.difficulty);
  sid := private.resolve_snapshot_id(list_discovery_trails.snapshot_id);
  if list_discovery_trails.domain is not null then
    did := private.find_entity_id('domain', sid, list_discovery_trails.domain, 'domain');
  end if;

  select pg_catalog.count(*) into total from app.trails t
  where (sid is null or t.snapshot_id = sid)
    and (did is null or t.domain_id = did)
    and (list_discovery_trails.difficulty is null or t.difficulty_level = list_discovery_trails.difficulty);

  select private.trail_items(pg_catalog.array_agg(page.t order by (page.t).title collate app.alphabetical, (page.t).id), list_discovery_trails.concept_limit)
  into items
  from (
    select t from app.trails t
    where (sid is null or t.snapshot_id = sid)
      and (did is null or t.domain_id = did)
      and (list_discovery_trails.difficulty is null or t.difficulty_level = list_discovery_trails.difficulty)
    order by t.title collate app.alphabetical, t.id
    limit list_discovery_trails.per_page
    offset (list_discovery_trails.page - 1)::bigint * list_discovery_trails.per_page
  ) page;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_trails.page, list_discovery_trails.per_page));
end
$$;
comment on function api.list_discovery_trails(integer,integer,text,text,integer,uuid) is
  'GET /discovery/trails. Params: page, per_page (max 100), domain slug, difficulty, concept_limit (0-50), snapshot_id. Returns {data: Trail with concepts preview, meta}. Errors: 22023, PT404 unknown domain/snapshot.';
grant execute on function api.list_discovery_trails(integer,integer,text,text,integer,uuid) to anon, authenticated, service_role;

-- api.list_discovery_concepts
-- Purpose: GET /discovery/concepts: concepts with counts and spark previews. With a trail they
--          come in their position order inside it, otherwise in title order.
-- Params:  page, per_page (1-100), trail (slug, optional), spark_limit (0-50), snapshot_id.
-- Returns: {data: [{id,slug,title,description,order_index,spark_count,estimated_mins,
--          sparks:[{id,slug,title,estimated_mins}]}], meta: pagination}.
-- Errors:  22023 invalid numbers; PT404 unknown trail slug or snapshot_id.
create or replace function api.list_discovery_concepts(page integer default 1, per_page integer default 20, trail text default null::text, spark_limit integer default 3, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  caller_role constant text := private.authorize('list_discovery_concepts');
  sid uuid;
  tid uuid;
  total bigint;
  items jsonb;
  skip bigint := (list_discovery_concepts.page - 1)::bigint * list_discovery_concepts.per_page;
begin
  perform private.require_range('page', list_discovery_concepts.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_concepts.per_page, 1, 100);
  perform private.require_range('spark_limit', list_discovery_concepts.spark_limit, 0, 50);
  sid := private.resolve_snapshot_id(list_discovery_concepts.snapshot_id);

  if list_discovery_concepts.trail is null then
    select pg_catalog.count(*) into total from app.concepts c where (sid is null or c.snapshot_id = sid);
    select private.concept_items(pg_catalog.array_agg(page.c order by (page.c).title collate app.alphabetical, (page.c).id), list_discovery_concepts.spark_limit)
    into items
    from (
      select c from app.concepts c
      where (sid is null or c.snapshot_id = sid)
      order by c.title collate app.alphabetical, c.id
      limit list_discovery_concepts.per_page offset skip
    ) page;
  else
    tid := private.find_entity_id('trail', sid, list_discovery_concepts.trail, 'trail');
    select pg_catalog.count(*) into total from app.concepts c
    where (sid is null or c.snapshot_id = sid) and c.trail_id = tid;
    select private.concept_items(
             pg_catalog.array_agg(page.c order by (page.c).order_index, (page.c).title collate app.alphabetical, (page.c).id),
             list_discovery_concepts.spark_limit)
    into items
    from (
      select c from app.concepts c
      where (sid is null or c.snapshot_id = sid) and c.trail_id = tid
      order by c.order_index, c.title collate app.alphabetical, c.id
      limit list_discovery_concepts.per_page offset skip
    ) page;
  end if;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_concepts.page, list_discovery_concepts.per_page));
end
$$;
comment on function api.list_discovery_concepts(integer,integer,text,integer,uuid) is
  'GET /discovery/concepts. Params: page, per_page (max 100), trail slug, spark_limit (0-50), snapshot_id. Returns {data: Concept with sparks preview, meta}. Errors: 22023, PT404 unknown trail/snapshot.';
grant execute on function api.list_discovery_concepts(integer,integer,text,integer,uuid) to anon, authenticated, service_role;

-- api.list_discovery_sparks
-- Purpose: GET /discovery/sparks: sparks, in their position order inside a concept when one is
--          given, otherwise in title order; optionally of one difficulty.
-- Params:  page, per_page (1-100), concept (slug, optional), difficulty (optional), snapshot_id.
-- Returns: {data: [{id,slug,title,summary,difficulty,estimated_mins}], meta: pagination}.
-- Errors:  22023 invalid numbers or difficulty; PT404 unknown concept slug or snapshot_id.
create or replace function api.list_discovery_sparks(page integer default 1, per_page integer default 20, concept text default null::text, difficulty text default null::text, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  caller_role constant text := private.authorize('list_discovery_sparks');
  sid uuid;
  cid uuid;
  total bigint;
  items jsonb;
  skip bigint := (list_discovery_sparks.page - 1)::bigint * list_discovery_sparks.per_page;
begin
  perform private.require_range('page', list_discovery_sparks.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_sparks.per_page, 1, 100);
  perform private.require_difficulty('difficulty', list_discovery_sparks.difficulty);
  sid := private.resolve_snapshot_id(list_discovery_sparks.snapshot_id);

  if list_discovery_sparks.concept is null then
    select pg_catalog.count(*) into total from app.sparks s
    where (sid is null or s.snapshot_id = sid)
      and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty);
    select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
        'id', s.id, 'slug', s.slug, 'title', s.title, 'summary', s.summary,
        'difficulty', s.difficulty, 'estimated_mins', s.estimated_mins) order by s.title collate app.alphabetical, s.id)
    into items
    from (
      select s.* from app.sparks s
      where (sid is null or s.snapshot_id = sid)
        and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty)
      order by s.title collate app.alphabetical, s.id
      limit list_discovery_sparks.per_page offset skip
    ) s;
  else
    cid := private.find_entity_id('concept', sid, list_discovery_sparks.concept, 'concept');
    select pg_catalog.count(*) into total
    from app.concept_sparks cs
    join app.sparks s on s.snapshot_id = cs.snapshot_id and s.id = cs.spark_id
    where (sid is null or cs.snapshot_id = sid) and cs.concept_id = cid
      and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty);
    select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
        'id', x.id, 'slug', x.slug, 'title', x.title, 'summary', x.summary,
        'difficulty', x.difficulty, 'estimated_mins', x.estimated_mins) order by x.order_index, x.title collate app.alphabetical, x.id)
    into items
    from (
      select s.*, cs.order_index
      from app.concept_sparks cs
      join app.sparks s on s.snapshot_id = cs.snapshot_id and s.id = cs.spark_id
      where (sid is null or cs.snapshot_id = sid) and cs.concept_id = cid
        and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty)
      order by cs.order_index, s.title collate app.alphabetical, s.id
      limit list_discovery_sparks.per_page offset skip
    ) x;
  end if;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_sparks.page, list_discovery_sparks.per_page));
end
$$;
comment on function api.list_discovery_sparks(integer,integer,text,text,uuid) is
  'GET /discovery/sparks. Params: page, per_page (max 100), concept slug, difficulty, snapshot_id. Returns {data: Spark[], meta}. Errors: 22023, PT404 unknown concept/snapshot.';
grant execute on function api.list_discovery_sparks(integer,integer,text,text,uuid) to anon, authenticated, service_role;

-- api.get_discovery_facets
-- Purpose: GET /discovery/facets: facet lists over the catalog, scoped by domain, track and
--          difficulty with the same rules as /discovery/all.
-- Params:  domain (slug), track (trail slug), difficulty, snapshot_id (all optional).
-- Returns: {domains:[{slug,name,count}], tracks:[{slug,name,count}], difficulties:[{level,count}],
--          types:[{type,count}]}.
-- Errors:  22023 invalid difficulty; PT404 unknown domain/track/snapshot.
create or replace function api.get_discovery_facets(domain text default null::text, track text default null::text, difficulty text default null::text, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('get_discovery_facets');
  sid uuid;
  did uuid;
  tid uuid;
begin
  perform private.require_difficulty('difficulty', get_discovery_facets.difficulty);
  sid := private.resolve_snapshot_id(get_discovery_facets.snapshot_id);
  if get_discovery_facets.domain is not null then
    did := private.find_entity_id('domain', sid, get_discovery_facets.domain, 'domain');
  end if;
  if get_discovery_facets.track is not null then
    tid := private.find_entity_id('trail', sid, get_discovery_facets.track, 'track');
  end if;
  return private.discovery_facets(sid, did, tid, get_discovery_facets.difficulty, null, array[
    tid is null and get_discovery_facets.difficulty is null,
    tid is null,
    get_discovery_facets.difficulty is null]);
end
$$;
comment on function api.get_discovery_facets(text,text,text,uuid) is
  'GET /discovery/facets. Params: domain, track, difficulty, snapshot_id. Returns {domains, tracks, difficulties, types}. Errors: 22023, PT404.';
grant execute on function api.get_discovery_facets(text,text,text,uuid) to anon, authenticated, service_role;

-- A domain by slug or UUID inside the selected snapshot; PT404 when none matches.
create or replace function private.find_domain(sid uuid, slug_or_id text)
returns app.domains
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  found app.domains;
  as_id uuid := private.uuid_or_null(find_domain.slug_or_id);
begin
  if as_id is not null then
    select d.* into found from app.domains d
    where (find_domain.sid is null or d.snapshot_id = find_domain.sid) and d.id = as_id
    limit 1;
  else
    select d.* into found from app.domains d
    where (find_domain.sid is null or d.snapshot_id = find_domain.sid) and d.slug = find_domain.slug_or_id
    limit 1;
  end if;
  if found.id is null then
    raise exception using
      errcode = 'PT404',
      message = pg_catalog.format('domain %s not found', find_domain.slug_or_id),
      detail = pg_catalog.jsonb_build_object('slug', find_domain.slug_or_id)::text;
  end if;
  return found;
end
$$;
comment on function private.find_domain(uuid,text) is
  'A domain by slug or id in the selected snapshot; PT404 when none matches.';
grant execute on function private.find_domain(uuid,text) to anon, authenticated;

-- api.list_domains
-- Purpose: GET /discovery/domains/: published domains in name order.
-- Params:  page (>=1), per_page (1-100), snapshot_id (optional).
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count}], meta: pagination}.
-- Errors:  22023 out-of-range numbers; PT404 unknown snapshot_id.
create or replace function api.list_domains(page integer default 1, per_page integer default 20, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  caller_role constant text := private.authorize('list_domains');
  sid uuid;
  total bigint;
  items jsonb;
begin
  perform private.require_range('page', list_domains.page, 1, 100000);
  perform private.require_range('per_page', list_domains.per_page, 1, 100);
  sid := private.resolve_snapshot_id(list_domains.snapshot_id);
  select pg_catalog.count(*) into total from app.domains d
  where (sid is null or d.snapshot_id = sid) and d.is_published;
  select pg_catalog.jsonb_agg(private.domain_summary(d) order by d.name collate app.alphabetical, d.id) into items
  from (
    select d.* from app.domains d
    where (sid is null or d.snapshot_id = sid) and d.is_published
    order by d.name collate app.alphabetical, d.id
    limit list_domains.per_page offset (list_domains.page - 1)::bigint * list_domains.per_page
  ) d;
  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_domains.page, list_domains.per_page));
end
$$;
comment on function api.list_domains(integer,integer,uuid) is
  'GET /discovery/domains/. Params: page, per_page (max 100), snapshot_id. Returns {data: Domain[] (id,slug,name,description,icon,color,trail_count), meta}. Errors: 22023, PT404.';
grant execute on function api.list_domains(integer,integer,uuid) to anon, authenticated, service_role;

-- api.get_domain
-- Purpose: GET /discovery/domains/{slug}: one domain by slug or UUID (published or not; the
--          is_published field tells).
-- Params:  slug (slug or UUID), snapshot_id (optional).
-- Returns: {id,slug,name,description,icon,color,is_published,trail_count,category_id,learning_outcomes}.
-- Errors:  PT404 unknown domain or snapshot_id.
create or replace function api.get_domain(slug text, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('get_domain');
  d app.domains;
begin
  d := private.find_domain(private.resolve_snapshot_id(get_domain.snapshot_id), get_domain.slug);
  return private.domain_summary(d) || pg_catalog.jsonb_build_object(
    'is_published', d.is_published,
    'category_id', d.category_id,
    'learning_outcomes', pg_catalog.to_jsonb(d.learning_outcomes));
end
$$;
comment on function api.get_domain(text,uuid) is
  'GET /discovery/domains/{slug}. Params: slug (slug or UUID), snapshot_id. Returns the domain detail. Errors: PT404 unknown domain/snapshot.';
grant execute on function api.get_domain(text,uuid) to anon, authenticated, service_role;

-- api.list_related_domains
-- Purpose: GET /discovery/domains/{slug}/related: published domains of the same category
--          (name order), the requested one excluded. When the domain has no category or no
--          other domain shares it, other published domains in a pseudo-random order instead
--          (a shuffle seeded by the requested domain, so the response is stable per snapshot
--          and therefore cacheable).
-- Params:  slug (slug or UUID), related_limit (1-10), snapshot_id.
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count}], meta: {total,page,per_page}}.
-- Errors:  22023 out-of-range limit; PT404 unknown domain or snapshot_id.
create or replace function api.list_related_domains(slug text, related_limit integer default 4, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_related_domains');
  d app.domains;
  total bigint := 0;
  items jsonb;
begin
  perform private.require_range('limit', list_related_domains.related_limit, 1, 10);
  d := private.find_domain(private.resolve_snapshot_id(list_related_domains.snapshot_id), list_related_domains.slug);
  if d.category_id is not null then
    select pg_catalog.count(*) into total from app.domains r
    where r.snapshot_id = d.snapshot_id and r.category_id = d.category_id and r.id <> d.id and r.is_published;
  end if;
  if total > 0 then
    select pg_catalog.jsonb_agg(private.domain_summary(r) order by r.name collate app.alphabetical, r.id) into items
    from (
      select r.* from app.domains r
      where r.snapshot_id = d.snapshot_id and r.category_id = d.category_id and r.id <> d.id and r.is_published
      order by r.name collate app.alphabetical, r.id
      limit list_related_domains.related_limit
    ) r;
  else
    select pg_catalog.count(*) into total from app.domains r
    where r.snapshot_id = d.snapshot_id and r.id <> d.id and r.is_published;
    select pg_catalog.jsonb_agg(private.domain_summary(r) order by pg_catalog.md5(r.id::text || d.id::text)) into items
    from (
      select r.* from app.domains r
      where r.snapshot_id = d.snapshot_id and r.id <> d.id and r.is_published
      order by pg_catalog.md5(r.id::text || d.id::text)
      limit list_related_domains.related_limit
    ) r;
  end if;
  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', pg_catalog.jsonb_build_object('total', total, 'page', 1, 'per_page', list_related_domains.related_limit));
end
$$;
comment on function api.list_related_domains(text,integer,uuid) is
  'GET /discovery/domains/{slug}/related. Params: slug (slug or UUID), related_limit (1-10), snapshot_id. Returns {data: Domain[], meta: {total,page,per_page}}; same category, else pseudo-random domains. Errors: 22023, PT404.';
grant execute on function api.list_related_domains(text,integer,uuid) to anon, authenticated, service_role;

-- Figures of some concepts: spark_count and estimated_mins (sum over its sparks).
create or replace function private.concept_figures(snapshots uuid[], concept_ids uuid[])
returns table(snapshot_id uuid, concept_id uuid, spark_count integer, estimated_mins integer)
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
set enable_seqscan to 'off'
as $$
begin
  return query
  select r.snapshot_id, r.concept_id, r.spark_count, r.estimated_mins
  from app.concept_rollups r
  where r.snapshot_id = any(concept_figures.snapshots) and r.concept_id = any(concept_figures.concept_ids);
end
$$;
comment on function private.concept_figures(uuid[],uuid[]) is
  'spark_count and estimated_mins (from app.concept_rollups) of the concepts whose id is in concept_ids and whose snapshot is in snapshots (not parallel arrays: callers pass the distinct snapshots).';
grant execute on function private.concept_figures(uuid[],uuid[]) to anon, authenticated;

-- Figures of some trails: concept_count, spark_count and estimated_mins over the trail's
-- distinct sparks (a spark used by two concepts of the trail counts once).
create or replace function private.trail_figures(snapshots uuid[], trail_ids uuid[])
returns table(snapshot_id uuid, trail_id uuid, concept_count integer, spark_count integer, estimated_mins integer)
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
set enable_seqscan to 'off'
as $$
begin
  return query
  select r.snapshot_id, r.trail_id, r.concept_count, r.spark_count, r.estimated_mins
  from app.trail_rollups r
  where r.snapshot_id = any(trail_figures.snapshots) and r.trail_id = any(trail_figures.trail_ids);
end
$$;
comment on function private.trail_figures(uuid[],uuid[]) is
  'concept_count, spark_count and estimated_mins of some trails, each spark counted once however many of the trail''s concepts place it.';
grant execute on function private.trail_figures(uuid[],uuid[]) to anon, authenticated;

-- A page of domains (in the given order) with their figures; `trails` previews (see
-- private.child_previews) only when trail_limit is not null. A domain's sparks are counted once
-- however often they are placed in it (computed by the rollup).
create or replace function private.domain_items(page app.domains[], trail_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
set enable_seqscan to 'off'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(domain_items.page) r);
  domain_ids uuid[] := array(select r.id from pg_catalog.unnest(domain_items.page) r);
  result jsonb;
begin
  with figures as materialized (
    select r.snapshot_id, r.domain_id, r.trail_count, r.concept_count, r.spark_count, r.estimated_mins
    from app.domain_rollups r
    where r.snapshot_id = any(snapshots) and r.domain_id = any(domain_ids)
  ), previews as materialized (
    select * from private.child_previews('trail', array(select r.snapshot_id from pg_catalog.unnest(domain_items.page) r), domain_ids,
                                   domain_items.trail_limit)
  )
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'name', p.name, 'description', p.description, 'icon', p.icon, 'color', p.color,
        'trail_count', coalesce(f.trail_count, 0), 'concept_count', coalesce(f.concept_count, 0),
        'spark_count', coalesce(f.spark_count, 0), 'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when domain_items.trail_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('trails', coalesce(pv.items, '[]'::jsonb)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(domain_items.page) with ordinality as p
  left join figures f on f.snapshot_id = p.snapshot_id and f.domain_id = p.id
  left join previews pv on pv.snapshot_id = p.snapshot_id and pv.parent_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
comment on function private.domain_items(app.domains[],integer) is
  'Discovery items of a page of domains, in the given order, with their figures; trails previews only when trail_limit is not null.';
grant execute on function private.domain_items(app.domains[],integer) to anon, authenticated;

-- private.discovery_preview_key
-- Purpose: the key of a discovery item's child previews: a domain's `trails`, a trail's
--          `concepts`, a concept's `sparks`.
-- plpgsql, not sql: as private.search_normalize (04-content.sql); every stored page calls it.
create or replace function private.discovery_preview_key(kind text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case discovery_preview_key.kind when 'domain' then 'trails' when 'trail' then 'concepts' else 'sparks' end;
end
$$;
comment on function private.discovery_preview_key(text) is
  'The key of a discovery item''s child previews: trails for a domain, concepts for a trail, sparks for a concept.';
grant execute on function private.discovery_preview_key(text) to anon, authenticated;

-- private.refresh_discovery_items
-- Purpose: (re)writes app.discovery_items of one snapshot: every domain, trail and concept as
--          private.domain_items, private.trail_items and private.concept_items build it with all
--          of its child previews, split into the item (with its two placeholders, see the
--          table) and the previews. Run by
--          private.refresh_content_rollups once the rollups the builders read are written (the
--          import's derivation, the test builders); idempotent.
-- Params:  snapshot_id.
-- Returns: the number of items written.
create or replace function private.refresh_discovery_items(snapshot_id uuid)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  sid constant uuid := refresh_discovery_items.snapshot_id;
  -- a preview limit no parent reaches: every child
  every_child constant integer := 2147483647;
  written bigint;
begin
  delete from app.discovery_items x where x.snapshot_id = sid;
  with built as (
    select 'domain' as kind, e.item
    from pg_catalog.jsonb_array_elements(private.domain_items(array(select d from app.domains d where d.snapshot_id = sid), every_child)) e(item)
    union all
    select 'trail', e.item
    from pg_catalog.jsonb_array_elements(private.trail_items(array(select t from app.trails t where t.snapshot_id = sid), every_child)) e(item)
    union all
    select 'concept', e.item
    from pg_catalog.jsonb_array_elements(private.concept_items(array(select c from app.concepts c where c.snapshot_id = sid), every_child)) e(item)
  )
  insert into app.discovery_items (snapshot_id, kind, id, item, previews)
  select sid, b.kind, (b.item ->> 'id')::uuid,
         -- no item has a "type" key; the previews key's value becomes 0
         (b.item || pg_catalog.jsonb_build_object('type', 0, private.discovery_preview_key(b.kind), 0))::text::json,
         array(select p.value::text::json
               from pg_catalog.jsonb_array_elements(b.item -> private.discovery_preview_key(b.kind)) with ordinality p(value, n)
               order by p.n)
  from built b;
  get diagnostics written = row_count;
  return written;
end
$$;
comment on function private.refresh_discovery_items(uuid) is
  'Rewrites the stored discovery items (figures and every child preview, as JSON text) of one snapshot from the item builders.';

-- private.refresh_discovery_facet_sets
-- Purpose: (re)writes app.discovery_facet_sets of one snapshot: the facets of every domain (and
--          of none) by every level (and none), for each set of item types a request without a
--          track can count, computed by private.discovery_facets. Run by
--          private.refresh_content_rollups once the rollups the facets read are written;
--          idempotent.
-- Params:  snapshot_id.
-- Returns: the number of facet sets written.
create or replace function private.refresh_discovery_facet_sets(snapshot_id uuid)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  sid constant uuid := refresh_discovery_facet_sets.snapshot_id;
  written bigint;
begin
  -- Deleted first: private.discovery_facets would read the old sets.
  delete from app.discovery_facet_sets f where f.snapshot_id = sid;
  insert into app.discovery_facet_sets (snapshot_id, domain_id, difficulty, included, facets)
  select sid, d.id, l.value, m.included, private.discovery_facets(sid, d.id, null, l.value, null, m.included)
  from (select null::uuid as id union all select d.id from app.domains d where d.snapshot_id = sid) d
  cross join (select null::text as value union all select l.value from app.difficulty_levels l) l
  cross join lateral (
    select array[dm, tr, co] as included
    from pg_catalog.unnest(array[true, false]) dm, pg_catalog.unnest(array[true, false]) tr,
         pg_catalog.unnest(array[true, false]) co
    -- without a level: any non-empty set of types; with one only trails count (rule 6)
    where case when l.value is null then dm or tr or co else not dm and not co end
  ) m;
  get diagnostics written = row_count;
  return written;
end
$$;
comment on function private.refresh_discovery_facet_sets(uuid) is
  'Rewrites the stored discovery facets of one snapshot for every filter without a track or a text, from private.discovery_facets.';

-- private.discovery_items_json
-- Purpose: a page of discovery items as JSON text (the elements of a JSON array, in the given
--          order) from their stored texts (app.discovery_items): each item with its first
--          preview_limit child previews or, when preview_limit is null, without previews, exactly
--          the item private.domain_items, private.trail_items or private.concept_items make with
--          that limit, with "type" when type is given (the items of /discovery/all), and printed
--          as jsonb prints it: the stored item's placeholders are swapped for those values or
--          dropped. When an item of the page has no stored text (content written without the
--          derivation), the builders make the page.
-- Params:  kind ('domain' | 'trail' | 'concept'); snapshots, ids: the page's items (parallel
--          arrays, in page order); preview_limit; type (null, or DOMAIN/TRAIL/CONCEPT).
-- Returns: the items' JSON texts joined by ', ', or null for an empty page.
create or replace function private.discovery_items_json(kind text, snapshots uuid[], ids uuid[], preview_limit integer, type text)
returns text
language plpgsql
stable
-- Planning its statement cost three times running it (0.17 of 0.23 ms a page), and the plan
-- cache kept planning it on every call: the generic plan's estimate (every kind's builder, any
-- number of ids) never beat a custom one's. The generic plan reads the same primary-key range.
set plan_cache_mode to 'force_generic_plan'
set search_path = ''
as $$
declare
  preview_key constant text := pg_catalog.to_json(private.discovery_preview_key(discovery_items_json.kind))::text;
  -- Each placeholder is followed by another key ("description" is longer, so it comes later in
  -- jsonb's order), hence the ', ' it is dropped with. Inside a JSON string every quote is
  -- escaped, so the placeholder text occurs nowhere else.
  type_entry constant text := case when discovery_items_json.type is null then ''
                                   else '"type": ' || pg_catalog.to_json(discovery_items_json.type)::text || ', ' end;
  result text;
  stored integer;
begin
  select pg_catalog.string_agg(
           pg_catalog.replace(pg_catalog.replace(x.item::text, '"type": 0, ', type_entry),
             preview_key || ': 0, ',
             case when discovery_items_json.preview_limit is null then ''
                  else preview_key || ': ['
                       || pg_catalog.array_to_string(x.previews[1:discovery_items_json.preview_limit]::text[], ', ')
                       || '], ' end),
           ', ' order by p.n),
         pg_catalog.count(x.id)
  into result, stored
  from rows from (pg_catalog.unnest(discovery_items_json.snapshots), pg_catalog.unnest(discovery_items_json.ids))
         with ordinality p(snapshot_id, id, n)
  -- the page's stored items in one primary-key read (whatever else the table holds)
  left join (
    select x.snapshot_id, x.id, x.item, x.previews from app.discovery_items x
    where x.snapshot_id = any(discovery_items_json.snapshots) and x.kind = discovery_items_json.kind
      and x.id = any(discovery_items_json.ids)
  ) x on x.snapshot_id = p.snapshot_id and x.id = p.id;
  -- An item without a stored text (content written without the derivation): the builders make
  -- the page. Apart, so that the usual statement does not set up the builders on every call.
  if stored < pg_catalog.cardinality(discovery_items_json.ids) then
    select pg_catalog.string_agg(
             ((case when discovery_items_json.type is null then '{}'::jsonb
                    else pg_catalog.jsonb_build_object('type', discovery_items_json.type) end)
              || (case discovery_items_json.kind
                    when 'domain' then private.domain_items(array(
                      select d from app.domains d where d.snapshot_id = p.snapshot_id and d.id = p.id), discovery_items_json.preview_limit)
                    when 'trail' then private.trail_items(array(
                      select t from app.trails t where t.snapshot_id = p.snapshot_id and t.id = p.id), discovery_items_json.preview_limit)
                    else private.concept_items(array(
                      select c from app.concepts c where c.snapshot_id = p.snapshot_id and c.id = p.id), discovery_items_json.preview_limit)
                  end -> 0))::text,
             ', ' order by p.n)
    into result
    from rows from (pg_catalog.unnest(discovery_items_json.snapshots), pg_catalog.unnest(discovery_items_json.ids))
           with ordinality p(snapshot_id, id, n);
  end if;
  return result;
end
$$;
comment on function private.discovery_items_json(text,uuid[],uuid[],integer,text) is
  'A page of discovery items as JSON texts joined by '', '' (null for an empty page), each as jsonb prints it: the stored texts with their placeholders replaced (built by their builder where none is stored), with preview_limit child previews (none, and no previews key, when it is null) and "type" when type is given.';
grant execute on function private.discovery_items_json(text,uuid[],uuid[],integer,text) to anon, authenticated;

-- The seven fields every Domain carries.
create or replace function private.domain_summary(d app.domains)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'id', (domain_summary.d).id, 'slug', (domain_summary.d).slug, 'name', (domain_summary.d).name,
    'description', (domain_summary.d).description, 'icon', (domain_summary.d).icon,
    'color', (domain_summary.d).color,
    'trail_count', coalesce((select r.trail_count from app.domain_rollups r
                             where r.snapshot_id = (domain_summary.d).snapshot_id
                               and r.domain_id = (domain_summary.d).id), 0))
$$;
comment on function private.domain_summary(app.domains) is
  'The seven fields every Domain carries.';
grant execute on function private.domain_summary(app.domains) to anon, authenticated;

-- api.get_domain_trails
-- Purpose: GET /discovery/domains/{slug}/trails: a domain with one page of its trails (trail
--          order); page and trail_limit paginate the trails.
-- Params:  slug (slug or UUID), page (>=1), trail_limit (1-100, trails per page), snapshot_id.
-- Returns: {id,slug,name,description,icon,color,trail_count, trails:[{id,title,slug,estimated_mins}],
--          trail_meta: {total,page,per_page,total_pages,has_next,has_prev,total_concept_count}}.
-- Errors:  22023 out-of-range numbers; PT404 unknown domain or snapshot_id.
create or replace function api.get_domain_trails(slug text, page integer default 1, trail_limit integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  caller_role constant text := private.authorize('get_domain_trails');
  d app.domains;
  total bigint;
  concepts bigint;
  page_ids uuid[];
  items jsonb;
begin
  perform private.require_range('page', get_domain_trails.page, 1, 100000);
  perform private.require_range('trail_limit', get_domain_trails.trail_limit, 1, 100);
  d := private.find_domain(private.resolve_snapshot_id(get_domain_trails.snapshot_id), get_domain_trails.slug);
  -- trail total and total_concept_count from the domain's rollup
  select coalesce(pg_catalog.max(r.trail_count), 0), coalesce(pg_catalog.max(r.concept_count), 0)
  into total, concepts
  from app.domain_rollups r where r.snapshot_id = d.snapshot_id and r.domain_id = d.id;
  page_ids := array(
    select t.id from app.trails t
    where t.snapshot_id = d.snapshot_id and t.domain_id = d.id
    order by t.order_index, t.title collate app.alphabetical, t.id
    limit get_domain_trails.trail_limit
    offset (get_domain_trails.page - 1)::bigint * get_domain_trails.trail_limit);
  select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
      'id', t.id, 'title', t.title, 'slug', t.slug, 'estimated_mins', coalesce(f.estimated_mins, 0))
    order by t.order_index, t.title collate app.alphabetical, t.id)
  into items
  from app.trails t
  left join private.trail_figures(array[d.snapshot_id], page_ids) f on f.trail_id = t.id
  where t.snapshot_id = d.snapshot_id and t.id = any(page_ids);
  return private.domain_summary(d) || pg_catalog.jsonb_build_object(
    'trails', coalesce(items, '[]'::jsonb),
    'trail_meta', private.page_meta(total, get_domain_trails.page, get_domain_trails.trail_limit)
                  || pg_catalog.jsonb_build_object('total_concept_count', concepts));
end
$$;
comment on function api.get_domain_trails(text,integer,integer,uuid) is
  'GET /discovery/domains/{slug}/trails. Params: slug (slug or UUID), page, trail_limit (1-100), snapshot_id. Returns domain fields, trails page and trail_meta. Errors: 22023, PT404.';
grant execute on function api.get_domain_trails(text,integer,integer,uuid) to anon, authenticated, service_role;

-- api.list_discovery_items
-- Purpose: GET /discovery/all: domains, trails and concepts on one page, split by type share
--          (see the paging math above), alphabetical within each type.
-- Params:  page, per_page (1-100), types (comma list of domain,trail,concept; null = all),
--          domain (slug: content within it), track (trail slug: only its concepts),
--          difficulty (only trails of that level), q (case-insensitive substring of name/title),
--          include_facets, nested_limit (0-10; 0 omits nested items), snapshot_id.
-- Returns: {data: [{type:'DOMAIN',...}|{type:'TRAIL',...,concepts}|{type:'CONCEPT',...,sparks}],
--          meta: pagination over all matching items, facets (when include_facets)}, as json
--          (the body text as joined, in jsonb's key order).
-- Errors:  22023 invalid numbers, types or difficulty; PT404 unknown domain/track/snapshot.
create or replace function api.list_discovery_items(page integer default 1, per_page integer default 20, types text default null::text, domain text default null::text, track text default null::text, difficulty text default null::text, q text default null::text, include_facets boolean default false, nested_limit integer default 3, snapshot_id uuid default null::uuid)
returns json
language plpgsql
stable
set search_path = ''
-- The argument checks and lookups keep cached plans; the counts and pages below are planned per
-- call (set_config before them: their optional filters fold away only in a custom plan). This
-- clause confines both settings to the call, and the callees above are not planned per call.
set plan_cache_mode to 'auto'
as $$
declare
  caller_role constant text := private.authorize('list_discovery_items');
  sid uuid;
  did uuid;
  tid uuid;
  domain_trails uuid[];
  stored_facets jsonb;
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

  -- The facets stored for this filter count what the page counts, type by type (the same
  -- filters, written once in private.discovery_facets), so the page's totals are theirs.
  stored_facets := private.stored_discovery_facets(sid, did, tid, list_discovery_items.difficulty,
                                                   list_discovery_items.q, included);

  perform pg_catalog.set_config('plan_cache_mode', 'force_custom_plan', true);
  -- A domain's concepts are those of its trails: with their ids known when it is planned, a
  -- concept page reads those trails' concepts and sorts them, instead of walking every concept
  -- of the snapshot in title order to find the domain's (5.7 ms a page at 500,000 sparks).
  if did is not null then
    domain_trails := array(select t.id from app.trails t where (sid is null or t.snapshot_id = sid) and t.domain_id = did);
  end if;
  if stored_facets is not null then
    -- "types" lists DOMAIN, TRAIL, CONCEPT, in the order of caps
    caps := array[(stored_facets #>> '{types,0,count}')::bigint, (stored_facets #>> '{types,1,count}')::bigint,
                  (stored_facets #>> '{types,2,count}')::bigint];
  else
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
          and (domain_trails is null or c.trail_id = any(domain_trails))
          and (did is null or exists (select 1 from app.trails t
                                      where t.snapshot_id = c.snapshot_id and t.id = c.trail_id and t.domain_id = did))
          and (pattern is null or c.title ilike pattern)) end];
  end if;
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
        and (domain_trails is null or c.trail_id = any(domain_trails))
        and (did is null or exists (select 1 from app.trails t
                                    where t.snapshot_id = c.snapshot_id and t.id = c.trail_id and t.domain_id = did))
        and (pattern is null or c.title ilike pattern)
      order by c.title collate app.alphabetical, c.id
      limit through_page[3] - before_page[3] offset before_page[3]
    ) page;
  end if;

  -- The page's items are JSON text as jsonb prints it (stored items joined), and so is the rest
  -- ("data", "meta", "facets" is jsonb's key order): the body is only checked as json.
  return ('{"data": [' || pg_catalog.concat_ws(', ', domain_part, trail_part, concept_part) || '], "meta": '
          || private.page_meta(total, list_discovery_items.page, list_discovery_items.per_page)::text
          || case when list_discovery_items.include_facets
                  then ', "facets": ' || coalesce(stored_facets, private.discovery_facets(sid, did, tid,
                         list_discovery_items.difficulty, list_discovery_items.q, included))::text
                  else '' end
          || '}')::json;
end
$$;
comment on function api.list_discovery_items(integer,integer,text,text,text,text,text,boolean,integer,uuid) is
  'GET /discovery/all. Params: page, per_page (max 100), types, domain, track, difficulty, q, include_facets, nested_limit (0-10), snapshot_id. Returns {data: mixed DOMAIN/TRAIL/CONCEPT items split by type share, meta, facets?}. Errors: 22023, PT404.';
grant execute on function api.list_discovery_items(integer,integer,text,text,text,text,text,boolean,integer,uuid) to anon, authenticated, service_role;

-- private.stored_discovery_facets
-- Purpose: the facets private.discovery_facets would count, when they were stored at import
--          (app.discovery_facet_sets: a snapshot, no track and no text).
-- Params:  those of private.discovery_facets.
-- Returns: the stored facets, or null (count them).
create or replace function private.stored_discovery_facets(sid uuid, domain_id uuid, trail_id uuid, difficulty text, q text, included boolean[])
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  result jsonb;
begin
  if stored_discovery_facets.sid is null or stored_discovery_facets.trail_id is not null
     or stored_discovery_facets.q is not null then
    return null;
  end if;
  select f.facets into result from app.discovery_facet_sets f
  where f.snapshot_id = stored_discovery_facets.sid and f.included = stored_discovery_facets.included
    and coalesce(f.domain_id::text, '') = coalesce(stored_discovery_facets.domain_id::text, '')
    and coalesce(f.difficulty, '') = coalesce(stored_discovery_facets.difficulty, '');
  return result;
end
$$;
comment on function private.stored_discovery_facets(uuid,uuid,uuid,text,text,boolean[]) is
  'The facets stored at import for a filter without a track or a text (app.discovery_facet_sets), else null.';
grant execute on function private.stored_discovery_facets(uuid,uuid,uuid,text,text,boolean[]) to anon, authenticated;

-- Facets over every matching item (not just a page): types, domains and tracks with the number
-- of matching items inside them, trails per difficulty level. Concepts are counted from the
-- trail rollups unless `q` filters them by title; without a track or a text the snapshot's facets
-- come from app.discovery_facet_sets (computed by this function at import).
-- Plans: planning its statement per call (custom plans) cost 0.7 ms, three times running it, at
-- every size. So it keeps one generic plan, in which every filter is an index condition: the
-- snapshot and domain filters are arrays (every snapshot under selection rule 3, every domain of
-- the snapshots when no domain is asked for), the track filter has a branch of its own, and the
-- lookups of the listed domains and trails carry the same conditions, so that a filtered call
-- reads its domain's rows, not the snapshot's.
create or replace function private.discovery_facets(sid uuid, domain_id uuid, trail_id uuid, difficulty text, q text, included boolean[])
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_generic_plan'
as $$
declare
  pattern text := '%' || private.like_escape(discovery_facets.q) || '%';
  result jsonb;
  snapshots uuid[];
  domains uuid[];
begin
  -- No track and no text: the snapshot's facets for this filter were computed at import.
  result := private.stored_discovery_facets(discovery_facets.sid, discovery_facets.domain_id,
    discovery_facets.trail_id, discovery_facets.difficulty, discovery_facets.q, discovery_facets.included);
  if result is not null then
    return result;
  end if;
  -- A text filter is planned for its pattern (a trigram index serves a long one, not a short
  -- one); the SET clause above confines this to the call.
  if pattern is not null then
    perform pg_catalog.set_config('plan_cache_mode', 'force_custom_plan', true);
  end if;
  snapshots := case when discovery_facets.sid is null then array(select s.id from app.snapshots s)
                    else array[discovery_facets.sid] end;
  domains := case when discovery_facets.domain_id is null
                  then array(select d.id from app.domains d where d.snapshot_id = any(snapshots))
                  else array[discovery_facets.domain_id] end;
  with matching_domains as (
    select d.id, d.snapshot_id from app.domains d
    where discovery_facets.included[1]
      and d.snapshot_id = any(snapshots) and d.id = any(domains)
      and d.is_published
      and (pattern is null or d.name ilike pattern)
  ), matching_trails as (
    select t.id, t.snapshot_id, t.domain_id, t.difficulty_level from app.trails t
    where discovery_facets.included[2]
      and t.snapshot_id = any(snapshots) and t.domain_id = any(domains)
      and (discovery_facets.difficulty is null or t.difficulty_level = discovery_facets.difficulty)
      and (pattern is null or t.title ilike pattern)
  ), concept_groups as (
    -- The matching concepts, counted per trail: from the rollups when no text filter applies
    -- (one row per trail instead of one per concept), else from the concepts themselves.
    select t.snapshot_id, t.id as trail_id, t.domain_id, r.concept_count::bigint as n
    from app.trails t
    join app.trail_rollups r on r.snapshot_id = t.snapshot_id and r.trail_id = t.id
    where discovery_facets.included[3] and pattern is null and discovery_facets.trail_id is null
      and r.snapshot_id = any(snapshots)
      and t.snapshot_id = any(snapshots) and t.domain_id = any(domains)
      and r.concept_count > 0
    union all
    select t.snapshot_id, t.id as trail_id, t.domain_id, r.concept_count::bigint as n
    from app.trails t
    join app.trail_rollups r on r.snapshot_id = t.snapshot_id and r.trail_id = t.id
    where discovery_facets.included[3] and pattern is null and discovery_facets.trail_id is not null
      and t.snapshot_id = any(snapshots) and t.id = discovery_facets.trail_id and t.domain_id = any(domains)
      and r.concept_count > 0
    union all
    select c.snapshot_id, c.trail_id, t.domain_id, pg_catalog.count(*) as n from app.concepts c
    join app.trails t on t.snapshot_id = c.snapshot_id and t.id = c.trail_id
    where discovery_facets.included[3] and pattern is not null
      and c.snapshot_id = any(snapshots)
      and (discovery_facets.trail_id is null or c.trail_id = discovery_facets.trail_id)
      and t.domain_id = any(domains)
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
                where d.is_published and d.snapshot_id = any(snapshots) and d.id = any(domains)),
    'tracks', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                  'slug', t.slug, 'name', t.title, 'count', pt.n) order by t.title collate app.alphabetical, t.slug), '[]'::jsonb)
               from per_trail pt join app.trails t on t.snapshot_id = pt.snapshot_id and t.id = pt.trail_id
               where t.snapshot_id = any(snapshots) and t.domain_id = any(domains)),
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
$$;
comment on function private.discovery_facets(uuid,uuid,uuid,text,text,boolean[]) is
  'Facets over every matching discovery item (types, domains, tracks, difficulties), not just a page; without a track or a text they come from app.discovery_facet_sets.';
grant execute on function private.discovery_facets(uuid,uuid,uuid,text,text,boolean[]) to anon, authenticated;

-- api.browse_catalog
-- Purpose: GET /discovery/browse: everything a catalog page needs in one call: a page of
--          published domains (name order), each with its counts and its trails (trail order,
--          trail_limit), each trail with its counts and its concepts (position order,
--          concept_limit), each concept with its counts.
-- Params:  page, per_page (1-50, over domains), domain (slug: just that domain),
--          difficulty (only trails of that level, and only domains that have one),
--          trail_limit (0-20), concept_limit (0-20), snapshot_id.
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count,concept_count,spark_count,
--          estimated_mins, trails:[{id,slug,title,difficulty_level,concept_count,spark_count,
--          estimated_mins, concepts:[{id,slug,title,order_index,spark_count,estimated_mins}]}]}],
--          meta: pagination over domains}.
-- Errors:  22023 invalid numbers or difficulty; PT404 unknown domain/snapshot.
create or replace function api.browse_catalog(page integer default 1, per_page integer default 20, domain text default null::text, difficulty text default null::text, trail_limit integer default 5, concept_limit integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  caller_role constant text := private.authorize('browse_catalog');
  sid uuid;
  did uuid;
  total bigint;
  page_domains app.domains[];
  page_trails app.trails[];
  page_concepts app.concepts[];
  items jsonb;
begin
  perform private.require_range('page', browse_catalog.page, 1, 100000);
  perform private.require_range('per_page', browse_catalog.per_page, 1, 50);
  perform private.require_range('trail_limit', browse_catalog.trail_limit, 0, 20);
  perform private.require_range('concept_limit', browse_catalog.concept_limit, 0, 20);
  perform private.require_difficulty('difficulty', browse_catalog.difficulty);
  sid := private.resolve_snapshot_id(browse_catalog.snapshot_id);
  if browse_catalog.domain is not null then
    did := private.find_entity_id('domain', sid, browse_catalog.domain, 'domain');
  end if;

  select pg_catalog.count(*) into total from app.domains d
  where (sid is null or d.snapshot_id = sid) and d.is_published
    and (did is null or d.id = did)
    and (browse_catalog.difficulty is null or exists (
      select 1 from app.trails t where t.snapshot_id = d.snapshot_id and t.domain_id = d.id
        and t.difficulty_level = browse_catalog.difficulty));

  select pg_catalog.array_agg(page.d order by (page.d).name collate app.alphabetical, (page.d).id) into page_domains
  from (
    select d from app.domains d
    where (sid is null or d.snapshot_id = sid) and d.is_published
      and (did is null or d.id = did)
      and (browse_catalog.difficulty is null or exists (
        select 1 from app.trails t where t.snapshot_id = d.snapshot_id and t.domain_id = d.id
          and t.difficulty_level = browse_catalog.difficulty))
    order by d.name collate app.alphabetical, d.id
    limit browse_catalog.per_page
    offset (browse_catalog.page - 1)::bigint * browse_catalog.per_page
  ) page;

  page_trails := array(
    select t.x from pg_catalog.unnest(page_domains) p
    cross join lateral (
      select x from app.trails x
      where x.snapshot_id = p.snapshot_id and x.domain_id = p.id
        and (browse_catalog.difficulty is null or x.difficulty_level = browse_catalog.difficulty)
      order by x.order_index, x.title collate app.alphabetical, x.id
      limit browse_catalog.trail_limit) t);
  page_concepts := array(
    select c.x from pg_catalog.unnest(page_trails) p
    cross join lateral (
      select x from app.concepts x
      where x.snapshot_id = p.snapshot_id and x.trail_id = p.id
      order by x.order_index, x.title collate app.alphabetical, x.id
      limit browse_catalog.concept_limit) c);

  -- The three item lists come back in the order of their arrays; ordinality ties them together.
  -- Each list is built once (materialized) and nested by grouping: concepts per trail, then
  -- trails per domain, instead of rescanning the lists once per parent.
  with d as materialized (
    select p.snapshot_id, p.id, e.item, e.n
    from pg_catalog.jsonb_array_elements(private.domain_items(page_domains, null)) with ordinality as e(item, n)
    join pg_catalog.unnest(page_domains) with ordinality as p on p.ordinality = e.n
  ), t as materialized (
    select p.snapshot_id, p.id, p.domain_id, e.item - 'description' as item, e.n
    from pg_catalog.jsonb_array_elements(private.trail_items(page_trails, null)) with ordinality as e(item, n)
    join pg_catalog.unnest(page_trails) with ordinality as p on p.ordinality = e.n
  ), c as materialized (
    select p.snapshot_id, p.trail_id, e.item - 'description' as item, e.n
    from pg_catalog.jsonb_array_elements(private.concept_items(page_concepts, null)) with ordinality as e(item, n)
    join pg_catalog.unnest(page_concepts) with ordinality as p on p.ordinality = e.n
  ), concepts_by_trail as (
    select c.snapshot_id, c.trail_id, pg_catalog.jsonb_agg(c.item order by c.n) as items
    from c group by c.snapshot_id, c.trail_id
  ), trails_by_domain as (
    select t.snapshot_id, t.domain_id,
           pg_catalog.jsonb_agg(t.item || pg_catalog.jsonb_build_object('concepts', coalesce(cb.items, '[]'::jsonb))
                                order by t.n) as items
    from t
    left join concepts_by_trail cb on cb.snapshot_id = t.snapshot_id and cb.trail_id = t.id
    group by t.snapshot_id, t.domain_id
  )
  select pg_catalog.jsonb_agg(
           d.item || pg_catalog.jsonb_build_object('trails', coalesce(tb.items, '[]'::jsonb))
           order by d.n)
  into items
  from d
  left join trails_by_domain tb on tb.snapshot_id = d.snapshot_id and tb.domain_id = d.id;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, browse_catalog.page, browse_catalog.per_page));
end
$$;
comment on function api.browse_catalog(integer,integer,text,text,integer,integer,uuid) is
  'GET /discovery/browse. Params: page, per_page (max 50), domain, difficulty, trail_limit (0-20), concept_limit (0-20), snapshot_id. Returns {data: domain -> trails -> concepts tree with counts, meta}. Errors: 22023, PT404.';
grant execute on function api.browse_catalog(integer,integer,text,text,integer,integer,uuid) to anon, authenticated, service_role;
