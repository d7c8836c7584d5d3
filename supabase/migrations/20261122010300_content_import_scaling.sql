-- Keep large imports (hundreds of thousands of sparks) linear.
--
-- The first find_prerequisite_cycle peeled edges with `not exists (...) or not exists (...)`.
-- An OR of correlated EXISTS cannot become an anti-join; it runs as a hashed subplan only while
-- the hash fits in work_mem, and beyond that once per row: quadratic at 1.5 million edges.
-- Two separate deletes are two anti-joins (hash or merge, spilling to disk when needed).

create or replace function private.find_prerequisite_cycle()
returns uuid[]
language plpgsql
volatile
set search_path = ''
as $$
declare
  walk uuid[] := '{}';
  node uuid;
  seen integer;
  without_predecessor bigint;
  without_successor bigint;
begin
  loop
    delete from pg_temp.content_bundle_edges e
    where not exists (select 1 from pg_temp.content_bundle_edges p where p.target = e.source);
    get diagnostics without_predecessor = row_count;
    delete from pg_temp.content_bundle_edges e
    where not exists (select 1 from pg_temp.content_bundle_edges n where n.source = e.target);
    get diagnostics without_successor = row_count;
    exit when without_predecessor + without_successor = 0;
  end loop;

  select e.source into node from pg_temp.content_bundle_edges e order by e.source limit 1;
  if node is null then
    return null;
  end if;
  if pg_catalog.to_regclass('pg_temp.content_bundle_edges_target') is null then
    create index content_bundle_edges_target on pg_temp.content_bundle_edges (target);
  end if;
  -- Every remaining node has a remaining predecessor: walk backwards until one repeats.
  loop
    seen := pg_catalog.array_position(walk, node);
    exit when seen is not null;
    walk := walk || node;
    select e.source into node from pg_temp.content_bundle_edges e where e.target = node order by e.source limit 1;
  end loop;
  -- walk[seen..] is the cycle backwards; reverse it into edge order and close it.
  walk := array(select w.id from pg_catalog.unnest(walk[seen:]) with ordinality as w(id, n) order by w.n desc);
  return walk || walk[1];
end
$$;
revoke all on function private.find_prerequisite_cycle() from public, anon, authenticated, service_role;

-- Validation and writing hash and sort whole bundles: give them room (only these functions,
-- only while they run; they execute as the owner, never for a request role).
alter function private.validate_staged_content(text, text) set work_mem = '256MB';
alter function private.write_staged_content(uuid) set work_mem = '256MB';
alter function private.find_prerequisite_cycle() set work_mem = '256MB';

-- The writer inserts rows whose every reference validate_staged_content has just resolved, so
-- the foreign-key triggers (one query per row and key: most of the write time at scale) only
-- repeat that work. Where the migrating role may (a superuser, e.g. the embedded database),
-- the writer runs with session_replication_role = replica, which skips them for its duration.
-- Elsewhere (a managed database) the checks run as usual: slower, same result.
do $$
begin
  if (select r.rolsuper from pg_catalog.pg_roles r where r.rolname = current_user) then
    alter function private.write_staged_content(uuid) set session_replication_role = replica;
  end if;
end
$$;
