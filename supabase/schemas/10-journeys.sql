-- Journeys: enrollments and learning events, and the progress derived from them on every read.

-- The journey tables are the only ones a request role writes (supabase/tests/
-- 06-journey-rows-obey-their-rules-for-any-writer.test.sql keeps that list). Their rules hold for
-- any writer, not only for the api functions: the row is the caller's (RLS; user_id and the
-- times come from defaults, since only the columns a learner chooses are insertable), times are
-- finite and within the spec's bounds (checks), and the trail or spark is in the current
-- snapshot when the row is written (a trigger: content ids are per snapshot, so no foreign key
-- can say it).

create table app.enrollments (
  id uuid default extensions.gen_random_uuid() primary key,
  user_id uuid default auth.uid() not null,
  trail_id uuid not null,
  started_at timestamp with time zone default now() not null,
  -- The snapshot current when the learner enrolled: what "the trail changed since" compares to.
  snapshot_id uuid default private.resolve_snapshot_id(null) references app.snapshots (id) on delete set null,
  constraint enrollments_user_id_trail_id_key unique (user_id, trail_id),
  constraint enrollments_started_at_in_bounds
    check (started_at >= '2000-01-01 00:00:00+00'::timestamp with time zone and started_at < 'infinity'::timestamp with time zone)
);
comment on table app.enrollments is
  'A learner''s enrollment in a trail (one per user and trail), with the snapshot current when they enrolled. Rows are the caller''s own under row-level security.';
alter table app.enrollments enable row level security;
create policy "learners enroll themselves" on app.enrollments
  for insert to authenticated
  with check (user_id = (select auth.uid()));
create policy "learners read their own enrollments" on app.enrollments
  for select to authenticated
  using (user_id = (select auth.uid()));
grant select on app.enrollments to authenticated;
grant insert (trail_id) on app.enrollments to authenticated;

create table app.learning_events (
  id uuid default extensions.gen_random_uuid() primary key,
  user_id uuid default auth.uid() not null,
  spark_id uuid not null,
  verb text not null references app.learning_verbs (value),
  occurred_at timestamp with time zone default now() not null,
  recorded_at timestamp with time zone default now() not null,
  idempotency_key text check ((length(idempotency_key) >= 1) and (length(idempotency_key) <= 200)),
  -- Set once by api.void_learning_event: a voided event no longer counts for progress.
  voided_at timestamp with time zone,
  constraint learning_events_natural_key unique (user_id, spark_id, verb, occurred_at),
  constraint learning_events_user_id_idempotency_key_key unique (user_id, idempotency_key),
  -- The bounds api.record_learning_event reports field by field (22023): not before 2000, at
  -- most 5 minutes after it was recorded (client clock skew); recorded_at is the server's time.
  constraint learning_events_occurred_at_in_bounds
    check (occurred_at >= '2000-01-01 00:00:00+00'::timestamp with time zone and occurred_at <= recorded_at + '00:05:00'::interval),
  constraint learning_events_recorded_at_in_bounds
    check (recorded_at >= '2000-01-01 00:00:00+00'::timestamp with time zone and recorded_at < 'infinity'::timestamp with time zone)
);
comment on table app.learning_events is
  'What a learner did with a spark (verb, when), the record progress is derived from; idempotent by key, voided rather than deleted. Rows are the caller''s own under row-level security.';
alter table app.learning_events enable row level security;
create policy "learners read their own events" on app.learning_events
  for select to authenticated
  using (user_id = (select auth.uid()));
create policy "learners record their own events" on app.learning_events
  for insert to authenticated
  with check (user_id = (select auth.uid()));
create policy "learners void their own events" on app.learning_events
  for update to authenticated
  using (user_id = (select auth.uid()) and voided_at is null)
  with check (user_id = (select auth.uid()) and voided_at is not null);
grant select on app.learning_events to authenticated;
grant insert (spark_id, verb, occurred_at, idempotency_key) on app.learning_events to authenticated;
grant update (voided_at) on app.learning_events to authenticated;

-- private.require_current_content
-- Purpose: the rule that a new enrollment names a trail, and a new learning event (or spark
--          review, 14-learning.sql) a spark, of the current (published) snapshot: a trigger on
--          each table, so every writer meets it.
-- Errors:  PT404 (trail not found | spark not found) when it is not in the current snapshot, or
--          nothing is published.
create or replace function private.require_current_content()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_table_name = 'enrollments' then
    if not exists (select 1 from app.trails t where t.snapshot_id = private.resolve_snapshot_id(null) and t.id = new.trail_id) then
      raise exception using errcode = 'PT404', message = 'trail not found',
        detail = pg_catalog.jsonb_build_object('trail_id', new.trail_id)::text;
    end if;
  elsif not exists (select 1 from app.sparks s where s.snapshot_id = private.resolve_snapshot_id(null) and s.id = new.spark_id) then
    raise exception using errcode = 'PT404', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('spark_id', new.spark_id)::text;
  end if;
  return new;
end
$$;
comment on function private.require_current_content() is
  'Trigger: a new enrollment''s trail, or a new learning event''s or spark review''s spark, must be in the current snapshot (PT404 otherwise).';

create trigger enrollments_trail_is_current
  before insert on app.enrollments
  for each row execute function private.require_current_content();

create trigger learning_events_spark_is_current
  before insert on app.learning_events
  for each row execute function private.require_current_content();

create index learning_events_user_time on app.learning_events (user_id, occurred_at desc);

create index learning_events_verb on app.learning_events (verb);

-- The caller's spark states (private.caller_spark_states, read by every journey and what next)
-- from the index alone: one range of the caller's events that count, in spark order, with the
-- verb and time each aggregate needs, instead of a heap page per event.
create index learning_events_spark_states on app.learning_events (user_id, spark_id) include (verb, occurred_at) where (voided_at is null);

