-- The Supabase platform shim and the dispatcher.
begin;
select plan(14);

select has_role('anon', 'the anon request role exists');
select has_role('authenticated', 'the authenticated request role exists');
select has_role('service_role', 'the service_role role exists');
select has_schema('extensions', 'the extensions schema exists');
select has_function('auth', 'uid', '{}'::name[], 'auth.uid() exists');

-- acting as nobody: no claims means no user
select set_config('request.jwt.claims', '', true);
select is(auth.uid(), null, 'auth.uid() is null when no claims are set (empty string on a pooled connection)');

-- acting as a user
select set_config('request.jwt.claims', '{"sub":"11111111-1111-4111-8111-111111111111","role":"authenticated","email":"a@example.com"}', true);
select is(auth.uid(), '11111111-1111-4111-8111-111111111111'::uuid, 'auth.uid() reads sub from request.jwt.claims');
select is(auth.role(), 'authenticated', 'auth.role() reads role from request.jwt.claims');
select is(auth.jwt() ->> 'email', 'a@example.com', 'auth.jwt() returns the whole claims document');
select set_config('request.jwt.claims', '', true);

select is(
  private.dispatch('authenticated', '{"sub":"22222222-2222-4222-8222-222222222222","role":"authenticated"}', 'api.get_metadata()', '{}'::jsonb)::jsonb -> 'difficulty_levels' -> 0 ->> 'value',
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
  not has_function_privilege('anon', 'private.dispatch(text, text, text, jsonb)', 'execute')
  and not has_function_privilege('authenticated', 'private.dispatch(text, text, text, jsonb)', 'execute')
  and not has_function_privilege('service_role', 'private.dispatch(text, text, text, jsonb)', 'execute'),
  'no request role may execute the dispatcher');

select ok(
  not exists (
    select 1 from pg_catalog.pg_proc p
    where p.pronamespace = 'api'::regnamespace and p.prosecdef),
  'every api function is security invoker');

select * from finish();
rollback;
