-- api_login_role: written by hand, before the generated migration that grants to it, because a
-- schema diff carries neither roles nor role memberships. The same block as
-- supabase/schemas/02-callers.sql: the API's login role sparkpath_api (NOINHERIT, created
-- without LOGIN; whoever deploys gives it a password), a member of anon and authenticated only.

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
grant usage on schema private to sparkpath_api, service_role;
grant usage on schema app to service_role;