-- Journeys look a trail up by its entity id across snapshots (the fallback for trails that left
-- the current snapshot); the primary key leads with snapshot_id.
create index trails_entity_id on app.trails (id, snapshot_id);

-- The rules every journey read shares, each stated once.

-- private.journey_trail
-- Purpose: which snapshot's copy of a trail answers a journey: the current (published) snapshot
--          when the trail is in it; otherwise the most recently published snapshot that still had
--          the trail (the trail was removed; the learner keeps seeing it as it last was). Drafts
--          never count; no row when no published or archived snapshot has the trail.
-- Returns: (snapshot_id, slug, title, difficulty_level).
create or replace function private.journey_trail(trail_id uuid)
returns table(snapshot_id uuid, slug text, title text, difficulty_level text)
language sql
stable
rows 1
set search_path = ''
as $$
  select tr.snapshot_id, tr.slug, tr.title, tr.difficulty_level
  from app.trails tr
  join app.snapshots s on s.id = tr.snapshot_id
  where tr.id = journey_trail.trail_id
    and s.status in ('published', 'archived')
  order by (s.status = 'published') desc, s.published_at desc nulls last, s.created_at desc, s.id
  limit 1
$$;
comment on function private.journey_trail(uuid) is
  'The snapshot copy of a trail that answers a journey: current if the trail is there, else the latest published/archived one that had it.';
grant execute on function private.journey_trail(uuid) to anon, authenticated;

-- private.spark_status
-- Purpose: a learner's status on one spark: completed by a completed or mastered event, in
--          progress after a started one, else not started (a bookmark alone changes nothing).
create or replace function private.spark_status(completed_at timestamp with time zone, started boolean)
returns text
language sql
immutable
set search_path = ''
as $$
  select case
    when spark_status.completed_at is not null then 'completed'
    when spark_status.started then 'in_progress'
    else 'not_started'
  end
$$;
comment on function private.spark_status(timestamp with time zone, boolean) is
  'completed | in_progress | not_started from a spark''s first completion time and whether it was started.';
grant execute on function private.spark_status(timestamp with time zone, boolean) to anon, authenticated;

