-- api.record_learning_event refuses occurred_at before 2000-01-01T00:00:00Z (and keeps refusing
-- more than 5 minutes ahead); the bound itself and recent times are accepted.
begin;
select plan(9);

select tests.create_user('alice');
set local timezone to 'UTC';

-- Fixture (as the owner): one published snapshot with one spark.
-- The fixture becomes the one current snapshot, whatever was current before (the seed's).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a9000000-0000-4000-8000-000000000001', 'bounds', 'v1', 'published', now());
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
values ('a9000000-0000-4000-8000-000000000001', 'e9000000-0000-4000-8000-000000000001', 'bounded', 'Bounded', 'beginner', 5);

-- acting as user A
select tests.authenticate_as('alice');

select throws_ok(
  $$ select api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'started', '1999-12-31T23:59:59.999999Z') $$,
  '22023', 'occurred_at must not be before 2000-01-01T00:00:00Z',
  'an event one microsecond before 2000-01-01 UTC is refused with 22023');
select throws_ok(
  $$ select api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'started', '0001-01-01T00:00:00Z') $$,
  '22023', 'occurred_at must not be before 2000-01-01T00:00:00Z',
  'an event in year 1 is refused');
select throws_ok(
  $$ select api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'started', '-infinity') $$,
  '22023', 'occurred_at must not be before 2000-01-01T00:00:00Z',
  'an event at -infinity is refused');
select throws_ok(
  $$ select api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'started', 'infinity') $$,
  '22023', 'occurred_at must not be in the future (5 minutes of clock skew allowed)',
  'the upper bound is unchanged');

reset role;
select is(
  (select count(*)::int from app.learning_events where user_id = tests.get_user_id('alice')),
  0, 'refused events leave no row');

-- acting as alice again
select tests.authenticate_as('alice');

select is(
  api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'started', '2000-01-01T00:00:00Z') ->> 'created',
  'true', 'an event exactly at 2000-01-01T00:00:00Z is recorded');
select is(
  (api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'started', '2000-01-01T01:00:00+01:00') ->> 'created'),
  'false', 'the same instant written with an offset is the same event (natural-key dedup unchanged)');
select is(
  (api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'completed', null, 'bounds-key') ->> 'created'),
  'true', 'occurred_at null still means now');

-- The JSON detail names the field and the bound.
create function pg_temp.detail_of(at timestamptz) returns jsonb language plpgsql as $$
begin
  perform api.record_learning_event('e9000000-0000-4000-8000-000000000001', 'started', at);
  return null;
exception when sqlstate '22023' then
  declare d text; begin get stacked diagnostics d = pg_exception_detail; return d::jsonb; end;
end $$;
select is(
  pg_temp.detail_of('1970-01-01T00:00:00Z') - 'value',
  '{"field": "occurred_at", "min": "2000-01-01T00:00:00+00:00"}'::jsonb,
  'the error detail names the field and the minimum');

select * from finish();
rollback;
