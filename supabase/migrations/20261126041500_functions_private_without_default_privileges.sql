-- functions_private_without_default_privileges: written by hand (a schema diff does not carry
-- default privileges).
--
-- The baseline's platform shim revoked execute from PUBLIC on every function the migrating role
-- would ever create, in any schema: on a Supabase project that reached past this project (the
-- functions a developer writes in public, pgTAP's). Put PostgreSQL's default back and keep this
-- project's routines private the way supabase/schemas/99-default-deny.sql does. The revoke
-- changes nothing where the baseline ran: its functions were created without PUBLIC's execute.
alter default privileges grant execute on functions to public;
revoke execute on all routines in schema app, private, api from public;
