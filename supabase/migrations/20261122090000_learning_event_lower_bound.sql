-- Learning events get a lower bound on occurred_at.
--
-- api.record_learning_event accepted any past time (year 1, '-infinity'), which corrupts
-- streaks, "recent" ordering and the natural-key dedup. Events may no longer be dated before
-- 2000-01-01T00:00:00Z: a fixed bound (not "N years ago") so the same request is valid or
-- invalid forever. Everything else is unchanged from 20261122030000_journeys.sql.

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
-- Errors:  28000 without a user; 22023 for a missing spark_id/verb, unknown verb, bad key length
--          or an occurred_at in the future or before 2000-01-01; P0002 for a spark not in the
--          current snapshot; 23505 when the idempotency_key was already used for a different spark, verb or occurred_at.
create or replace function api.record_learning_event(
  spark_id uuid,
  verb text,
  occurred_at timestamptz default null,
  idempotency_key text default null
)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  caller uuid := private.require_user();
  current_snapshot uuid;
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
  if record_learning_event.idempotency_key is not null
     and pg_catalog.length(record_learning_event.idempotency_key) not between 1 and 200 then
    raise exception using
      errcode = '22023', message = 'idempotency_key must be 1 to 200 characters',
      detail = pg_catalog.jsonb_build_object('field', 'idempotency_key')::text;
  end if;

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

  event_time := coalesce(record_learning_event.occurred_at, pg_catalog.now());
  if event_time > pg_catalog.now() + interval '5 minutes' then
    raise exception using
      errcode = '22023',
      message = 'occurred_at must not be in the future (5 minutes of clock skew allowed)',
      detail = pg_catalog.jsonb_build_object('field', 'occurred_at', 'value', event_time,
        'max', pg_catalog.now() + interval '5 minutes')::text;
  end if;
  if event_time < timestamptz '2000-01-01 00:00:00+00' then
    raise exception using
      errcode = '22023',
      message = 'occurred_at must not be before 2000-01-01T00:00:00Z',
      detail = pg_catalog.jsonb_build_object('field', 'occurred_at', 'value', event_time,
        'min', timestamptz '2000-01-01 00:00:00+00')::text;
  end if;

  current_snapshot := private.resolve_snapshot_id(null);
  if current_snapshot is null or not exists (
    select 1 from app.sparks s
    where s.snapshot_id = current_snapshot and s.id = record_learning_event.spark_id
  ) then
    raise exception using
      errcode = 'P0002',
      message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('spark_id', record_learning_event.spark_id)::text;
  end if;

  -- user_id defaults to auth.uid(); the insert policy checks it. Conflicts on either unique key
  -- (idempotency key, natural key) mean "already recorded": fall through to the existing row.
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
comment on function api.record_learning_event(uuid, text, timestamptz, text) is
  'Records a learning event for the caller. Params: spark_id, verb, occurred_at (null = now, 2000-01-01 <= t <= now + 5 min), idempotency_key. Returns LearningEvent + created. Errors: 28000 no user, 22023 invalid input/time out of range, P0002 unknown spark, 23505 key reused for another event.';
grant execute on function api.record_learning_event(uuid, text, timestamptz, text) to anon, authenticated;
