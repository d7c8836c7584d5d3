-- Graph: spark links, prerequisite traversal and learning paths, over node rows and rounds kept
-- per snapshot by triggers.

-- private.find_spark
-- Purpose: the spark a slug names in the selected snapshot. With no snapshot selected (nothing
--          published yet) the slug is looked up in the most recently created snapshot holding it.
create or replace function private.find_spark(slug text, snapshot uuid)
returns table(snapshot_id uuid, id uuid, title text)
language sql
stable
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
comment on function private.find_spark(text,uuid) is
  'The spark (snapshot_id, id, title) a slug names in a snapshot; with no snapshot, in the newest snapshot holding the slug.';
grant execute on function private.find_spark(text,uuid) to anon, authenticated;

-- api.list_spark_links
-- Purpose: a paginated list of spark relationships (all link types).
-- Params:  spark (slug, optional): only links touching it; direction (needs spark):
--          outgoing (spark is the source: what it leads to), incoming (spark is the target: what
--          leads to it), both (default); type (prerequisite|related|extends, optional);
--          page (1..100000, default 1); per_page (1..100, default 20); snapshot_id (optional).
-- Returns: {data: [{source: {id,slug,title}, target: {id,slug,title}, type, weight}],
--          meta: {total,page,per_page,total_pages,has_next,has_prev}}, ordered by source title,
--          target title, type, then ids.
-- Errors:  22023 invalid type, direction (or direction without spark), page or per_page;
--          PT404 unknown spark or snapshot_id.
create or replace function api.list_spark_links(spark text default null::text, type text default null::text, direction text default null::text, page integer default 1, per_page integer default 20, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_spark_links');
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
  perform private.require_range('page', list_spark_links.page, 1, 100000);
  perform private.require_range('per_page', list_spark_links.per_page, 1, 100);

  snapshot := private.resolve_snapshot_id(list_spark_links.snapshot_id);
  if list_spark_links.spark is not null then
    select f.snapshot_id, f.id into anchor_snapshot, anchor from private.find_spark(list_spark_links.spark, snapshot) f;
    if anchor is null then
      raise exception using errcode = 'PT404', message = 'spark not found',
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
             order by pg_catalog.lower(d.source_title) collate app.alphabetical, pg_catalog.lower(d.target_title) collate app.alphabetical, d.type,
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
    'meta', private.page_meta(t.n, list_spark_links.page, list_spark_links.per_page)
  ) into result
  from total t;
  return result;
end
$$;
comment on function api.list_spark_links(text,text,text,integer,integer,uuid) is
  'Paginated spark relationships. Params: spark (slug), type (prerequisite|related|extends), direction (outgoing|incoming|both, needs spark), page, per_page (max 100), snapshot_id. Returns {data:[{source:{id,slug,title},target:{id,slug,title},type,weight}], meta}. Errors: 22023 invalid parameter, PT404 unknown spark/snapshot.';
grant execute on function api.list_spark_links(text,text,text,integer,integer,uuid) to anon, authenticated, service_role;

create table app.spark_rounds (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  spark_id uuid not null,
  round integer not null check (round >= 0),
  constraint spark_rounds_pkey primary key (snapshot_id, spark_id)
);
comment on table app.spark_rounds is
  'Kahn round of every spark of an acyclic snapshot (longest prerequisite chain above it); all or none of a snapshot''s sparks. Written by private.refresh_spark_rounds.';
alter table app.spark_rounds enable row level security;
create policy "anyone reads spark rounds" on app.spark_rounds
  for select to anon, authenticated
  using (true);
grant select on app.spark_rounds to anon, authenticated;

-- private.refresh_spark_rounds
-- Purpose: (re)computes the Kahn round of every spark of one snapshot, set-based: round 0 is
--          the sparks without prerequisites; each pass frees the sparks whose last waiting
--          prerequisite was freed by the previous pass (one pass per round, each link read once).
--          The passes work on temporary tables and the rounds are written in one statement at
--          the end (a write per pass fired the graph-node trigger once per round; with a hash of
--          every link per round, the 26 rounds of a 50,000-spark import took 2.6 s, now about 1.5).
--          A snapshot with a prerequisite cycle gets no rows (its sparks never all become free).
-- Params:  snapshot_id.
-- Returns: the number of rows written (0 for a cyclic snapshot).
create or replace function private.refresh_spark_rounds(snapshot_id uuid)
returns integer
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
declare
  sid constant uuid := refresh_spark_rounds.snapshot_id;
  frontier uuid[];
  current_round integer := 0;
  written integer := 0;
