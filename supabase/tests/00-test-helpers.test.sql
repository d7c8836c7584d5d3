-- Shared pgTAP helpers, in the style of the Supabase test helpers (basejump's
-- supabase_test_helpers): create a user, act as that user, act as anon, inside a test transaction.
--
-- This file runs first (files run in name order, under `supabase test db` and `npm test` alike)
-- and, unlike the test files, commits: it installs the `tests` schema every later file uses.
-- It changes nothing else, and starts from scratch, so it is safe to run again.
--
-- A user here is a row in app.users with a live row in app.sessions: what a caller signed in
-- through /auth/callback has. Acting as a user sets `request.jwt.claims` to the claims of the
-- access token the API would sign for that session (private.token_claims plus role, issuer and
-- audience) and the request role `authenticated`, so private.check_request passes as it would in
-- production. Identifiers are plain names ('alice'); the ids behind them are never written out.
--
--   select tests.create_user('alice');                 -- a learner
--   select tests.create_user('pat', 'premium');        -- learner on the premium plan
--   select tests.create_user('ada', 'admin');
--   select tests.authenticate_as('alice');             -- acting as alice
--   select tests.authenticate_as_service();            -- acting as a service caller (X-Service-Auth)
--   select tests.clear_authentication();               -- acting as anon
--   reset role;                                        -- back to the owner (fixtures)

drop schema if exists tests cascade;
create schema tests;
comment on schema tests is 'pgTAP helpers (supabase/tests/00-test-helpers.test.sql); not part of the application schema.';
grant usage on schema tests to anon, authenticated;

-- tests.get_user_id(identifier) returns uuid; raises when no such test user exists.
create function tests.get_user_id(identifier text)
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  user_id uuid;
begin
  select u.id into user_id from app.users u where u.provider = 'dev' and u.provider_user_id = 'tests:' || identifier;
  if user_id is null then
    raise exception 'User with identifier % not found', identifier;
  end if;
  return user_id;
end
$$;
comment on function tests.get_user_id(text) is 'The id of a test user (tests.create_user).';

-- tests.get_session_id(identifier) returns uuid: the user's newest session, live or not.
create function tests.get_session_id(identifier text)
returns uuid
language sql
stable
security definer
set search_path = ''
as $$
  select s.id from app.sessions s where s.user_id = tests.get_user_id(identifier)
  order by s.created_at desc, s.id limit 1
$$;
comment on function tests.get_session_id(text) is 'The newest session of a test user.';

-- tests.create_user(identifier, kind = 'learner', email = null) returns uuid
-- A user of kind learner, premium (a learner on the premium plan) or admin, with one live
-- session; the email defaults to <identifier>@example.test. Raises if the identifier is taken.
create function tests.create_user(identifier text, kind text default 'learner', email text default null)
returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
  user_id uuid;
begin
  if kind not in ('learner', 'premium', 'admin') then
    raise exception 'user kind must be learner, premium or admin, not %', kind;
  end if;
  insert into app.users (provider, provider_user_id, email, display_name, user_role, subscription_plan, last_login_provider)
  values ('dev', 'tests:' || identifier, coalesce(email, identifier || '@example.test'), identifier,
          case when kind = 'admin' then 'admin' else 'learner' end,
          case when kind = 'premium' then 'premium' else 'free' end,
          'dev')
  returning id into user_id;
  perform tests.create_session(identifier);
  return user_id;
end
$$;
comment on function tests.create_user(text, text, text) is
  'Creates a signed-in user (app.users row plus a live session) for a test; returns its id.';

-- tests.create_session(identifier) returns uuid
-- Another live session of the user (an hour of idle time, a day in all), as sign-in creates one.
-- The newest session is the one tests.authenticate_as uses.
create function tests.create_session(identifier text)
returns uuid
language sql
security definer
set search_path = ''
as $$
  insert into app.sessions (user_id, provider, access_expires_at, idle_timeout_seconds, expires_at, created_at, last_activity_at)
  select tests.get_user_id(identifier), 'dev', pg_catalog.now() + interval '1 hour', 3600, pg_catalog.now() + interval '1 day',
         -- created_at orders the sessions of one user; now() is the same for the whole transaction
         pg_catalog.clock_timestamp(), pg_catalog.now()
  returning id
$$;
comment on function tests.create_session(text) is 'Adds a live session for a test user; returns its id.';

