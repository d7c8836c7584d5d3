-- Session vouching (20261123000000_session_vouching.sql): private.request_live_for says how long
-- private.check_request keeps passing a request; session rows notify sparkpath_sessions; and the
-- reads the API keeps in memory answer every caller alike, so one answer may serve them all.
-- That notifications reach the API after commit is tested in test/http/content-change-feed.test.ts.
begin;
select plan(31);

insert into app.users (id, provider, provider_user_id, email, last_login_provider) values
  ('aaaaaaaa-0000-4000-8000-000000000001', 'dev', 'alice', 'alice@example.com', 'dev'),
  ('aaaaaaaa-0000-4000-8000-000000000002', 'dev', 'bob', 'bob@example.com', 'dev');
insert into app.sessions (id, user_id, provider, access_expires_at, idle_timeout_seconds, expires_at, last_activity_at) values
  -- live for an hour (idle limit) within a day (absolute)
  ('bbbbbbbb-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'dev', now() + interval '1 hour', 3600, now() + interval '1 day', now()),
  -- logged out below
  ('bbbbbbbb-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'dev', now() + interval '1 hour', 3600, now() + interval '1 day', now()),
  -- ends by its absolute limit in 10 s
  ('bbbbbbbb-0000-4000-8000-000000000003', 'aaaaaaaa-0000-4000-8000-000000000001', 'dev', now() + interval '1 hour', 3600, now() + interval '10 seconds', now()),
  -- goes idle in 20 s
  ('bbbbbbbb-0000-4000-8000-000000000004', 'aaaaaaaa-0000-4000-8000-000000000001', 'dev', now() + interval '1 hour', 60, now() + interval '1 day', now() - interval '40 seconds'),
  -- already idle
  ('bbbbbbbb-0000-4000-8000-000000000005', 'aaaaaaaa-0000-4000-8000-000000000001', 'dev', now() + interval '1 hour', 60, now() + interval '1 day', now() - interval '61 seconds');
update app.sessions set active = false, ended_at = now(), end_reason = 'logout' where id = 'bbbbbbbb-0000-4000-8000-000000000002';

create function pg_temp.claims_for(session_id text, sub text, iss text) returns jsonb language sql as $$
  select jsonb_build_object('sub', sub, 'role', 'authenticated', 'iss', iss, 'session_id', session_id)
$$;
create function pg_temp.live_for(session_id text, sub text = 'aaaaaaaa-0000-4000-8000-000000000001', iss text = 'sparkpath')
returns double precision language sql as $$
  select private.request_live_for(pg_temp.claims_for(session_id, sub, iss))
$$;

-- What request_live_for answers
select is(private.request_live_for(null), 'Infinity'::double precision, 'no claims: nothing that could end');
select is(private.request_live_for('{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}'),
  'Infinity'::double precision, 'a token without session_id binds no session');
select ok(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000001') between 3599 and 3600, 'a live session: until its idle limit (an hour)');
select ok(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000003') between 9 and 10, 'the absolute limit when it comes first (10 s)');
select ok(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000004') between 19 and 20, 'the idle limit when it comes first (20 s)');
select is(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000005'), null, 'an idle session: refused now');
select is(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000002'), null, 'a logged-out session: refused now');
select is(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002'), null, 'another user''s session: refused');
select is(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000001', 'not-a-uuid'), null, 'a subject that is no uuid owns no session');
select is(pg_temp.live_for('cccccccc-0000-4000-8000-000000000009'), null, 'our issuer naming no session of ours: refused');
select is(pg_temp.live_for('not-a-uuid', iss => 'https://project.supabase.co/auth/v1'), null, 'a malformed session id: refused whatever the issuer');
select is(private.request_live_for('{"sub":"aaaaaaaa-0000-4000-8000-000000000001","session_id":null}'), null, 'a null session id: refused');
select is(pg_temp.live_for('cccccccc-0000-4000-8000-000000000009', iss => 'https://project.supabase.co/auth/v1'),
  'Infinity'::double precision, 'another issuer''s session (Supabase Auth): not ours to judge');
select is(pg_temp.live_for('bbbbbbbb-0000-4000-8000-000000000002', iss => 'https://project.supabase.co/auth/v1'), null,
  'a session of ours is judged whatever issuer the token names');

-- check_request follows it: a subject that is no uuid is now a clean 28000, not a cast error.
select set_config('request.jwt.claims', pg_temp.claims_for('bbbbbbbb-0000-4000-8000-000000000001', 'not-a-uuid', 'sparkpath')::text, true);
select throws_ok($$ select private.check_request() $$, '28000', 'Session is no longer active; sign in again',
  'check_request refuses what request_live_for refuses');
select set_config('request.jwt.claims', pg_temp.claims_for('bbbbbbbb-0000-4000-8000-000000000004', 'aaaaaaaa-0000-4000-8000-000000000001', 'sparkpath')::text, true);
select lives_ok($$ select private.check_request() $$, 'and passes what it vouches for');
select set_config('request.jwt.claims', '', true);

select hasnt_function('private', 'session_is_live', array['uuid', 'uuid'],
  'the old liveness helper is gone: request_live_for holds the rule');

-- Who may ask
select ok(not has_function_privilege('anon', 'private.request_live_for(jsonb)', 'execute')
          and not has_function_privilege('authenticated', 'private.request_live_for(jsonb)', 'execute')
          and not has_function_privilege('service_role', 'private.request_live_for(jsonb)', 'execute'),
  'no request role can probe sessions through it');
select is((select proconfig from pg_proc where oid = 'private.request_live_for(jsonb)'::regprocedure),
  array['search_path=""'], 'it runs with an empty search_path');

-- Session rows notify. tgtype: row (1) + delete (8) + update (16) = 25; statement truncate = 32.
select results_eq(
  $$ select t.tgname::text collate "default", t.tgtype::int, t.tgenabled::text
     from pg_trigger t
     where t.tgfoid = 'private.notify_session_changed()'::regprocedure and not t.tgisinternal order by 1 $$,
  $$ values ('sessions_notify_session_changed', 25, 'O'), ('sessions_notify_sessions_truncated', 32, 'O') $$,
  'app.sessions notifies after every update and delete (per row) and truncate');
select is((select array_agg(distinct t.tgrelid::regclass::text) from pg_trigger t
           where t.tgfoid = 'private.notify_session_changed()'::regprocedure),
  array['app.sessions'], 'only app.sessions');
select ok(not has_function_privilege('anon', 'private.notify_session_changed()', 'execute')
          and not has_function_privilege('authenticated', 'private.notify_session_changed()', 'execute'),
  'request roles cannot call the trigger function');
select lives_ok($$ update app.sessions set last_activity_at = now() where id = 'bbbbbbbb-0000-4000-8000-000000000001' $$,
  'an update of a session succeeds with the trigger in place');
select lives_ok($$ delete from app.sessions where id = 'bbbbbbbb-0000-4000-8000-000000000005' $$,
  'a delete of a session succeeds with the trigger in place');

-- A profile change notifies each live session of that user (GET /auth/session shows the profile).
select is((select t.tgtype::int from pg_trigger t
           where t.tgrelid = 'app.users'::regclass and t.tgfoid = 'private.notify_user_sessions_changed()'::regprocedure),
  17, 'app.users notifies after every update (per row: 1 + 16)');
select ok(not has_function_privilege('anon', 'private.notify_user_sessions_changed()', 'execute')
          and not has_function_privilege('authenticated', 'private.notify_user_sessions_changed()', 'execute'),
  'request roles cannot call the profile trigger function');
select lives_ok($$ update app.users set display_name = 'Alice' where id = 'aaaaaaaa-0000-4000-8000-000000000001' $$,
  'a profile update succeeds with the trigger in place');

-- The reads kept in memory (src/db/cached-rpc.ts CACHEABLE_CALLS) answer anon and any
-- authenticated caller alike, so an answer fetched as anon may serve a signed-in user.
select private.import_content_bundle('{
  "categories": [{"slug": "tech", "name": "Technology"}],
  "domains": [{"slug": "data", "name": "Data", "category": "tech"}],
  "trails": [{"slug": "sql", "domain": "data", "title": "SQL", "difficulty_level": "beginner"}],
  "concepts": [{"slug": "select", "trail": "sql", "title": "Select", "sparks": ["select-star"]}],
  "sparks": [{"slug": "select-star", "title": "SELECT *", "difficulty": "beginner", "estimated_mins": 5}]
}'::jsonb, 'Vouched', 'v5', '', promote => true);
create temporary table answers (caller text, call text, body text);
insert into answers
select caller, call, private.dispatch(role, claims, call, '{}'::jsonb)
from (values
  ('anon', 'anon', null::text),
  ('learner', 'authenticated', pg_temp.claims_for('bbbbbbbb-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'sparkpath')::text),
  ('admin', 'authenticated', '{"sub":"aaaaaaaa-0000-4000-8000-000000000002","role":"authenticated","user_role":"admin","subscription_plan":"premium"}')
) as callers (caller, role, claims)
cross join (values ('api.get_metadata()'), ('api.list_difficulty_levels()'), ('api.resolve_snapshot()'), ('api.get_current_snapshot()')) as calls (call);
reset role;
select is((select count(*)::int from answers where body is not null), 12, 'every caller got every answer');
select is((select count(distinct (call, body))::int from answers), 4, 'one answer per call, whoever asks');
select is((select body::jsonb ->> 'name' from answers where caller = 'learner' and call = 'api.get_current_snapshot()'),
  'Vouched', 'the current snapshot is the one just promoted');

-- snapshot_rollups (read by get_current_snapshot) notifies the content channel like snapshots.
select is((select t.tgtype::int from pg_trigger t
           where t.tgrelid = 'app.snapshot_rollups'::regclass and t.tgfoid = 'private.notify_content_changed()'::regprocedure),
  60, 'app.snapshot_rollups notifies sparkpath_content after every insert, update, delete and truncate statement');

select * from finish();
rollback;
