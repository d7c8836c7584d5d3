-- private.check_request: the session check shared by the dispatcher and PostgREST's pre-request hook.
begin;
select plan(12);

insert into app.users (id, provider, provider_user_id, email, last_login_provider) values
  ('aaaaaaaa-0000-4000-8000-000000000001', 'dev', 'alice', 'alice@example.com', 'dev'),
  ('aaaaaaaa-0000-4000-8000-000000000002', 'dev', 'bob', 'bob@example.com', 'dev');
insert into app.sessions (id, user_id, provider, access_expires_at, idle_timeout_seconds, expires_at) values
  ('bbbbbbbb-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'dev', now() + interval '1 hour', 3600, now() + interval '1 day'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'dev', now() + interval '1 hour', 3600, now() + interval '1 day');
update app.sessions set active = false, ended_at = now(), end_reason = 'logout' where id = 'bbbbbbbb-0000-4000-8000-000000000002';

create function pg_temp.claims_for(session_id text, sub text, iss text) returns text language sql as $$
  select jsonb_build_object('sub', sub, 'role', 'authenticated', 'iss', iss, 'session_id', session_id)::text
$$;
grant execute on function pg_temp.claims_for(text, text, text) to anon;

-- acting as anon, as PostgREST's pre-request hook would
set local role anon;
select lives_ok($$ select private.check_request() $$, 'a request without claims passes');
select set_config('request.jwt.claims', pg_temp.claims_for('bbbbbbbb-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'sparkpath'), true);
select lives_ok($$ select private.check_request() $$, 'a live session of its own user passes');
select set_config('request.jwt.claims', pg_temp.claims_for('bbbbbbbb-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'sparkpath'), true);
select throws_ok($$ select private.check_request() $$, '28000', 'Session is no longer active; sign in again', 'a logged-out session is refused');
select set_config('request.jwt.claims', pg_temp.claims_for('bbbbbbbb-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002', 'sparkpath'), true);
select throws_ok($$ select private.check_request() $$, '28000', null, 'another user''s session is refused');
select set_config('request.jwt.claims', pg_temp.claims_for('cccccccc-0000-4000-8000-000000000009', 'aaaaaaaa-0000-4000-8000-000000000001', 'sparkpath'), true);
select throws_ok($$ select private.check_request() $$, '28000', null, 'a token of our own issuer naming no session of ours is refused');
select set_config('request.jwt.claims', pg_temp.claims_for('not-a-uuid', 'aaaaaaaa-0000-4000-8000-000000000001', 'https://project.supabase.co/auth/v1'), true);
select throws_ok($$ select private.check_request() $$, '28000', null, 'a malformed session id is refused whatever the issuer');
select set_config('request.jwt.claims', pg_temp.claims_for('cccccccc-0000-4000-8000-000000000009', 'aaaaaaaa-0000-4000-8000-000000000001', 'https://project.supabase.co/auth/v1'), true);
select lives_ok($$ select private.check_request() $$, 'a Supabase Auth token (another issuer, its own session id) passes');
select set_config('request.jwt.claims', pg_temp.claims_for('bbbbbbbb-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'https://project.supabase.co/auth/v1'), true);
select throws_ok($$ select private.check_request() $$, '28000', null, 'a session of ours is checked whatever issuer the token names');
select set_config('sparkpath.token_issuer', 'https://api.example.com', true);
select set_config('request.jwt.claims', pg_temp.claims_for('cccccccc-0000-4000-8000-000000000009', 'aaaaaaaa-0000-4000-8000-000000000001', 'https://api.example.com'), true);
select throws_ok($$ select private.check_request() $$, '28000', null, 'the own issuer comes from sparkpath.token_issuer when set');
select set_config('request.jwt.claims', '', true);
reset role;

select throws_ok(
  $$ select private.dispatch('authenticated', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated","iss":"https://api.example.com","session_id":"bbbbbbbb-0000-4000-8000-000000000002"}', 'api.get_metadata()', '{}'::jsonb) $$,
  '28000', null, 'the dispatcher refuses a logged-out session before running the call');
reset role;
select is(
  private.dispatch('authenticated', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated","iss":"https://api.example.com","session_id":"bbbbbbbb-0000-4000-8000-000000000001"}', 'api.get_metadata()', '{}'::jsonb)::jsonb -> 'learning_verbs' -> 0 ->> 'value',
  'started', 'the dispatcher runs the call for a live session');
reset role;
select ok(has_function_privilege('anon', 'private.check_request()', 'execute')
          and has_function_privilege('authenticated', 'private.check_request()', 'execute'),
  'request roles may run the check (PostgREST calls it as the request role)');

select * from finish();
rollback;
