-- Supabase Auth's custom access token hook (private.custom_access_token_hook): fed events in the
-- documented input shape {user_id, claims, authentication_method}, it returns {claims} with the
-- profile's user_role and subscription_plan added and every claim it was given kept. Only
-- supabase_auth_admin, the role Supabase Auth calls it as, may run it.
begin;
select plan(10);

select tests.create_user('ada', 'admin');
select tests.create_user('pat', 'premium');
select tests.create_user('lea');

-- The claims Supabase Auth builds before it calls the hook (standard claims of an OAuth sign-in).
create function pg_temp.event(user_id uuid, method text default 'oauth')
returns jsonb
language sql
as $$
  select pg_catalog.jsonb_build_object(
    'user_id', user_id,
    'authentication_method', method,
    'claims', pg_catalog.jsonb_build_object(
      'iss', 'https://abcdefghijklmnopqrst.supabase.co/auth/v1', 'aud', 'authenticated',
      'exp', 1900000000, 'iat', 1899996400, 'sub', user_id, 'email', 'someone@example.com', 'phone', '',
      'app_metadata', pg_catalog.jsonb_build_object('provider', 'github', 'providers', pg_catalog.jsonb_build_array('github')),
      'user_metadata', pg_catalog.jsonb_build_object('full_name', 'Someone'),
      'role', 'authenticated', 'aal', 'aal1',
      'amr', pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('method', method, 'timestamp', 1899996400)),
      'session_id', '8a2d1f4e-5b6c-4d7e-8f90-a1b2c3d4e5f6', 'is_anonymous', false))
$$;

select ok(pg_catalog.has_function_privilege('supabase_auth_admin', 'private.custom_access_token_hook(jsonb)', 'execute'),
  'supabase_auth_admin may run the hook');
select ok(not pg_catalog.has_function_privilege('authenticated', 'private.custom_access_token_hook(jsonb)', 'execute')
          and not pg_catalog.has_function_privilege('anon', 'private.custom_access_token_hook(jsonb)', 'execute'),
  'the request roles may not run the hook');

-- The events Supabase Auth would send, and what the hook answers it: Supabase Auth calls the hook
-- as supabase_auth_admin, which holds nothing else here (not even pgTAP), so the calls are made
-- first and the answers asserted after.
create temp table hook_calls (name text primary key, event jsonb not null, answer jsonb);
insert into hook_calls (name, event) values
  ('ada', pg_temp.event(tests.get_user_id('ada'))),
  ('pat', pg_temp.event(tests.get_user_id('pat'))),
  ('lea', pg_temp.event(tests.get_user_id('lea'), 'password')),
  ('nobody', pg_temp.event('00000000-0000-4000-8000-00000000abcd'));
grant select, update on hook_calls to supabase_auth_admin;
create function pg_temp.call_hook_as_supabase_auth()
returns void
language plpgsql
as $$
begin
  set local role supabase_auth_admin;
  update hook_calls set answer = private.custom_access_token_hook(event);
  reset role;
end
$$;
select pg_temp.call_hook_as_supabase_auth();

select is((select answer -> 'claims' ->> 'user_role' from hook_calls where name = 'ada'), 'admin',
  'an admin''s token carries user_role admin');
select is((select answer -> 'claims' ->> 'subscription_plan' from hook_calls where name = 'pat'), 'premium',
  'a premium learner''s token carries subscription_plan premium');
select is((select pg_catalog.jsonb_build_array(answer -> 'claims' -> 'user_role', answer -> 'claims' -> 'subscription_plan') from hook_calls where name = 'lea'),
          '["learner", "free"]'::jsonb,
  'a learner on the free plan (signed in with a password) gets learner and free');
select is((select (answer -> 'claims') - array['user_role', 'subscription_plan'] from hook_calls where name = 'pat'),
          (select event -> 'claims' from hook_calls where name = 'pat'),
  'every claim Supabase Auth sent comes back unchanged');
select is((select answer - 'claims' from hook_calls where name = 'pat'), '{}'::jsonb,
  'the answer is {claims} and nothing else');
select is((select answer from hook_calls where name = 'nobody'),
          (select pg_catalog.jsonb_build_object('claims', event -> 'claims') from hook_calls where name = 'nobody'),
  'a user without a profile keeps the claims as they are (read as learner, free)');
select ok((select c.answer -> 'claims' @> (private.token_claims(u, null) - array['sub', 'email', 'session_id'])
           from hook_calls c join app.users u on u.id = tests.get_user_id('ada') where c.name = 'ada'),
  'the role claims are the ones this API''s own tokens carry');

-- A change of plan shows in the next token Supabase Auth signs (at the next refresh).
update app.users set subscription_plan = 'premium' where id = tests.get_user_id('lea');
select pg_temp.call_hook_as_supabase_auth();
select is((select answer -> 'claims' ->> 'subscription_plan' from hook_calls where name = 'lea'), 'premium',
  'a plan upgrade shows in the next token');

select * from finish();
rollback;
