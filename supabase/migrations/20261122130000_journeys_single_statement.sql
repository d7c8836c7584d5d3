-- Journeys: each api read is one SQL statement that builds the body as JSON text.
--
-- Same rules and same bytes as 20261122120000_journeys_per_user_progress.sql (which kept the
-- reference views of 20261122030000_journeys.sql as the contract); only how the work is done
-- changes. Progress is still derived from the caller's learning events on every read: nothing
-- per user is stored (spec: "Progress is derived from learning events and is not a stored
-- column").
--
-- Where the time went (base dataset, warm session, EXPLAIN ANALYZE): a list of 4 journeys and a
-- detail of a 275-spark trail each cost ~1.2 ms of executor time for ~80 and ~25 buffer hits:
-- the work was CPU, not rows read. It was spent in
--   1. helper calls: every private helper has `set search_path = ''`, so none can be inlined;
--      a list made ~14 function calls (journey_summaries, per enrollment trail_spark_positions
--      (plpgsql: an exists probe, then RETURN QUERY into a tuplestore), journey_progress_row
--      (plus a concept lookup the list never shows), journey_list_item), each with its own
--      executor start-up and a search_path GUC save/restore;
--   2. building jsonb: jsonb_build_object per spark (~275 per detail) then jsonb_agg, `||` and
--      finally jsonb -> text in the dispatcher: about 3 us per spark.
-- Now:
--   1. private.journey_list_json and private.journey_detail_json are each one statement with
--      no helper calls: the caller's events aggregated per spark once (index-only range of
--      learning_events_natural_key), the enrollment(s) with their trail's snapshot (the rule of
--      app.journey_trails, written out), and the trail's stored spark positions: spark ids only,
--      index-only from the new (snapshot_id, trail_id, spark_id) index, for the list; the
--      primary-key range for the detail. A snapshot without rollups is derived on the fly by
--      private.derive_trail_spark_positions, behind a per-enrollment rolled_up flag (a gating
--      qual: the stored case never runs it).
--   2. The body is JSON text assembled with string_agg (to_json for strings and timestamps),
--      returned as json: the keys are written in the order jsonb printed them, with its
--      separators, so the bytes sent are the same as before. Each stored position carries its
--      not-started spark_progress element (progress_json, content like the title), so a detail
--      builds an element only for the sparks the caller has events on.
-- The api functions keep their names, parameters, errors and comments; their return type
-- becomes json (house rule: jsonb, or json when the body is built as text), so they are dropped
-- and created again with the same grants. api.enroll_in_trail keeps jsonb.
--
-- Measured (journeys2_1x / journeys2_10x copies of the benchmark datasets, the bench's sampling
-- of 16 (user, enrollment) pairs; old and new functions side by side in the same database,
-- runs interleaved on the shared 2-core machine):
--   backend CPU per call through private.dispatch (/proc/<pid>/schedstat over 320 calls):
--     list    1x  ~950 -> ~400 us     10x  ~1,000 -> ~410 us
--     detail  1x ~1,250 -> ~440 us    10x  ~1,300 -> ~460 us
--   pgbench -M prepared -c 8 -j 2 of the API's statement (R2 shape), 8 s:
--     list    1x  1,610-1,720 -> 3,220-3,530 calls/s, p95 8.4-9.8 -> 4.3-5.4 ms
--     detail  1x  1,210-1,320 -> 2,590-2,650 calls/s, p95 10.7-12.0 -> 6.1-6.6 ms
--     list   10x  1,560 -> 3,060 calls/s;  detail 10x  1,140 -> 2,580 calls/s
-- supabase/tests/32-journeys-per-user-progress.test.sql and
-- supabase/tests/33-journeys-single-statement.test.sql prove the bodies equal the reference
-- views byte for byte.

-- ---------------------------------------------------------------------------------------------
-- Content: each position's not-started spark_progress element, and a (trail, spark) index
-- ---------------------------------------------------------------------------------------------

