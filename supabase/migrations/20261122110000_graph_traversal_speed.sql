-- Faster graph traversal (api.get_spark_graph); same responses, byte for byte.
--
-- Measured on the 50,000-spark benchmark (docs/search-graph.md, "Performance"): a depth-10
-- ancestor walk returns ~450 nodes and ~1,150 edges. The old functions spent their time in
--   1. the walk: UNION over (node, depth) pairs re-expands a node once per distinct path
--      length that reaches it (2.2 rows per node), and the edge list then probed the link
--      index a second time for every node;
--   2. building the body: jsonb_build_object per node and edge plus jsonb_agg cost more than
--      the walk itself (about 4 us per element).
-- Now:
--   1. The walk is a recursive CTE with one row per level: the level's frontier (the nodes first
--      reached at that depth), the set already seen, and the links probed from the frontier.
--      Every reached node is probed exactly once through the edge index of its direction
--      (spark_links_target for ancestors, the primary key for descendants), so depth is the
--      shortest depth by construction (breadth first), a cycle cannot re-enter the walk, and
--      the links needed for the edge list come out of the same probes.
--   2. The body is assembled as JSON text with string_agg (to_json for strings) and returned as
--      json: the cast only checks that the text is valid JSON, no tree is built, and
--      private.dispatch (`select (<call>)::text`) sends that text unchanged. Parsing a ~230 KB
--      body into jsonb and printing it again cost about half of the database time per request.
--      The keys are written in the order jsonb printed them, with its separators, so the bytes
--      sent are the same as before (46-graph-body test). PostgREST and `supabase gen types`
--      treat json and jsonb alike. House rule: an api function returns jsonb, or json when it
--      builds its body as text for speed.
--   A function's return type cannot change in place: it is dropped and created again with the
--   same parameters, defaults, comment and grants.
-- The learning path gets the same walk and body building in 20261122110100_learning_path_rounds.sql.

drop function api.get_spark_graph(text, text, integer, uuid);

