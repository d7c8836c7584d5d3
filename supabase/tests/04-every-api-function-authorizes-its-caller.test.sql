-- Who may call what is decided in SQL, by every api function, whichever door the call comes
-- through: private.request_caller reads the caller from the request role, the JWT claims and the
-- X-Service-Auth header; private.authorize applies the function's rule (private.api_access_rule)
-- and the permission matrix (private.role_permissions) before the function reads anything.
begin;
select plan(50);

select tests.create_user('learner');
select tests.create_user('pat', 'premium');
select tests.create_user('ada', 'admin');

-- Every api function calls `name(null, null, …)`: authorization comes first, so the arguments
-- never matter to a refusal. Returns the SQLSTATE, or 'ok'.
create function pg_temp.outcome(fn regprocedure) returns text language plpgsql as $$
begin
  execute pg_catalog.format('select %s.%s(%s)', 'api', (select proname from pg_proc where oid = fn),
    (select coalesce(string_agg('null', ', '), '') from pg_proc p, unnest(p.proargtypes) where p.oid = fn));
  return 'ok';
exception when others then
  return sqlstate;
end
$$;
grant execute on function pg_temp.outcome(regprocedure) to anon, authenticated, service_role;
create temp table api_functions as
  select p.oid::regprocedure as fn, p.proname::text as name, (private.api_access_rule(p.proname)).audience
  from pg_proc p
  where p.pronamespace = 'api'::regnamespace;
grant select on api_functions to anon, authenticated, service_role;

-- ---------------------------------------------------------------------------------------------
-- The rules cover every api function, and every function applies its own first
-- ---------------------------------------------------------------------------------------------
select is((select count(*)::int from api_functions where audience is null), 0,
  'every api function has an access rule');
select ok((select audience is null and permission is null from private.api_access_rule('no_such_function')),
  'a name without a rule has no audience and no permission');
select is(
  (select array_agg(name order by name) from api_functions f, pg_proc p
   where p.oid = f.fn and f.name <> 'get_session'
     and (strpos(p.prosrc, format('private.authorize(%L)', f.name)) = 0
          or strpos(p.prosrc, format('private.authorize(%L)', f.name)) > strpos(p.prosrc, 'private.')
          or strpos(p.prosrc, 'app.') between 1 and strpos(p.prosrc, 'private.authorize(')
          or strpos(p.prosrc, 'auth.') between 1 and strpos(p.prosrc, 'private.authorize('))),
  null,
  'every api function but get_session calls private.authorize with its own name before anything else');
select ok(
  (select bool_and(has_function_privilege(r, f.fn, 'execute')) from api_functions f, unnest(array['anon', 'authenticated', 'service_role']) r),
  'anon, authenticated and service_role may execute every api function (the function decides)');
select is(
  (select array_agg(p.oid::regprocedure::text order by 1) from pg_proc p
   where p.pronamespace in ('api'::regnamespace, 'private'::regnamespace) and p.prosrc ~ $re$'(P0002|28[0-9A-Z]{3})'$re$),
  null,
  'no function raises P0002 or 28xxx, which PostgREST answers with 500 and 403 (PT404 and PT401 instead)');

-- ---------------------------------------------------------------------------------------------
-- The permission matrix
-- ---------------------------------------------------------------------------------------------
select is((select array_agg(p order by p) from unnest(private.role_permissions('ANONYMOUS')) p),
  array['READ_PUBLIC_CONTENT'], 'anonymous callers read public content only');
select is((select array_agg(p order by p) from unnest(private.role_permissions('FREE_USER')) p),
  array['CREATE_JOURNEY', 'READ_PREVIEW_CONTENT', 'READ_PUBLIC_CONTENT', 'TRACK_PROGRESS'],
  'a free learner reads public and preview content and tracks journeys');
select is((select array_agg(p order by p) from unnest(private.role_permissions('PREMIUM_USER')) p),
  array['CREATE_JOURNEY', 'READ_FULL_CONTENT', 'READ_PREMIUM_CONTENT', 'READ_PREVIEW_CONTENT', 'READ_PUBLIC_CONTENT', 'TRACK_PROGRESS', 'UNLIMITED_SEARCH'],
  'a premium learner also reads full and premium content and searches without limit');
select is(cardinality(private.role_permissions('ADMIN')), 10, 'an admin holds all ten permissions');
select is((select array_agg(p order by p) from unnest(private.role_permissions('SERVICE')) p),
  array['BYPASS_RATE_LIMITS', 'READ_FULL_CONTENT', 'READ_PREMIUM_CONTENT', 'READ_PREVIEW_CONTENT', 'READ_PUBLIC_CONTENT', 'UNLIMITED_SEARCH'],
  'a service caller holds exactly the spec''s grant: never TRACK_PROGRESS, CREATE_JOURNEY, MANAGE_CONTENT or MANAGE_USERS');