-- A spark_progress element depends on the learner only through status and completed_at, and most
-- sparks of a trail are not started by a given learner. The element of a not-started spark is
-- content: it is stored with the position, so a detail concatenates stored text for those and
-- builds an element only for the sparks the caller has events on.
alter table app.trail_spark_positions add column progress_json text;
comment on column app.trail_spark_positions.progress_json is
  'The spark_progress element of this spark for a learner who has not started it: {"title", "status": "not_started", "spark_id", "completed_at": null} as JSON text, keys in jsonb order.';

-- private.spark_progress_json
-- Purpose: one spark_progress element as JSON text (keys in jsonb order: title, status,
--          spark_id, completed_at), for stored positions and the derived fallback.
-- Params:  title, spark_id, status (not_started | in_progress | completed), completed_at.
-- Returns: text.
create function private.spark_progress_json(title text, spark_id uuid, status text, completed_at timestamptz)
returns text
language sql
stable
security invoker
set search_path = ''
as $$
  select '{"title": ' || pg_catalog.to_json(spark_progress_json.title)::text
    || ', "status": "' || spark_progress_json.status
    || '", "spark_id": "' || spark_progress_json.spark_id::text
    || '", "completed_at": ' || coalesce(pg_catalog.to_json(spark_progress_json.completed_at)::text, 'null') || '}'
$$;
comment on function private.spark_progress_json(text, uuid, text, timestamptz) is
  'One spark_progress element {title, status, spark_id, completed_at} as JSON text in jsonb key order.';
grant execute on function private.spark_progress_json(text, uuid, text, timestamptz) to anon, authenticated;

update app.trail_spark_positions p
set progress_json = private.spark_progress_json(p.spark_title, p.spark_id, 'not_started', null);
alter table app.trail_spark_positions alter column progress_json set not null;

-- The list counts a trail's sparks against the caller's: an index-only range of spark ids.
create unique index trail_spark_positions_trail_spark
  on app.trail_spark_positions (snapshot_id, trail_id, spark_id);

-- Same trigger function as 20261122120000, now also writing progress_json: the expression of
-- private.spark_progress_json written out (a call per row costs ~7 us, ~4 s for the 500,000
-- positions of the 10x benchmark import; inline ~0.7 us). 33-journeys-single-statement proves
-- the stored text equal to the jsonb printing.
create or replace function private.fill_trail_spark_positions()
returns trigger
language plpgsql
set search_path = ''
-- 500,000 placements: keep the distinct and the sort in memory.
set work_mem = '64MB'
as $$
begin
  delete from app.trail_spark_positions p where p.snapshot_id = new.snapshot_id;
  insert into app.trail_spark_positions (snapshot_id, trail_id, ordinal, spark_id, concept_id, spark_title, progress_json)
  select new.snapshot_id, d.trail_id, d.ordinal, d.spark_id, d.concept_id, d.spark_title,
    '{"title": ' || pg_catalog.to_json(d.spark_title)::text
      || ', "status": "not_started", "spark_id": "' || d.spark_id::text || '", "completed_at": null}'
  from private.derive_trail_spark_positions(new.snapshot_id, null) d
  order by d.trail_id, d.ordinal;
  return null;
end
$$;
comment on function private.fill_trail_spark_positions() is
  'Trigger: (re)computes a snapshot''s app.trail_spark_positions (with each not-started spark_progress element) whenever its app.snapshot_rollups row is written.';
revoke all on function private.fill_trail_spark_positions() from public, anon, authenticated, service_role;

-- ---------------------------------------------------------------------------------------------
-- private.journey_list_json
-- ---------------------------------------------------------------------------------------------

