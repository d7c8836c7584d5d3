-- api.get_spark_graph and api.get_learning_path return json instead of jsonb.
--
-- Both functions already build their response body as JSON text (string_agg/concat, to_json
-- for strings: 20261122110000_graph_traversal_speed.sql, 20261122110100_learning_path_rounds.sql)
-- and then cast it to jsonb, which parsed a ~230 KB document (a depth-10 ancestor walk on the
-- benchmark) into a tree and private.dispatch printed it again (`select (<call>)::text`): about
-- half of the database time per request. A json value is the text itself: the cast to json
-- only checks that it is valid JSON (no tree is built) and json's output function returns it
-- unchanged, so the API sends exactly the text built here.
--
-- The HTTP contract does not change: PostgREST (and `supabase gen types`: Json) treat json and
-- jsonb alike, and the text is built with the keys in the order jsonb printed them and the same
-- separators (", " and ": "), so the bytes sent are the same as before (46-graph-body test). Key
-- order is not part of the contract anyway. House rule amended: an api function returns jsonb,
-- or json when it builds its body as text for speed.
--
-- A function's return type cannot be changed in place: drop and recreate, with the same
-- parameters, defaults, comment and grants. Only the return type, the result variable and the
-- final cast differ from the previous definitions.

drop function api.get_spark_graph(text, text, integer, uuid);
drop function api.get_learning_path(text, boolean, uuid);

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
create function api.get_learning_path(target text, skip_mastered boolean default true, snapshot_id uuid default null)
returns json
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
  result json;
begin
  select f.snapshot_id, f.id into root
  from private.find_spark(get_learning_path.target, private.resolve_snapshot_id(get_learning_path.snapshot_id)) f;
  if root.id is null then
    raise exception using errcode = 'P0002', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('target', get_learning_path.target)::text;
  end if;

  if exists (select from app.spark_rounds r where r.snapshot_id = root.snapshot_id and r.spark_id = root.id) then
    -- Rounds stored at import (app.spark_rounds holds all or none of a snapshot's sparks): only
    -- the closure is walked, UNION on the spark alone so each member is probed once.
    with recursive
    closure (id) as (
      select root.id
      union
      select l.source_id
      from closure c
      join app.spark_links l
        on l.snapshot_id = root.snapshot_id and l.target_id = c.id and l.type = 'prerequisite'
    )
    select pg_catalog.array_agg(c.id), pg_catalog.array_agg(r.round)
    into ordered_ids, ordered_rounds
    from closure c
    -- one primary-key probe per member, never a scan of the snapshot's rounds
    cross join lateral (
      select r.round from app.spark_rounds r
      where r.snapshot_id = root.snapshot_id and r.spark_id = c.id
      limit 1
    ) r;
  else
    -- The closure is walked level by level like api.get_spark_graph's ancestors (each member
    -- probed once through spark_links_target), and the same probes give every prerequisite link
    -- inside it: exactly the links whose target is a member.
    -- Kahn's algorithm in rounds, set-based: the round of a spark is the length of the longest
    -- prerequisite chain above it inside the closure (0 for sparks without prerequisites), which is
    -- exactly the round in which Kahn's algorithm frees it. Computed top-down from the sources with
    -- UNION-deduplicated (spark, round) pairs, so the cost is (closure links) x (longest chain).
    -- Cycle guard: rounds stop growing at the closure size, and sparks that never become free
    -- (members of a cycle) take that size as their round, i.e. go last.
    with recursive
    walk (frontier, seen, src, tgt) as (
      select array[root.id], array[root.id], '{}'::uuid[], '{}'::uuid[]
      union all
      select nxt.ids, w.seen || nxt.ids, p.src, p.tgt
      from walk w
      cross join lateral (
        select pg_catalog.array_agg(l.source_id), pg_catalog.array_agg(l.target_id)
        from pg_catalog.unnest(w.frontier) f(id)
        join app.spark_links l
          on l.snapshot_id = root.snapshot_id and l.target_id = f.id and l.type = 'prerequisite'
      ) p(src, tgt)
      cross join lateral (
        select coalesce(pg_catalog.array_agg(x.id), '{}')
        from (select pg_catalog.unnest(p.src) except select pg_catalog.unnest(w.seen)) x(id)
      ) nxt(ids)
      where pg_catalog.cardinality(w.frontier) > 0
    ),
    closure (id) as (
      select f.id from walk w cross join pg_catalog.unnest(w.frontier) f(id)
    ),
    closure_size (n) as (
      select pg_catalog.count(*)::integer from closure
    ),
    closure_links (source_id, target_id) as materialized (
      select k.source_id, k.target_id
      from walk w cross join rows from (pg_catalog.unnest(w.src), pg_catalog.unnest(w.tgt)) k(source_id, target_id)
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
    select pg_catalog.array_agg(p.id), pg_catalog.array_agg(p.round)
    into ordered_ids, ordered_rounds
    from placed p;
  end if;

  -- learning_events is readable only by signed-in users (RLS: their own rows); anon has no
  -- grant at all, so look only when this role may.
  if get_learning_path.skip_mastered and caller is not null
     and pg_catalog.has_table_privilege('app.learning_events', 'select') then
    select coalesce(pg_catalog.array_agg(distinct e.spark_id), '{}') into mastered
    from app.learning_events e
    where e.user_id = caller and e.verb = 'mastered' and e.spark_id = any (ordered_ids);
  end if;

  -- The body is built as text and cast to json once: a validity check, no parse tree.
  -- One primary-key probe per step (the lateral limit keeps the planner from hashing the whole
  -- snapshot's sparks when the closure is large: cost follows the closure, not the catalog).
  with steps as (
    select o.id, s.slug, s.title, s.estimated_mins, o.round
    from rows from (pg_catalog.unnest(ordered_ids), pg_catalog.unnest(ordered_rounds)) o(id, round)
    cross join lateral (
      select s.slug, s.title, s.estimated_mins
      from app.sparks s
      where s.snapshot_id = root.snapshot_id and s.id = o.id
      limit 1
    ) s
    where not (o.id = any (mastered))
  )
  select pg_catalog.concat(
    '{"path": [',
    pg_catalog.string_agg(
      pg_catalog.concat('{"slug": ', pg_catalog.to_json(st.slug), ', "title": ', pg_catalog.to_json(st.title),
        ', "estimated_mins": ', st.estimated_mins, '}'),
      ', ' order by st.round, pg_catalog.lower(st.title), st.id),
    '], "target_id": "', root.id,
    '", "total_mins": ', coalesce(pg_catalog.sum(st.estimated_mins), 0),
    ', "skipped_count": ', pg_catalog.cardinality(mastered), '}'
  )::json into result
  from steps st;
  return result;
end
$$;
comment on function api.get_learning_path(text, boolean, uuid) is
  'Learning path to a target spark: all prerequisite ancestors plus the target, prerequisites first (Kahn rounds, then lower(title), then id). Params: target, skip_mastered (default true), snapshot_id. Returns {target_id, path:[{slug,title,estimated_mins}], total_mins, skipped_count}. Errors: P0002 unknown target/snapshot.';
grant execute on function api.get_learning_path(text, boolean, uuid) to anon, authenticated;
