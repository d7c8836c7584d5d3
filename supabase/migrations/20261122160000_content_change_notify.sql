-- Content change notifications: NOTIFY sparkpath_content after any write to a table that the
-- API answers from memory.
--
-- The API keeps the bodies of a few public reads in memory (src/db/cached-rpc.ts): the
-- enumerations (api.get_metadata, api.list_difficulty_levels) and which snapshot answers a
-- catalog read (api.resolve_snapshot). Their answers depend on these four tables only, and
-- they change rarely (a promote, a rollback, an import, a migration). The API LISTENs on the
-- channel and drops everything it keeps on any notification, so no TTL is needed and a change
-- is visible as soon as the notification arrives (it is sent at commit).
--
-- Statement-level triggers: one notification per statement, and Postgres folds identical
-- notifications of a transaction into one. TRUNCATE is covered too.

create function private.notify_content_changed()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('sparkpath_content', tg_table_schema || '.' || tg_table_name);
  return null;
end
$$;

comment on function private.notify_content_changed() is
  'Trigger: NOTIFY sparkpath_content (payload: the table) so the API drops the public reads it keeps in memory.';

revoke all on function private.notify_content_changed() from public, anon, authenticated, service_role;

create trigger snapshots_notify_content_changed
  after insert or update or delete or truncate on app.snapshots
  for each statement execute function private.notify_content_changed();
create trigger difficulty_levels_notify_content_changed
  after insert or update or delete or truncate on app.difficulty_levels
  for each statement execute function private.notify_content_changed();
create trigger journey_statuses_notify_content_changed
  after insert or update or delete or truncate on app.journey_statuses
  for each statement execute function private.notify_content_changed();
create trigger learning_verbs_notify_content_changed
  after insert or update or delete or truncate on app.learning_verbs
  for each statement execute function private.notify_content_changed();