-- private.journey_list_json
-- Purpose: the {data: UserJourneyListItem[]} body of the caller's journeys, as JSON text.
-- Params:  status  null (all) | not_started | in_progress | completed (validated by the caller)
--          sort    recent | progress | started (validated by the caller)
-- Returns: json, keys in jsonb order. Rules: docs/journeys.md "How progress is derived" (the
--          reference views of 20261122030000_journeys.sql).
create function private.journey_list_json(status text, sort text)
returns json
language sql
stable
security invoker
set search_path = ''
as $$
  with states as materialized (
    select
      le.spark_id,
      pg_catalog.min(le.occurred_at) filter (where le.verb in ('completed', 'mastered')) as completed_at,
      pg_catalog.bool_or(le.verb = 'started') as started,
      pg_catalog.max(le.occurred_at) as last_event_at
    from app.learning_events le
    where le.user_id = (select auth.uid())
    group by le.spark_id
  ),
  journeys as (
    select
      e.id, e.user_id, e.trail_id, e.started_at,
      t.slug, t.title, t.difficulty_level,
      a.total_sparks, a.completed_sparks,
      case
        when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then 'completed'
        when a.touched_sparks > 0 then 'in_progress'
        else 'not_started'
      end as status,
      case when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then a.last_completed_at end as completed_at,
      coalesce(a.last_event_at, e.started_at) as last_activity_at
    from app.enrollments e
    cross join lateral (
      select tr.snapshot_id, tr.slug, tr.title, tr.difficulty_level,
        exists (select from app.snapshot_rollups r where r.snapshot_id = tr.snapshot_id) as rolled_up
      from app.trails tr
      join app.snapshots s on s.id = tr.snapshot_id
      where tr.id = e.trail_id
        and s.status in ('published', 'archived')
      order by (s.status = 'published') desc, s.published_at desc nulls last, s.created_at desc, s.id
      limit 1
    ) t
    cross join lateral (
      select
        pg_catalog.count(*)::integer as total_sparks,
        (pg_catalog.count(*) filter (where st.completed_at is not null))::integer as completed_sparks,
        (pg_catalog.count(*) filter (where st.completed_at is not null or st.started))::integer as touched_sparks,
        pg_catalog.max(st.completed_at) as last_completed_at,
        pg_catalog.max(st.last_event_at) as last_event_at
      from (
        select p.spark_id
        from app.trail_spark_positions p
        where t.rolled_up and p.snapshot_id = t.snapshot_id and p.trail_id = e.trail_id
        union all
        select d.spark_id
        from private.derive_trail_spark_positions(t.snapshot_id, e.trail_id) d
        where not t.rolled_up
      ) p
      left join states st on st.spark_id = p.spark_id
    ) a
    where e.user_id = (select auth.uid())
  )
  select ('{"data": [' || coalesce(pg_catalog.string_agg(
      '{"id": "' || j.id::text
      || '", "trail": {"id": "' || j.trail_id::text
      || '", "slug": ' || pg_catalog.to_json(j.slug)::text
      || ', "title": ' || pg_catalog.to_json(j.title)::text
      || ', "difficulty_level": ' || coalesce(pg_catalog.to_json(j.difficulty_level)::text, 'null')
      || '}, "status": "' || j.status
      || '", "user_id": "' || j.user_id::text
      || '", "trail_id": "' || j.trail_id::text
      || '", "started_at": ' || pg_catalog.to_json(j.started_at)::text
      || ', "completed_at": ' || coalesce(pg_catalog.to_json(j.completed_at)::text, 'null')
      || ', "total_sparks": ' || j.total_sparks::text
      || ', "completed_sparks": ' || j.completed_sparks::text
      || ', "last_activity_at": ' || pg_catalog.to_json(j.last_activity_at)::text
      || ', "progress_percent": '
      || (case when j.total_sparks > 0 then (100 * j.completed_sparks) / j.total_sparks else 0 end)::text
      || '}',
      ', '
      order by
        case when journey_list_json.sort = 'recent' then j.last_activity_at end desc nulls last,
        case when journey_list_json.sort = 'progress'
          then j.completed_sparks::numeric / nullif(j.total_sparks, 0) end desc nulls last,
        case when journey_list_json.sort = 'started' then j.started_at end desc nulls last,
        j.last_activity_at desc, j.started_at desc, j.id), '') || ']}')::json
  from journeys j
  where journey_list_json.status is null or j.status = journey_list_json.status
