-- The prerequisite graph: traversal, learning paths and the spark link list.
--
-- Edges are app.spark_links rows; source -> target reads "source must be known before target".
-- Traversal follows `prerequisite` links only: `related` has no direction and `extends` says
-- nothing about what must be known first. Ancestors walk target -> source through the
-- spark_links_target index, descendants walk source -> target through the primary key, so a
-- traversal reads only the rows of the subgraph it visits.

-- private.find_spark
-- Purpose: the spark a slug names in the selected snapshot. With no snapshot selected (nothing
--          published yet) the slug is looked up in the most recently created snapshot holding it.
create function private.find_spark(slug text, snapshot uuid)
returns table (snapshot_id uuid, id uuid, title text)
language sql
stable
security invoker
set search_path = ''
as $$
  select s.snapshot_id, s.id, s.title
  from app.sparks s
  join app.snapshots n on n.id = s.snapshot_id
  where s.slug = find_spark.slug
    and (find_spark.snapshot is null or s.snapshot_id = find_spark.snapshot)
  order by n.created_at desc, n.id
  limit 1
$$;
comment on function private.find_spark(text, uuid) is
  'The spark (snapshot_id, id, title) a slug names in a snapshot; with no snapshot, in the newest snapshot holding the slug.';
grant execute on function private.find_spark(text, uuid) to anon, authenticated;

-- api.get_spark_graph
-- Purpose: the prerequisite neighbourhood of one spark.
-- Params:  slug; direction ancestors (what must be known first, default) | descendants (what it
--          unlocks) | both; max_depth 0..10 (default 3); snapshot_id (optional).
-- Returns: {root_id, direction, max_depth, nodes: [{id,slug,title,depth}], edges:
--          [{source,target,weight,type}]}. depth is the shortest number of prerequisite links
--          from the root (root 0); each node appears once; nodes ordered by depth, title, id.
--          edges are every prerequisite link whose two ends are both returned nodes.
--          Safe on cyclic data: the walk deduplicates (node, depth) pairs and stops at max_depth.
-- Errors:  22023 invalid direction or max_depth; P0002 unknown slug or snapshot_id.
create function api.get_spark_graph(
  slug text,
  direction text default 'ancestors',
  max_depth integer default 3,
  snapshot_id uuid default null
)
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  root record;
  result jsonb;
begin
  if get_spark_graph.direction is null or get_spark_graph.direction not in ('ancestors', 'descendants', 'both') then
    raise exception using errcode = '22023', message = 'direction must be ancestors, descendants or both',
      detail = pg_catalog.jsonb_build_object('field', 'direction', 'value', get_spark_graph.direction)::text;
  end if;
  if get_spark_graph.max_depth is null or get_spark_graph.max_depth not between 0 and 10 then
    raise exception using errcode = '22023', message = 'max_depth must be between 0 and 10',
      detail = pg_catalog.jsonb_build_object('field', 'max_depth', 'value', get_spark_graph.max_depth)::text;
  end if;
  select f.snapshot_id, f.id into root
  from private.find_spark(get_spark_graph.slug, private.resolve_snapshot_id(get_spark_graph.snapshot_id)) f;
  if root.id is null then
    raise exception using errcode = 'P0002', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('slug', get_spark_graph.slug)::text;
  end if;

  with recursive
  -- UNION (not UNION ALL) drops repeated (node, depth) pairs: with max_depth this bounds the
  -- walk to (visited nodes) x (max_depth + 1) rows, cycles included.
  ancestors (id, depth) as (
    select root.id, 0 where get_spark_graph.direction in ('ancestors', 'both')
    union
    select l.source_id, a.depth + 1
    from ancestors a
    join app.spark_links l
      on l.snapshot_id = root.snapshot_id and l.target_id = a.id and l.type = 'prerequisite'
    where a.depth < get_spark_graph.max_depth
  ),
  descendants (id, depth) as (
    select root.id, 0 where get_spark_graph.direction in ('descendants', 'both')
    union
    select l.target_id, d.depth + 1
    from descendants d
    join app.spark_links l
      on l.snapshot_id = root.snapshot_id and l.source_id = d.id and l.type = 'prerequisite'
    where d.depth < get_spark_graph.max_depth
  ),
  reached as (
    select r.id, pg_catalog.min(r.depth) as depth
    from (select * from ancestors union all select * from descendants) r
    group by r.id
  ),
  nodes as (
    select s.id, s.slug, s.title, r.depth
    from reached r
    join app.sparks s on s.snapshot_id = root.snapshot_id and s.id = r.id
  ),
  edges as (
    select l.source_id, l.target_id, l.weight, l.type
    from nodes n
    join app.spark_links l
      on l.snapshot_id = root.snapshot_id and l.source_id = n.id and l.type = 'prerequisite'
    where exists (select from reached r where r.id = l.target_id)
  )
  select pg_catalog.jsonb_build_object(
    'root_id', root.id,
    'direction', get_spark_graph.direction,
    'max_depth', get_spark_graph.max_depth,
    'nodes', (select coalesce(pg_catalog.jsonb_agg(
                pg_catalog.jsonb_build_object('id', n.id, 'slug', n.slug, 'title', n.title, 'depth', n.depth)
                order by n.depth, pg_catalog.lower(n.title), n.id), '[]'::jsonb)
              from nodes n),
    'edges', (select coalesce(pg_catalog.jsonb_agg(
                pg_catalog.jsonb_build_object('source', e.source_id, 'target', e.target_id,
                  'weight', e.weight::double precision, 'type', e.type)
                order by e.source_id, e.target_id), '[]'::jsonb)
              from edges e)
  ) into result;
  return result;