begin
  delete from app.spark_rounds r where r.snapshot_id = sid;

  -- The prerequisite links, and how many prerequisites each spark still waits for.
  create temporary table round_links on commit drop as
  select l.source_id, l.target_id
  from app.spark_links l
  where l.snapshot_id = sid and l.type = 'prerequisite';
  create index on round_links (source_id);
  analyze round_links;
  create temporary table round_waiting on commit drop as
  select l.target_id as id, pg_catalog.count(*)::integer as waiting
  from round_links l
  group by l.target_id;
  alter table round_waiting add primary key (id);
  create temporary table round_found (spark_id uuid, round integer) on commit drop;

  select pg_catalog.array_agg(s.id) into frontier
  from app.sparks s
  where s.snapshot_id = sid and not exists (select from round_waiting w where w.id = s.id);

  while frontier is not null loop
    insert into round_found (spark_id, round) select f.id, current_round from pg_catalog.unnest(frontier) f(id);
    current_round := current_round + 1;
    with freed_links as (
      -- = any, not a join to unnest(frontier): the planner then probes the index instead of
      -- hashing every link once per round.
      select l.target_id, pg_catalog.count(*)::integer as n
      from round_links l
      where l.source_id = any (frontier)
      group by l.target_id
    ),
    counted as (
      update round_waiting w set waiting = w.waiting - fl.n
      from freed_links fl
      where w.id = fl.target_id
      returning w.id, w.waiting
    )
    select pg_catalog.array_agg(c.id) into frontier from counted c where c.waiting = 0;
  end loop;

  -- A cycle: its members (and what lies behind them) never became free. All or none.
  if not exists (select from round_waiting w where w.waiting > 0) then
    insert into app.spark_rounds (snapshot_id, spark_id, round)
    select sid, f.spark_id, f.round from round_found f order by f.spark_id;
    get diagnostics written = row_count;
  end if;
  drop table round_links, round_waiting, round_found;
  return written;
end
$$;
comment on function private.refresh_spark_rounds(uuid) is
  'Computes app.spark_rounds for one snapshot (Kahn rounds, set-based); writes nothing for a cyclic snapshot. Returns the rows written.';
-- The rounds it writes (one row per spark) derive from content rows of the snapshot they
-- reference: no foreign-key check to run (the tables it writes have no triggers that replica
-- would skip).
call private.skip_row_checks_where_superuser('private.refresh_spark_rounds(uuid)');

-- The import writes a snapshot's rollups (private.refresh_content_rollups) once its content is
-- in place: compute the rounds then too.
create or replace function private.fill_spark_rounds()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform private.refresh_spark_rounds(new.snapshot_id);
  return null;
end
$$;
comment on function private.fill_spark_rounds() is
  'Trigger: computes a snapshot''s spark rounds whenever its rollup row is written (at the end of an import).';

create trigger snapshot_rollups_spark_rounds
  after insert on app.snapshot_rollups
  for each row execute function private.fill_spark_rounds();

-- Any later write to prerequisite links makes a snapshot's rounds unknown again.
create or replace function private.forget_spark_rounds()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'TRUNCATE' then
    delete from app.spark_rounds;
  elsif tg_op = 'INSERT' then
    delete from app.spark_rounds r where r.snapshot_id in (select n.snapshot_id from new_links n);
  elsif tg_op = 'DELETE' then
    delete from app.spark_rounds r where r.snapshot_id in (select o.snapshot_id from old_links o);
  else
    delete from app.spark_rounds r
    where r.snapshot_id in (select n.snapshot_id from new_links n union select o.snapshot_id from old_links o);
  end if;
  return null;
end
$$;
comment on function private.forget_spark_rounds() is
  'Trigger: a write to spark_links deletes the stored spark rounds of the snapshots it touches.';

create trigger spark_links_forget_rounds_insert
  after insert on app.spark_links referencing new table as new_links
  for each statement execute function private.forget_spark_rounds();

create trigger spark_links_forget_rounds_update
  after update on app.spark_links referencing old table as old_links new table as new_links
  for each statement execute function private.forget_spark_rounds();

