-- private.check_request, the session check shared by the dispatcher and PostgREST's pre-request
-- hook: a token naming a session of ours passes only while that session is live and belongs to
-- the token's subject; tokens of another issuer pass unless they name a session of ours.
begin;
select plan(20);

select tests.create_user('alice');
select tests.create_user('bob');
-- alice signed in twice; the newer session is logged out (authenticate_as uses the newest).
create temporary table alice_sessions as
select tests.get_session_id('alice') as live, tests.create_session('alice') as logged_out;
select tests.end_session('alice');
-- carol's session ends by its absolute limit in 10 s, dave's goes idle in 20 s, erin's is idle,
-- frank's passed its absolute end.
select tests.create_user('carol');
update app.sessions set expires_at = now() + interval '10 seconds' where id = tests.get_session_id('carol');
select tests.create_user('dave');
update app.sessions set idle_timeout_seconds = 60, last_activity_at = now() - interval '40 seconds' where id = tests.get_session_id('dave');
select tests.create_user('erin');
update app.sessions set idle_timeout_seconds = 60, last_activity_at = now() - interval '61 seconds' where id = tests.get_session_id('erin');
select tests.create_user('frank');
update app.sessions set expires_at = now() - interval '1 second' where id = tests.get_session_id('frank');
grant select on alice_sessions to anon, authenticated;

-- acting as anon, as PostgREST's pre-request hook would
select tests.clear_authentication();
select lives_ok($$ select private.check_request() $$, 'a request without claims passes');

-- acting as alice
select tests.authenticate_as('alice', jsonb_build_object('session_id', (select live from alice_sessions)));
select lives_ok($$ select private.check_request() $$, 'a live session of its own user passes');
select tests.authenticate_as('alice');
select throws_ok($$ select private.check_request() $$, 'PT401', 'Session is no longer active; sign in again', 'a logged-out session is refused');
select tests.authenticate_as('alice', '{"session_id": null}');
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'a null session id is refused');
select tests.authenticate_as('alice', '{"session_id": "cccccccc-0000-4000-8000-000000000009"}');
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'a token of our own issuer naming no session of ours is refused');
select tests.authenticate_as('alice', '{"session_id": "not-a-uuid", "iss": "https://project.supabase.co/auth/v1"}');
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'a malformed session id is refused whatever the issuer');
select tests.authenticate_as('alice', '{"session_id": "cccccccc-0000-4000-8000-000000000009", "iss": "https://project.supabase.co/auth/v1"}');
select lives_ok($$ select private.check_request() $$, 'a Supabase Auth token (another issuer, its own session id) passes');
select tests.authenticate_as('alice', '{"iss": "https://project.supabase.co/auth/v1"}');
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'a session of ours is checked whatever issuer the token names');
select tests.authenticate_as('alice', '{"session_id": "cccccccc-0000-4000-8000-000000000009", "iss": "https://api.example.com"}');
select set_config('sparkpath.token_issuer', 'https://api.example.com', true);
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'the own issuer comes from sparkpath.token_issuer when set');
select set_config('sparkpath.token_issuer', '', true);
select tests.authenticate_as('alice', jsonb_build_object('session_id', (select live from alice_sessions), 'sub', 'not-a-uuid'));
select throws_ok($$ select private.check_request() $$, 'PT401', 'Session is no longer active; sign in again',
  'a subject that is no uuid owns no session: a clean PT401, not a cast error');
select tests.authenticate_as('alice', without => array['session_id']);
select lives_ok($$ select private.check_request() $$, 'a token without session_id binds no session and passes');

-- acting as bob with alice's live session
select tests.authenticate_as('bob', jsonb_build_object('session_id', (select live from alice_sessions)));
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'another user''s session is refused');

-- acting as carol, dave, erin and frank: the idle limit and the absolute limit, whichever comes first
select tests.authenticate_as('carol');
select lives_ok($$ select private.check_request() $$, 'a session 10 s before its absolute end passes');
select tests.authenticate_as('frank');
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'a session past its absolute end is refused');
select tests.authenticate_as('dave');
select lives_ok($$ select private.check_request() $$, 'a session 20 s before its idle limit passes');
select tests.authenticate_as('erin');
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'a session idle longer than its limit is refused');
reset role;

-- The dispatcher runs the same check before the call.
select throws_ok(
  format($$ select private.dispatch('authenticated', %L, 'api.get_metadata()', '{}'::jsonb) $$, tests.get_claims('alice')),
  'PT401', null, 'the dispatcher refuses a logged-out session before running the call');
reset role;
select is(
  private.dispatch('authenticated', tests.get_claims('alice', jsonb_build_object('session_id', (select live from alice_sessions)))::text,
    'api.get_metadata()', '{}'::jsonb)::jsonb -> 'learning_verbs' -> 0 ->> 'value',
  'started', 'the dispatcher runs the call for a live session');
reset role;

select ok(has_function_privilege('anon', 'private.check_request()', 'execute')
          and has_function_privilege('authenticated', 'private.check_request()', 'execute'),
  'request roles may run the check (PostgREST calls it as the request role)');
select hasnt_function('private', 'session_is_live', array['uuid', 'uuid'],
  'the session rule lives in one place: the old liveness helper private.session_is_live is gone');

select * from finish();
rollback;
