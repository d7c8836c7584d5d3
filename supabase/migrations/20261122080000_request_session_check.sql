-- One session check for every request, whichever way it reaches the database.
--
-- Until now only private.dispatch checked the session of a session-bound token. On a hosted
-- Supabase project PostgREST calls the `api` functions directly, so a logged-out token kept
-- working there until it expired. private.check_request is now the single check: the
-- dispatcher calls it, and it is PostgREST's `db-pre-request` hook.
--
-- Which tokens are session-bound: a token whose `session_id` names a session in app.sessions
-- (sessions are never deleted) must belong to `sub` and be live; a token of this API's own
-- issuer must name such a session. A token of another issuer that shares the JWT secret
-- (Supabase Auth carries its own `session_id`) is not ours to judge: its sessions live in
-- Supabase Auth, which revokes them by itself.
--
-- This API's issuer reaches the database as the connection setting `sparkpath.token_issuer`
-- (set by the API's pool; set it on the `authenticator` role for PostgREST when JWT_ISSUER is
-- not the default `sparkpath`).

-- private.check_request
-- Purpose: refuse a request whose access token is bound to a session that is not live.
-- Params:  none; reads request.jwt.claims and sparkpath.token_issuer.
-- Returns: nothing.
-- Errors:  28000 when the token names a session that is ended, expired, idle or another user's,
--          or, for this API's own tokens, a session that does not exist.
create function private.check_request()
returns void
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  claims jsonb := nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb;
  own_issuer text := coalesce(nullif(pg_catalog.current_setting('sparkpath.token_issuer', true), ''), 'sparkpath');
  named_session uuid;
begin
  if claims is null or not (claims ? 'session_id') then
    return;
  end if;
  begin
    named_session := (claims ->> 'session_id')::uuid;
  exception when invalid_text_representation then
    named_session := null;
  end;

  if named_session is not null
     and not exists (select 1 from app.sessions s where s.id = named_session) then
    if claims ->> 'iss' is distinct from own_issuer then
      return; -- another issuer's session (e.g. Supabase Auth)
    end if;
  elsif named_session is not null
     and private.session_is_live(named_session, nullif(claims ->> 'sub', '')::uuid) then
    return;
  end if;

  raise exception using errcode = '28000', message = 'Session is no longer active; sign in again';
end
$$;
comment on function private.check_request() is
  'Refuses (28000) a request whose token names a session that is not live, or (for this API''s own issuer) no session of ours. Called by private.dispatch; PostgREST''s db-pre-request hook.';
revoke all on function private.check_request() from public;
grant execute on function private.check_request() to anon, authenticated;

-- The dispatcher: same signature and contract; the session check is now private.check_request.
create or replace function private.dispatch(request_role text, claims text, call text, args jsonb)
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  body text;
begin
  if dispatch.request_role not in ('anon', 'authenticated') then
    raise exception using errcode = '42501', message = 'unsupported request role';
  end if;
  if dispatch.call !~ '^api\.[a-z_][a-z0-9_]*\(' then
    raise exception using errcode = '42501', message = 'only api functions may be dispatched';
  end if;

  perform pg_catalog.set_config('request.jwt.claims', coalesce(dispatch.claims, ''), true);
  perform private.check_request();
  perform pg_catalog.set_config('role', dispatch.request_role, true);

  execute 'select (' || dispatch.call || ')::text' into body using dispatch.args;
  return body;
end
$$;
comment on function private.dispatch(text, text, text, jsonb) is
  'Runs one api function as the request role with transaction-local JWT claims (the PostgREST contract) in one statement, after private.check_request. Executable only by the API login role.';
revoke all on function private.dispatch(text, text, text, jsonb) from public, anon, authenticated, service_role;

-- PostgREST runs the same check before every request it serves (hosted Supabase). Where there is
-- no PostgREST (the embedded database) there is no authenticator role and nothing to do.
do $$
begin
  if exists (select from pg_catalog.pg_roles where rolname = 'authenticator') then
    begin
      execute 'alter role authenticator set pgrst.db_pre_request = ''private.check_request''';
      perform pg_catalog.pg_notify('pgrst', 'reload config');
    exception when insufficient_privilege then
      raise warning 'could not set pgrst.db_pre_request on authenticator; set it by hand: alter role authenticator set pgrst.db_pre_request = ''private.check_request''';
    end;
  end if;
end
$$;