-- private.journey_status
-- Purpose: an enrollment's status from its spark counts: completed when the trail has sparks and
--          all are completed; in progress when any is started or completed; else not started (a
--          trail with no sparks stays not started).
create or replace function private.journey_status(total_sparks integer, completed_sparks integer, touched_sparks integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select case
    when journey_status.total_sparks > 0 and journey_status.completed_sparks = journey_status.total_sparks then 'completed'
    when journey_status.touched_sparks > 0 then 'in_progress'
    else 'not_started'
  end
$$;
comment on function private.journey_status(integer, integer, integer) is
  'completed | in_progress | not_started from an enrollment''s total, completed and touched (started or completed) spark counts.';
grant execute on function private.journey_status(integer, integer, integer) to anon, authenticated;

-- private.journey_last_activity
-- Purpose: a journey's last activity, the rule the journey bodies show (last_activity_at) and
--          what next orders trails by: the latest learning event (any verb, not voided: the
--          last_event_at of private.caller_spark_states or app.journey_spark_progress) on any
--          spark of the trail, given as last_event_at (the max over the trail's sparks, null when
--          none has an event); started_at when there is none. Events recorded before enrolling
--          count, so it can be earlier than started_at.
create or replace function private.journey_last_activity(last_event_at timestamp with time zone, started_at timestamp with time zone)
returns timestamp with time zone
language sql
immutable
set search_path = ''
as $$
  select coalesce(journey_last_activity.last_event_at, journey_last_activity.started_at)
$$;
comment on function private.journey_last_activity(timestamp with time zone, timestamp with time zone) is
  'A journey''s last activity: the latest event on one of the trail''s sparks (last_event_at), else started_at.';
grant execute on function private.journey_last_activity(timestamp with time zone, timestamp with time zone) to anon, authenticated;

-- private.caller_spark_states
-- Purpose: the caller's progress on each spark they have events on, whichever trail the events
--          were recorded from (progress belongs to the spark). Voided events do not count.
-- Returns: (spark_id, completed_at: the first completed or mastered event, started: a started
--          event exists, last_event_at: the latest event of any verb).
create or replace function private.caller_spark_states()
returns table(spark_id uuid, completed_at timestamp with time zone, started boolean, last_event_at timestamp with time zone)
language sql
stable
-- A learner has events on tens to hundreds of sparks: with the default estimate (1000 rows)
-- every join on it hashes a whole snapshot's table instead of probing its primary key.
rows 100
set search_path = ''
as $$
  select
    le.spark_id,
    pg_catalog.min(le.occurred_at) filter (where le.verb in ('completed', 'mastered')),
    pg_catalog.bool_or(le.verb = 'started'),
    pg_catalog.max(le.occurred_at)
  from app.learning_events le
  where le.user_id = (select auth.uid()) and le.voided_at is null
  group by le.spark_id
$$;
comment on function private.caller_spark_states() is
  'Per spark the caller has learning events on: first completion (completed or mastered), whether started, last event time.';
grant execute on function private.caller_spark_states() to anon, authenticated;

-- private.spark_progress_json
-- Purpose: one spark_progress element of a journey: {spark_id, title, status, completed_at}.
-- plpgsql, not sql: as private.search_normalize (04-content.sql).
create or replace function private.spark_progress_json(title text, spark_id uuid, status text, completed_at timestamp with time zone)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  return pg_catalog.jsonb_build_object(
    'spark_id', spark_progress_json.spark_id,
    'title', spark_progress_json.title,
    'status', spark_progress_json.status,
    'completed_at', spark_progress_json.completed_at);
end
$$;
comment on function private.spark_progress_json(text,uuid,text,timestamp with time zone) is
  'One spark_progress element {spark_id, title, status, completed_at} of a journey.';
grant execute on function private.spark_progress_json(text,uuid,text,timestamp with time zone) to anon, authenticated;

-- The content snapshot an enrollment is measured against: the current (published) snapshot when
-- the trail is in it; otherwise the most recently published snapshot that still had the trail
-- (the trail was removed; the learner keeps seeing the trail as it last was). Drafts never count.
-- An enrollment whose trail exists in no published or archived snapshot is not shown.
create view app.journey_trails with (security_invoker = true) as
select
  e.id as enrollment_id,
  e.user_id,
  e.trail_id,
  e.started_at,
  t.snapshot_id,
  t.slug as trail_slug,
  t.title as trail_title,
  t.difficulty_level as trail_difficulty_level
from app.enrollments e
cross join lateral private.journey_trail(e.trail_id) t;
comment on view app.journey_trails is
  'Each visible enrollment with the snapshot its trail is read from: current if the trail is there, else the latest published/archived one that had it.';
grant select on app.journey_trails to authenticated;

-- One row per distinct spark of the enrollment's trail, in trail order. A spark placed in
-- several concepts of the same trail counts once, at its first place (concept order_index, then
-- concept slug, then its order_index inside the concept).
create view app.journey_sparks with (security_invoker = true) as
select distinct on (jt.enrollment_id, cs.spark_id)
  jt.enrollment_id,
  jt.user_id,
  c.id as concept_id,
  c.slug as concept_slug,
  c.title as concept_title,
  c.order_index as concept_order,
  cs.order_index as spark_order,
  s.id as spark_id,
  s.slug as spark_slug,
  s.title as spark_title
from app.journey_trails jt
join app.concepts c on c.snapshot_id = jt.snapshot_id and c.trail_id = jt.trail_id
join app.concept_sparks cs on cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id
join app.sparks s on s.snapshot_id = cs.snapshot_id and s.id = cs.spark_id
order by jt.enrollment_id, cs.spark_id, c.order_index, c.slug, cs.order_index;
comment on view app.journey_sparks is
  'Distinct sparks of each visible enrollment''s trail, each at its first position in trail order.';
grant select on app.journey_sparks to authenticated;

-- Per-spark progress of the enrollment's owner, from their learning events on that spark
-- (whenever and from whichever trail they were recorded: progress belongs to the spark; voided
-- events do not count).
--   completed    a completed or mastered event exists; completed_at is the earliest of them
--   in_progress  otherwise, a started event exists
--   not_started  otherwise (bookmarked alone does not change progress)
create view app.journey_spark_progress with (security_invoker = true) as
select
  js.enrollment_id,
  js.user_id,
  js.concept_id,
  js.concept_slug,
  js.concept_title,
  js.concept_order,
  js.spark_order,
  js.spark_id,
  js.spark_slug,
  js.spark_title,
  private.spark_status(p.completed_at, p.started) as status,
  p.completed_at,
  p.last_event_at
from app.journey_sparks js
cross join lateral (
  select
    pg_catalog.min(le.occurred_at) filter (where le.verb in ('completed', 'mastered')) as completed_at,
    coalesce(pg_catalog.bool_or(le.verb = 'started'), false) as started,
    pg_catalog.max(le.occurred_at) as last_event_at
  from app.learning_events le
  where le.user_id = js.user_id and le.spark_id = js.spark_id and le.voided_at is null
) p;
comment on view app.journey_spark_progress is
  'Per spark of each visible enrollment: not_started | in_progress (started) | completed (completed or mastered), with completed_at and the last event time.';
grant select on app.journey_spark_progress to authenticated;

-- Per-enrollment progress.
--   total_sparks      distinct sparks of the trail (journey_sparks)
--   completed_sparks  of those, the completed ones
--   progress_percent  floor(100 * completed / total), an integer; 0 when the trail has no
--                     sparks. Floor, so 100 means every spark is completed.
--   status            completed when total > 0 and every spark is completed; in_progress when
--                     at least one spark is in_progress or completed; else not_started. A trail
--                     with no sparks stays not_started.
--   completed_at      when status is completed: the time the last spark was completed (the max
--                     over sparks of each spark's first completion); else null
--   last_activity_at  the latest learning event (any verb) on the trail's sparks; started_at
--                     when there is none
--   current_concept   the concept of the first incomplete spark in trail order, which is the
--                     first concept by order_index holding an incomplete spark; null when none
create view app.journey_progress with (security_invoker = true) as
select
  jt.enrollment_id as id,
  jt.user_id,
  jt.trail_id,
  jt.started_at,
  jt.snapshot_id,
  jt.trail_slug,
  jt.trail_title,
  jt.trail_difficulty_level,
  a.total_sparks,
  a.completed_sparks,
  case when a.total_sparks > 0 then (100 * a.completed_sparks) / a.total_sparks else 0 end as progress_percent,
  private.journey_status(a.total_sparks, a.completed_sparks, a.touched_sparks) as status,
  case when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then a.last_completed_at end as completed_at,
  private.journey_last_activity(a.last_event_at, jt.started_at) as last_activity_at,
  cc.concept_id as current_concept_id,
  cc.concept_slug as current_concept_slug,
  cc.concept_title as current_concept_title
from app.journey_trails jt
cross join lateral (
  select
    pg_catalog.count(*)::integer as total_sparks,
    (pg_catalog.count(*) filter (where jsp.status = 'completed'))::integer as completed_sparks,
    (pg_catalog.count(*) filter (where jsp.status <> 'not_started'))::integer as touched_sparks,
    pg_catalog.max(jsp.completed_at) as last_completed_at,
    pg_catalog.max(jsp.last_event_at) as last_event_at
  from app.journey_spark_progress jsp
  where jsp.enrollment_id = jt.enrollment_id
) a
left join lateral (
  select jsp.concept_id, jsp.concept_slug, jsp.concept_title
  from app.journey_spark_progress jsp
  where jsp.enrollment_id = jt.enrollment_id and jsp.status <> 'completed'
  order by jsp.concept_order, jsp.concept_slug, jsp.spark_order, jsp.spark_slug
  limit 1
) cc on true;
comment on view app.journey_progress is
  'Per visible enrollment: total/completed sparks, progress_percent (floored integer), status, completed_at, last_activity_at, current concept. Derived, never stored.';
grant select on app.journey_progress to authenticated;

-- private.journey_list_item: the UserJourneyListItem document of one journey_progress row; the
-- journey reads build theirs with it too. Beyond the spec's fields it says whether the trail
-- changed since the learner enrolled (private.journey_content_changes).
create or replace function private.journey_list_item(journey app.journey_progress)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'id', (journey).id,
    'user_id', (journey).user_id,
    'trail_id', (journey).trail_id,
    'status', (journey).status,
    'progress_percent', (journey).progress_percent,
    'started_at', (journey).started_at,
    'completed_at', (journey).completed_at,
    'last_activity_at', (journey).last_activity_at,
    'completed_sparks', (journey).completed_sparks,
    'total_sparks', (journey).total_sparks,
    'trail', pg_catalog.jsonb_build_object(
      'id', (journey).trail_id,
      'title', (journey).trail_title,
      'slug', (journey).trail_slug,
      'difficulty_level', (journey).trail_difficulty_level))
    || private.journey_content_changes(e.snapshot_id, (journey).snapshot_id, (journey).trail_id)
  from (select) one
  left join app.enrollments e on e.id = (journey).id
$$;
comment on function private.journey_list_item(app.journey_progress) is
  'UserJourneyListItem JSON for one app.journey_progress row, with content_changed_since_enrollment and content_changes_url.';
grant execute on function private.journey_list_item(app.journey_progress) to anon, authenticated;

-- private.learning_event_json: the LearningEvent document of one event row.
create or replace function private.learning_event_json(event app.learning_events, created boolean)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'id', (event).id,
    'user_id', (event).user_id,
    'spark_id', (event).spark_id,
    'verb', (event).verb,
    'occurred_at', (event).occurred_at,
    'recorded_at', (event).recorded_at,
    'idempotency_key', (event).idempotency_key,
    'voided_at', (event).voided_at,
    'created', learning_event_json.created)
