-- Kahn rounds of every spark, computed once per imported snapshot, for api.get_learning_path.
--
-- The learning path orders a target's ancestor closure by Kahn round: the length of the longest
-- prerequisite chain above a spark. The closure holds every ancestor of each of its members,
-- so that chain lies inside it: the round of a spark is the same in every closure that contains
-- it, and for the whole snapshot. Computing it per request (a propagation over the closure's
-- links, about a third of the request on the benchmark's 500-spark closures) is therefore
-- repeated work. Imported snapshots never change and are acyclic (the import rejects cycles),
-- so the import now stores every spark's round in app.spark_rounds, and the path reads it.
--
-- Fallback: a snapshot without rounds (content written directly, as the tests do, a snapshot
-- with a cycle, or one whose links changed after the import) is served by the per-request
-- computation, with the same result. Any write to a snapshot's prerequisite links deletes its
-- rounds (statement trigger), so stored rounds are never stale.
--
-- api.get_learning_path is rewritten here too (same response, byte for byte): with stored
-- rounds it only walks the closure; without them it walks the closure level by level collecting
-- the closure's links in the same probes (as api.get_spark_graph does, instead of probing every
-- member twice) and propagates rounds over them; either way the body is built as text and
-- returned as json (no jsonb re-parse, as in 20261122110000_graph_traversal_speed.sql).

create table app.spark_rounds (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  spark_id uuid not null,
  round integer not null check (round >= 0),
  primary key (snapshot_id, spark_id)
);
comment on table app.spark_rounds is
  'Kahn round of every spark of an acyclic snapshot (longest prerequisite chain above it); all or none of a snapshot''s sparks. Written by private.refresh_spark_rounds.';

-- Read like the content tables: anyone reads, nobody but the owner writes.
alter table app.spark_rounds enable row level security;
create policy "anyone reads spark rounds" on app.spark_rounds for select to anon, authenticated using (true);
grant select on app.spark_rounds to anon, authenticated;

-- private.refresh_spark_rounds
-- Purpose: (re)computes the Kahn round of every spark of one snapshot, set-based: round 0 is
--          the sparks without prerequisites; each pass frees the sparks whose last waiting
--          prerequisite was freed by the previous pass (one pass per round, each link read once).
--          A snapshot with a prerequisite cycle gets no rows (its sparks never all become free).
-- Params:  snapshot_id.
-- Returns: the number of rows written (0 for a cyclic snapshot).
create function private.refresh_spark_rounds(snapshot_id uuid)
returns integer
language plpgsql
volatile
set search_path = ''
-- 500,000 sparks: keep the grouping and the hash joins in memory.
set work_mem = '64MB'
as $$
declare
  sid constant uuid := refresh_spark_rounds.snapshot_id;
  frontier uuid[];
  current_round integer := 0;
  written integer;
  spark_total integer;
begin
  delete from app.spark_rounds r where r.snapshot_id = sid;

  -- How many prerequisites each spark still waits for.
  create temporary table round_waiting on commit drop as
  select l.target_id as id, pg_catalog.count(*)::integer as waiting
  from app.spark_links l
  where l.snapshot_id = sid and l.type = 'prerequisite'
  group by l.target_id;
  alter table round_waiting add primary key (id);

  insert into app.spark_rounds (snapshot_id, spark_id, round)
  select sid, s.id, 0
  from app.sparks s
  where s.snapshot_id = sid and not exists (select from round_waiting w where w.id = s.id);
  select pg_catalog.array_agg(r.spark_id) into frontier
  from app.spark_rounds r where r.snapshot_id = sid;

  while frontier is not null loop
    current_round := current_round + 1;
    with freed_links as (
      select l.target_id, pg_catalog.count(*)::integer as n
      from pg_catalog.unnest(frontier) f(id)
      join app.spark_links l on l.snapshot_id = sid and l.source_id = f.id and l.type = 'prerequisite'
      group by l.target_id
    ),
    counted as (
      update round_waiting w set waiting = w.waiting - fl.n
      from freed_links fl
      where w.id = fl.target_id
      returning w.id, w.waiting
    )
    select pg_catalog.array_agg(c.id) into frontier from counted c where c.waiting = 0;
    insert into app.spark_rounds (snapshot_id, spark_id, round)
    select sid, f.id, current_round from pg_catalog.unnest(frontier) f(id);
  end loop;

  drop table round_waiting;
  select pg_catalog.count(*)::integer into written from app.spark_rounds r where r.snapshot_id = sid;
  select pg_catalog.count(*)::integer into spark_total from app.sparks s where s.snapshot_id = sid;
  if written < spark_total then
    -- A cycle: its members (and what lies behind them) never became free. All or none.
    delete from app.spark_rounds r where r.snapshot_id = sid;
    written := 0;
  end if;
  return written;
end
$$;
comment on function private.refresh_spark_rounds(uuid) is
  'Computes app.spark_rounds for one snapshot (Kahn rounds, set-based); writes nothing for a cyclic snapshot. Returns the rows written.';
revoke all on function private.refresh_spark_rounds(uuid) from public, anon, authenticated, service_role;

-- The import writes a snapshot's rollups (private.refresh_content_rollups) once its content is
-- in place: compute the rounds then too.
create function private.fill_spark_rounds()
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
revoke all on function private.fill_spark_rounds() from public, anon, authenticated, service_role;

create trigger snapshot_rollups_spark_rounds
  after insert on app.snapshot_rollups
  for each row execute function private.fill_spark_rounds();

-- Any later write to prerequisite links makes a snapshot's rounds unknown again.
create function private.forget_spark_rounds()
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
revoke all on function private.forget_spark_rounds() from public, anon, authenticated, service_role;

create trigger spark_links_forget_rounds_insert
  after insert on app.spark_links referencing new table as new_links
  for each statement execute function private.forget_spark_rounds();
create trigger spark_links_forget_rounds_update
  after update on app.spark_links referencing new table as new_links old table as old_links
  for each statement execute function private.forget_spark_rounds();
create trigger spark_links_forget_rounds_delete
  after delete on app.spark_links referencing old table as old_links
  for each statement execute function private.forget_spark_rounds();
create trigger spark_links_forget_rounds_truncate
  after truncate on app.spark_links
  for each statement execute function private.forget_spark_rounds();


-- Returns json, built as text: see 20261122110000_graph_traversal_speed.sql.
drop function api.get_learning_path(text, boolean, uuid);

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

-- Snapshots imported before this migration.
select private.refresh_spark_rounds(r.snapshot_id) from app.snapshot_rollups r;