create trigger spark_links_forget_rounds_delete
  after delete on app.spark_links referencing old table as old_links
  for each statement execute function private.forget_spark_rounds();

create trigger spark_links_forget_rounds_truncate
  after truncate on app.spark_links
  for each statement execute function private.forget_spark_rounds();

create table app.spark_graph_nodes (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  spark_id uuid not null,
  parents uuid[] not null,
  parent_weights double precision[] not null,
  children uuid[] not null,
  slug text not null,
  title text not null,
  estimated_mins integer not null,
  round integer,
  constraint spark_graph_nodes_pkey primary key (snapshot_id, spark_id)
);
comment on table app.spark_graph_nodes is
  'One row per spark: its prerequisite parents (with the links'' weights, same order) and children, the spark fields the graph and path bodies show, and its stored round. Maintained by triggers on app.sparks, app.spark_links and app.spark_rounds (private.refresh_spark_graph_nodes).';
alter table app.spark_graph_nodes enable row level security;
create policy "anyone reads spark graph nodes" on app.spark_graph_nodes
  for select to anon, authenticated
  using (true);
grant select on app.spark_graph_nodes to anon, authenticated;

-- private.refresh_spark_graph_nodes
-- Purpose: rewrites the app.spark_graph_nodes rows of the given sparks from app.sparks,
--          app.spark_links and app.spark_rounds (a spark that no longer exists loses its row).
-- Params:  snapshot_ids, spark_ids: parallel arrays of keys (duplicates allowed).
-- Returns: the number of rows written.
create or replace function private.refresh_spark_graph_nodes(snapshot_ids uuid[], spark_ids uuid[])
returns integer
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
declare
  written integer;
begin
  create temporary table graph_node_keys on commit drop as
  select distinct k.snapshot_id, k.spark_id
  from rows from (pg_catalog.unnest(refresh_spark_graph_nodes.snapshot_ids), pg_catalog.unnest(refresh_spark_graph_nodes.spark_ids)) k(snapshot_id, spark_id);
  analyze graph_node_keys;

  delete from app.spark_graph_nodes g
  using graph_node_keys k
  where g.snapshot_id = k.snapshot_id and g.spark_id = k.spark_id;

  insert into app.spark_graph_nodes (snapshot_id, spark_id, parents, parent_weights, children,
                                     slug, title, estimated_mins, round)
  select s.snapshot_id, s.id, coalesce(p.parents, '{}'), coalesce(p.parent_weights, '{}'), coalesce(c.children, '{}'),
    s.slug, s.title, s.estimated_mins, r.round
  from graph_node_keys k
  join app.sparks s on s.snapshot_id = k.snapshot_id and s.id = k.spark_id
  left join app.spark_rounds r on r.snapshot_id = s.snapshot_id and r.spark_id = s.id
  left join (
    select l.snapshot_id, l.target_id,
      pg_catalog.array_agg(l.source_id order by l.source_id) as parents,
      pg_catalog.array_agg(l.weight::double precision order by l.source_id) as parent_weights
    from graph_node_keys k
    join app.spark_links l on l.snapshot_id = k.snapshot_id and l.target_id = k.spark_id and l.type = 'prerequisite'
    group by l.snapshot_id, l.target_id
  ) p on p.snapshot_id = s.snapshot_id and p.target_id = s.id
  left join (
    select l.snapshot_id, l.source_id, pg_catalog.array_agg(l.target_id order by l.target_id) as children
    from graph_node_keys k
    join app.spark_links l on l.snapshot_id = k.snapshot_id and l.source_id = k.spark_id and l.type = 'prerequisite'
    group by l.snapshot_id, l.source_id
  ) c on c.snapshot_id = s.snapshot_id and c.source_id = s.id;
  get diagnostics written = row_count;

  drop table graph_node_keys;
  return written;
end
$$;
comment on function private.refresh_spark_graph_nodes(uuid[],uuid[]) is
  'Rewrites the app.spark_graph_nodes rows of the given (snapshot_id, spark_id) keys from app.sparks, app.spark_links and app.spark_rounds. Returns the rows written.';

-- Triggers: the keys a statement touched, old and new rows alike.
create or replace function private.sync_spark_graph_nodes_from_sparks()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  snaps uuid[];
  ids uuid[];
