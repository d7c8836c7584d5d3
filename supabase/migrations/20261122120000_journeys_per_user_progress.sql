-- Journeys: the api functions derive progress for the caller only, from an ordered spark list
-- per trail that is computed once per snapshot.
--
-- Same rules, same JSON. The views of 20261122030000_journeys.sql stay as they are: they are the
-- reference derivation (readable by the tests, RLS-filtered like everything else). What was
-- slow is how the api functions read them: app.journey_spark_progress probes the events index
-- once per spark of the trail (about 250 probes per enrollment), app.journey_progress walks the
-- trail's sparks twice (aggregates, then current concept) and journey_detail a third time for
-- spark_progress, each walk joining concepts, placements and sparks and de-duplicating them
-- again; the list also computed a current concept it never shows. A list of 4 journeys touched
-- about 14,000 buffers and a detail about 7,500.
--
-- Now a request reads two things:
--   1. the caller's learning events, aggregated per spark once (private.caller_spark_states),
--      from one range of the (user_id, spark_id, verb, occurred_at) index, index-only: about
--      100 rows for a typical user, whatever the number of users or events in the database;
--   2. per enrollment, the trail's distinct sparks in trail order
--      (private.trail_spark_positions): a content fact, identical for every learner, stored per
--      snapshot in app.trail_spark_positions (below) and read as one primary-key range.
-- Progress itself is still derived on every read from the events: nothing per user is stored.
-- The caller filter is explicit (user_id = (select auth.uid())) so the planner starts from the
-- caller's index range; RLS still applies on top (every function is security invoker).
--
-- Rule equivalences relied on (docs/journeys.md, "How progress is derived"):
--   - a spark placed twice in a trail is listed once, at its first placement (concept
--     order_index, concept slug, placement order_index), and ranked by that placement, then by
--     spark slug: the ordinal below (1-based). Counts are over these distinct sparks.
--   - current_concept is the concept of the lowest ordinal whose spark is not completed. The
--     view picks the first concept (order_index, slug) holding an incomplete spark; the two agree
--     because a spark's first placement is its smallest one.
-- The list reads private.journey_summaries, the detail private.journey_document (one pass for
-- the figures and spark_progress); both apply the rules of private.journey_progress_row.
-- supabase/tests/32-journeys-per-user-progress.test.sql proves the functions equal the views.

-- ---------------------------------------------------------------------------------------------
-- Per snapshot: each trail's distinct sparks in trail order
-- ---------------------------------------------------------------------------------------------

-- A snapshot's content never changes after its import, so this is computed once, like the other
-- rollups (20261122070000_content_rollups.sql): a trigger on app.snapshot_rollups, whose row
-- private.refresh_content_rollups writes last, fills it in the same transaction.
create table app.trail_spark_positions (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  ordinal integer not null,
  spark_id uuid not null,
  concept_id uuid not null,
  spark_title text not null,
  primary key (snapshot_id, trail_id, ordinal)
);
comment on table app.trail_spark_positions is
  'Per snapshot and trail: each distinct spark at its first placement, numbered in trail order (1-based), with its concept and title. Filled from app.snapshot_rollups.';
alter table app.trail_spark_positions enable row level security;
create policy "anyone reads trail spark positions" on app.trail_spark_positions
  for select to anon, authenticated using (true);
grant select on app.trail_spark_positions to anon, authenticated;

