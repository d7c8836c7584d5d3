-- private.dispatch_snapshot_read: a snapshot read in one statement (session check, snapshot
-- resolution as the request role, the content call only when the API lacks the body).
begin;
select plan(13);

-- Fixtures: a published and an archived snapshot (whatever the database holds is archived
-- first, so the published one here is the current one), a user with a live and an ended session.
update app.snapshots set status = 'archived' where status = 'published';
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('dddddddd-0000-4000-8000-000000000001', 'dispatch current', 'v2', 'published', now()),
  ('dddddddd-0000-4000-8000-000000000002', 'dispatch old', 'v1', 'archived', now() - interval '1 day');
insert into app.users (id, provider, provider_user_id, email, last_login_provider) values
  ('aaaaaaaa-0000-4000-8000-000000000081', 'dev', 'dispatch-reader', 'reader@example.com', 'dev');
insert into app.sessions (id, user_id, provider, access_expires_at, idle_timeout_seconds, expires_at) values
  ('bbbbbbbb-0000-4000-8000-000000000081', 'aaaaaaaa-0000-4000-8000-000000000081', 'dev', now() + interval '1 hour', 3600, now() + interval '1 day'),
  ('bbbbbbbb-0000-4000-8000-000000000082', 'aaaaaaaa-0000-4000-8000-000000000081', 'dev', now() + interval '1 hour', 3600, now() + interval '1 day');
update app.sessions set active = false, ended_at = now(), end_reason = 'logout' where id = 'bbbbbbbb-0000-4000-8000-000000000082';

-- The call used below reports which snapshot it was asked for, so the pinning is visible.
create function pg_temp.read(role text, claims text, args jsonb, held text[])
returns table (version text, snapshot_id uuid, body jsonb) language sql as $$
  select r.version, r.snapshot_id, r.body::jsonb
  from private.dispatch_snapshot_read(role, claims, 'api.resolve_snapshot(snapshot_id => ($1->>''snapshot_id'')::uuid)', args, held) r
$$;

-- acting as anon
select results_eq(
  $$ select version, snapshot_id, body ->> 'snapshot_id' from pg_temp.read('anon', null, '{"snapshot_id": null}', '{}') $$,
  $$ values ('dddddddd-0000-4000-8000-000000000001'::text, 'dddddddd-0000-4000-8000-000000000001'::uuid, 'dddddddd-0000-4000-8000-000000000001'::text) $$,
  'without a held version it resolves the current snapshot and runs the call pinned to it');
reset role;
select results_eq(
  $$ select version, snapshot_id, body from pg_temp.read('anon', null, '{"snapshot_id": null}', '{dddddddd-0000-4000-8000-000000000001}') $$,
  $$ values ('dddddddd-0000-4000-8000-000000000001'::text, 'dddddddd-0000-4000-8000-000000000001'::uuid, null::jsonb) $$,
  'when the resolved version is held it answers the version alone, without running the call');
reset role;
select is(
  (select body ->> 'snapshot_id' from pg_temp.read('anon', null, '{"snapshot_id": null}', '{dddddddd-0000-4000-8000-000000000002}')),
  'dddddddd-0000-4000-8000-000000000001',
  'a held version that is no longer the one answering does not stop the call');
reset role;
select results_eq(
  $$ select version, body ->> 'snapshot_id' from pg_temp.read('anon', null, '{"snapshot_id": "dddddddd-0000-4000-8000-000000000002"}', null) $$,
  $$ values ('dddddddd-0000-4000-8000-000000000002'::text, 'dddddddd-0000-4000-8000-000000000002'::text) $$,
  'an explicit snapshot id (archived included) is the one resolved and pinned');
reset role;
select throws_ok(
  $$ select * from pg_temp.read('anon', null, '{"snapshot_id": "dddddddd-0000-4000-8000-0000000000ff"}', null) $$,
  'PT404', 'snapshot not found', 'an unknown explicit snapshot id is not found');
reset role;
select is(
  (select body from private.dispatch_snapshot_read('anon', null, 'api.list_difficulty_levels()', '{"snapshot_id": null}', null)),
  (select api.list_difficulty_levels()::text),
  'the body is the call''s own text');
reset role;

-- acting as the reader, live session
select results_eq(
  $$ select version, current_user = 'authenticated', current_setting('request.jwt.claims', true)::jsonb ->> 'sub'
     from pg_temp.read('authenticated', '{"sub":"aaaaaaaa-0000-4000-8000-000000000081","role":"authenticated","iss":"sparkpath","session_id":"bbbbbbbb-0000-4000-8000-000000000081"}', '{"snapshot_id": null}', null) $$,
  $$ values ('dddddddd-0000-4000-8000-000000000001'::text, true, 'aaaaaaaa-0000-4000-8000-000000000081'::text) $$,
  'a live session is served, with the request role and claims set for the rest of the transaction (the PostgREST contract)');
reset role;
select set_config('request.jwt.claims', '', true);

-- acting as the reader, ended session
select throws_ok(
  $$ select * from pg_temp.read('authenticated', '{"sub":"aaaaaaaa-0000-4000-8000-000000000081","role":"authenticated","iss":"sparkpath","session_id":"bbbbbbbb-0000-4000-8000-000000000082"}', '{"snapshot_id": null}', '{dddddddd-0000-4000-8000-000000000001}') $$,
  'PT401', 'Session is no longer active; sign in again',
  'a logged-out session is refused even when the body is held (the check is part of the statement)');
reset role;
select throws_ok(
  $$ select * from pg_temp.read('authenticated', '{"sub":"aaaaaaaa-0000-4000-8000-000000000081","role":"authenticated","iss":"sparkpath","session_id":"bbbbbbbb-0000-4000-8000-0000000000ff"}', '{"snapshot_id": null}', null) $$,
  'PT401', null, 'a token of our own issuer naming no session of ours is refused');
reset role;
select set_config('request.jwt.claims', '', true);

-- acting as the API login role, with bad requests
select throws_ok(
  $$ select * from private.dispatch_snapshot_read('service_role', null, 'api.list_difficulty_levels()', '{}', null) $$,
  '42501', 'unsupported request role', 'only anon and authenticated are request roles');
select throws_ok(
  $$ select * from private.dispatch_snapshot_read('anon', null, 'pg_catalog.pg_sleep(1)', '{}', null) $$,
  '42501', 'only api functions may be dispatched', 'only api functions may be dispatched');
select ok(
  not has_function_privilege('anon', 'private.dispatch_snapshot_read(text, text, text, jsonb, text[], jsonb)', 'execute')
  and not has_function_privilege('authenticated', 'private.dispatch_snapshot_read(text, text, text, jsonb, text[], jsonb)', 'execute')
  and not has_function_privilege('anon', 'private.begin_request(text, text, jsonb, text)', 'execute'),
  'request roles cannot run the dispatchers (the call is SQL text)');
select is(
  private.dispatch('anon', null, 'api.list_difficulty_levels()', '{}')::jsonb,
  api.list_difficulty_levels()::jsonb,
  'private.dispatch keeps its behaviour on the shared request contract');
reset role;

select * from finish();
rollback;