begin
  if tg_op = 'INSERT' and private.content_derivation_deferred() then
    return null;
  end if;
  if tg_op = 'TRUNCATE' then
    delete from app.spark_graph_nodes;
    return null;
  elsif tg_op = 'INSERT' then
    select pg_catalog.array_agg(n.snapshot_id), pg_catalog.array_agg(n.id) into snaps, ids from new_sparks n;
  elsif tg_op = 'DELETE' then
    select pg_catalog.array_agg(o.snapshot_id), pg_catalog.array_agg(o.id) into snaps, ids from old_sparks o;
  else
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select n.snapshot_id, n.id from new_sparks n union select o.snapshot_id, o.id from old_sparks o) k;
  end if;
  if ids is not null then
    perform private.refresh_spark_graph_nodes(snaps, ids);
  end if;
  return null;
end
$$;
comment on function private.sync_spark_graph_nodes_from_sparks() is
  'Trigger: rewrites the app.spark_graph_nodes rows of the sparks a statement wrote.';

create trigger sparks_graph_nodes_insert
  after insert on app.sparks referencing new table as new_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_insert;

create trigger sparks_graph_nodes_update
  after update on app.sparks referencing old table as old_sparks new table as new_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_update;

create trigger sparks_graph_nodes_delete
  after delete on app.sparks referencing old table as old_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_delete;

create trigger sparks_graph_nodes_truncate
  after truncate on app.sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_truncate;

create or replace function private.sync_spark_graph_nodes_from_links()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  snaps uuid[];
  ids uuid[];
begin
  if tg_op = 'INSERT' and private.content_derivation_deferred() then
    return null;
  end if;
  if tg_op = 'TRUNCATE' then
    select pg_catalog.array_agg(g.snapshot_id), pg_catalog.array_agg(g.spark_id) into snaps, ids
    from app.spark_graph_nodes g
    where pg_catalog.cardinality(g.parents) > 0 or pg_catalog.cardinality(g.children) > 0;
  elsif tg_op = 'INSERT' then
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select n.snapshot_id, n.source_id as id from new_links n
          union select n.snapshot_id, n.target_id from new_links n) k;
  elsif tg_op = 'DELETE' then
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select o.snapshot_id, o.source_id as id from old_links o
          union select o.snapshot_id, o.target_id from old_links o) k;
  else
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select n.snapshot_id, n.source_id as id from new_links n
          union select n.snapshot_id, n.target_id from new_links n
          union select o.snapshot_id, o.source_id from old_links o
          union select o.snapshot_id, o.target_id from old_links o) k;
  end if;
  if ids is not null then
    perform private.refresh_spark_graph_nodes(snaps, ids);
  end if;
  return null;
end
$$;
comment on function private.sync_spark_graph_nodes_from_links() is
  'Trigger: rewrites the app.spark_graph_nodes rows of both ends of every spark link a statement wrote.';

create trigger spark_links_graph_nodes_insert
  after insert on app.spark_links referencing new table as new_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_insert;

create trigger spark_links_graph_nodes_update
  after update on app.spark_links referencing old table as old_links new table as new_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_update;

create trigger spark_links_graph_nodes_delete
  after delete on app.spark_links referencing old table as old_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_delete;

create trigger spark_links_graph_nodes_truncate
  after truncate on app.spark_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_truncate;

-- The round column mirrors app.spark_rounds (computed at import, deleted on link writes).
create or replace function private.sync_spark_graph_node_rounds()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'TRUNCATE' then
    update app.spark_graph_nodes g set round = null where g.round is not null;
  elsif tg_op = 'DELETE' then
    update app.spark_graph_nodes g set round = null
    from old_rounds o
    where g.snapshot_id = o.snapshot_id and g.spark_id = o.spark_id;
  else
    if tg_op = 'UPDATE' then
      update app.spark_graph_nodes g set round = null
      from old_rounds o
      where g.snapshot_id = o.snapshot_id and g.spark_id = o.spark_id;
    end if;
    update app.spark_graph_nodes g set round = n.round
    from new_rounds n
    where g.snapshot_id = n.snapshot_id and g.spark_id = n.spark_id;
  end if;
  return null;
end
$$;
comment on function private.sync_spark_graph_node_rounds() is
  'Trigger: copies the rounds a statement wrote to app.spark_rounds into app.spark_graph_nodes.round (null when deleted).';

create trigger spark_rounds_graph_nodes_insert
  after insert on app.spark_rounds referencing new table as new_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_insert;

