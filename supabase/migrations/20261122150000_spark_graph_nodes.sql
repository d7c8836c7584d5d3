-- One maintained row per spark for the graph endpoints (issue 9): its prerequisite adjacency
-- and its JSON fragments, so a graph or path request reads one row per visited spark and
-- concatenates stored text. Same responses, byte for byte.
--
-- Measured on the 50,000-spark benchmark (docs/search-graph.md, "Performance"), a depth-10
-- ancestor request (~466 nodes, ~1,180 edges) spent its database time in three near-equal parts:
--   1. the walk: one spark_links_target probe per reached node (~2.7 index rows each);
--   2. the row fetch: one app.sparks primary-key probe per node, for slug and title;
--   3. the body: concat of two uuids and a float per edge, to_json of slug and title per node.
-- Now every spark has one row in app.spark_graph_nodes holding:
--   parents / children   the sources / targets of its prerequisite links (uuid[], by id);
--   edges_in             the JSON text of each link in parents, in the same order;
--   node_head/node_tail  the JSON text of its graph node before and after the depth value;
--   sort_title           lower(title), the node and path order after depth / round;
--   path_step            the JSON text of its learning-path step;
--   round                its Kahn round, a copy of app.spark_rounds (null when none is stored).
-- A request walks level by level with ONE index scan per level (spark_id = any(frontier)),
-- reads parents/children from the rows, fetches the reached rows with one more index scan and
-- string_aggs the stored fragments: no per-node probe of spark_links or sparks, no uuid or
-- float formatting, no to_json.
--
-- Maintenance: statement-level triggers (transition tables) on app.sparks and app.spark_links
-- rewrite the rows of every spark a statement touches (the rows of both ends of a written link,
-- the row of a written spark), set-based, so the rows always equal their derivation from the
-- two tables (pgTAP 48-spark-graph-nodes.test.sql compares them after every kind of write).
-- ENABLE ALWAYS: the content import writes with session_replication_role = replica
-- (20261122010300_content_import_scaling.sql). A snapshot's rows go with it (on delete cascade).
-- Price: ~0.9 KB per spark (the edge fragments are most of it) and one extra pass of the
-- import over its sparks and links.

create table app.spark_graph_nodes (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  spark_id uuid not null,
  parents uuid[] not null,
  edges_in text[] not null,
  children uuid[] not null,
  node_head text not null,
  node_tail text not null,
  sort_title text not null,
  path_step text not null,
  estimated_mins integer not null,
  round integer,
  primary key (snapshot_id, spark_id)
);
comment on table app.spark_graph_nodes is
  'One row per spark: prerequisite parents/children and the JSON fragments of the graph and path bodies. Maintained by triggers on app.sparks and app.spark_links (private.refresh_spark_graph_nodes).';

-- Read like the content tables: anyone reads, nobody but the owner writes.
alter table app.spark_graph_nodes enable row level security;
create policy "anyone reads spark graph nodes" on app.spark_graph_nodes for select to anon, authenticated using (true);
grant select on app.spark_graph_nodes to anon, authenticated;