$$;
comment on function private.journey_list_json(text, text) is
  'The caller''s journeys as {data: UserJourneyListItem[]} JSON text (status filter, sort), in one statement.';
grant execute on function private.journey_list_json(text, text) to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- private.journey_detail_json
-- ---------------------------------------------------------------------------------------------

-- private.journey_detail_json
-- Purpose: the UserJourneyDetail body of one of the caller's enrollments, as JSON text, in one
--          pass over the trail's spark positions (figures, current concept, spark_progress).
-- Params:  enrollment  an enrollment id.
-- Returns: json, keys in jsonb order; null when the caller has no visible enrollment with this id.
create function private.journey_detail_json(enrollment uuid)
returns json
language sql
stable
security invoker
set search_path = ''
as $$
  with states as materialized (
    select
      le.spark_id,
      pg_catalog.min(le.occurred_at) filter (where le.verb in ('completed', 'mastered')) as completed_at,
      pg_catalog.bool_or(le.verb = 'started') as started,
      pg_catalog.max(le.occurred_at) as last_event_at
    from app.learning_events le
    where le.user_id = (select auth.uid())
    group by le.spark_id
  )
  select (
    '{"id": "' || e.id::text
    || '", "trail": {"id": "' || e.trail_id::text
    || '", "slug": ' || pg_catalog.to_json(t.slug)::text
    || ', "title": ' || pg_catalog.to_json(t.title)::text
    || ', "difficulty_level": ' || coalesce(pg_catalog.to_json(t.difficulty_level)::text, 'null')
    || '}, "status": "' || f.status
    || '", "user_id": "' || e.user_id::text
    || '", "trail_id": "' || e.trail_id::text
    || '", "started_at": ' || pg_catalog.to_json(e.started_at)::text
    || ', "completed_at": ' || coalesce(pg_catalog.to_json(f.completed_at)::text, 'null')
    || ', "total_sparks": ' || a.total_sparks::text
    -- the long spark list is copied twice (here and by the one concatenation after it), not
    -- once per key that follows it
    || ', "spark_progress": [' || coalesce(a.spark_progress, '')
    || ('], "current_concept": ' || coalesce(
         '{"id": "' || c.id::text
         || '", "slug": ' || pg_catalog.to_json(c.slug)::text
         || ', "title": ' || pg_catalog.to_json(c.title)::text || '}', 'null')
    || ', "completed_sparks": ' || a.completed_sparks::text
    || ', "last_activity_at": ' || pg_catalog.to_json(coalesce(a.last_event_at, e.started_at))::text
    || ', "progress_percent": '
    || (case when a.total_sparks > 0 then (100 * a.completed_sparks) / a.total_sparks else 0 end)::text
    || '}'))::json
  from app.enrollments e
  cross join lateral (
    select tr.snapshot_id, tr.slug, tr.title, tr.difficulty_level,
      exists (select from app.snapshot_rollups r where r.snapshot_id = tr.snapshot_id) as rolled_up
    from app.trails tr
    join app.snapshots s on s.id = tr.snapshot_id
    where tr.id = e.trail_id
      and s.status in ('published', 'archived')
    order by (s.status = 'published') desc, s.published_at desc nulls last, s.created_at desc, s.id
    limit 1
  ) t
  cross join lateral (
    select
      pg_catalog.count(*)::integer as total_sparks,
      (pg_catalog.count(*) filter (where st.completed_at is not null))::integer as completed_sparks,
      (pg_catalog.count(*) filter (where st.completed_at is not null or st.started))::integer as touched_sparks,
      pg_catalog.max(st.completed_at) as last_completed_at,
      pg_catalog.max(st.last_event_at) as last_event_at,
      (pg_catalog.array_agg(p.concept_id order by p.ordinal) filter (where st.completed_at is null))[1] as current_concept_id,
      -- The stored not-started element, or (a spark the caller has events on) the element built
      -- the way private.spark_progress_json builds it, inline: no call per spark.
      pg_catalog.string_agg(
        case when st.spark_id is null then p.progress_json else
          '{"title": ' || pg_catalog.to_json(p.spark_title)::text
          || ', "status": "' || case
               when st.completed_at is not null then 'completed'
               when st.started then 'in_progress'
               else 'not_started'
             end
          || '", "spark_id": "' || p.spark_id::text
          || '", "completed_at": ' || coalesce(pg_catalog.to_json(st.completed_at)::text, 'null') || '}'
        end,
        ', ' order by p.ordinal) as spark_progress
    from (
      select p.ordinal, p.spark_id, p.concept_id, p.spark_title, p.progress_json
      from app.trail_spark_positions p
      where t.rolled_up and p.snapshot_id = t.snapshot_id and p.trail_id = e.trail_id
      union all
      select d.ordinal, d.spark_id, d.concept_id, d.spark_title,
        private.spark_progress_json(d.spark_title, d.spark_id, 'not_started', null)
      from private.derive_trail_spark_positions(t.snapshot_id, e.trail_id) d
      where not t.rolled_up
    ) p
    left join states st on st.spark_id = p.spark_id
  ) a
  cross join lateral (
    select
      case
        when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then 'completed'
        when a.touched_sparks > 0 then 'in_progress'
        else 'not_started'
      end as status,
      case when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then a.last_completed_at end as completed_at
  ) f
  left join app.concepts c on c.snapshot_id = t.snapshot_id and c.id = a.current_concept_id
  where e.id = journey_detail_json.enrollment and e.user_id = (select auth.uid())