create trigger spark_rounds_graph_nodes_update
  after update on app.spark_rounds referencing old table as old_rounds new table as new_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_update;

create trigger spark_rounds_graph_nodes_delete
  after delete on app.spark_rounds referencing old table as old_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_delete;

create trigger spark_rounds_graph_nodes_truncate
  after truncate on app.spark_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_truncate;

-- private.walk_spark_graph
-- Purpose: the sparks reached from a root along prerequisite links, breadth first, each once at
--          its shortest depth, with its node row. Ancestors follow `parents`, descendants
--          `children`; both walks start at the root and a spark reached by both keeps the smaller
--          depth. A spark a walk has seen is never walked again, so the walk ends on any data,
--          cycles included.
-- Params:  snapshot_id; root (spark id); ancestors, descendants (which walks);
--          max_depth (null: no limit).
-- Returns: one row per reached spark: depth and its app.spark_graph_nodes columns.
-- Cost:    one index scan of app.spark_graph_nodes per level, which reads each reached row once
--          (the walk carries the rows it read: their parents or children give the next level);
--          proportional to the visited subgraph, not to the graph.
create or replace function private.walk_spark_graph(snapshot_id uuid, root uuid, ancestors boolean, descendants boolean, max_depth integer)
returns table (depth integer, spark_id uuid, parents uuid[], parent_weights double precision[], children uuid[],
               slug text, title text, estimated_mins integer, round integer)
language sql
stable
set search_path = ''
as $$
  with recursive
  -- One row per walk and level: the node rows first reached at that depth (each read once, by one
  -- index scan per level), and the ids seen so far.
  walk (upward, depth, nodes, seen) as (
    select w.upward, 0,
      array(select g from app.spark_graph_nodes g
            where g.snapshot_id = walk_spark_graph.snapshot_id and g.spark_id = walk_spark_graph.root),
      array[walk_spark_graph.root]
    from (values (true), (false)) w(upward)
    where case when w.upward then walk_spark_graph.ancestors else walk_spark_graph.descendants end
    union all
    select w.upward, w.depth + 1, nxt.nodes, w.seen || nxt.ids
    from walk w
    cross join lateral (
      select coalesce(pg_catalog.array_agg(g), '{}'), coalesce(pg_catalog.array_agg(g.spark_id), '{}')
      from app.spark_graph_nodes g
      where g.snapshot_id = walk_spark_graph.snapshot_id
        and g.spark_id = any (array(
          select pg_catalog.unnest(case when w.upward then n.parents else n.children end)
          from pg_catalog.unnest(w.nodes) n
          except
          select pg_catalog.unnest(w.seen)))
    ) nxt(nodes, ids)
    where (walk_spark_graph.max_depth is null or w.depth < walk_spark_graph.max_depth)
      and pg_catalog.cardinality(w.nodes) > 0
  )
  -- A spark reached by both walks keeps the smaller depth.
  select distinct on (n.spark_id) w.depth, n.spark_id, n.parents, n.parent_weights, n.children, n.slug, n.title, n.estimated_mins, n.round
  from walk w cross join pg_catalog.unnest(w.nodes) n
  order by n.spark_id, w.depth
$$;
comment on function private.walk_spark_graph(uuid,uuid,boolean,boolean,integer) is
  'Breadth-first prerequisite walk from a root (ancestors, descendants or both, max_depth or unlimited): each reached spark once at its shortest depth, with its app.spark_graph_nodes row. Ends on cyclic data.';
grant execute on function private.walk_spark_graph(uuid,uuid,boolean,boolean,integer) to anon, authenticated;