$$;
comment on function private.learning_event_json(app.learning_events,boolean) is
  'LearningEvent JSON for one app.learning_events row, with created = whether this request inserted it.';
grant execute on function private.learning_event_json(app.learning_events,boolean) to anon, authenticated;

-- private.require_user: the caller's user id, or PT401 when the request carries no user.
create or replace function private.require_user()
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  caller uuid := (select auth.uid());
begin
  if caller is null then
    raise exception using
      errcode = 'PT401',
      message = 'a signed-in user is required',
      detail = '{}';
  end if;
  return caller;
end
$$;
comment on function private.require_user() is
  'auth.uid() of the caller; raises PT401 (UNAUTHORIZED) when the request carries no user.';
grant execute on function private.require_user() to anon, authenticated;

-- private.require_idempotency_key: raises 22023 unless a client's idempotency key is null or
-- 1 to 200 characters (learning events and reviews alike).
create or replace function private.require_idempotency_key(value text)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
  if require_idempotency_key.value is not null and pg_catalog.length(require_idempotency_key.value) not between 1 and 200 then
    raise exception using
      errcode = '22023', message = 'idempotency_key must be 1 to 200 characters',
      detail = pg_catalog.jsonb_build_object('field', 'idempotency_key')::text;
  end if;
end
$$;
comment on function private.require_idempotency_key(text) is
  'Raises 22023 unless an idempotency key is null or 1-200 characters.';
grant execute on function private.require_idempotency_key(text) to anon, authenticated;

-- private.require_learning_time
-- Purpose: when a learner says something happened (an event, a review): null means now; at
--          most 5 minutes ahead of the server clock (client clock skew); not before
--          2000-01-01T00:00:00Z (a fixed bound, so a request is valid or invalid forever).
-- Returns: the time to record. Errors: 22023 naming the field.
create or replace function private.require_learning_time(field text, value timestamp with time zone)
returns timestamp with time zone
language plpgsql
stable
set search_path = ''
as $$
declare
  chosen constant timestamptz := coalesce(require_learning_time.value, pg_catalog.now());
begin
  if chosen > pg_catalog.now() + interval '5 minutes' then
    raise exception using
      errcode = '22023',
      message = pg_catalog.format('%s must not be in the future (5 minutes of clock skew allowed)', require_learning_time.field),
      detail = pg_catalog.jsonb_build_object('field', require_learning_time.field, 'value', chosen,
        'max', pg_catalog.now() + interval '5 minutes')::text;
  end if;
  if chosen < timestamptz '2000-01-01 00:00:00+00' then
    raise exception using
      errcode = '22023',
      message = pg_catalog.format('%s must not be before 2000-01-01T00:00:00Z', require_learning_time.field),
      detail = pg_catalog.jsonb_build_object('field', require_learning_time.field, 'value', chosen,
        'min', timestamptz '2000-01-01 00:00:00+00')::text;
  end if;
  return chosen;