$$;
comment on function private.journey_detail_json(uuid) is
  'UserJourneyDetail JSON text of one of the caller''s enrollments (null when not visible), in one statement and one pass over the trail''s sparks.';
grant execute on function private.journey_detail_json(uuid) to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- api functions (same names, parameters, errors; json instead of jsonb)
-- ---------------------------------------------------------------------------------------------

drop function api.list_user_journeys(text, text);
drop function api.get_user_journey(uuid);

-- api.list_user_journeys
-- Purpose: the caller's enrollments with derived progress (only the caller's rows).
-- Params:  status  null (all) | not_started | in_progress | completed
--          sort    recent (last_activity_at desc, default) | progress (completion ratio desc)
--                  | started (started_at desc); ties: last_activity_at desc, started_at desc, id
-- Returns: {data: UserJourneyListItem[]}, as json (the body text as built).
-- Errors:  28000 without a user; 22023 for an unknown status or sort.
create function api.list_user_journeys(status text default null, sort text default 'recent')
returns json
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  chosen_sort text := coalesce(list_user_journeys.sort, 'recent');
begin
  if (select auth.uid()) is null then
    raise exception using errcode = '28000', message = 'a signed-in user is required', detail = '{}';
  end if;
  if list_user_journeys.status is not null
     and list_user_journeys.status not in ('not_started', 'in_progress', 'completed') then
    raise exception using
      errcode = '22023',
      message = 'status must be one of not_started, in_progress, completed',
      detail = pg_catalog.jsonb_build_object('field', 'status', 'value', list_user_journeys.status,
        'allowed', pg_catalog.jsonb_build_array('not_started', 'in_progress', 'completed'))::text;
  end if;
  if chosen_sort not in ('recent', 'progress', 'started') then
    raise exception using
      errcode = '22023',
      message = 'sort must be one of recent, progress, started',
      detail = pg_catalog.jsonb_build_object('field', 'sort', 'value', chosen_sort,
        'allowed', pg_catalog.jsonb_build_array('recent', 'progress', 'started'))::text;
  end if;
  return private.journey_list_json(list_user_journeys.status, chosen_sort);
end
$$;
comment on function api.list_user_journeys(text, text) is
  'The caller''s journeys with derived progress. Params: status (not_started|in_progress|completed|null), sort (recent|progress|started). Returns {data: UserJourneyListItem[]} (json). Errors: 28000 no user, 22023 bad status/sort.';
grant execute on function api.list_user_journeys(text, text) to anon, authenticated;