-- private.derive_trail_spark_positions
-- Purpose: the trail-order spark list, computed from the content tables.
-- Params:  snapshot_id; trail_id, or null for every trail of the snapshot.
-- Returns: (trail_id, ordinal, spark_id, concept_id, spark_title), ordinal 1-based per trail:
--          distinct sparks at their first placement (concept order_index, concept slug,
--          placement order_index), ranked by it and then by spark slug.
create function private.derive_trail_spark_positions(snapshot_id uuid, trail_id uuid)
returns table (trail_id uuid, ordinal integer, spark_id uuid, concept_id uuid, spark_title text)
language sql
stable
security invoker
set search_path = ''
as $$
  select
    f.trail_id,
    (pg_catalog.row_number() over (
      partition by f.trail_id
      order by f.concept_order, f.concept_slug, f.spark_order, s.slug))::integer,
    f.spark_id,
    f.concept_id,
    s.title
  from (
    select distinct on (c.trail_id, cs.spark_id)
      c.trail_id, c.id as concept_id, c.order_index as concept_order, c.slug as concept_slug,
      cs.order_index as spark_order, cs.spark_id
    from app.concepts c
    join app.concept_sparks cs on cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id
    where c.snapshot_id = derive_trail_spark_positions.snapshot_id
      and (derive_trail_spark_positions.trail_id is null or c.trail_id = derive_trail_spark_positions.trail_id)
    order by c.trail_id, cs.spark_id, c.order_index, c.slug, cs.order_index
  ) f
  join app.sparks s on s.snapshot_id = derive_trail_spark_positions.snapshot_id and s.id = f.spark_id
$$;
comment on function private.derive_trail_spark_positions(uuid, uuid) is
  'Distinct sparks of one trail (or every trail) of a snapshot in trail order, computed from concepts, placements and sparks.';
grant execute on function private.derive_trail_spark_positions(uuid, uuid) to anon, authenticated;

-- Trigger: (re)computes a snapshot's trail spark positions whenever its rollup row is written.
create function private.fill_trail_spark_positions()
returns trigger
language plpgsql
set search_path = ''
-- 500,000 placements: keep the distinct and the sort in memory.
set work_mem = '64MB'
as $$
begin
  delete from app.trail_spark_positions p where p.snapshot_id = new.snapshot_id;
  insert into app.trail_spark_positions (snapshot_id, trail_id, ordinal, spark_id, concept_id, spark_title)
  select new.snapshot_id, d.trail_id, d.ordinal, d.spark_id, d.concept_id, d.spark_title
  from private.derive_trail_spark_positions(new.snapshot_id, null) d
  order by d.trail_id, d.ordinal;
  return null;
end
$$;
comment on function private.fill_trail_spark_positions() is
  'Trigger: (re)computes a snapshot''s app.trail_spark_positions whenever its app.snapshot_rollups row is written.';
revoke all on function private.fill_trail_spark_positions() from public, anon, authenticated, service_role;

create trigger snapshot_rollups_trail_spark_positions
  after insert or update on app.snapshot_rollups
  for each row execute function private.fill_trail_spark_positions();

-- Snapshots rolled up already.
insert into app.trail_spark_positions (snapshot_id, trail_id, ordinal, spark_id, concept_id, spark_title)
select r.snapshot_id, d.trail_id, d.ordinal, d.spark_id, d.concept_id, d.spark_title
from app.snapshot_rollups r
cross join lateral private.derive_trail_spark_positions(r.snapshot_id, null) d;

-- private.trail_spark_positions
-- Purpose: one trail's distinct sparks in trail order: the stored rows when the snapshot is
--          rolled up (every imported snapshot), else derived from the content tables.
-- Params:  snapshot_id, trail_id.
-- Returns: (ordinal, spark_id, concept_id, spark_title) in ordinal order.
create function private.trail_spark_positions(snapshot_id uuid, trail_id uuid)
returns table (ordinal integer, spark_id uuid, concept_id uuid, spark_title text)
language plpgsql
stable
security invoker
set search_path = ''
rows 250
as $$
begin
  if exists (select 1 from app.snapshot_rollups r where r.snapshot_id = trail_spark_positions.snapshot_id) then
    return query
    select p.ordinal, p.spark_id, p.concept_id, p.spark_title
    from app.trail_spark_positions p
    where p.snapshot_id = trail_spark_positions.snapshot_id and p.trail_id = trail_spark_positions.trail_id
    order by p.ordinal;
  else
    return query
    select d.ordinal, d.spark_id, d.concept_id, d.spark_title
    from private.derive_trail_spark_positions(trail_spark_positions.snapshot_id, trail_spark_positions.trail_id) d
    order by d.ordinal;
  end if;