-- private.compute_spark_rounds
-- Purpose: the Kahn round of each spark of a prerequisite closure, for snapshots without stored
--          rounds (content written directly, a cyclic snapshot, links written after the import).
--          The round of a spark is the length of the longest prerequisite chain above it inside
--          the closure (0 without prerequisites), which is the round in which Kahn's algorithm
--          frees it. Every parent of a member is a member. Cost: closure links x longest chain.
--          Cycle guard: rounds stop growing at the closure size, and sparks never freed (members
--          of a cycle) take that size, i.e. go last.
-- Params:  snapshot_id; ids: the closure's spark ids.
-- Returns: the rounds, in the order of ids.
create or replace function private.compute_spark_rounds(snapshot_id uuid, ids uuid[])
returns integer[]
language sql
stable
set search_path = ''
as $$
  with recursive
  closure_links (source_id, target_id) as materialized (
    select pg_catalog.unnest(g.parents), g.spark_id
    from app.spark_graph_nodes g
    where g.snapshot_id = compute_spark_rounds.snapshot_id and g.spark_id = any (compute_spark_rounds.ids)
  ),
  computed (id, round) as (
    select c.id, 0
    from pg_catalog.unnest(compute_spark_rounds.ids) c(id)
    where not exists (select from closure_links k where k.target_id = c.id)
    union
    select k.target_id, r.round + 1
    from computed r
    join closure_links k on k.source_id = r.id
    where r.round < pg_catalog.cardinality(compute_spark_rounds.ids)
  ),
  latest (id, round) as (
    select r.id, pg_catalog.max(r.round) from computed r group by r.id
  )
  -- in the order of ids: a left join by position, no per-id search
  select pg_catalog.array_agg(coalesce(l.round, pg_catalog.cardinality(compute_spark_rounds.ids)) order by c.ord)
  from pg_catalog.unnest(compute_spark_rounds.ids) with ordinality c(id, ord)
  left join latest l on l.id = c.id
$$;
comment on function private.compute_spark_rounds(uuid,uuid[]) is
  'Kahn rounds of the sparks of a prerequisite closure (longest prerequisite chain above each inside it; cycle members get the closure size), in the order of ids.';
grant execute on function private.compute_spark_rounds(uuid,uuid[]) to anon, authenticated;

-- api.get_spark_graph
-- Purpose: the prerequisite neighbourhood of one spark.
-- Params:  slug; direction ancestors (what must be known first, default) | descendants (what it
--          unlocks) | both; max_depth 0..10 (default 3); snapshot_id (optional).
-- Returns: {root_id, direction, max_depth, nodes: [{id,slug,title,depth}], edges:
--          [{source,target,weight,type}]}. depth is the shortest number of prerequisite links
--          from the root (root 0); each node appears once; nodes ordered by depth, title, id.
--          edges are every prerequisite link whose two ends are both returned nodes, ordered by
--          source, target. Safe on cyclic data (private.walk_spark_graph).
-- Errors:  22023 invalid direction or max_depth; PT404 unknown slug or snapshot_id.
create or replace function api.get_spark_graph(slug text, direction text default 'ancestors'::text, max_depth integer default 3, snapshot_id uuid default null::uuid)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('get_spark_graph');
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
    raise exception using errcode = 'PT404', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('slug', get_spark_graph.slug)::text;
  end if;

  with nodes as materialized (
    select * from private.walk_spark_graph(root.snapshot_id, root.id,
      get_spark_graph.direction in ('ancestors', 'both'), get_spark_graph.direction in ('descendants', 'both'),
      get_spark_graph.max_depth)
  )
  select pg_catalog.json_build_object(
    'root_id', root.id,
    'direction', get_spark_graph.direction,
    'max_depth', get_spark_graph.max_depth,
    -- Each node and edge is printed from a row (json_agg of the row): a json_build_object per
    -- element looked up every value's type again and took about a sixth of the call at depth 10.
    'nodes', (select pg_catalog.json_agg(n order by n.depth, pg_catalog.lower(n.title) collate app.alphabetical, n.id)
              from (select r.spark_id as id, r.slug, r.title, r.depth from nodes r) n),
    -- The links into every returned node from a returned node: for all three directions, every
    -- prerequisite link with both ends returned. "(... in (...)) is true" keeps the membership
    -- test a hashed subplan built once.
    'edges', coalesce((
      select pg_catalog.json_agg(e order by e.source, e.target)
      from (
        select pg_catalog.unnest(n.parents) as source, n.spark_id as target, pg_catalog.unnest(n.parent_weights) as weight,
               'prerequisite'::text as type
        from nodes n
      ) e
      where (e.source in (select r.spark_id from nodes r)) is true), '[]'::json)
  ) into result;
  return result;
end
$$;
comment on function api.get_spark_graph(text,text,integer,uuid) is
  'Prerequisite subgraph around a spark. Params: slug, direction (ancestors|descendants|both, default ancestors), max_depth (0..10, default 3), snapshot_id. Returns {root_id, direction, max_depth, nodes:[{id,slug,title,depth}], edges:[{source,target,weight,type}]}. Errors: 22023 invalid direction/max_depth, PT404 unknown slug/snapshot.';