-- private.refresh_spark_graph_nodes
-- Purpose: rewrites the app.spark_graph_nodes rows of the given sparks from app.sparks and
--          app.spark_links (a spark that no longer exists loses its row).
-- Params:  snapshot_ids, spark_ids: parallel arrays of keys (duplicates allowed).
-- Returns: the number of rows written.
-- The fragments are written exactly as the request functions used to build them: keys in jsonb's
-- order with its separators, strings through to_json, the weight through double precision
-- (extra_float_digits pinned so the float text is the shortest exact one, as at request time).
create function private.refresh_spark_graph_nodes(snapshot_ids uuid[], spark_ids uuid[])
returns integer
language plpgsql
volatile
set search_path = ''
set extra_float_digits = 1
set work_mem = '64MB'
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

  insert into app.spark_graph_nodes (snapshot_id, spark_id, parents, edges_in, children,
                                     node_head, node_tail, sort_title, path_step, estimated_mins, round)
  select s.snapshot_id, s.id, coalesce(p.parents, '{}'), coalesce(p.edges_in, '{}'), coalesce(c.children, '{}'),
    pg_catalog.concat('{"id": "', s.id, '", "slug": ', pg_catalog.to_json(s.slug), ', "depth": '),
    pg_catalog.concat(', "title": ', pg_catalog.to_json(s.title), '}'),
    pg_catalog.lower(s.title),
    pg_catalog.concat('{"slug": ', pg_catalog.to_json(s.slug), ', "title": ', pg_catalog.to_json(s.title),
      ', "estimated_mins": ', s.estimated_mins, '}'),
    s.estimated_mins,
    r.round
  from graph_node_keys k
  join app.sparks s on s.snapshot_id = k.snapshot_id and s.id = k.spark_id
  left join app.spark_rounds r on r.snapshot_id = s.snapshot_id and r.spark_id = s.id
  left join (
    select l.snapshot_id, l.target_id,
      pg_catalog.array_agg(l.source_id order by l.source_id) as parents,
      pg_catalog.array_agg(
        pg_catalog.concat('{"type": "prerequisite", "source": "', l.source_id, '", "target": "', l.target_id,
          '", "weight": ', l.weight::double precision, '}')
        order by l.source_id) as edges_in
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
comment on function private.refresh_spark_graph_nodes(uuid[], uuid[]) is
  'Rewrites the app.spark_graph_nodes rows of the given (snapshot_id, spark_id) keys from app.sparks and app.spark_links. Returns the rows written.';
revoke all on function private.refresh_spark_graph_nodes(uuid[], uuid[]) from public, anon, authenticated, service_role;

-- Triggers: the keys a statement touched, old and new rows alike.
create function private.sync_spark_graph_nodes_from_sparks()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  snaps uuid[];
  ids uuid[];
begin
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
revoke all on function private.sync_spark_graph_nodes_from_sparks() from public, anon, authenticated, service_role;

create function private.sync_spark_graph_nodes_from_links()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  snaps uuid[];
  ids uuid[];
begin
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
revoke all on function private.sync_spark_graph_nodes_from_links() from public, anon, authenticated, service_role;

create trigger sparks_graph_nodes_insert
  after insert on app.sparks referencing new table as new_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
create trigger sparks_graph_nodes_update
  after update on app.sparks referencing new table as new_sparks old table as old_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
create trigger sparks_graph_nodes_delete
  after delete on app.sparks referencing old table as old_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
create trigger sparks_graph_nodes_truncate
  after truncate on app.sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
create trigger spark_links_graph_nodes_insert
  after insert on app.spark_links referencing new table as new_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
create trigger spark_links_graph_nodes_update
  after update on app.spark_links referencing new table as new_links old table as old_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
create trigger spark_links_graph_nodes_delete
  after delete on app.spark_links referencing old table as old_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
create trigger spark_links_graph_nodes_truncate
  after truncate on app.spark_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();

-- The content import writes with session_replication_role = replica: fire anyway.
alter table app.sparks enable always trigger sparks_graph_nodes_insert;
alter table app.sparks enable always trigger sparks_graph_nodes_update;
alter table app.sparks enable always trigger sparks_graph_nodes_delete;
alter table app.sparks enable always trigger sparks_graph_nodes_truncate;
alter table app.spark_links enable always trigger spark_links_graph_nodes_insert;
alter table app.spark_links enable always trigger spark_links_graph_nodes_update;
alter table app.spark_links enable always trigger spark_links_graph_nodes_delete;
alter table app.spark_links enable always trigger spark_links_graph_nodes_truncate;

-- The round column mirrors app.spark_rounds (computed at import, deleted on link writes:
-- 20261122110100_learning_path_rounds.sql).
create function private.sync_spark_graph_node_rounds()
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
revoke all on function private.sync_spark_graph_node_rounds() from public, anon, authenticated, service_role;

create trigger spark_rounds_graph_nodes_insert
  after insert on app.spark_rounds referencing new table as new_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
create trigger spark_rounds_graph_nodes_update
  after update on app.spark_rounds referencing new table as new_rounds old table as old_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
create trigger spark_rounds_graph_nodes_delete
  after delete on app.spark_rounds referencing old table as old_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
create trigger spark_rounds_graph_nodes_truncate
  after truncate on app.spark_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_insert;
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_update;
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_delete;
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_truncate;

-- Sparks written before this migration.
select private.refresh_spark_graph_nodes(pg_catalog.array_agg(s.snapshot_id), pg_catalog.array_agg(s.id))
from app.sparks s
having pg_catalog.count(*) > 0;
