-- Sessions from sign-in to end: sign-in resolves identities and opens a session, refresh tokens
-- rotate (a retry inside the grace window gets the same successor, a reuse after it revokes the
-- session), the dispatcher refuses tokens of ended sessions, and logout and cleanup end sessions
-- with their reason.
begin;
select plan(25);

-- acting as the API's login role ------------------------------------------------------------
create temp table signed (label text primary key, r jsonb);
insert into signed select 'a1', private.sign_in('google', 'alice-sub', 'Alice@Example.com', 'Alice', null, 'ua', '10.0.0.1',
  repeat('a', 64), 3600, 604800, 2592000);
insert into signed select 'a2', private.sign_in('google', 'alice-sub', 'alice@example.com', '', 'https://img/a.png', 'ua', 'not-an-ip',
  repeat('b', 64), 3600, 604800, 2592000);
insert into signed select 'b1', private.sign_in('github', 'alice-sub', 'alice@example.com', 'Alice GH', null, null, null,
  repeat('c', 64), 3600, 604800, 2592000);
select set_config('t.alice', (select r -> 'user' ->> 'id' from signed where label = 'a1'), true);
select set_config('t.alice_gh', (select r -> 'user' ->> 'id' from signed where label = 'b1'), true);
select set_config('t.s1', (select r ->> 'session_id' from signed where label = 'a1'), true);
select set_config('t.s2', (select r ->> 'session_id' from signed where label = 'a2'), true);
select set_config('t.s3', (select r ->> 'session_id' from signed where label = 'b1'), true);

select is((select r -> 'is_new_user' from signed where label = 'a1'), 'true'::jsonb, 'the first sign-in creates the profile');
select is((select r -> 'is_new_user' from signed where label = 'a2'), 'false'::jsonb, 'a second sign-in of the same identity does not');
select is((select r -> 'user' ->> 'id' from signed where label = 'a2'), current_setting('t.alice'), 'both sign-ins resolve to one profile');
select isnt(current_setting('t.alice_gh'), current_setting('t.alice'), 'the same provider user id at another provider is another identity');
select is((select count(*)::int from app.users where email = 'alice@example.com'), 2, 'emails are stored lower-cased; two identities, two profiles');
select is((select display_name || '|' || coalesce(avatar_url, '') from app.users where id = current_setting('t.alice')::uuid),
  'Alice|https://img/a.png', 'an empty display name keeps the old one; a new avatar is recorded');
select is((select r -> 'claims' from signed where label = 'a1'),
  jsonb_build_object('sub', current_setting('t.alice'), 'email', 'alice@example.com', 'user_role', 'learner',
    'subscription_plan', 'free', 'session_id', current_setting('t.s1')),
  'sign_in returns the claims to sign');
select results_eq(
  $$ select event_type from app.outbox_events where aggregate_id = current_setting('t.alice')::uuid order by id $$,
  $$ values ('identity.user_registered'), ('identity.user_authenticated') $$,
  'sign-ins write registered then authenticated to the outbox');
select is((select ip_address from app.sessions where id = current_setting('t.s2')::uuid), null, 'an unparsable client address is stored as null');

-- Refresh rotation
select is(private.refresh_session(repeat('a', 64), repeat('d', 64), 10, 3600) ->> 'status', 'ok', 'an unused refresh token rotates');
-- The API seals the successor set in the same transaction (55 covers the replay itself).
select private.seal_refresh_successor(repeat('a', 64), 'sealed');
select is(private.refresh_session(repeat('a', 64), repeat('e', 64), 10, 3600) ->> 'status', 'replay', 'a reuse inside the grace window gets the same successor');
select is((select count(*)::int from app.refresh_tokens where parent_id = (select id from app.refresh_tokens where token_hash = repeat('a', 64))),
  1, 'one child hangs off the rotated token, never a second branch');
update app.refresh_tokens set rotated_at = now() - interval '11 seconds' where token_hash = repeat('a', 64);
select is(private.refresh_session(repeat('a', 64), repeat('f', 64), 10, 3600),
  '{"status":"revoked","reason":"refresh_token_reuse"}'::jsonb, 'a reuse after the grace window is treated as an attack');
select is((select end_reason from app.sessions where id = current_setting('t.s1')::uuid), 'refresh_token_reuse', 'the session is revoked');
select is(private.refresh_session(repeat('d', 64), repeat('0', 64), 10, 3600) ->> 'status', 'revoked', 'the newest token of the session is revoked too');
select is(private.refresh_session(repeat('7', 64), repeat('8', 64), 10, 3600) ->> 'status', 'invalid', 'an unknown refresh token is invalid');

-- The dispatcher checks the session of session-bound tokens
create temporary view token_claims as
select label, r -> 'claims' || '{"role": "authenticated", "iss": "sparkpath", "aud": "authenticated"}' as claims from signed;
select throws_ok(
  format($$ select private.dispatch('authenticated', %L, 'api.get_metadata()', '{}') $$,
    (select claims from token_claims where label = 'a1')),
  'PT401', 'Session is no longer active; sign in again', 'the dispatcher refuses a token of a revoked session');
select throws_ok(
  format($$ select private.dispatch('authenticated', %L, 'api.get_metadata()', '{}') $$,
    (select claims || jsonb_build_object('session_id', current_setting('t.s2')) from token_claims where label = 'b1')),
  'PT401', 'Session is no longer active; sign in again', 'the dispatcher refuses a session of another user');
select throws_ok(
  format($$ select private.dispatch('authenticated', %L, 'api.get_metadata()', '{}') $$,
    (select claims || '{"session_id": "nope"}' from token_claims where label = 'a1')),
  'PT401', 'Session is no longer active; sign in again', 'the dispatcher refuses a malformed session id');
select is(
  private.dispatch('authenticated', (select claims::text from token_claims where label = 'a2'),
    'api.get_session()', '{}')::jsonb -> 'session' ->> 'id',
  current_setting('t.s2'), 'the dispatcher runs calls of a live session');
reset role;

-- Logout and cleanup
select is(private.end_session(current_setting('t.s2')::uuid, current_setting('t.alice')::uuid) ->> 'success', 'true', 'logout ends a live session');
select throws_ok(format($$ select private.end_session('%s', '%s') $$, current_setting('t.s2'), current_setting('t.alice')),
  'PT401', 'Session is no longer active', 'logout of an ended session is refused');
select is((select event_type from app.outbox_events order by id desc limit 1), 'identity.user_logged_out', 'logout writes identity.user_logged_out');
update app.sessions set access_expires_at = now() - interval '1 hour', last_activity_at = now() - interval '8 days' where id = current_setting('t.s3')::uuid;
select is(private.cleanup_sessions() ->> 'sessions_deactivated', '1', 'cleanup deactivates an idle session whose access token expired');
select is((select end_reason from app.sessions where id = current_setting('t.s3')::uuid), 'idle', 'and records why');

select * from finish();
rollback;
