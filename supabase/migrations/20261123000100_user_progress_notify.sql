-- A user's progress rows notify: the API may keep a signed-in caller's journeys and learning path
-- with the token's vouch (20261123000000_session_vouching.sql) and drop them when they change.
--
-- The journeys (api.list_user_journeys, api.get_user_journey) and the learning path
-- (api.get_learning_path) depend on snapshot content, which notifies sparkpath_content, and on
-- the caller's own app.enrollments and app.learning_events rows. A write to those rows now sends
-- NOTIFY sparkpath_sessions with the payload 'user:<user id>', so every API instance drops what it
-- keeps for that user as soon as the write commits. The instance that made the write drops it
-- before it answers (src/db/cached-rpc.ts), so a caller always reads its own writes there.
--
-- Per row: one notification per (transaction, user), since Postgres folds identical ones.

-- private.notify_user_progress_changed
-- Purpose: NOTIFY sparkpath_sessions 'user:<id>' for the user of every enrollment or learning
--          event row a statement writes ('*' on truncate: every user).
create function private.notify_user_progress_changed()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'TRUNCATE' then
    perform pg_catalog.pg_notify('sparkpath_sessions', '*');
  elsif tg_op = 'DELETE' then
    perform pg_catalog.pg_notify('sparkpath_sessions', 'user:' || old.user_id);
  else
    perform pg_catalog.pg_notify('sparkpath_sessions', 'user:' || new.user_id);
    -- A row moved to another user changes the old user's answers too.
    if tg_op = 'UPDATE' and old.user_id is distinct from new.user_id then
      perform pg_catalog.pg_notify('sparkpath_sessions', 'user:' || old.user_id);
    end if;
  end if;
  return null;
end
$$;
comment on function private.notify_user_progress_changed() is
  'Trigger: NOTIFY sparkpath_sessions ''user:<id>'' (* on truncate) so the API drops the journeys and paths it keeps for that user.';
revoke all on function private.notify_user_progress_changed() from public, anon, authenticated, service_role;

create trigger enrollments_notify_user_progress
  after insert or update or delete on app.enrollments
  for each row execute function private.notify_user_progress_changed();
create trigger enrollments_notify_user_progress_truncated
  after truncate on app.enrollments
  for each statement execute function private.notify_user_progress_changed();
create trigger learning_events_notify_user_progress
  after insert or update or delete on app.learning_events
  for each row execute function private.notify_user_progress_changed();
create trigger learning_events_notify_user_progress_truncated
  after truncate on app.learning_events
  for each statement execute function private.notify_user_progress_changed();