-- tests.end_session(identifier, reason = 'logout'): ends the user's newest session as
-- logout, expiry or idle timeout would (active false, ended_at, end_reason).
create function tests.end_session(identifier text, reason text default 'logout')
returns uuid
language sql
security definer
set search_path = ''
as $$
  update app.sessions set active = false, ended_at = pg_catalog.now(), end_reason = reason
  where id = tests.get_session_id(identifier)
  returning id
$$;
comment on function tests.end_session(text, text) is 'Ends the newest session of a test user (logout by default); returns its id.';

-- tests.get_claims(identifier, overrides = '{}', without = '{}') returns jsonb
-- The claims of the access token the API signs for the user's newest session: private.token_claims
-- (sub, email, user_role, subscription_plan, session_id) plus role, iss and aud. Overrides replace
-- claims and `without` drops claims, to build tokens the API would not sign (another issuer,
-- another user's session, no session at all).
create function tests.get_claims(identifier text, overrides jsonb default '{}', without text[] default '{}')
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select (private.token_claims(u, tests.get_session_id(identifier))
         || pg_catalog.jsonb_build_object(
              'role', 'authenticated',
              'iss', coalesce(nullif(pg_catalog.current_setting('sparkpath.token_issuer', true), ''), 'sparkpath'),
              'aud', 'authenticated')
         || overrides) - without
  from app.users u where u.id = tests.get_user_id(identifier)
$$;
comment on function tests.get_claims(text, jsonb, text[]) is 'The access-token claims of a test user''s newest session, with optional overrides.';

-- tests.authenticate_as(identifier, overrides = '{}', without = '{}')
-- Acts as the user for the rest of the transaction: request.jwt.claims from tests.get_claims and
-- the request role authenticated, as PostgREST and the dispatcher set them. Not security definer:
-- the role switch must outlive the call.
create function tests.authenticate_as(identifier text, overrides jsonb default '{}', without text[] default '{}')
returns void
language plpgsql
set search_path = ''
as $$
declare
  claims jsonb := tests.get_claims(identifier, overrides, without);
begin
  perform pg_catalog.set_config('role', 'authenticated', true);
  perform pg_catalog.set_config('request.jwt.claims', claims::text, true);
  perform pg_catalog.set_config('request.headers', '', true);
end
$$;
comment on function tests.authenticate_as(text, jsonb, text[]) is
  'Acts as a test user (claims of its newest session, role authenticated) until the transaction ends or authentication changes.';

-- tests.clear_authentication(): acts as an anonymous caller (no claims, role anon); service
-- callers reach the database the same way.
create function tests.clear_authentication()
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.set_config('role', 'anon', true);
  perform pg_catalog.set_config('request.jwt.claims', '', true);
  perform pg_catalog.set_config('request.headers', '', true);
end
$$;
comment on function tests.clear_authentication() is 'Acts as an anonymous caller: no claims, role anon.';

-- tests.service_secret() returns text: the X-Service-Auth secret of the tests.
create function tests.service_secret()
returns text
language sql
immutable
set search_path = ''
as $$
  select 'pgtap-service-secret-0123456789abcdefghijklmnop'
$$;
comment on function tests.service_secret() is 'The service secret (X-Service-Auth) the pgTAP tests use.';

-- tests.use_service_secret(): records the digest of tests.service_secret() as the API's start-up
-- records SERVICE_AUTH_SECRET's (inside the test transaction: rolled back with it).
create function tests.use_service_secret()
returns void
language sql
security definer
set search_path = ''
as $$
  select private.set_service_auth_digest(pg_catalog.sha256(pg_catalog.convert_to(tests.service_secret(), 'UTF8')))
$$;
comment on function tests.use_service_secret() is 'Records the digest of tests.service_secret() as the service secret.';

-- tests.authenticate_as_service(secret = tests.service_secret()): acts as a service caller, as
-- both doors forward one: role anon, no claims, request.headers carrying X-Service-Auth. The
-- test secret's digest is recorded first, so another secret acts as a caller with a wrong one.
create function tests.authenticate_as_service(secret text default tests.service_secret())
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform tests.use_service_secret();
  perform pg_catalog.set_config('role', 'anon', true);
  perform pg_catalog.set_config('request.jwt.claims', '', true);
  perform pg_catalog.set_config('request.headers', pg_catalog.json_build_object('x-service-auth', secret)::text, true);
end
$$;
comment on function tests.authenticate_as_service(text) is
  'Acts as a service caller (role anon, X-Service-Auth in request.headers) until the transaction ends or authentication changes.';

-- tests.archive_current_snapshot() returns uuid
-- Archives whatever snapshot is current (the seed's, under `supabase db reset`), so a test's own
-- fixture can be the one current snapshot. Inside the test transaction: rolled back with it.
create function tests.archive_current_snapshot()
returns uuid
language sql
security definer
set search_path = ''
as $$
  update app.snapshots set status = 'archived' where status = 'published' returning id
$$;
comment on function tests.archive_current_snapshot() is 'Archives the current snapshot, if any, so a test fixture can be current; returns its id.';

-- tests.insert_titled_content(snapshot, domain_id, titles) returns void
-- Content rows of a snapshot carrying the given titles, for search and autocomplete fixtures: a
-- spark per title, a trail per 50th (in the domain, which must exist) and a concept per 20th
-- (on the first trail), so every content type holds some of the titles and the sparks all.
create function tests.insert_titled_content(snapshot uuid, domain_id uuid, titles text[])
returns void
language sql
set search_path = ''
as $$
  insert into app.trails (snapshot_id, id, domain_id, slug, title, description, difficulty_level)
  select insert_titled_content.snapshot, extensions.gen_random_uuid(), insert_titled_content.domain_id, 'trail-' || i, insert_titled_content.titles[i], 'A trail', 'beginner'
  from pg_catalog.generate_subscripts(insert_titled_content.titles, 1) i where i % 50 = 0;
  insert into app.concepts (snapshot_id, id, trail_id, slug, title, description, order_index)
  select insert_titled_content.snapshot, extensions.gen_random_uuid(),
         (select t.id from app.trails t where t.snapshot_id = insert_titled_content.snapshot order by t.slug limit 1),
         'concept-' || i, insert_titled_content.titles[i], 'A concept', i
  from pg_catalog.generate_subscripts(insert_titled_content.titles, 1) i where i % 20 = 0;
  insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
  select insert_titled_content.snapshot, extensions.gen_random_uuid(), 'spark-' || i, insert_titled_content.titles[i], 'A spark', 'beginner', 5
  from pg_catalog.generate_subscripts(insert_titled_content.titles, 1) i;
$$;
comment on function tests.insert_titled_content(uuid, uuid, text[]) is
  'Inserts sparks (every title), trails (every 50th) and concepts (every 20th) with the given titles into a snapshot.';

-- Only the test roles and the owner call the helpers.
revoke all on all functions in schema tests from public;
grant execute on function tests.authenticate_as(text, jsonb, text[]), tests.clear_authentication(),
  tests.authenticate_as_service(text), tests.use_service_secret(), tests.service_secret(),
  tests.get_user_id(text), tests.get_session_id(text), tests.get_claims(text, jsonb, text[])
  to anon, authenticated;

begin;
select plan(12);

select tests.create_user('helper-check');
select is(tests.get_user_id('helper-check'),
  (select id from app.users where email = 'helper-check@example.test'), 'a created user is found by its identifier');
select throws_ok($$ select tests.get_user_id('nobody') $$, 'P0001', 'User with identifier nobody not found',
  'an unknown identifier is an error, not a null user');

-- acting as helper-check
select tests.authenticate_as('helper-check');
select is(current_user::text, 'authenticated', 'authenticate_as enters the authenticated role');
select is(auth.uid(), tests.get_user_id('helper-check'), 'authenticate_as makes auth.uid() the user');
select is(auth.jwt() ->> 'session_id', tests.get_session_id('helper-check')::text, 'the claims name the user''s live session');
select is(auth.jwt() ->> 'user_role', 'learner', 'the claims carry the user''s role and plan as the API signs them');
select lives_ok($$ select private.check_request() $$, 'the session check passes the created user');

-- acting as anon
select tests.clear_authentication();
select is(current_user::text, 'anon', 'clear_authentication enters the anon role');
select is(auth.uid(), null, 'clear_authentication leaves no user');
reset role;

-- acting as a service caller
select tests.authenticate_as_service();
select is(private.request_caller(), 'SERVICE', 'authenticate_as_service makes the request a service caller');
select tests.clear_authentication();
select is(private.request_caller(), 'ANONYMOUS', 'clear_authentication drops the service header again');
reset role;

select tests.end_session('helper-check');
select tests.authenticate_as('helper-check');
select throws_ok($$ select private.check_request() $$, 'PT401', null, 'after end_session the session check refuses the user');
reset role;

select * from finish();
rollback;
