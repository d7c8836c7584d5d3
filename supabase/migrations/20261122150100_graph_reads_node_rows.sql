-- api.get_spark_graph and api.get_learning_path read app.spark_graph_nodes
-- (20261122150000_spark_graph_nodes.sql). Same parameters, same responses byte for byte
-- (pgTAP 46-graph-body and 48-spark-graph-nodes; 40/41/47 unchanged).
--
-- The walk: one row per level (breadth first, as in 20261122110000_graph_traversal_speed.sql),
-- but a level is ONE index scan of app.spark_graph_nodes (spark_id = any(frontier)) whose rows
-- carry the parents (ancestors) or children (descendants) of the whole frontier, instead of one
-- spark_links probe per node. depth stays the shortest distance; a node already seen is never
-- walked again (cycles end).
-- The body: the reached rows are fetched with one more index scan; nodes are node_head || depth
-- || node_tail, edges the stored edges_in fragments of the reached nodes whose parent is reached
-- too (= every prerequisite link with both ends returned, for every direction), joined with
-- string_agg in the same order as before.

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
create or replace function api.get_spark_graph(
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

  -- The walk: one row per level (the nodes first reached at that depth, and all seen so far).
  with recursive
  up (depth, frontier, seen) as (
    select 0, array[root.id], array[root.id]
    where (select get_spark_graph.direction) in ('ancestors', 'both')
    union all
    select u.depth + 1, nxt.ids, u.seen || nxt.ids
    from up u
    cross join lateral (
      select coalesce(pg_catalog.array_agg(x.id), '{}')
      from (
        select pg_catalog.unnest(g.parents)
        from app.spark_graph_nodes g
        where g.snapshot_id = root.snapshot_id and g.spark_id = any (u.frontier)
        except
        select pg_catalog.unnest(u.seen)
      ) x(id)
    ) nxt(ids)
    where u.depth < get_spark_graph.max_depth and pg_catalog.cardinality(u.frontier) > 0
  ),
  down (depth, frontier, seen) as (
    select 0, array[root.id], array[root.id]
    where (select get_spark_graph.direction) in ('descendants', 'both')
    union all
    select d.depth + 1, nxt.ids, d.seen || nxt.ids
    from down d
    cross join lateral (
      select coalesce(pg_catalog.array_agg(x.id), '{}')
      from (
        select pg_catalog.unnest(g.children)
        from app.spark_graph_nodes g
        where g.snapshot_id = root.snapshot_id and g.spark_id = any (d.frontier)
        except
        select pg_catalog.unnest(d.seen)
      ) x(id)
    ) nxt(ids)
    where d.depth < get_spark_graph.max_depth and pg_catalog.cardinality(d.frontier) > 0
  ),
  -- Every reached node once, at its shortest depth.
  reached (id, depth) as materialized (
    select f.id, pg_catalog.min(f.depth)
    from (
      select n.id, u.depth from up u cross join pg_catalog.unnest(u.frontier) n(id)
      union all
      select n.id, d.depth from down d cross join pg_catalog.unnest(d.frontier) n(id)
    ) f
    group by f.id
  ),
  -- Their rows: one index scan per depth (spark_id = any of that depth's ids). The lateral
  -- keeps the plan a nested loop over the few depth groups whatever the row estimates.
  nodes as materialized (
    select b.depth, g.spark_id, g.node_head, g.node_tail, g.sort_title, g.parents, g.edges_in
    from (select r.depth, pg_catalog.array_agg(r.id) as ids from reached r group by r.depth) b
    cross join lateral (
      select g.spark_id, g.node_head, g.node_tail, g.sort_title, g.parents, g.edges_in
      from app.spark_graph_nodes g
      where g.snapshot_id = root.snapshot_id and g.spark_id = any (b.ids)
    ) g
  )
  -- concat builds each string in one allocation; chains of || would copy the growing body.
  select pg_catalog.concat(
    '{"edges": [',
    -- "(... in (...)) is true" keeps the membership test a hashed subplan (built once), never a
    -- join the planner could misplace inside the per-node loop.
    -- unnest in the select list (ProjectSet) zips the two arrays without a tuplestore per node.
    (select pg_catalog.string_agg(e.edge, ', ' order by e.source_id, e.target_id)
     from (
       select pg_catalog.unnest(n.parents) as source_id, n.spark_id as target_id, pg_catalog.unnest(n.edges_in) as edge
       from nodes n
     ) e
     where (e.source_id in (select r.id from reached r)) is true),
    '], "nodes": [',
    (select pg_catalog.string_agg(pg_catalog.concat(n.node_head, n.depth, n.node_tail), ', '
              order by n.depth, n.sort_title, n.spark_id)
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
--          Rounds come from app.spark_rounds when the import stored them, else are computed.
--          Type json: the body text as built (keys path, target_id, total_mins, skipped_count).
-- Errors:  P0002 unknown target or snapshot_id.
create or replace function api.get_learning_path(target text, skip_mastered boolean default true, snapshot_id uuid default null)
returns json
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  root record;
  stored_rounds boolean;
  ids uuid[];
  steps text[];
  titles text[];
  minutes integer[];
  rounds integer[];
  mastered uuid[] := '{}';
  caller uuid := auth.uid();
  result json;
begin
  select f.snapshot_id, f.id into root
  from private.find_spark(get_learning_path.target, private.resolve_snapshot_id(get_learning_path.snapshot_id)) f;
  if root.id is null then
    raise exception using errcode = 'P0002', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('target', get_learning_path.target)::text;
  end if;

  -- The closure, level by level: one index scan of app.spark_graph_nodes per level, whose rows
  -- give both the next level (parents) and everything the body needs (step text, order keys),
  -- carried out of the walk in arrays: no second look-up per member.
  with recursive
  walk (frontier, seen, ids, steps, titles, minutes, rounds) as (
    select array[root.id], array[root.id], '{}'::uuid[], '{}'::text[], '{}'::text[], '{}'::integer[], '{}'::integer[]
    union all
    select lv.next, w.seen || lv.next, lv.ids, lv.steps, lv.titles, lv.minutes, lv.rounds
    from walk w
    cross join lateral (
      with members as materialized (
        select g.spark_id, g.parents, g.path_step, g.sort_title, g.estimated_mins, g.round
        from app.spark_graph_nodes g
        where g.snapshot_id = root.snapshot_id and g.spark_id = any (w.frontier)
      )
      select
        (select coalesce(pg_catalog.array_agg(x.id), '{}')
         from (select pg_catalog.unnest(m.parents) from members m except select pg_catalog.unnest(w.seen)) x(id)) as next,
        a.*
      from (
        select pg_catalog.array_agg(m.spark_id) as ids, pg_catalog.array_agg(m.path_step) as steps,
          pg_catalog.array_agg(m.sort_title) as titles, pg_catalog.array_agg(m.estimated_mins) as minutes,
          pg_catalog.array_agg(m.round) as rounds
        from members m
      ) a
    ) lv
    where pg_catalog.cardinality(w.frontier) > 0
  )
  select pg_catalog.array_agg(c.id), pg_catalog.array_agg(c.step), pg_catalog.array_agg(c.title),
    pg_catalog.array_agg(c.minutes), pg_catalog.array_agg(c.round)
  into ids, steps, titles, minutes, rounds
  from walk w
  cross join rows from (pg_catalog.unnest(w.ids), pg_catalog.unnest(w.steps), pg_catalog.unnest(w.titles),
                        pg_catalog.unnest(w.minutes), pg_catalog.unnest(w.rounds)) c(id, step, title, minutes, round);

  -- Rounds stored at import (app.spark_rounds, copied into the rows) hold all or none of a
  -- snapshot's sparks: the target's tells which.
  stored_rounds := rounds[pg_catalog.array_position(ids, root.id)] is not null;
  if not stored_rounds then
    -- Kahn's algorithm in rounds, set-based: the round of a spark is the length of the longest
    -- prerequisite chain above it inside the closure (0 for sparks without prerequisites), which is
    -- exactly the round in which Kahn's algorithm frees it. The closure's links are the parents of
    -- its members (every parent of a member is a member). Cost: closure links x longest chain.
    -- Cycle guard: rounds stop growing at the closure size, and sparks that never become free
    -- (members of a cycle) take that size as their round, i.e. go last.
    with recursive
    closure_links (source_id, target_id) as materialized (
      select pg_catalog.unnest(g.parents), g.spark_id
      from app.spark_graph_nodes g
      where g.snapshot_id = root.snapshot_id and g.spark_id = any (ids)
    ),
    computed (id, round) as (
      select c.id, 0
      from pg_catalog.unnest(ids) c(id)
      where not exists (select from closure_links k where k.target_id = c.id)
      union
      select k.target_id, r.round + 1
      from computed r
      join closure_links k on k.source_id = r.id
      where r.round < pg_catalog.cardinality(ids)
    ),
    latest (id, round) as (
      select r.id, pg_catalog.max(r.round) from computed r group by r.id
    )
    -- in the order of ids: a left join by position, no per-id search
    select pg_catalog.array_agg(coalesce(l.round, pg_catalog.cardinality(ids)) order by c.ord)
    into rounds
    from pg_catalog.unnest(ids) with ordinality c(id, ord)
    left join latest l on l.id = c.id;
  end if;

  -- learning_events is readable only by signed-in users (RLS: their own rows); anon has no
  -- grant at all, so look only when this role may.
  if get_learning_path.skip_mastered and caller is not null
     and pg_catalog.has_table_privilege('app.learning_events', 'select') then
    select coalesce(pg_catalog.array_agg(distinct e.spark_id), '{}') into mastered
    from app.learning_events e
    where e.user_id = caller and e.verb = 'mastered' and e.spark_id = any (ids);
  end if;

  -- The body from the carried step texts (a member without a stored round, impossible while
  -- rounds are all or none, is left out as before).
  select pg_catalog.concat(
    '{"path": [',
    pg_catalog.string_agg(c.step, ', ' order by c.round, c.title, c.id),
    '], "target_id": "', root.id,
    '", "total_mins": ', coalesce(pg_catalog.sum(c.minutes), 0),
    ', "skipped_count": ', pg_catalog.cardinality(mastered), '}'
  )::json into result
  from rows from (pg_catalog.unnest(ids), pg_catalog.unnest(steps), pg_catalog.unnest(titles),
                  pg_catalog.unnest(minutes), pg_catalog.unnest(rounds)) c(id, step, title, minutes, round)
  where c.round is not null
    and not (c.id = any (mastered));
  return result;
end
$$;
comment on function api.get_learning_path(text, boolean, uuid) is
  'Learning path to a target spark: all prerequisite ancestors plus the target, prerequisites first (Kahn rounds, then lower(title), then id). Params: target, skip_mastered (default true), snapshot_id. Returns {target_id, path:[{slug,title,estimated_mins}], total_mins, skipped_count}. Errors: P0002 unknown target/snapshot.';
grant execute on function api.get_learning_path(text, boolean, uuid) to anon, authenticated;
