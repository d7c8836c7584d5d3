-- Callers: the schemas and who may reach them, the API's login role, who is calling, and what
-- each caller may do. The permission rules of the spec hold here, in the database, whichever
-- door a request comes through: this API's dispatcher or PostgREST (a Supabase project's Data
-- API), whose contract the dispatcher copies.
--
--   app      tables; never exposed. Request roles reach rows only through RLS.
--   private  security-definer helpers and the dispatcher; never exposed.
--   api      the one exposed schema: security invoker functions only.
--
-- How a request names its caller (the same in both doors):
--   request role  anon | authenticated (PostgREST: the JWT's `role` claim; the dispatcher: the
--                 role the API resolved). service_role is Supabase's key that bypasses RLS: it is
--                 not a caller of this API (see private.request_caller).
--   request.jwt.claims   the verified JWT payload; `user_role` (learner | admin) and
--                 `subscription_plan` (free | premium) give a user's role.
--   request.headers      JSON of the request's headers, lower-case names. A valid
--                 `x-service-auth` makes an anonymous request a SERVICE caller: its SHA-256 must
--                 equal the digest of SERVICE_AUTH_SECRET kept in app.service_auth_digest.
--
-- How an api function declares who may call it: its name in private.api_access_rule (audience
-- and permission), and, as its first declaration (before anything reads a table or calls a helper),
--   caller_role constant text := private.authorize('<function name>');
-- supabase/tests/04-every-api-function-authorizes-its-caller.test.sql fails for a function that
-- lacks either. Its refusals (PT401, PT403) are every function's; each function's comment lists
-- only its own errors. docs/permissions.md has the whole picture.

create schema if not exists app;
create schema if not exists private;
create schema if not exists api;