-- ---------------------------------------------------------------------------------------------
-- Who is calling
-- ---------------------------------------------------------------------------------------------
-- acting as each user
select tests.authenticate_as('learner');
select is(private.request_caller(), 'FREE_USER', 'a learner on the free plan is FREE_USER');
select tests.authenticate_as('pat');
select is(private.request_caller(), 'PREMIUM_USER', 'a learner on the premium plan is PREMIUM_USER');
select tests.authenticate_as('ada');
select is(private.request_caller(), 'ADMIN', 'user_role admin is ADMIN');
select tests.authenticate_as('learner', '{"user_role":"superuser"}');
select is(private.request_caller(), null, 'an unknown user_role is no caller of this API');
select tests.authenticate_as('learner', '{"subscription_plan":"gold"}');
select is(private.request_caller(), null, 'an unknown subscription_plan is no caller of this API');
select tests.authenticate_as('learner', '{"sub":"not-a-uuid"}');
select is(private.request_caller(), null, 'a subject that is no uuid is no caller of this API');
select tests.authenticate_as('learner', '{}', array['user_role', 'subscription_plan']);
select is(private.request_caller(), 'FREE_USER', 'a token without role claims is a free learner, as the API reads it');
-- acting as anon, then as service callers
select tests.clear_authentication();
select is(private.request_caller(), 'ANONYMOUS', 'no claims and no header: ANONYMOUS');
select tests.authenticate_as_service();
select is(private.request_caller(), 'SERVICE', 'the service secret in X-Service-Auth: SERVICE');
select tests.authenticate_as_service('not-the-service-secret-0123456789abcdefgh');
select is(private.request_caller(), 'ANONYMOUS', 'a wrong secret is an anonymous caller, as in the API');
reset role;
select private.set_service_auth_digest(null);
select set_config('role', 'anon', true), set_config('request.headers', json_build_object('x-service-auth', tests.service_secret())::text, true);
select is(private.request_caller(), 'ANONYMOUS', 'without a recorded digest no secret makes a service caller');
reset role;
select set_config('request.headers', '', true);
-- acting as a user who also sends the service header: the user's JWT wins, as in the API
select tests.use_service_secret();
select tests.authenticate_as('learner');
select set_config('request.headers', json_build_object('x-service-auth', tests.service_secret())::text, true);
select is(private.request_caller(), 'FREE_USER', 'a user''s JWT takes precedence over the service header');
reset role;
select set_config('role', 'service_role', true);
select is(private.request_caller(), null, 'the service_role key is no caller of this API');
reset role;
select is(private.request_caller(), 'ADMIN', 'the owner acting as itself (no request role) passes as ADMIN');

-- ---------------------------------------------------------------------------------------------
-- The decision, function by function
-- ---------------------------------------------------------------------------------------------
-- acting as service_role
set local role service_role;
select lives_ok($$ select private.check_request() $$, 'PostgREST''s pre-request hook runs for service_role');
select is((select array_agg(name order by name) from api_functions where name <> 'get_session' and pg_temp.outcome(fn) <> 'PT401'),
  null, 'every api function refuses the service_role key with PT401 (never 42501)');
select is(api.get_session(), '{"authenticated":false,"user":null,"session":null}'::jsonb,
  'get_session answers service_role "not signed in"');
reset role;

-- acting as anon
select tests.clear_authentication();
select is((select array_agg(name order by name) from api_functions where audience <> 'anyone' and pg_temp.outcome(fn) <> 'PT401'),
  null, 'anon gets PT401 from every function that needs a JWT or the service secret');
select is((select array_agg(name order by name) from api_functions where audience = 'anyone' and pg_temp.outcome(fn) in ('PT401', 'PT403')),
  null, 'anon is refused by no function of the open catalog');
select throws_ok($$ select api.search_content('sql') $$, 'PT401', 'Authentication required', 'anon may not search');
reset role;

-- acting as a service caller
select tests.authenticate_as_service();
select is((select array_agg(name order by name) from api_functions where audience = 'signed_in' and pg_temp.outcome(fn) <> 'PT403'),
  null, 'a service caller gets PT403 from every function about one learner');
select is((select array_agg(name order by name) from api_functions where audience <> 'signed_in' and pg_temp.outcome(fn) in ('PT401', 'PT403')),
  null, 'a service caller is refused by no content function');
select throws_ok($$ select api.list_user_journeys() $$, 'PT403', 'Service callers cannot use this endpoint',
  'a service caller never reads journeys');
select is(private.authorize('search_content'), 'SERVICE', 'authorize names the caller it let through');
reset role;