end
$$;
comment on function private.trail_spark_positions(uuid, uuid) is
  'One trail''s distinct sparks in trail order (ordinal, spark, concept, title): stored per rolled-up snapshot, else derived.';
grant execute on function private.trail_spark_positions(uuid, uuid) to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Per request: the caller's progress
-- ---------------------------------------------------------------------------------------------

-- private.caller_spark_states
-- Purpose: the caller's progress per spark, from their learning events (any time, any trail).
-- Params:  none (the caller is auth.uid()).
-- Returns: one row per spark the caller has events on: completed_at (earliest completed or
--          mastered event, null if none), started (a started event exists), last_event_at
--          (latest event of any verb, bookmarks included).
create function private.caller_spark_states()
returns table (spark_id uuid, completed_at timestamptz, started boolean, last_event_at timestamptz)
language sql
stable
security invoker
set search_path = ''
rows 100
as $$
  select
    le.spark_id,
    pg_catalog.min(le.occurred_at) filter (where le.verb in ('completed', 'mastered')),
    pg_catalog.bool_or(le.verb = 'started'),
    pg_catalog.max(le.occurred_at)
  from app.learning_events le
  where le.user_id = (select auth.uid())
  group by le.spark_id
$$;
comment on function private.caller_spark_states() is
  'The caller''s learning events aggregated per spark: first completion, whether started, last event.';
grant execute on function private.caller_spark_states() to anon, authenticated;