end
$$;
comment on function private.require_learning_time(text,timestamp with time zone) is
  'The time a learner reports (null = now), or 22023 naming the field when it is more than 5 minutes ahead or before 2000-01-01.';
grant execute on function private.require_learning_time(text,timestamp with time zone) to anon, authenticated;

-- api.record_learning_event
-- Purpose: record that the caller started, completed, mastered or bookmarked a spark.
-- Params:  spark_id         a spark entity id present in the current snapshot
--          verb             a value of app.learning_verbs
--          occurred_at      when it happened; null means now. At most 5 minutes ahead of the
--                           server clock (client clock skew); not before 2000-01-01T00:00:00Z.
--          idempotency_key  optional, 1-200 characters, unique per user.
-- Returns: LearningEvent {id,user_id,spark_id,verb,occurred_at,recorded_at,idempotency_key,
--          created}. created = false when an earlier event is returned instead of a new one:
--          the same idempotency_key (a retry), or the same natural key
--          (spark_id, verb, occurred_at) when occurred_at was given.
-- Errors:  PT401 without a user; 22023 for a missing spark_id/verb, unknown verb, bad key length
--          or an occurred_at in the future or before 2000-01-01; PT404 for a spark not in the
--          current snapshot; 23505 when the idempotency_key was already used for a different spark, verb or occurred_at.
create or replace function api.record_learning_event(spark_id uuid, verb text, occurred_at timestamp with time zone default null::timestamp with time zone, idempotency_key text default null::text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('record_learning_event');
  caller uuid := private.require_user();
  event_time timestamptz;
  event app.learning_events;
begin
  if record_learning_event.spark_id is null then
    raise exception using
      errcode = '22023', message = 'spark_id is required',
      detail = pg_catalog.jsonb_build_object('field', 'spark_id')::text;
  end if;
  if record_learning_event.verb is null or not exists (
    select 1 from app.learning_verbs v where v.value = record_learning_event.verb
  ) then
    raise exception using
      errcode = '22023',
      message = 'verb must be one of the learning verbs',
      detail = pg_catalog.jsonb_build_object('field', 'verb', 'value', record_learning_event.verb,
        'allowed', (select pg_catalog.jsonb_agg(v.value order by v.sort_order) from app.learning_verbs v))::text;
  end if;
  perform private.require_idempotency_key(record_learning_event.idempotency_key);

  -- A retry with the same key returns the original event, before any check that could have
  -- changed since (the spark may have left the current snapshot meanwhile).
  if record_learning_event.idempotency_key is not null then
    select le.* into event
    from app.learning_events le
    where le.user_id = caller and le.idempotency_key = record_learning_event.idempotency_key;
    if found then
      if event.spark_id <> record_learning_event.spark_id
         or event.verb <> record_learning_event.verb
         or (record_learning_event.occurred_at is not null and event.occurred_at <> record_learning_event.occurred_at) then
        raise exception using
          errcode = '23505',
          message = 'idempotency key already used for a different event',
          detail = pg_catalog.jsonb_build_object('idempotency_key', record_learning_event.idempotency_key,
            'event_id', event.id)::text;
      end if;
      return private.learning_event_json(event, false);
    end if;
  end if;

  event_time := private.require_learning_time('occurred_at', record_learning_event.occurred_at);

  -- user_id defaults to auth.uid(); the insert policy checks it, and the trigger
  -- learning_events_spark_is_current that the spark is in the current snapshot (PT404). Conflicts
  -- on either unique key (idempotency key, natural key) mean "already recorded": fall through to
  -- the existing row.
  insert into app.learning_events (spark_id, verb, occurred_at, idempotency_key)
  values (record_learning_event.spark_id, record_learning_event.verb, event_time,
          record_learning_event.idempotency_key)
  on conflict do nothing
  returning * into event;
  if event.id is not null then
    return private.learning_event_json(event, true);
  end if;

  select le.* into event
  from app.learning_events le
  where le.user_id = caller
    and (le.idempotency_key = record_learning_event.idempotency_key
         or (le.spark_id = record_learning_event.spark_id and le.verb = record_learning_event.verb
             and le.occurred_at = event_time))
  order by (le.idempotency_key is not distinct from record_learning_event.idempotency_key) desc
  limit 1;
  return private.learning_event_json(event, false);
end
$$;
comment on function api.record_learning_event(uuid,text,timestamp with time zone,text) is
  'Records a learning event for the caller. Params: spark_id, verb, occurred_at (null = now, 2000-01-01 <= t <= now + 5 min), idempotency_key. Returns LearningEvent + created. Errors: PT401 no user, 22023 invalid input/time out of range, PT404 unknown spark, 23505 key reused for another event.';
grant execute on function api.record_learning_event(uuid,text,timestamp with time zone,text) to anon, authenticated, service_role;

-- A snapshot's content never changes after its import, so this is computed once, like the other
-- rollups: a trigger on app.snapshot_rollups, whose row
-- private.refresh_content_rollups writes last, fills it in the same transaction.
create table app.trail_spark_positions (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  ordinal integer not null,
  placement integer not null,
  spark_id uuid not null,
  concept_id uuid not null,
  spark_title text not null,
  progress_json text not null,
  parents uuid[] not null,
  constraint trail_spark_positions_pkey primary key (snapshot_id, trail_id, ordinal)
);
comment on table app.trail_spark_positions is
  'Per snapshot and trail: each distinct spark at its first placement, numbered in trail order (1-based), with its concept, title and prerequisites. Filled from app.snapshot_rollups.';
comment on column app.trail_spark_positions.placement is
  'The rank of the spark''s placement in trail order (1-based, dense): sparks of one concept at one order_index share it. Ordinal order never lowers it; what next orders a placement''s sparks by difficulty.';
comment on column app.trail_spark_positions.progress_json is
  'The spark_progress element of this spark for a learner who has not started it (private.spark_progress_json), as JSON text.';
comment on column app.trail_spark_positions.parents is
  'The spark''s prerequisites (sources of its incoming prerequisite links, by id), as app.spark_graph_nodes.parents holds them: what next tests them without a lookup per spark.';
alter table app.trail_spark_positions enable row level security;
create policy "anyone reads trail spark positions" on app.trail_spark_positions
  for select to anon, authenticated
  using (true);
grant select on app.trail_spark_positions to anon, authenticated;

-- private.derive_trail_spark_positions
-- Purpose: the trail-order spark list, computed from the content tables.
-- Params:  snapshot_id; trail_id, or null for every trail of the snapshot.
-- Returns: (trail_id, ordinal, placement, spark_id, concept_id, spark_title, parents), ordinal
--          1-based per trail: distinct sparks at their first placement (concept order_index,
--          concept slug, placement order_index), ranked by it and then by spark slug; placement:
--          the dense rank of that first placement alone (ties share it); parents: the spark's
--          prerequisites in id order (read from app.spark_links: the import fills positions
--          before the graph nodes, whose parents are the same; pgTAP compares the two).
create or replace function private.derive_trail_spark_positions(snapshot_id uuid, trail_id uuid)
returns table(trail_id uuid, ordinal integer, placement integer, spark_id uuid, concept_id uuid, spark_title text, parents uuid[])
language sql
stable
set search_path = ''
as $$
  select
    f.trail_id,
    (pg_catalog.row_number() over (
      partition by f.trail_id
      order by f.concept_order, f.concept_slug, f.spark_order, s.slug))::integer,
    (pg_catalog.dense_rank() over (
      partition by f.trail_id
      order by f.concept_order, f.concept_slug, f.spark_order))::integer,
    f.spark_id,
    f.concept_id,
    s.title,
    coalesce((
      select pg_catalog.array_agg(l.source_id order by l.source_id)
      from app.spark_links l
      where l.snapshot_id = derive_trail_spark_positions.snapshot_id and l.target_id = f.spark_id and l.type = 'prerequisite'), '{}')
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
comment on function private.derive_trail_spark_positions(uuid,uuid) is
  'Distinct sparks of one trail (or every trail) of a snapshot in trail order, with their placement rank and prerequisites, computed from concepts, placements, sparks and links.';
grant execute on function private.derive_trail_spark_positions(uuid,uuid) to anon, authenticated;

-- The list counts a trail's sparks against the caller's: an index-only range of spark ids.
create unique index trail_spark_positions_trail_spark on app.trail_spark_positions (snapshot_id, trail_id, spark_id);

-- What next walks the caller's trails one at a time, each as one range of this index, and stops
-- after the trail that fills its list (with the rest of the last spark's placement): the columns
-- it tests and sorts by, from the index alone.
create index trail_spark_positions_walk on app.trail_spark_positions (snapshot_id, trail_id, ordinal) include (placement, spark_id, concept_id, parents);

-- Fills a snapshot's trail positions, each with its not-started spark_progress element.
create or replace function private.fill_trail_spark_positions()
returns trigger
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
begin
  delete from app.trail_spark_positions p where p.snapshot_id = new.snapshot_id;
  insert into app.trail_spark_positions (snapshot_id, trail_id, ordinal, placement, spark_id, concept_id, spark_title, progress_json, parents)
  select new.snapshot_id, d.trail_id, d.ordinal, d.placement, d.spark_id, d.concept_id, d.spark_title,
    private.spark_progress_json(d.spark_title, d.spark_id, 'not_started', null)::text, d.parents
  from private.derive_trail_spark_positions(new.snapshot_id, null) d
  order by d.trail_id, d.ordinal;
  return null;
end
$$;
comment on function private.fill_trail_spark_positions() is
  'Trigger: (re)computes a snapshot''s app.trail_spark_positions (with each not-started spark_progress element) whenever its app.snapshot_rollups row is written.';
-- The trail positions it writes (one row per placed spark) derive from content rows of the
-- snapshot they reference: no foreign-key check to run (the tables it writes have no triggers that
-- replica would skip).
call private.skip_row_checks_where_superuser('private.fill_trail_spark_positions()');

create trigger snapshot_rollups_trail_spark_positions
  after insert or update on app.snapshot_rollups
  for each row execute function private.fill_trail_spark_positions();

-- private.caller_journeys
-- Purpose: the caller's enrollments with their derived figures, in one pass over each trail's
--          spark positions: the rule both journey bodies read (docs/journeys.md "How progress is
--          derived"; the reference views app.journey_*).
-- Params:  enrollment  one enrollment id, or null for all of the caller's;
--          with_sparks also the current concept and the spark_progress elements (the detail).
-- Returns: one row per visible enrollment: the app.journey_progress columns but the current
--          concept's slug and title, plus spark_progress: the elements of the JSON array in trail
--          order, as jsonb prints them (each element's jsonb text, joined by ', '), without the
--          brackets; null without with_sparks or for a trail with no sparks.
-- Rows:    a learner's enrollments are a handful. Told the default (1,000), the planner joined
--          the detail's current concept by hashing every concept of every snapshot, per request.
create or replace function private.caller_journeys(enrollment uuid, with_sparks boolean)
returns table(id uuid, user_id uuid, trail_id uuid, started_at timestamp with time zone, snapshot_id uuid,
              trail_slug text, trail_title text, trail_difficulty_level text, total_sparks integer,
              completed_sparks integer, progress_percent integer, status text,
              completed_at timestamp with time zone, last_activity_at timestamp with time zone,
              current_concept_id uuid, spark_progress text)
language sql
stable
rows 10
set search_path = ''
as $$
  with states as materialized (
    select * from private.caller_spark_states()
  )
  select
    e.id, e.user_id, e.trail_id, e.started_at,
    t.snapshot_id, t.slug, t.title, t.difficulty_level,
    a.total_sparks, a.completed_sparks,
    case when a.total_sparks > 0 then (100 * a.completed_sparks) / a.total_sparks else 0 end,
    private.journey_status(a.total_sparks, a.completed_sparks, a.touched_sparks),
    case when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then a.last_completed_at end,
    private.journey_last_activity(a.last_event_at, e.started_at),
    a.current_concept_id, a.spark_progress
  from app.enrollments e
  cross join lateral private.journey_trail(e.trail_id) t
  cross join lateral (
    select exists (select from app.snapshot_rollups r where r.snapshot_id = t.snapshot_id) as rolled_up
  ) r
  cross join lateral (
    select
      pg_catalog.count(*)::integer as total_sparks,
      (pg_catalog.count(*) filter (where st.completed_at is not null))::integer as completed_sparks,
      (pg_catalog.count(*) filter (where st.completed_at is not null or st.started))::integer as touched_sparks,
      pg_catalog.max(st.completed_at) as last_completed_at,
      pg_catalog.max(st.last_event_at) as last_event_at,
      (pg_catalog.array_agg(p.concept_id order by p.ordinal)
         filter (where caller_journeys.with_sparks and st.completed_at is null))[1] as current_concept_id,
      -- The stored not-started element where the caller has no events on the spark. Joined as
      -- text: parsing 250 stored elements back into jsonb cost 1.2 ms, joining them 0.1 ms.
      pg_catalog.string_agg(
        case when st.spark_id is null then p.progress_json
          else private.spark_progress_json(p.spark_title, p.spark_id,
                 private.spark_status(st.completed_at, st.started), st.completed_at)::text
        end,
        ', ' order by p.ordinal) filter (where caller_journeys.with_sparks) as spark_progress
    from (
      -- The trail's positions: stored once the snapshot is rolled up, else derived (read in
      -- place, as what next reads them: through a set-returning function they cost 40 % more).
      select p.ordinal, p.spark_id, p.concept_id, p.spark_title, p.progress_json
      from app.trail_spark_positions p
      where r.rolled_up and p.snapshot_id = t.snapshot_id and p.trail_id = e.trail_id
      union all
      select d.ordinal, d.spark_id, d.concept_id, d.spark_title,
        private.spark_progress_json(d.spark_title, d.spark_id, 'not_started', null)::text
      from private.derive_trail_spark_positions(t.snapshot_id, e.trail_id) d
      where not r.rolled_up
    ) p
    left join states st on st.spark_id = p.spark_id
  ) a
  where e.user_id = (select auth.uid())
    and (caller_journeys.enrollment is null or e.id = caller_journeys.enrollment)
$$;
comment on function private.caller_journeys(uuid,boolean) is
  'The caller''s enrollments (one, or all) with derived figures, status and last activity; with_sparks adds the current concept id and the spark_progress elements.';
grant execute on function private.caller_journeys(uuid,boolean) to anon, authenticated;
-- Without with_sparks the two ordered aggregates see no rows; presorting every trail's positions
-- for them (PostgreSQL 16 and later) would cost the journey list ~15 % for nothing. PostgreSQL 15
-- neither presorts nor knows the setting, which a SET clause in the definition would refuse.
do $$
begin
  if exists (select from pg_catalog.pg_settings where name = 'enable_presorted_aggregate') then
    alter function private.caller_journeys(uuid, boolean) set enable_presorted_aggregate to 'off';
  end if;
end
$$;

-- private.journey_list_json
-- Purpose: the {data: UserJourneyListItem[]} body of the caller's journeys.
-- Params:  status  null (all) | not_started | in_progress | completed (validated by the caller)
--          sort    recent | progress | started (validated by the caller)
-- Returns: json (built as jsonb).
create or replace function private.journey_list_json(status text, sort text)
returns json
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('data', coalesce(pg_catalog.jsonb_agg(
      private.journey_list_item(row(
        j.id, j.user_id, j.trail_id, j.started_at, j.snapshot_id, j.trail_slug, j.trail_title, j.trail_difficulty_level,
        j.total_sparks, j.completed_sparks, j.progress_percent, j.status, j.completed_at, j.last_activity_at,
        null, null, null)::app.journey_progress)
      order by
        case when journey_list_json.sort = 'recent' then j.last_activity_at end desc nulls last,
        case when journey_list_json.sort = 'progress'
          then j.completed_sparks::numeric / nullif(j.total_sparks, 0) end desc nulls last,
        case when journey_list_json.sort = 'started' then j.started_at end desc nulls last,
        j.last_activity_at desc, j.started_at desc, j.id), '[]'::jsonb))::json
  from private.caller_journeys(null, false) j
  where journey_list_json.status is null or j.status = journey_list_json.status
$$;
comment on function private.journey_list_json(text,text) is
  'The caller''s journeys as {data: UserJourneyListItem[]} JSON text (status filter, sort), in one statement.';
grant execute on function private.journey_list_json(text,text) to anon, authenticated;

-- private.journey_detail_json
-- Purpose: the UserJourneyDetail body of one of the caller's enrollments.
-- Params:  enrollment  an enrollment id;
--          created     null, or whether this request created the enrollment (the enroll answer
--                      adds it as "created").
-- Returns: json (as jsonb prints it); null when the caller has no visible enrollment with this id.
create or replace function private.journey_detail_json(enrollment uuid, created boolean)
returns json
language sql
stable
set search_path = ''
as $$
  -- The list item of this journey, plus its current concept and spark_progress. The document is
  -- built as jsonb with a placeholder for spark_progress, printed, and the placeholder swapped for
  -- the array text caller_journeys joined, which is what jsonb would print there. The placeholder
  -- text occurs once: the object has one such key, and inside a JSON string every quote is
  -- escaped.
  select pg_catalog.replace(
      (private.journey_list_item(row(
          j.id, j.user_id, j.trail_id, j.started_at, j.snapshot_id, j.trail_slug, j.trail_title, j.trail_difficulty_level,
          j.total_sparks, j.completed_sparks, j.progress_percent, j.status, j.completed_at, j.last_activity_at,
          c.id, c.slug, c.title)::app.journey_progress)
        || pg_catalog.jsonb_build_object(
          'current_concept', case when c.id is not null
            then pg_catalog.jsonb_build_object('id', c.id, 'title', c.title, 'slug', c.slug) end,
          'spark_progress', 0)
        || case when journey_detail_json.created is not null
          then pg_catalog.jsonb_build_object('created', journey_detail_json.created) else '{}'::jsonb end)::text,
      '"spark_progress": 0',
      '"spark_progress": [' || coalesce(j.spark_progress, '') || ']')::json
  from private.caller_journeys(journey_detail_json.enrollment, true) j
  left join app.concepts c on c.snapshot_id = j.snapshot_id and c.id = j.current_concept_id
$$;
comment on function private.journey_detail_json(uuid,boolean) is
  'UserJourneyDetail JSON text of one of the caller''s enrollments (null when not visible), plus created when given, in one statement and one pass over the trail''s sparks.';
grant execute on function private.journey_detail_json(uuid,boolean) to anon, authenticated;

-- api.list_user_journeys
-- Purpose: the caller's enrollments with derived progress (only the caller's rows).
-- Params:  status  null (all) | not_started | in_progress | completed
--          sort    recent (last_activity_at desc, default) | progress (completion ratio desc)
--                  | started (started_at desc); ties: last_activity_at desc, started_at desc, id
-- Returns: {data: UserJourneyListItem[]}, as json (the body text as built).
-- Errors:  PT401 without a user; 22023 for an unknown status or sort.
create or replace function api.list_user_journeys(status text default null::text, sort text default 'recent'::text)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_user_journeys');
  chosen_sort text := coalesce(list_user_journeys.sort, 'recent');
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
  return private.journey_list_json(list_user_journeys.status, chosen_sort);
end
$$;
comment on function api.list_user_journeys(text,text) is
  'The caller''s journeys with derived progress. Params: status (not_started|in_progress|completed|null), sort (recent|progress|started). Returns {data: UserJourneyListItem[]} (json). Errors: PT401 no user, 22023 bad status/sort.';
grant execute on function api.list_user_journeys(text,text) to anon, authenticated, service_role;

-- api.get_user_journey
-- Purpose: one of the caller's enrollments with per-spark progress.
-- Params:  id  the enrollment id.
-- Returns: UserJourneyDetail (list item + current_concept {id,title,slug}|null + spark_progress
--          [{spark_id,title,status,completed_at}] in trail order), as json.
-- Errors:  PT401 without a user; PT404 when the caller has no enrollment with this id (another
--          user's enrollment is "not found" too).
create or replace function api.get_user_journey(id uuid)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('get_user_journey');
  result json;
begin
  perform private.require_user();
  result := private.journey_detail_json(get_user_journey.id, null);
  if result is null then
    raise exception using
      errcode = 'PT404',
      message = 'journey not found',
      detail = pg_catalog.jsonb_build_object('id', get_user_journey.id)::text;
  end if;
  return result;
end
$$;
comment on function api.get_user_journey(uuid) is
  'One of the caller''s journeys in detail. Params: id (enrollment id). Returns UserJourneyDetail (json). Errors: PT401 no user, PT404 unknown or not the caller''s.';
grant execute on function api.get_user_journey(uuid) to anon, authenticated, service_role;

-- api.enroll_in_trail
-- Purpose: enroll the caller in a trail of the current snapshot; idempotent.
-- Params:  trail_id  a trail entity id present in the current snapshot.
-- Returns: UserJourneyDetail plus created (true when this call inserted the enrollment, false
--          when the caller was already enrolled and the existing enrollment is returned).
-- Errors:  PT401 without a user; 22023 for a null trail_id; PT404 when the trail is not in the
--          current snapshot (or nothing is published).
create or replace function api.enroll_in_trail(trail_id uuid)
returns json
language plpgsql
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('enroll_in_trail');
  caller uuid := private.require_user();
  enrollment uuid;
  created boolean;
begin
  if enroll_in_trail.trail_id is null then
    raise exception using
      errcode = '22023',
      message = 'trail_id is required',
      detail = pg_catalog.jsonb_build_object('field', 'trail_id')::text;
  end if;

  -- user_id defaults to auth.uid(); the insert policy checks it, and the trigger
  -- enrollments_trail_is_current that the trail is in the current snapshot (PT404). A concurrent
  -- or repeated enrollment hits unique (user_id, trail_id) and returns the existing row instead.
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

  return private.journey_detail_json(enrollment, created);
end
$$;
comment on function api.enroll_in_trail(uuid) is
  'Enrolls the caller in a current-snapshot trail; idempotent. Params: trail_id. Returns UserJourneyDetail + created. Errors: PT401 no user, 22023 null trail_id, PT404 trail not in the current snapshot.';
grant execute on function api.enroll_in_trail(uuid) to anon, authenticated, service_role;
