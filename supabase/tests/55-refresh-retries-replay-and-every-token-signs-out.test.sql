-- Sessions as the spec's state table and logout describe them (issue 23): a refresh token has one
-- successor, replayed to a retry inside the grace window; logout signs out every token the
-- service accepts, and the one session check (our dispatcher's and PostgREST's db-pre-request
-- hook) refuses it from then on; GET /auth/session always describes a session; the cleanup
-- routine ends a session whose access token expired without a refresh.
begin;
select plan(29);

-- ---------------------------------------------------------------------------------------------
-- One successor per refresh token (acting as the API's login role)
-- ---------------------------------------------------------------------------------------------
create temp table signed (label text primary key, r jsonb);
insert into signed select 'ada', private.sign_in('github', 'tests:refresh-ada', 'refresh-ada@example.test', 'Ada', null, null, null,
  repeat('a', 64), 3600, 3610, 2592000);
create function pg_temp.session_of(label text) returns uuid language sql as
  $$ select (r ->> 'session_id')::uuid from signed where signed.label = session_of.label $$;

select is(private.refresh_session(repeat('a', 64), repeat('b', 64), 10, 3600) ->> 'status', 'ok',
  'an unused refresh token rotates');
select private.seal_refresh_successor(repeat('a', 64), 'sealed-successor-of-a');
select is(private.refresh_session(repeat('a', 64), repeat('c', 64), 10, 3600),
  jsonb_build_object('status', 'replay', 'session_id', pg_temp.session_of('ada'), 'sealed', 'sealed-successor-of-a'),
  'a retry inside the grace window gets the sealed successor back');
select is((select count(*)::int from app.refresh_tokens c join app.refresh_tokens p on p.id = c.parent_id
           where p.token_hash = repeat('a', 64)), 1, 'and no second child is minted');
select is((select count(*)::int from app.refresh_tokens where token_hash = repeat('c', 64)), 0,
  'the retry''s proposed token is never stored');
select private.seal_refresh_successor(repeat('b', 64), 'not-rotated');
select is((select successor_sealed from app.refresh_tokens where token_hash = repeat('b', 64)), null,
  'a token that has not been rotated keeps no successor');

update app.refresh_tokens set rotated_at = rotated_at - interval '11 seconds' where token_hash = repeat('a', 64);
select is(private.refresh_session(repeat('a', 64), repeat('d', 64), 10, 3600),
  '{"status":"revoked","reason":"refresh_token_reuse"}'::jsonb, 'after the grace window a used token is reuse');
select is((select count(*)::int from app.refresh_tokens where session_id = pg_temp.session_of('ada')
           and (revoked_at is null or successor_sealed is not null)), 0,
  'reuse revokes the whole family and drops every sealed successor');

-- A rotation whose transaction never sealed a successor cannot be replayed: reuse.
insert into signed select 'ada-again', private.sign_in('github', 'tests:refresh-ada', 'refresh-ada@example.test', 'Ada', null, null, null,
  repeat('e', 64), 3600, 3610, 2592000);
select private.refresh_session(repeat('e', 64), repeat('f', 64), 10, 3600);
select is(private.refresh_session(repeat('e', 64), repeat('0', 64), 10, 3600) ->> 'reason', 'refresh_token_reuse',
  'a used token with nothing to replay is reuse, even inside the grace window');

-- ---------------------------------------------------------------------------------------------
-- Logout of a token without a session here
-- ---------------------------------------------------------------------------------------------
select tests.create_user('identity-service-user');
select tests.create_user('signed-in-here');
-- The tokens, by label: a test user's claims with overrides and without some claims, as
-- tests.get_claims builds them (the identity service's tokens carry its own issuer).
create temp table tokens (label text primary key, identifier text, overrides jsonb, without text[]);
insert into tokens values
  ('identity-service', 'identity-service-user',
   jsonb_build_object('iss', 'https://project.supabase.co/auth/v1', 'iat', extract(epoch from now())::bigint - 5,
     'exp', extract(epoch from now())::bigint + 3600, 'app_metadata', '{"provider":"email"}'::jsonb),
   array['session_id']),
  ('identity-service-third', 'identity-service-user',
   jsonb_build_object('iss', 'https://project.supabase.co/auth/v1', 'jti', 'third', 'exp', extract(epoch from now())::bigint + 3600,
     'app_metadata', '{"provider":"email"}'::jsonb),
   array['session_id']),
  ('identity-service-second', 'identity-service-user',
   jsonb_build_object('iss', 'https://project.supabase.co/auth/v1', 'jti', 'second', 'exp', extract(epoch from now())::bigint + 3600),
   array['session_id', 'email']),
  ('identity-service-session', 'identity-service-user',
   jsonb_build_object('iss', 'https://project.supabase.co/auth/v1', 'session_id', gen_random_uuid(), 'exp', extract(epoch from now())::bigint + 3600),
   '{}'),
  ('no-profile-here', 'identity-service-user',
   jsonb_build_object('sub', gen_random_uuid(), 'iss', 'https://project.supabase.co/auth/v1', 'exp', extract(epoch from now())::bigint + 3600),
   array['session_id']),
  ('ours', 'signed-in-here', jsonb_build_object('exp', extract(epoch from now())::bigint + 3600), '{}');
grant select on tokens to anon, authenticated;
create function pg_temp.claims(label text) returns jsonb language sql as
  $$ select tests.get_claims(t.identifier, t.overrides, t.without) from tokens t where t.label = claims.label $$;
grant execute on function pg_temp.claims(text) to authenticated;
create function pg_temp.act_as(label text) returns void language sql as
  $$ select tests.authenticate_as(t.identifier, t.overrides, t.without) from tokens t where t.label = act_as.label $$;

-- acting as the holder of the identity service's token
select pg_temp.act_as('identity-service');
select lives_ok($$ select private.check_request() $$, 'a token without a session here passes until it is signed out');
reset role;
select is(private.sign_out(pg_temp.claims('identity-service')), '{"success":true,"message":"Signed out"}'::jsonb,
  'signing it out succeeds');
-- acting as the holder of the identity service's token
select pg_temp.act_as('identity-service');
select throws_ok($$ select private.check_request() $$, 'PT401', 'Session is no longer active; sign in again',
  'from then on the session check (PostgREST''s db-pre-request hook) refuses it');
reset role;
select throws_ok(format($$ select private.dispatch('authenticated', %L, 'api.get_metadata()', '{}') $$, pg_temp.claims('identity-service')::text),
  'PT401', 'Session is no longer active; sign in again', 'and so does the API''s dispatcher');
-- acting as the holder of another token of the same user
select pg_temp.act_as('identity-service-second');
select lives_ok($$ select private.check_request() $$, 'another token of the same user is not affected');
reset role;
select throws_ok(format($$ select private.sign_out(%L) $$, pg_temp.claims('identity-service')), 'PT401', null,
  'a second logout with the same token is refused');
select is((select expires_at from app.revoked_access_tokens where user_id = tests.get_user_id('identity-service-user')),
  to_timestamp((pg_temp.claims('identity-service') ->> 'exp')::double precision), 'it is kept until the token expires');
select is((select array_agg(event_type) from app.outbox_events where aggregate_id = tests.get_user_id('identity-service-user')),
  array['identity.user_logged_out'], 'the logout is written to the outbox');

select private.sign_out(pg_temp.claims('identity-service-session'));
-- acting as the holder of a token naming the identity service's own session
select pg_temp.act_as('identity-service-session');
select throws_ok($$ select private.check_request() $$, 'PT401', null,
  'a token naming another issuer''s session is recorded and refused the same way');
reset role;

select private.sign_out(pg_temp.claims('ours'));
select is((select end_reason from app.sessions where id = tests.get_session_id('signed-in-here')), 'logout',
  'a token of a session here ends that session instead');
select is((select count(*)::int from app.revoked_access_tokens where user_id = tests.get_user_id('signed-in-here')), 0,
  'and is not recorded as a session-less token');

select ok((select relrowsecurity from pg_class where oid = 'app.revoked_access_tokens'::regclass)
          and not has_table_privilege('authenticated', 'app.revoked_access_tokens', 'select')
          and not has_table_privilege('anon', 'app.revoked_access_tokens', 'select'),
  'request roles cannot read the signed-out tokens');

-- ---------------------------------------------------------------------------------------------
-- GET /auth/session: a session object for every authenticated caller
-- ---------------------------------------------------------------------------------------------
-- acting as the holder of a token of a user without a profile here
select pg_temp.act_as('no-profile-here');
select is((select api.get_session() -> 'session'),
  jsonb_build_object('id', left(private.access_token_digest(pg_temp.claims('no-profile-here')), 32)::uuid,
    'provider', 'https://project.supabase.co/auth/v1',
    'expires_at', to_timestamp((pg_temp.claims('no-profile-here') ->> 'exp')::double precision),
    'created_at', to_timestamp((pg_temp.claims('no-profile-here') ->> 'exp')::double precision)),
  'without a session row the session is built from the claims (no iat: created_at falls back to exp)');
select is((select api.get_session() -> 'user'),
  jsonb_build_object('id', pg_temp.claims('no-profile-here') ->> 'sub', 'email', 'identity-service-user@example.test',
    'display_name', '', 'provider', null, 'avatar_url', null),
  'a user without a profile here is described from the token');
reset role;
-- acting as the holder of another identity service token (app_metadata.provider; the first
-- one was signed out above, and reads as "not signed in")
select pg_temp.act_as('identity-service-third');
select is((select api.get_session() -> 'session' ->> 'provider'), 'email', 'the provider comes from app_metadata');
reset role;
-- acting as the holder of a second identity-service token (no app_metadata)
select pg_temp.act_as('identity-service-second');
select is((select api.get_session() -> 'session' ->> 'provider'), 'dev',
  'without app_metadata the provider is the profile''s');
reset role;
-- acting as anon
select tests.clear_authentication();
select is(api.get_session(), '{"authenticated":false,"user":null,"session":null}'::jsonb, 'anonymous callers get no session');
reset role;

-- ---------------------------------------------------------------------------------------------
-- The cleanup routine ends sessions whose access token expired without a refresh
-- ---------------------------------------------------------------------------------------------
insert into signed select 'idle', private.sign_in('github', 'tests:refresh-idle', 'refresh-idle@example.test', 'Idle', null, null, null,
  repeat('1', 64), 30, 40, 2592000);
update app.sessions set last_activity_at = now() - interval '45 seconds', access_expires_at = now() - interval '15 seconds'
where id = pg_temp.session_of('idle');
insert into app.revoked_access_tokens (claims_digest, user_id, expires_at)
values (repeat('9', 64), tests.get_user_id('identity-service-user'), now() - interval '1 second');
select ok((private.cleanup_sessions() ->> 'sessions_deactivated')::int >= 1, 'the cleanup deactivates sessions');
select is((select end_reason from app.sessions where id = pg_temp.session_of('idle')),
  'idle', 'including one whose 30 s access token expired 15 s ago without a refresh (idle limit 40 s)');
select is((select count(*)::int from app.revoked_access_tokens where claims_digest = repeat('9', 64)), 0,
  'and forgets signed-out tokens that have expired');
select is((select count(*)::int from app.revoked_access_tokens where user_id = tests.get_user_id('identity-service-user')), 2,
  'but keeps those that have not');

select * from finish();
rollback;