-- private.journey_progress_row
-- Purpose: the per-enrollment rules, in one place: an app.journey_progress row from an enrollment
--          (with its trail's snapshot) and the figures over the trail's distinct sparks.
-- Params:  jt                 the enrollment, as an app.journey_trails row
--          total_sparks       distinct sparks of the trail
--          completed_sparks   of those, completed (completed or mastered event)
--          touched_sparks     of those, started or completed
--          last_completed_at  latest first-completion among them
--          last_event_at      latest event of any verb on them
--          current_concept_id concept of the first spark in trail order that is not completed
-- Returns: app.journey_progress (progress_percent floored; status completed only when total > 0
--          and all are completed, in_progress when any is touched; completed_at only when
--          completed; last_activity_at falls back to started_at; the current concept's slug and
--          title from the enrollment's snapshot).
create function private.journey_progress_row(
  jt app.journey_trails,
  total_sparks integer,
  completed_sparks integer,
  touched_sparks integer,
  last_completed_at timestamptz,
  last_event_at timestamptz,
  current_concept_id uuid
)
returns app.journey_progress
language sql
stable
security invoker
set search_path = ''
as $$
  select
    (jt).enrollment_id,
    (jt).user_id,
    (jt).trail_id,
    (jt).started_at,
    (jt).snapshot_id,
    (jt).trail_slug,
    (jt).trail_title,
    (jt).trail_difficulty_level,
    journey_progress_row.total_sparks,
    journey_progress_row.completed_sparks,
    case when journey_progress_row.total_sparks > 0
      then (100 * journey_progress_row.completed_sparks) / journey_progress_row.total_sparks else 0 end,
    case
      when journey_progress_row.total_sparks > 0
        and journey_progress_row.completed_sparks = journey_progress_row.total_sparks then 'completed'
      when journey_progress_row.touched_sparks > 0 then 'in_progress'
      else 'not_started'
    end,
    case when journey_progress_row.total_sparks > 0
      and journey_progress_row.completed_sparks = journey_progress_row.total_sparks
      then journey_progress_row.last_completed_at end,
    coalesce(journey_progress_row.last_event_at, (jt).started_at),
    c.id,
    c.slug,
    c.title
  from (select) one
  left join app.concepts c on c.snapshot_id = (jt).snapshot_id and c.id = journey_progress_row.current_concept_id
$$;
comment on function private.journey_progress_row(app.journey_trails, integer, integer, integer, timestamptz, timestamptz, uuid) is
  'The per-enrollment progress rules: an app.journey_progress row from an enrollment and the figures over its trail''s distinct sparks.';
grant execute on function private.journey_progress_row(app.journey_trails, integer, integer, integer, timestamptz, timestamptz, uuid) to anon, authenticated;

-- private.journey_summaries
-- Purpose: the caller's journeys as app.journey_progress rows (the view's row type and values),
--          computed for the caller only.
-- Params:  only_enrollment  an enrollment id, or null for every visible enrollment of the caller.
-- Returns: setof app.journey_progress (no row for an unknown id or another user's enrollment).
create function private.journey_summaries(only_enrollment uuid default null)
returns setof app.journey_progress
language sql
stable
security invoker
set search_path = ''
rows 4
as $$
  with states as materialized (
    select * from private.caller_spark_states()
  )
  select r.*
  from app.journey_trails jt
  cross join lateral (
    select
      pg_catalog.count(*)::integer as total_sparks,
      (pg_catalog.count(*) filter (where s.completed_at is not null))::integer as completed_sparks,
      (pg_catalog.count(*) filter (where s.completed_at is not null or s.started))::integer as touched_sparks,
      pg_catalog.max(s.completed_at) as last_completed_at,
      pg_catalog.max(s.last_event_at) as last_event_at,
      (pg_catalog.array_agg(p.concept_id order by p.ordinal) filter (where s.completed_at is null))[1] as current_concept_id
    from private.trail_spark_positions(jt.snapshot_id, jt.trail_id) p
    left join states s on s.spark_id = p.spark_id
  ) a
  cross join lateral private.journey_progress_row(jt, a.total_sparks, a.completed_sparks, a.touched_sparks,
    a.last_completed_at, a.last_event_at, a.current_concept_id) r
  where jt.user_id = (select auth.uid())
    and (journey_summaries.only_enrollment is null or jt.enrollment_id = journey_summaries.only_enrollment)
$$;
comment on function private.journey_summaries(uuid) is
  'The caller''s journeys (or one of them) as app.journey_progress rows, computed from the caller''s events and each trail''s spark positions only.';
grant execute on function private.journey_summaries(uuid) to anon, authenticated;

-- private.journey_document
-- Purpose: the UserJourneyDetail document of one of the caller's enrollments, in one pass over
--          the trail's spark positions (figures and spark_progress together).
-- Params:  enrollment  an enrollment id.
-- Returns: list item + current_concept ({id,title,slug} | null) + spark_progress
--          ([{spark_id,title,status,completed_at}] in trail order); null when the caller has no
--          visible enrollment with this id.
create function private.journey_document(enrollment uuid)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  with states as materialized (
    select * from private.caller_spark_states()
  )
  select private.journey_list_item(r) || pg_catalog.jsonb_build_object(
    'current_concept', case when r.current_concept_id is null then null else
      pg_catalog.jsonb_build_object(
        'id', r.current_concept_id,
        'title', r.current_concept_title,
        'slug', r.current_concept_slug) end,
    'spark_progress', a.spark_progress)
  from app.journey_trails jt
  cross join lateral (
    select
      pg_catalog.count(*)::integer as total_sparks,
      (pg_catalog.count(*) filter (where s.completed_at is not null))::integer as completed_sparks,
      (pg_catalog.count(*) filter (where s.completed_at is not null or s.started))::integer as touched_sparks,
      pg_catalog.max(s.completed_at) as last_completed_at,
      pg_catalog.max(s.last_event_at) as last_event_at,
      (pg_catalog.array_agg(p.concept_id order by p.ordinal) filter (where s.completed_at is null))[1] as current_concept_id,
      coalesce(pg_catalog.jsonb_agg(
        pg_catalog.jsonb_build_object(
          'spark_id', p.spark_id,
          'title', p.spark_title,
          'status', case
            when s.completed_at is not null then 'completed'
            when s.started then 'in_progress'
            else 'not_started'
          end,
          'completed_at', s.completed_at)
        order by p.ordinal), '[]'::jsonb) as spark_progress
    from private.trail_spark_positions(jt.snapshot_id, jt.trail_id) p
    left join states s on s.spark_id = p.spark_id
  ) a
  cross join lateral private.journey_progress_row(jt, a.total_sparks, a.completed_sparks, a.touched_sparks,
    a.last_completed_at, a.last_event_at, a.current_concept_id) r
  where jt.user_id = (select auth.uid()) and jt.enrollment_id = journey_document.enrollment
$$;
comment on function private.journey_document(uuid) is
  'UserJourneyDetail JSON of one of the caller''s enrollments (null when not visible), figures and spark_progress in one pass.';
grant execute on function private.journey_document(uuid) to anon, authenticated;

-- private.journey_detail (20261122030000) walked the views; private.journey_document replaces it.
drop function private.journey_detail(app.journey_progress);

-- api.list_user_journeys
-- Purpose: the caller's enrollments with derived progress (RLS limits rows to the caller).
-- Params:  status  null (all) | not_started | in_progress | completed
--          sort    recent (last_activity_at desc, default) | progress (completion ratio desc)
--                  | started (started_at desc); ties: last_activity_at desc, started_at desc, id
-- Returns: {data: UserJourneyListItem[]}.
-- Errors:  28000 without a user; 22023 for an unknown status or sort.
create or replace function api.list_user_journeys(status text default null, sort text default 'recent')
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  chosen_sort text := coalesce(list_user_journeys.sort, 'recent');
  result jsonb;
begin
  perform private.require_user();
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

  select pg_catalog.jsonb_build_object('data', coalesce(pg_catalog.jsonb_agg(private.journey_list_item(p)
    order by
      case when chosen_sort = 'recent' then p.last_activity_at end desc nulls last,
      case when chosen_sort = 'progress'
        then p.completed_sparks::numeric / nullif(p.total_sparks, 0) end desc nulls last,
      case when chosen_sort = 'started' then p.started_at end desc nulls last,
      p.last_activity_at desc, p.started_at desc, p.id), '[]'::jsonb))
  into result
  from private.journey_summaries(null) p
  where list_user_journeys.status is null or p.status = list_user_journeys.status;
  return result;
end
$$;
comment on function api.list_user_journeys(text, text) is
  'The caller''s journeys with derived progress. Params: status (not_started|in_progress|completed|null), sort (recent|progress|started). Returns {data: UserJourneyListItem[]}. Errors: 28000 no user, 22023 bad status/sort.';
grant execute on function api.list_user_journeys(text, text) to anon, authenticated;

-- api.get_user_journey
-- Purpose: one of the caller's enrollments with per-spark progress.
-- Params:  id  the enrollment id.
-- Returns: UserJourneyDetail (list item + current_concept {id,title,slug}|null + spark_progress
--          [{spark_id,title,status,completed_at}] in trail order).
-- Errors:  28000 without a user; P0002 when no visible enrollment has this id (another user's
--          enrollment is invisible under RLS, so it is "not found" too).
create or replace function api.get_user_journey(id uuid)
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  result jsonb;
begin
  perform private.require_user();
  result := private.journey_document(get_user_journey.id);
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
  'One of the caller''s journeys in detail. Params: id (enrollment id). Returns UserJourneyDetail. Errors: 28000 no user, P0002 unknown or not the caller''s.';
grant execute on function api.get_user_journey(uuid) to anon, authenticated;

-- api.enroll_in_trail
-- Purpose: enroll the caller in a trail of the current snapshot; idempotent.
-- Params:  trail_id  a trail entity id present in the current snapshot.
-- Returns: UserJourneyDetail plus created (true when this call inserted the enrollment, false
--          when the caller was already enrolled and the existing enrollment is returned).
-- Errors:  28000 without a user; 22023 for a null trail_id; P0002 when the trail is not in the
--          current snapshot (or nothing is published).
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

  result := private.journey_document(enrollment);
  return result || pg_catalog.jsonb_build_object('created', created);
end
$$;
comment on function api.enroll_in_trail(uuid) is
  'Enrolls the caller in a current-snapshot trail; idempotent. Params: trail_id. Returns UserJourneyDetail + created. Errors: 28000 no user, 22023 null trail_id, P0002 trail not in the current snapshot.';
grant execute on function api.enroll_in_trail(uuid) to anon, authenticated;
