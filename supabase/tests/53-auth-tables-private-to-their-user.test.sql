-- The auth tables (profiles, sessions, refresh tokens, OAuth attempts, outbox) are private: RLS
-- lets a signed-in user read their own profile and sessions only, never a token hash or refresh
-- token; nobody but the API's login role writes them; anon reads nothing.
begin;
select plan(10);

select ok((select bool_and(c.relrowsecurity) from pg_class c
           where c.relnamespace = 'app'::regnamespace
             and c.relname in ('users', 'sessions', 'refresh_tokens', 'oauth_attempts', 'outbox_events')),
  'row-level security is enabled on every auth table');

select tests.create_user('alice');
select tests.create_session('alice');
select tests.create_user('bob');

-- acting as alice (two sessions)
select tests.authenticate_as('alice');
select results_eq($$ select count(*)::int from app.sessions $$, $$ values (2) $$, 'a user sees only their own sessions');
select throws_ok($$ select access_token_hash from app.sessions $$, '42501', null, 'a user cannot read token hashes, not even their own');
select throws_ok($$ update app.sessions set active = true $$, '42501', null, 'a user cannot change sessions');
select throws_ok($$ select * from app.refresh_tokens $$, '42501', null, 'a user cannot read refresh tokens');
select throws_ok($$ select private.sign_in('google', 'x', 'x@example.com', '', null, null, null, repeat('6', 64), 1, 1, 1) $$,
  '42501', null, 'a request role cannot call the private sign-in');

-- acting as bob (one session)
select tests.authenticate_as('bob');
select results_eq($$ select user_id from app.sessions $$, $$ values (tests.get_user_id('bob')) $$, 'another user sees only their one session');
select is_empty($$ select 1 from app.sessions where user_id = tests.get_user_id('alice') $$, 'alice''s sessions are invisible to bob');
select results_eq($$ select email from app.users $$, $$ values ('bob@example.test') $$, 'a user reads only their own profile');

-- acting as anon
select tests.clear_authentication();
select throws_ok($$ select * from app.sessions $$, '42501', null, 'anon cannot read sessions');
reset role;

select * from finish();
rollback;
