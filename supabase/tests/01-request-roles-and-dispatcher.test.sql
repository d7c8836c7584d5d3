-- The request roles and auth.* functions of the Supabase platform shim, and the dispatcher that
-- runs an api function as a request role.
begin;
select plan(15);

select has_role('anon', 'the anon request role exists');
select has_role('authenticated', 'the authenticated request role exists');
select has_role('service_role', 'the service_role role exists');
select has_schema('extensions', 'the extensions schema exists');
select has_function('auth', 'uid', '{}'::name[], 'auth.uid() exists');

select tests.create_user('alice', email => 'a@example.com');

-- acting as anon: no claims means no user
select tests.clear_authentication();
select is(current_setting('request.jwt.claims', true), '', 'an anonymous caller''s claims are the empty string a pooled connection keeps');
select is(auth.uid(), null, 'auth.uid() is null when no claims are set (empty string on a pooled connection)');

-- acting as alice
select tests.authenticate_as('alice');
select is(auth.uid(), tests.get_user_id('alice'), 'auth.uid() reads sub from request.jwt.claims');
select is(auth.role(), 'authenticated', 'auth.role() reads role from request.jwt.claims');
select is(auth.jwt() ->> 'email', 'a@example.com', 'auth.jwt() returns the whole claims document');
reset role;

select is(
  private.dispatch('authenticated', tests.get_claims('alice')::text, 'api.get_metadata()', '{}'::jsonb)::jsonb -> 'difficulty_levels' -> 0 ->> 'value',
  'beginner',
  'the dispatcher runs an api function and returns its JSON as text');
-- The dispatcher's settings are transaction-local: in production the statement is its own
-- transaction; inside this test transaction, step back out by hand.
reset role;

select throws_ok(
  $$ select private.dispatch('service_role', null, 'api.get_metadata()', '{}'::jsonb) $$,
  '42501', 'unsupported request role',
  'the dispatcher refuses any role but anon and authenticated');

select throws_ok(
  $$ select private.dispatch('anon', null, 'pg_catalog.pg_sleep(0)', '{}'::jsonb) $$,
  '42501', 'only api functions may be dispatched',
  'the dispatcher refuses calls outside the api schema');

select ok(
  not has_function_privilege('anon', 'private.dispatch(text, text, text, jsonb, jsonb)', 'execute')
  and not has_function_privilege('authenticated', 'private.dispatch(text, text, text, jsonb, jsonb)', 'execute')
  and not has_function_privilege('service_role', 'private.dispatch(text, text, text, jsonb, jsonb)', 'execute'),
  'no request role may execute the dispatcher');

select ok(
  not exists (
    select 1 from pg_catalog.pg_proc p
    where p.pronamespace = 'api'::regnamespace and p.prosecdef),
  'every api function is security invoker');

select * from finish();
rollback;