-- acting as each kind of user
select tests.authenticate_as('learner');
select is((select array_agg(name order by name) from api_functions where pg_temp.outcome(fn) in ('PT401', 'PT403')),
  null, 'a free learner is refused by no function');
select tests.authenticate_as('pat');
select is((select array_agg(name order by name) from api_functions where pg_temp.outcome(fn) in ('PT401', 'PT403')),
  null, 'a premium learner is refused by no function');
select tests.authenticate_as('ada');
select is((select array_agg(name order by name) from api_functions where pg_temp.outcome(fn) in ('PT401', 'PT403')),
  null, 'an admin is refused by no function');
select tests.authenticate_as('learner', '{"user_role":"superuser"}');
select is((select array_agg(name order by name) from api_functions where name <> 'get_session' and pg_temp.outcome(fn) <> 'PT401'),
  null, 'a token the API does not accept gets PT401 everywhere');
select throws_ok($$ select api.get_metadata() $$, 'PT401', 'The access token does not identify a caller of this API; sign in again',
  'even from the open catalog, as the API answers such a bearer token');
select is(api.get_session(), '{"authenticated":false,"user":null,"session":null}'::jsonb,
  'and get_session reads it as "not signed in"');
reset role;

-- ---------------------------------------------------------------------------------------------
-- The dispatchers decide before they answer from a body the API holds
-- ---------------------------------------------------------------------------------------------
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('04000000-0000-4000-8000-000000000001', 'authorize', 'v1', 'published', now());
select throws_ok(
  $$ select * from private.dispatch_snapshot_read('anon', null, 'api.search_content(q => ($1->>''q'')::text, snapshot_id => ($1->>''snapshot_id'')::uuid)',
       '{"q":"sql"}', array['04000000-0000-4000-8000-000000000001']) $$,
  'PT401', 'Authentication required',
  'an anonymous snapshot read of search is refused even when the API holds that version''s body');
reset role;
select is(
  (select version || ':' || coalesce(body, 'held') from private.dispatch_snapshot_read('anon', null,
     'api.search_content(q => ($1->>''q'')::text, snapshot_id => ($1->>''snapshot_id'')::uuid)',
     '{"q":"sql"}', array['04000000-0000-4000-8000-000000000001'], jsonb_build_object('x-service-auth', tests.service_secret()))),
  '04000000-0000-4000-8000-000000000001:held',
  'a service caller is let through, and the held body is not recomputed');
reset role;
select throws_ok(
  $$ select private.dispatch('anon', null, 'api.list_snapshots()', '{}') $$,
  'PT401', 'Authentication required', 'the dispatcher gets the same answer from the function itself');
reset role;
select is(private.dispatch('anon', null, 'api.list_snapshots()', '{}', jsonb_build_object('x-service-auth', tests.service_secret()))::jsonb -> 'meta' ->> 'total',
  (select count(*)::text from app.snapshots), 'the dispatcher forwards X-Service-Auth as request.headers');
reset role;

-- ---------------------------------------------------------------------------------------------
-- GET /auth/session never refuses: the session check lets /rpc/get_session through
-- ---------------------------------------------------------------------------------------------
select tests.end_session('learner');
select tests.authenticate_as('learner');
select set_config('request.path', '/rpc/get_session', true);
select lives_ok($$ select private.check_request() $$, 'the pre-request hook lets /rpc/get_session through with an ended session');
select is(api.get_session(), '{"authenticated":false,"user":null,"session":null}'::jsonb,
  'and get_session reads the ended session as "not signed in"');
select set_config('request.path', '/rpc/list_user_journeys', true);
select throws_ok($$ select private.check_request() $$, 'PT401', 'Session is no longer active; sign in again',
  'any other path is refused');
reset role;
select set_config('request.path', '', true);

-- A permission the caller's role lacks: a rule asking for MANAGE_CONTENT (the rules are one
-- function; this transaction replaces it and rolls back).
create or replace function private.api_access_rule(function_name text, out audience text, out permission text)
language plpgsql immutable set search_path = ''
as $$
begin
  if api_access_rule.function_name = 'manage_things' then
    audience := 'signed_in'; permission := 'MANAGE_CONTENT';
  end if;
end
$$;
-- acting as a learner, then as an admin
select tests.authenticate_as('learner');
select throws_ok($$ select private.authorize('manage_things') $$, 'PT403', 'Missing permission MANAGE_CONTENT',
  'a learner without the permission gets PT403 naming it');
select tests.authenticate_as('ada');
select is(private.authorize('manage_things'), 'ADMIN', 'an admin holding it passes');
select throws_ok($$ select private.authorize('search_content') $$, 'XX000', 'api.search_content has no access rule in private.api_access_rule',
  'a function without a rule is an internal error, never an open door');
reset role;

select * from finish();
rollback;
