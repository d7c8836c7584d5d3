-- Session vouching: the API may answer caller-independent reads of signed-in users from memory,
-- as it already does for anonymous callers, without giving up the session check.
--
-- Until now a caller with a token always reached the database, because private.check_request
-- (run by the dispatcher) is what refuses a token whose session has ended. Two pieces let the
-- API hold that answer for a while instead:
--
-- 1. private.request_live_for(claims): for how many seconds private.check_request will keep
--    letting these claims through if no session changes. check_request is now defined by it, so
--    the two cannot disagree.
-- 2. NOTIFY sparkpath_sessions (payload: the session id) after any change to a session row, so
--    the API drops what it holds for that session as soon as the change commits (a logout, a
--    refresh-token reuse, the cleanup routine, an operator's UPDATE); and for each live session
--    of a user whose profile changes, since the API keeps GET /auth/session's answer too.
--
-- The API never holds an answer longer than a few seconds either (src/db/cached-rpc.ts), so even
-- a notification that never arrives delays a logout by at most that long.
-- get_current_snapshot joins the in-memory reads; its counts come from app.snapshot_rollups,
-- which now notifies sparkpath_content like app.snapshots.

-- private.request_live_for
-- Purpose: how long private.check_request will keep passing a request with these claims.
-- Params:  claims (the verified JWT payload; null for a request without one).
-- Returns: seconds (> 0) until the named session ends by time (absolute or idle limit);
--          'Infinity' when the claims bind no session of ours (no session_id, or another
--          issuer's session that app.sessions does not hold); null when check_request refuses
--          them now. A change to the session row (NOTIFY sparkpath_sessions) voids the answer.
-- Errors:  none.
create function private.request_live_for(claims jsonb)
returns double precision
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  own_issuer text := coalesce(nullif(pg_catalog.current_setting('sparkpath.token_issuer', true), ''), 'sparkpath');
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  named_session uuid;
  claimed_user uuid;
  session_active boolean;
  session_user_id uuid;
  live_until timestamptz;
begin
  if claims is null or not (claims ? 'session_id') then
    return 'Infinity';
  end if;
  -- Checked by pattern rather than by a failing cast: an exception block would cost a
  -- subtransaction on every request. A malformed (or null) session id or subject is nobody's.
  if not coalesce(claims ->> 'session_id' ~ uuid_pattern and claims ->> 'sub' ~ uuid_pattern, false) then
    return null;
  end if;
  named_session := (claims ->> 'session_id')::uuid;
  claimed_user := (claims ->> 'sub')::uuid;

  select s.active, s.user_id,
         least(s.expires_at, s.last_activity_at + pg_catalog.make_interval(secs => s.idle_timeout_seconds))
    into session_active, session_user_id, live_until
  from app.sessions s where s.id = named_session;
  if not found then
    -- Another issuer's session (e.g. Supabase Auth) is not ours to judge; our own issuer's
    -- tokens must name a session of ours.
    return case when claims ->> 'iss' is distinct from own_issuer then 'Infinity' end;
  end if;

  if not session_active
     or session_user_id is distinct from claimed_user
     or live_until <= pg_catalog.now() then
    return null;
  end if;
  return extract(epoch from live_until - pg_catalog.now())::double precision;
end
$$;
comment on function private.request_live_for(jsonb) is
  'Seconds for which private.check_request keeps passing these claims unless their session row changes: Infinity when they bind no session of ours, null when refused now. Executable only by the API login role.';
revoke all on function private.request_live_for(jsonb) from public, anon, authenticated, service_role;

-- private.check_request: same contract as 20261122080000, now defined by request_live_for.
create or replace function private.check_request()
returns void
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if private.request_live_for(nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb) is null then
    raise exception using errcode = '28000', message = 'Session is no longer active; sign in again';
  end if;
end
$$;
comment on function private.check_request() is
  'Refuses (28000) a request whose token names a session that is not live, or (for this API''s own issuer) no session of ours (private.request_live_for). Called by private.dispatch; PostgREST''s db-pre-request hook.';

-- private.session_is_live (20261122050000) had two callers, the first dispatcher's check and the
-- first check_request; both are replaced, and request_live_for holds the same rule. Gone.
drop function private.session_is_live(uuid, uuid);

-- private.notify_session_changed
-- Purpose: NOTIFY sparkpath_sessions with the id of every session row a statement changes
--          ('*' for TRUNCATE), so an API instance drops what it vouched for that session.
create function private.notify_session_changed()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'TRUNCATE' then
    perform pg_catalog.pg_notify('sparkpath_sessions', '*');
  else
    perform pg_catalog.pg_notify('sparkpath_sessions', old.id::text);
  end if;
  return null;
end
$$;
comment on function private.notify_session_changed() is
  'Trigger: NOTIFY sparkpath_sessions (payload: the session id, * on truncate) so the API stops vouching for that session.';
revoke all on function private.notify_session_changed() from public, anon, authenticated, service_role;

-- Per row: the payload names the session. A new session needs no notice (nothing vouched for it
-- yet); an update or delete of any column may shorten its life.
create trigger sessions_notify_session_changed
  after update or delete on app.sessions
  for each row execute function private.notify_session_changed();
create trigger sessions_notify_sessions_truncated
  after truncate on app.sessions
  for each statement execute function private.notify_session_changed();

-- private.notify_user_sessions_changed
-- Purpose: NOTIFY sparkpath_sessions for every live session of a user whose profile row
--          changed: GET /auth/session shows the profile, and the API keeps that answer with the
--          session's vouch (a sign-in at another device updates the profile too).
create function private.notify_user_sessions_changed()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('sparkpath_sessions', s.id::text)
  from app.sessions s
  where s.user_id = new.id and s.active;
  return null;
end
$$;
comment on function private.notify_user_sessions_changed() is
  'Trigger: NOTIFY sparkpath_sessions with the id of each live session of a user whose profile changed.';
revoke all on function private.notify_user_sessions_changed() from public, anon, authenticated, service_role;

-- A deleted user's sessions go with it (on delete cascade) and notify themselves.
create trigger users_notify_sessions_changed
  after update on app.users
  for each row execute function private.notify_user_sessions_changed();

-- get_current_snapshot reads the rollup row's entity counts.
create trigger snapshot_rollups_notify_content_changed
  after insert or update or delete or truncate on app.snapshot_rollups
  for each statement execute function private.notify_content_changed();
