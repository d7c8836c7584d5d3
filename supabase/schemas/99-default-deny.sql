-- Functions are private until granted. PostgreSQL lets PUBLIC execute every new function; each
-- function's grants sit right below it, and this last file takes PUBLIC's execute from every
-- routine of the project's schemas. No default privilege is changed: on a Supabase project the
-- functions of other schemas (public, extensions, Supabase's own) keep PostgreSQL's defaults.
-- A migration that adds a function carries the same revoke (`npm run db:diff` writes it).
revoke execute on all routines in schema app, private, api from public;
