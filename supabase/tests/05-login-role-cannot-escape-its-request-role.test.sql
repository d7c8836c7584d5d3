-- The API logs in as sparkpath_api, PostgREST's `authenticator` pattern: no superuser, no
-- privilege on any table, NOINHERIT, and a member of anon and authenticated only. Inside a
-- request role nothing can switch to the owner, and the login role itself reads no table.
-- (test/db/login-role.test.ts proves the same over a real login connection.)
begin;
select plan(20);

select tests.create_user('learner');

-- ---------------------------------------------------------------------------------------------
-- What the login role is
-- ---------------------------------------------------------------------------------------------
select ok((select not rolsuper and not rolinherit and not rolcreaterole and not rolcreatedb and not rolbypassrls and not rolreplication
           from pg_roles where rolname = 'sparkpath_api'),
  'sparkpath_api is no superuser, inherits nothing and may create nothing');
select is(
  (select array_agg(r.rolname::text order by r.rolname) from pg_auth_members m join pg_roles r on r.oid = m.roleid
   where m.member = 'sparkpath_api'::regrole),
  array['anon', 'authenticated'],
  'it can become anon or authenticated, nothing else (never service_role, which bypasses RLS)');
select ok(
  not has_schema_privilege('sparkpath_api', 'app', 'usage')
  and not has_table_privilege('sparkpath_api', 'app.users', 'select')
  and not has_table_privilege('sparkpath_api', 'app.sessions', 'select')
  and not has_table_privilege('sparkpath_api', 'app.enrollments', 'select'),
  'as itself it holds no privilege on the data');
select ok(
  not has_function_privilege('sparkpath_api', 'api.get_metadata()', 'execute')
  and not has_function_privilege('sparkpath_api', 'private.set_service_auth_digest(bytea)', 'execute')
  and not has_function_privilege('sparkpath_api', 'private.import_content_bundle(jsonb, text, text, text, boolean)', 'execute'),
  'it calls no api function as itself, and none of the owner''s: content, the service secret');
-- Setting a user's role and plan is the owner's, but for a local development database, where the
-- dev provider's demo learners need it (src/db/login-role.ts, which also lets the role log in).
select ok(
  not has_function_privilege('sparkpath_api', 'private.set_user_access(uuid, text, text)', 'execute')
  or (select rolcanlogin from pg_roles where rolname = 'sparkpath_api'),
  'only a local development database lets it set a user''s role and plan');
select ok(
  (select bool_and(has_function_privilege('sparkpath_api', f, 'execute')) from unnest(array[
    'private.dispatch(text, text, text, jsonb, jsonb)', 'private.dispatch_snapshot_read(text, text, text, jsonb, text[], jsonb)',
    'private.start_oauth_attempt(text, text, text, text, text, text, integer)', 'private.consume_oauth_attempt(text, text)',
    'private.sign_in(text, text, text, text, text, text, text, text, integer, integer, integer)',
    'private.record_access_token(uuid, text)', 'private.refresh_session(text, text, integer, integer)',
    'private.seal_refresh_successor(text, text)', 'private.sign_out(jsonb)', 'private.cleanup_sessions()',
    'private.hit_rate_limit(text, integer)', 'private.peek_rate_limit(text, integer)', 'private.purge_rate_limits()']) f),
  'it runs the dispatchers and the sign-in, rate-limit and cleanup functions');
select ok(
  (select bool_and(not has_function_privilege(r, 'private.set_service_auth_digest(bytea)', 'execute'))
   from unnest(array['anon', 'authenticated', 'service_role', 'sparkpath_api']) r)
  and not has_table_privilege('anon', 'app.service_auth_digest', 'select')
  and not has_table_privilege('authenticated', 'app.service_auth_digest', 'select'),
  'no request role reads or writes the service secret''s digest');

-- ---------------------------------------------------------------------------------------------
-- Logged in as sparkpath_api
-- ---------------------------------------------------------------------------------------------
-- (pgTAP's assertions run as a request role: the login role itself may not even call them.
-- SET SESSION AUTHORIZATION stays open here because this connection logged in as the owner;
-- test/db/login-role.test.ts proves it refused on a connection that logs in as sparkpath_api.)
-- Only a superuser session may change its session authorization: where the suite runs as a
-- project's non-superuser postgres (the Supabase-shaped databases, as `supabase test db` does),
-- these 12 are skipped, and test/db/login-role.test.ts proves them over a real login instead.
select rolsuper as session_is_superuser from pg_catalog.pg_roles where rolname = session_user \gset
\if :session_is_superuser
set local session authorization sparkpath_api;
-- acting as anon, as a request does
set local role anon;
select is(session_user::text, 'sparkpath_api', 'the session is the login role''s');
select throws_ok($$ select pg_catalog.set_config('role', 'postgres', true) $$, '42501', 'permission denied to set role "postgres"',
  'inside anon, set_config(''role'', ''postgres'', true) is refused');
select throws_ok($$ set role postgres $$, '42501', 'permission denied to set role "postgres"',
  'inside anon, set role postgres is refused');
select throws_ok($$ set role service_role $$, '42501', 'permission denied to set role "service_role"',
  'inside anon, set role service_role is refused');
select throws_ok($$ select api.list_user_journeys() $$, 'PT401', 'Authentication required',
  'and the request stays what it is');
-- acting as a learner, as a request does
set local role authenticated;
select set_config('request.jwt.claims', tests.get_claims('learner')::text, true);
select throws_ok($$ select pg_catalog.set_config('role', 'postgres', true) $$, '42501', 'permission denied to set role "postgres"',
  'inside authenticated, set_config(''role'', ''postgres'', true) is refused');
select throws_ok($$ set role postgres $$, '42501', 'permission denied to set role "postgres"',
  'inside authenticated, set role postgres is refused');
select throws_ok($$ set role service_role $$, '42501', 'permission denied to set role "service_role"',
  'inside authenticated, set role service_role is refused');
select throws_ok($$ update app.users set user_role = 'admin' $$, '42501', null,
  'a learner cannot make itself an admin');
select throws_ok($$ select private.set_service_auth_digest(null) $$, '42501', null,
  'a learner cannot touch the service secret');
select is((select count(*)::int from app.users), 1, 'a learner sees its own profile only');
select set_config('request.jwt.claims', '', true);
reset role;
-- back to the login role itself
select current_user as after_reset_role \gset
reset session authorization;
select is(:'after_reset_role'::text, 'sparkpath_api', 'reset role gives back the login role, not the owner');
\else
select skip('SET SESSION AUTHORIZATION needs a superuser session (test/db/login-role.test.ts logs in as sparkpath_api)', 12);
\endif

-- The dispatcher checks the role it is asked for
select throws_ok($$ select private.dispatch('service_role', null, 'api.get_metadata()', '{}') $$, '42501', 'unsupported request role',
  'the dispatchers never enter service_role');

select * from finish();
rollback;