grant execute on function api.get_spark_graph(text,text,integer,uuid) to anon, authenticated, service_role;

-- api.get_learning_path
-- Purpose: what to study, in order, to reach a target spark.
-- Params:  target (spark slug); skip_mastered (default true): leave out sparks the caller has a
--          `mastered` learning event for, not voided (anonymous callers have none); snapshot_id
--          (optional).
-- Returns: {target_id, path: [{slug,title,estimated_mins}], total_mins, skipped_count}.
--          path holds every prerequisite ancestor of the target (transitively) and the target.
--          Order: Kahn's algorithm in rounds. Round 0 holds the sparks with no prerequisite in
--          the set; round k those whose prerequisites all sit in earlier rounds; inside a round,
--          lower(title) then id. So every spark comes after all of its prerequisites. If the data
--          had a cycle (imports reject them) the call still ends; its members go last.
--          total_mins sums the returned steps; skipped_count counts the sparks left out.
--          Rounds come from app.spark_rounds when the import stored them, else are computed.
-- Errors:  PT404 unknown target or snapshot_id.
create or replace function api.get_learning_path(target text, skip_mastered boolean default true, snapshot_id uuid default null::uuid)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('get_learning_path');
  root record;
  ids uuid[];
  rounds integer[];
  steps json[];
  titles text[];
  minutes integer[];
  mastered uuid[] := '{}';
  caller uuid := auth.uid();
  result json;
begin
  select f.snapshot_id, f.id into root
  from private.find_spark(get_learning_path.target, private.resolve_snapshot_id(get_learning_path.snapshot_id)) f;
  if root.id is null then
    raise exception using errcode = 'PT404', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('target', get_learning_path.target)::text;
  end if;

  -- The closure: the target and all its ancestors, each with its step, order keys and round.
  select pg_catalog.array_agg(w.spark_id), pg_catalog.array_agg(w.round),
    pg_catalog.array_agg(pg_catalog.json_build_object('slug', w.slug, 'title', w.title, 'estimated_mins', w.estimated_mins)),
    pg_catalog.array_agg(pg_catalog.lower(w.title)), pg_catalog.array_agg(w.estimated_mins)
  into ids, rounds, steps, titles, minutes
  from private.walk_spark_graph(root.snapshot_id, root.id, true, false, null) w;

  -- Rounds stored at import (app.spark_rounds, copied into the rows) hold all or none of a
  -- snapshot's sparks: the target's tells which.
  if rounds[pg_catalog.array_position(ids, root.id)] is null then
    rounds := private.compute_spark_rounds(root.snapshot_id, ids);
  end if;

  -- learning_events is readable only by signed-in users (RLS: their own rows); anon has no
  -- grant at all, so look only when this role may.
  if get_learning_path.skip_mastered and caller is not null
     and pg_catalog.has_table_privilege('app.learning_events', 'select') then
    select coalesce(pg_catalog.array_agg(distinct e.spark_id), '{}') into mastered
    from app.learning_events e
    where e.user_id = caller and e.verb = 'mastered' and e.spark_id = any (ids) and e.voided_at is null;
  end if;

  select pg_catalog.json_build_object(
    'target_id', root.id,
    'path', coalesce(pg_catalog.json_agg(c.step order by c.round, c.title collate app.alphabetical, c.id)
                       filter (where not (c.id = any (mastered))), '[]'::json),
    'total_mins', coalesce(pg_catalog.sum(c.minutes) filter (where not (c.id = any (mastered))), 0),
    'skipped_count', pg_catalog.count(*) filter (where c.id = any (mastered))
  ) into result
  from rows from (pg_catalog.unnest(ids), pg_catalog.unnest(steps), pg_catalog.unnest(titles),
                  pg_catalog.unnest(minutes), pg_catalog.unnest(rounds)) c(id, step, title, minutes, round);
  return result;
end
$$;
comment on function api.get_learning_path(text,boolean,uuid) is
  'Learning path to a target spark: all prerequisite ancestors plus the target, prerequisites first (Kahn rounds, then lower(title), then id). Params: target, skip_mastered (default true), snapshot_id. Returns {target_id, path:[{slug,title,estimated_mins}], total_mins, skipped_count}. Errors: PT404 unknown target/snapshot.';
grant execute on function api.get_learning_path(text,boolean,uuid) to anon, authenticated, service_role;