end
$$;
comment on function api.get_spark_graph(text, text, integer, uuid) is
  'Prerequisite subgraph around a spark. Params: slug, direction (ancestors|descendants|both, default ancestors), max_depth (0..10, default 3), snapshot_id. Returns {root_id, direction, max_depth, nodes:[{id,slug,title,depth}], edges:[{source,target,weight,type}]}. Errors: 22023 invalid direction/max_depth, P0002 unknown slug/snapshot.';
grant execute on function api.get_spark_graph(text, text, integer, uuid) to anon, authenticated;

-- api.get_learning_path
-- Purpose: what to study, in order, to reach a target spark.
-- Params:  target (spark slug); skip_mastered (default true): leave out sparks the caller has a
--          `mastered` learning event for (anonymous callers have none); snapshot_id (optional).
-- Returns: {target_id, path: [{slug,title,estimated_mins}], total_mins, skipped_count}.
--          path holds every prerequisite ancestor of the target (transitively) and the target.
--          Order: Kahn's algorithm in rounds. Round 0 holds the sparks with no prerequisite in
--          the set; round k those whose prerequisites all sit in earlier rounds; inside a round,
--          lower(title) then id. So every spark comes after all of its prerequisites. If the data
--          had a cycle (imports reject them) the call still ends; its members go last.
--          total_mins sums the returned steps; skipped_count counts the sparks left out.
-- Errors:  P0002 unknown target or snapshot_id.
create function api.get_learning_path(target text, skip_mastered boolean default true, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  root record;
  ordered_ids uuid[];
  ordered_rounds integer[];
  mastered uuid[] := '{}';
  caller uuid := auth.uid();
  result jsonb;
begin
  select f.snapshot_id, f.id into root
  from private.find_spark(get_learning_path.target, private.resolve_snapshot_id(get_learning_path.snapshot_id)) f;
  if root.id is null then
    raise exception using errcode = 'P0002', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('target', get_learning_path.target)::text;
  end if;

  -- Kahn's algorithm in rounds, set-based: the round of a spark is the length of the longest
  -- prerequisite chain above it inside the closure (0 for sparks without prerequisites), which is
  -- exactly the round in which Kahn's algorithm frees it. Computed top-down from the sources with
  -- UNION-deduplicated (spark, round) pairs, so the cost is (closure edges) x (longest chain).
  -- Cycle guard: rounds stop growing at the closure size, and sparks that never become free
  -- (members of a cycle) take that size as their round, i.e. go last.
  with recursive
  closure (id) as (
    select root.id
    union
    select l.source_id
    from closure c
    join app.spark_links l
      on l.snapshot_id = root.snapshot_id and l.target_id = c.id and l.type = 'prerequisite'
  ),
  closure_size (n) as (
    select pg_catalog.count(*)::integer from closure
  ),
  -- Every prerequisite link inside the closure: exactly the links whose target is in it (their
  -- sources are ancestors too), found through spark_links_target one closure member at a time.
  closure_links (source_id, target_id) as materialized (
    select l.source_id, l.target_id
    from closure c
    join app.spark_links l
      on l.snapshot_id = root.snapshot_id and l.target_id = c.id and l.type = 'prerequisite'
  ),
  rounds (id, round) as (
    select c.id, 0
    from closure c
    where not exists (select from closure_links k where k.target_id = c.id)
    union
    select k.target_id, r.round + 1
    from rounds r
    join closure_links k on k.source_id = r.id
    where r.round < (select z.n from closure_size z)
  ),
  placed as (
    select c.id, coalesce(pg_catalog.max(r.round), (select z.n from closure_size z)) as round
    from closure c
    left join rounds r on r.id = c.id
    group by c.id
  )
  select pg_catalog.array_agg(p.id order by p.id), pg_catalog.array_agg(p.round order by p.id)
  into ordered_ids, ordered_rounds
  from placed p;

  -- learning_events is readable only by signed-in users (RLS: their own rows); anon has no
  -- grant at all, so look only when this role may.
  if get_learning_path.skip_mastered and caller is not null
     and pg_catalog.has_table_privilege('app.learning_events', 'select') then
    select coalesce(pg_catalog.array_agg(distinct e.spark_id), '{}') into mastered
    from app.learning_events e
    where e.user_id = caller and e.verb = 'mastered' and e.spark_id = any (ordered_ids);
  end if;

  with steps as (
    select s.id, s.slug, s.title, s.estimated_mins, o.round
    from unnest(ordered_ids, ordered_rounds) o(id, round)
    join app.sparks s on s.snapshot_id = root.snapshot_id and s.id = o.id
    where not (s.id = any (mastered))
  )
  select pg_catalog.jsonb_build_object(
    'target_id', root.id,
    'path', coalesce(pg_catalog.jsonb_agg(
              pg_catalog.jsonb_build_object('slug', st.slug, 'title', st.title, 'estimated_mins', st.estimated_mins)
              order by st.round, pg_catalog.lower(st.title), st.id), '[]'::jsonb),
    'total_mins', coalesce(pg_catalog.sum(st.estimated_mins), 0)::integer,
    'skipped_count', pg_catalog.cardinality(mastered)
  ) into result
  from steps st;
  return result;
end
$$;
comment on function api.get_learning_path(text, boolean, uuid) is
  'Learning path to a target spark: all prerequisite ancestors plus the target, prerequisites first (Kahn rounds, then lower(title), then id). Params: target, skip_mastered (default true), snapshot_id. Returns {target_id, path:[{slug,title,estimated_mins}], total_mins, skipped_count}. Errors: P0002 unknown target/snapshot.';
grant execute on function api.get_learning_path(text, boolean, uuid) to anon, authenticated;

-- api.list_spark_links
-- Purpose: a paginated list of spark relationships (all link types).
-- Params:  spark (slug, optional): only links touching it; direction (needs spark):
--          outgoing (spark is the source: what it leads to), incoming (spark is the target: what
--          leads to it), both (default); type (prerequisite|related|extends, optional);
--          page (>= 1, default 1); per_page (1..100, default 20); snapshot_id (optional).
-- Returns: {data: [{source: {id,slug,title}, target: {id,slug,title}, type, weight}],
--          meta: {total,page,per_page,total_pages,has_next,has_prev}}, ordered by source title,
--          target title, type, then ids.
-- Errors:  22023 invalid type, direction (or direction without spark), page or per_page;
--          P0002 unknown spark or snapshot_id.
create function api.list_spark_links(
  spark text default null,
  type text default null,
  direction text default null,
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
  snapshot uuid;
  anchor_snapshot uuid;
  anchor uuid;
  result jsonb;
begin
  if list_spark_links.type is not null and list_spark_links.type not in ('prerequisite', 'related', 'extends') then
    raise exception using errcode = '22023', message = 'type must be prerequisite, related or extends',
      detail = pg_catalog.jsonb_build_object('field', 'type', 'value', list_spark_links.type)::text;
  end if;
  if list_spark_links.direction is not null and list_spark_links.direction not in ('outgoing', 'incoming', 'both') then
    raise exception using errcode = '22023', message = 'direction must be outgoing, incoming or both',
      detail = pg_catalog.jsonb_build_object('field', 'direction', 'value', list_spark_links.direction)::text;
  end if;
  if list_spark_links.direction is not null and list_spark_links.spark is null then
    raise exception using errcode = '22023', message = 'direction needs a spark',
      detail = pg_catalog.jsonb_build_object('field', 'direction')::text;
  end if;
  if list_spark_links.page is null or list_spark_links.page < 1 then
    raise exception using errcode = '22023', message = 'page must be at least 1',
      detail = pg_catalog.jsonb_build_object('field', 'page')::text;
  end if;
  if list_spark_links.per_page is null or list_spark_links.per_page not between 1 and 100 then
    raise exception using errcode = '22023', message = 'per_page must be between 1 and 100',
      detail = pg_catalog.jsonb_build_object('field', 'per_page')::text;
  end if;

  snapshot := private.resolve_snapshot_id(list_spark_links.snapshot_id);
  if list_spark_links.spark is not null then
    select f.snapshot_id, f.id into anchor_snapshot, anchor from private.find_spark(list_spark_links.spark, snapshot) f;
    if anchor is null then
      raise exception using errcode = 'P0002', message = 'spark not found',
        detail = pg_catalog.jsonb_build_object('spark', list_spark_links.spark)::text;
    end if;
    snapshot := anchor_snapshot;
  end if;

  with links as (
    -- outgoing: the primary key (snapshot_id, source_id, ...) serves it
    select l.* from app.spark_links l
    where anchor is not null and coalesce(list_spark_links.direction, 'both') in ('outgoing', 'both')
      and l.snapshot_id = snapshot and l.source_id = anchor
    union all
    -- incoming: spark_links_target (snapshot_id, target_id, source_id) serves it
    select l.* from app.spark_links l
    where anchor is not null and coalesce(list_spark_links.direction, 'both') in ('incoming', 'both')
      and l.snapshot_id = snapshot and l.target_id = anchor
    union all
    select l.* from app.spark_links l
    where anchor is null and (snapshot is null or l.snapshot_id = snapshot)
  ),
  filtered as (
    select l.* from links l
    where list_spark_links.type is null or l.type = list_spark_links.type
  ),
  described as (
    select f.snapshot_id, f.type, f.weight,
           src.id as source_id, src.slug as source_slug, src.title as source_title,
           dst.id as target_id, dst.slug as target_slug, dst.title as target_title
    from filtered f
    join app.sparks src on src.snapshot_id = f.snapshot_id and src.id = f.source_id
    join app.sparks dst on dst.snapshot_id = f.snapshot_id and dst.id = f.target_id
  ),
  page_rows as (
    select d.*, pg_catalog.row_number() over (
             order by pg_catalog.lower(d.source_title), pg_catalog.lower(d.target_title), d.type,
                      d.source_id, d.target_id, d.snapshot_id) as position
    from described d
    order by position
    offset (list_spark_links.page - 1) * list_spark_links.per_page
    limit list_spark_links.per_page
  ),
  total as (select pg_catalog.count(*)::integer as n from filtered)
  select pg_catalog.jsonb_build_object(
    'data', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'source', pg_catalog.jsonb_build_object('id', p.source_id, 'slug', p.source_slug, 'title', p.source_title),
               'target', pg_catalog.jsonb_build_object('id', p.target_id, 'slug', p.target_slug, 'title', p.target_title),
               'type', p.type,
               'weight', p.weight::double precision)
             order by p.position)
      from page_rows p), '[]'::jsonb),
    'meta', pg_catalog.jsonb_build_object(
      'total', t.n,
      'page', list_spark_links.page,
      'per_page', list_spark_links.per_page,
      'total_pages', (t.n + list_spark_links.per_page - 1) / list_spark_links.per_page,
      'has_next', list_spark_links.page * list_spark_links.per_page < t.n,
      'has_prev', list_spark_links.page > 1)
  ) into result
  from total t;
  return result;
end
$$;
comment on function api.list_spark_links(text, text, text, integer, integer, uuid) is
  'Paginated spark relationships. Params: spark (slug), type (prerequisite|related|extends), direction (outgoing|incoming|both, needs spark), page, per_page (max 100), snapshot_id. Returns {data:[{source:{id,slug,title},target:{id,slug,title},type,weight}], meta}. Errors: 22023 invalid parameter, P0002 unknown spark/snapshot.';
grant execute on function api.list_spark_links(text, text, text, integer, integer, uuid) to anon, authenticated;