-- api.get_spark_graph
-- Purpose: the prerequisite neighbourhood of one spark.
-- Params:  slug; direction ancestors (what must be known first, default) | descendants (what it
--          unlocks) | both; max_depth 0..10 (default 3); snapshot_id (optional).
-- Returns: {root_id, direction, max_depth, nodes: [{id,slug,title,depth}], edges:
--          [{source,target,weight,type}]}. depth is the shortest number of prerequisite links
--          from the root (root 0); each node appears once; nodes ordered by depth, title, id.
--          edges are every prerequisite link whose two ends are both returned nodes, ordered by
--          source, target. Safe on cyclic data: a node already seen is never walked again.
--          Type json: the body text as built (keys edges, nodes, root_id, direction, max_depth).
-- Errors:  22023 invalid direction or max_depth; P0002 unknown slug or snapshot_id.
create function api.get_spark_graph(
  slug text,
  direction text default 'ancestors',
  max_depth integer default 3,
  snapshot_id uuid default null
)
returns json
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  root record;
  result json;
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
  -- One row per level. Row d holds the nodes first reached at depth d (frontier), every node
  -- reached so far (seen) and the links that lead into the previous level's frontier (their
  -- sources are at depth <= d). The walk probes one level past max_depth so the links between
  -- nodes of the last level are known too; that level's new nodes are not returned.
  up (depth, frontier, seen, src, tgt, w) as (
    select 0, array[root.id], array[root.id], '{}'::uuid[], '{}'::uuid[], '{}'::numeric[]
    where (select get_spark_graph.direction) in ('ancestors', 'both')
    union all
    select u.depth + 1, nxt.ids, u.seen || nxt.ids, p.src, p.tgt, p.w
    from up u
    cross join lateral (
      select pg_catalog.array_agg(l.source_id), pg_catalog.array_agg(l.target_id), pg_catalog.array_agg(l.weight)
      from pg_catalog.unnest(u.frontier) f(id)
      join app.spark_links l
        on l.snapshot_id = root.snapshot_id and l.target_id = f.id and l.type = 'prerequisite'
    ) p(src, tgt, w)
    cross join lateral (
      select coalesce(pg_catalog.array_agg(x.id), '{}')
      from (select pg_catalog.unnest(p.src) except select pg_catalog.unnest(u.seen)) x(id)
    ) nxt(ids)
    where u.depth <= get_spark_graph.max_depth and pg_catalog.cardinality(u.frontier) > 0
  ),
  down (depth, frontier, seen, src, tgt, w) as (
    select 0, array[root.id], array[root.id], '{}'::uuid[], '{}'::uuid[], '{}'::numeric[]
    where (select get_spark_graph.direction) in ('descendants', 'both')
    union all
    select d.depth + 1, nxt.ids, d.seen || nxt.ids, p.src, p.tgt, p.w
    from down d
    cross join lateral (
      select pg_catalog.array_agg(l.source_id), pg_catalog.array_agg(l.target_id), pg_catalog.array_agg(l.weight)
      from pg_catalog.unnest(d.frontier) f(id)
      join app.spark_links l
        on l.snapshot_id = root.snapshot_id and l.source_id = f.id and l.type = 'prerequisite'
    ) p(src, tgt, w)
    cross join lateral (
      select coalesce(pg_catalog.array_agg(x.id), '{}')
      from (select pg_catalog.unnest(p.tgt) except select pg_catalog.unnest(d.seen)) x(id)
    ) nxt(ids)
    where d.depth <= get_spark_graph.max_depth and pg_catalog.cardinality(d.frontier) > 0
  ),
  reached (id, depth) as (
    select r.id, pg_catalog.min(r.depth)
    from (
      select f.id, u.depth from up u cross join pg_catalog.unnest(u.frontier) f(id)
      where u.depth <= get_spark_graph.max_depth
      union all
      select f.id, d.depth from down d cross join pg_catalog.unnest(d.frontier) f(id)
      where d.depth <= get_spark_graph.max_depth
    ) r
    group by r.id
  ),
  -- One direction: the walk already probed every link that ends (ancestors) or starts
  -- (descendants) at a returned node; keep those whose other end is returned too.
  -- Both directions: a link from an ancestor to a descendant is found by neither walk, so
  -- probe the outgoing links of every returned node instead.
  probed (source_id, target_id, weight) as (
    select e.source_id, e.target_id, e.weight
    from up u cross join rows from (pg_catalog.unnest(u.src), pg_catalog.unnest(u.tgt), pg_catalog.unnest(u.w)) e(source_id, target_id, weight)
    where (select get_spark_graph.direction) = 'ancestors'
    union all
    select e.source_id, e.target_id, e.weight
    from down d cross join rows from (pg_catalog.unnest(d.src), pg_catalog.unnest(d.tgt), pg_catalog.unnest(d.w)) e(source_id, target_id, weight)
    where (select get_spark_graph.direction) = 'descendants'
    union all
    select l.source_id, l.target_id, l.weight
    from reached n
    join app.spark_links l
      on l.snapshot_id = root.snapshot_id and l.source_id = n.id and l.type = 'prerequisite'
    where (select get_spark_graph.direction) = 'both'
  ),
  edges (source_id, target_id, weight) as (
    select e.source_id, e.target_id, e.weight
    from probed e
    where e.source_id in (select r.id from reached r) and e.target_id in (select r.id from reached r)
  ),
  nodes (id, slug, title, depth) as (
    select s.id, s.slug, s.title, r.depth
    from reached r
    join app.sparks s on s.snapshot_id = root.snapshot_id and s.id = r.id
  )
  -- concat builds each string in one allocation; chains of || would copy the growing body.
  select pg_catalog.concat(
    '{"edges": [',
    (select pg_catalog.string_agg(
              pg_catalog.concat('{"type": "prerequisite", "source": "', e.source_id, '", "target": "', e.target_id,
                -- through double precision, as jsonb_build_object(..., weight::double precision) did
                '", "weight": ', e.weight::double precision, '}'),
              ', ' order by e.source_id, e.target_id)
     from edges e),
    '], "nodes": [',
    (select pg_catalog.string_agg(
              pg_catalog.concat('{"id": "', n.id, '", "slug": ', pg_catalog.to_json(n.slug), ', "depth": ', n.depth,
                ', "title": ', pg_catalog.to_json(n.title), '}'),
              ', ' order by n.depth, pg_catalog.lower(n.title), n.id)
     from nodes n),
    '], "root_id": "', root.id, '", "direction": ', pg_catalog.to_json(get_spark_graph.direction),
    ', "max_depth": ', get_spark_graph.max_depth, '}'
  )::json into result;
  return result;
end
$$;
comment on function api.get_spark_graph(text, text, integer, uuid) is
  'Prerequisite subgraph around a spark. Params: slug, direction (ancestors|descendants|both, default ancestors), max_depth (0..10, default 3), snapshot_id. Returns {root_id, direction, max_depth, nodes:[{id,slug,title,depth}], edges:[{source,target,weight,type}]}. Errors: 22023 invalid direction/max_depth, P0002 unknown slug/snapshot.';
grant execute on function api.get_spark_graph(text, text, integer, uuid) to anon, authenticated;