-- api.get_user_journey
-- Purpose: one of the caller's enrollments with per-spark progress.
-- Params:  id  the enrollment id.
-- Returns: UserJourneyDetail (list item + current_concept {id,title,slug}|null + spark_progress
--          [{spark_id,title,status,completed_at}] in trail order), as json.
-- Errors:  28000 without a user; P0002 when the caller has no enrollment with this id (another
--          user's enrollment is "not found" too).
create function api.get_user_journey(id uuid)
returns json
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  result json;
begin
  if (select auth.uid()) is null then
    raise exception using errcode = '28000', message = 'a signed-in user is required', detail = '{}';
  end if;
  result := private.journey_detail_json(get_user_journey.id);
  if result is null then
    raise exception using
      errcode = 'P0002',
      message = 'journey not found',
      detail = pg_catalog.jsonb_build_object('id', get_user_journey.id)::text;
  end if;
  return result;
end
$$;
comment on function api.get_user_journey(uuid) is
  'One of the caller''s journeys in detail. Params: id (enrollment id). Returns UserJourneyDetail (json). Errors: 28000 no user, P0002 unknown or not the caller''s.';
grant execute on function api.get_user_journey(uuid) to anon, authenticated;

-- api.enroll_in_trail
-- Purpose: enroll the caller in a trail of the current snapshot; idempotent.
-- Params:  trail_id  a trail entity id present in the current snapshot.
-- Returns: UserJourneyDetail plus created (true when this call inserted the enrollment, false
--          when the caller was already enrolled and the existing enrollment is returned).
-- Errors:  28000 without a user; 22023 for a null trail_id; P0002 when the trail is not in the
--          current snapshot (or nothing is published).
-- Unchanged but for its document, now from private.journey_detail_json (a write: the jsonb
-- round trip to add "created" costs nothing that matters here).
create or replace function api.enroll_in_trail(trail_id uuid)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  caller uuid := private.require_user();
  current_snapshot uuid := private.resolve_snapshot_id(null);
  enrollment uuid;
  created boolean;
  result jsonb;
begin
  if enroll_in_trail.trail_id is null then
    raise exception using
      errcode = '22023',
      message = 'trail_id is required',
      detail = pg_catalog.jsonb_build_object('field', 'trail_id')::text;
  end if;
  if current_snapshot is null or not exists (
    select 1 from app.trails t
    where t.snapshot_id = current_snapshot and t.id = enroll_in_trail.trail_id
  ) then
    raise exception using
      errcode = 'P0002',
      message = 'trail not found',
      detail = pg_catalog.jsonb_build_object('trail_id', enroll_in_trail.trail_id)::text;
  end if;

  -- user_id defaults to auth.uid(); the insert policy checks it. A concurrent or repeated
  -- enrollment hits unique (user_id, trail_id) and returns the existing row instead.
  insert into app.enrollments (trail_id)
  values (enroll_in_trail.trail_id)
  on conflict on constraint enrollments_user_id_trail_id_key do nothing
  returning app.enrollments.id into enrollment;
  created := enrollment is not null;
  if not created then
    select e.id into enrollment
    from app.enrollments e
    where e.user_id = caller and e.trail_id = enroll_in_trail.trail_id;
  end if;

  result := private.journey_detail_json(enrollment)::jsonb;
  return result || pg_catalog.jsonb_build_object('created', created);
end
$$;
comment on function api.enroll_in_trail(uuid) is
  'Enrolls the caller in a current-snapshot trail; idempotent. Params: trail_id. Returns UserJourneyDetail + created. Errors: 28000 no user, 22023 null trail_id, P0002 trail not in the current snapshot.';
grant execute on function api.enroll_in_trail(uuid) to anon, authenticated;

-- The per-caller helpers of 20261122120000 are replaced by the two statements above.
drop function private.journey_document(uuid);
drop function private.journey_summaries(uuid);
drop function private.journey_progress_row(app.journey_trails, integer, integer, integer, timestamptz, timestamptz, uuid);
drop function private.caller_spark_states();
drop function private.trail_spark_positions(uuid, uuid);