revoke all on schema app, private, api from public;
grant usage on schema api to anon, authenticated, service_role;
-- api functions are security invoker, so the request role needs to see the tables they read;
-- row-level security decides which rows. service_role holds no privilege on any table: usage
-- only lets PL/pgSQL compile an api function that names a row type of app (app.domains) and
-- reach its private.authorize, which refuses service_role.
grant usage on schema app to anon, authenticated, service_role;
-- The request roles run private helpers from inside api functions; service_role only reaches
-- the request checks: private.check_request (PostgREST's pre-request hook), private.authorize
-- (which refuses it) and private.request_caller (api.get_session asks it).
grant usage on schema private to anon, authenticated, service_role;

-- The API's login role, PostgREST's `authenticator` pattern: it logs in, holds no privilege on
-- any table, and can only become a request role (anon or authenticated; never service_role,
-- which bypasses RLS). NOINHERIT, so as itself it has none of their privileges either; it runs
-- the dispatchers and the sign-in, rate-limit and cleanup functions granted to it below them.
-- Created without LOGIN: whoever deploys gives it a password (docs/configuration.md); the
-- embedded database does it at start-up. Migrations and the content CLI use the owner role.
do $$
declare
  request_role text;
begin
  if not exists (select from pg_catalog.pg_roles where rolname = 'sparkpath_api') then
    create role sparkpath_api nologin noinherit;
  end if;
  foreach request_role in array array['anon', 'authenticated'] loop
    if not pg_catalog.pg_has_role('sparkpath_api', request_role, 'member') then
      begin
        execute pg_catalog.format('grant %I to sparkpath_api', request_role);
      exception when insufficient_privilege then
        raise warning 'could not grant % to sparkpath_api; run as a role that administers %: grant % to sparkpath_api', request_role, request_role, request_role;
      end;
    end if;
  end loop;
end
$$;
grant usage on schema private to sparkpath_api;

-- The digest of the service secret (SERVICE_AUTH_SECRET), written by the owner connection when
-- the API starts and by `npm run db:migrate` (private.set_service_auth_digest). A SHA-256 of a
-- random secret of at least 32 characters is not itself a secret (nobody can find a header that
-- hashes to it), so it lives in a private table, on Supabase too, where Vault would add a
-- decryption to every service request and protect nothing more. No row: no service access.
create table app.service_auth_digest (
  singleton boolean default true primary key check (singleton),
  digest bytea not null check (pg_catalog.octet_length(digest) = 32),
  updated_at timestamp with time zone default now() not null
);
comment on table app.service_auth_digest is
  'SHA-256 of SERVICE_AUTH_SECRET (one row, or none: no service access); X-Service-Auth is checked against it.';
-- No policy and no grant: only private.request_caller reads it, the owner writes it.
alter table app.service_auth_digest enable row level security;

-- private.set_service_auth_digest
-- Purpose: records the digest of the service secret (null removes it: no service access).
-- Params:  digest, the SHA-256 of SERVICE_AUTH_SECRET (32 bytes) or null.
-- Owner only: the API's start-up and `npm run db:migrate` call it with the owner connection.
create or replace function private.set_service_auth_digest(digest bytea)
returns void
language sql
set search_path = ''
as $$
  delete from app.service_auth_digest where set_service_auth_digest.digest is null;
  insert into app.service_auth_digest (digest)
  select set_service_auth_digest.digest where set_service_auth_digest.digest is not null
  on conflict (singleton) do update set digest = excluded.digest, updated_at = pg_catalog.now();
$$;
comment on function private.set_service_auth_digest(bytea) is
  'Records the SHA-256 of SERVICE_AUTH_SECRET (null removes it). Owner only: run at API start-up and by npm run db:migrate.';

-- private.request_caller
-- Purpose: who is calling, from the request role, the JWT claims and the service header, as the
--          API's context resolution decides it (src/context/resolve-context.ts).
-- Returns: ANONYMOUS | FREE_USER | PREMIUM_USER | ADMIN | SERVICE; null when the request carries
--          credentials this API does not accept, which it answers with 401 everywhere:
--          authenticated claims without a uuid `sub` or with an unknown user_role or
--          subscription_plan, and the service_role key (it bypasses RLS; service callers use
--          the anon role with X-Service-Auth, as the spec says). The owner acting as itself,
--          without a request role (a DBA in psql, a test fixture; never a request: both doors
--          always set one), holds every privilege already and passes as ADMIN.
-- plpgsql, stable, security definer (it reads the service digest); no exception block, so no
-- subtransaction per request.
create or replace function private.request_caller()
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  request_role constant text := pg_catalog.current_setting('role');
  claims jsonb;
  user_role text;
  plan text;
  service_secret text;
begin
  if request_role = 'authenticated' then
    claims := nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb;
    if not coalesce(claims ->> 'sub' ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', false) then
      return null;
    end if;
    user_role := coalesce(claims ->> 'user_role', 'learner');
    plan := coalesce(claims ->> 'subscription_plan', 'free');
    if user_role not in ('learner', 'admin') or plan not in ('free', 'premium') then
      return null;
    end if;
    return case when user_role = 'admin' then 'ADMIN' when plan = 'premium' then 'PREMIUM_USER' else 'FREE_USER' end;
  end if;
  if request_role = 'none' then
    return 'ADMIN';
  end if;
  if request_role <> 'anon' then
    return null;
  end if;
  service_secret := nullif(pg_catalog.current_setting('request.headers', true), '')::json ->> 'x-service-auth';
  if service_secret is not null and exists (
    select 1 from app.service_auth_digest d
    where d.digest = pg_catalog.sha256(pg_catalog.convert_to(service_secret, 'UTF8'))
  ) then
    return 'SERVICE';
  end if;
  return 'ANONYMOUS';
end
$$;
comment on function private.request_caller() is
  'The caller''s role (ANONYMOUS, FREE_USER, PREMIUM_USER, ADMIN, SERVICE) from the request role, request.jwt.claims and request.headers x-service-auth; null for credentials the API refuses (service_role, unknown claims).';
grant execute on function private.request_caller() to anon, authenticated, service_role;

-- private.role_permissions
-- The spec's permission matrix: what each role may do. The one list in SQL; the API's copy
-- (src/context/permissions.ts) is checked against it by test/http/authority.test.ts. plpgsql
-- with a CASE, like private.api_access_rule: every request reads it, and plpgsql keeps the plan
-- (a set-returning SQL function would be planned again on every call).
create or replace function private.role_permissions(role text)
returns text[]
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case role_permissions.role
    when 'ANONYMOUS' then array['READ_PUBLIC_CONTENT']
    when 'FREE_USER' then array['READ_PUBLIC_CONTENT', 'READ_PREVIEW_CONTENT', 'TRACK_PROGRESS', 'CREATE_JOURNEY']
    when 'PREMIUM_USER' then array['READ_PUBLIC_CONTENT', 'READ_PREVIEW_CONTENT', 'TRACK_PROGRESS', 'CREATE_JOURNEY',
                                   'READ_FULL_CONTENT', 'READ_PREMIUM_CONTENT', 'UNLIMITED_SEARCH']
    when 'ADMIN' then array['READ_PUBLIC_CONTENT', 'READ_PREVIEW_CONTENT', 'READ_FULL_CONTENT', 'READ_PREMIUM_CONTENT',
                            'UNLIMITED_SEARCH', 'BYPASS_RATE_LIMITS', 'TRACK_PROGRESS', 'CREATE_JOURNEY',
                            'MANAGE_CONTENT', 'MANAGE_USERS']
    -- Exactly the spec's grant: read everything, search freely, never write, never /me.
    when 'SERVICE' then array['READ_PUBLIC_CONTENT', 'READ_PREVIEW_CONTENT', 'READ_FULL_CONTENT', 'READ_PREMIUM_CONTENT',
                              'UNLIMITED_SEARCH', 'BYPASS_RATE_LIMITS']
    else array[]::text[]
  end;
end
$$;
comment on function private.role_permissions(text) is
  'The permission matrix: the permissions a role (ANONYMOUS, FREE_USER, PREMIUM_USER, ADMIN, SERVICE) holds.';
grant execute on function private.role_permissions(text) to anon, authenticated, service_role;

-- private.api_access_rule
-- Who may call each api function, the one place that says it:
--   anyone                 anonymous callers, users and service callers (the open catalog)
--   signed_in_or_service   a user's JWT or the service secret (spec: "JWT required"; service
--                          callers read content)
--   signed_in              a user's JWT only (about one learner: journeys, events, paths)
-- and the permission the caller's role must hold. A caller outside the audience gets 401 when
-- anonymous and 403 when a service caller; a role without the permission gets 403. Both null:
-- the function has no rule (private.authorize refuses every call).
create or replace function private.api_access_rule(function_name text, out audience text, out permission text)
language plpgsql
immutable
set search_path = ''
as $$
begin
  case api_access_rule.function_name
    when 'get_metadata', 'list_difficulty_levels', 'resolve_snapshot', 'list_discovery_domains',
         'list_discovery_trails', 'list_discovery_concepts', 'list_discovery_sparks', 'list_discovery_items',
         'get_discovery_facets', 'browse_catalog', 'list_domains', 'get_domain', 'get_domain_trails',
         'list_related_domains',
         -- GET /auth/session never refuses: credentials it cannot accept read as "not signed in".
         'get_session' then
      audience := 'anyone'; permission := 'READ_PUBLIC_CONTENT';
    when 'list_snapshots', 'get_current_snapshot', 'get_snapshot', 'list_snapshot_changes', 'search_content',
         'list_search_suggestions', 'get_spark_graph', 'list_spark_links' then
      audience := 'signed_in_or_service'; permission := 'READ_PUBLIC_CONTENT';
    when 'get_learning_path' then
      audience := 'signed_in'; permission := 'READ_PUBLIC_CONTENT';
    when 'list_user_journeys', 'get_user_journey', 'record_learning_event', 'void_learning_event',
         -- Beyond the spec (14-learning.sql): about one learner's progress, as journeys are.
         'list_next_sparks', 'list_due_reviews', 'record_review', 'list_statements' then
      audience := 'signed_in'; permission := 'TRACK_PROGRESS';
    when 'enroll_in_trail' then
      audience := 'signed_in'; permission := 'CREATE_JOURNEY';
    else
      null;
  end case;
end
$$;
comment on function private.api_access_rule(text) is
  'Who may call an api function: audience (anyone | signed_in_or_service | signed_in) and the permission the caller''s role must hold; null for a function without a rule.';
grant execute on function private.api_access_rule(text) to anon, authenticated, service_role;

-- private.authorize
-- Purpose: the permission decision of an api call, before it reads anything: the first
--          declaration of every api function, and the dispatchers' check before they answer
--          from a body the API already holds.
-- Params:  function_name, the api function's name (its rule in private.api_access_rule).
-- Returns: the caller's role (private.request_caller).
-- Errors:  PT401 for credentials the API refuses, and for an anonymous caller outside the
--          audience; PT403 for a service caller outside the audience or a role without the
--          permission (detail {permission}); XX000 for a function without a rule.
create or replace function private.authorize(function_name text)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  caller constant text := private.request_caller();
  rule constant record := private.api_access_rule(authorize.function_name);
begin
  if rule.audience is null then
    raise exception using errcode = 'XX000',
      message = pg_catalog.format('api.%s has no access rule in private.api_access_rule', authorize.function_name);
  end if;
  if caller is null then
    raise exception using errcode = 'PT401',
      message = 'The access token does not identify a caller of this API; sign in again',
      detail = '{"reason":"token_not_accepted"}';
  end if;
  if rule.audience <> 'anyone' and caller = 'ANONYMOUS' then
    raise exception using errcode = 'PT401', message = 'Authentication required';
  end if;
  if rule.audience = 'signed_in' and caller = 'SERVICE' then
    raise exception using errcode = 'PT403', message = 'Service callers cannot use this endpoint',
      detail = pg_catalog.jsonb_build_object('permission', rule.permission)::text;
  end if;
  if not rule.permission = any(private.role_permissions(caller)) then
    raise exception using errcode = 'PT403', message = 'Missing permission ' || rule.permission,
      detail = pg_catalog.jsonb_build_object('permission', rule.permission)::text;
  end if;
  return caller;
end
$$;
comment on function private.authorize(text) is
  'Refuses an api call its caller may not make (PT401 not signed in or token not accepted, PT403 forbidden), per private.api_access_rule and private.role_permissions; returns the caller''s role.';
grant execute on function private.authorize(text) to anon, authenticated, service_role;
