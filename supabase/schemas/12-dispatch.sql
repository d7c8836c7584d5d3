-- The request path: the session check and the dispatcher.

-- One session check for every request, whichever way it reaches the database: private.dispatch
-- calls it, and it is PostgREST's `db-pre-request` hook on a hosted Supabase project.
--
-- private.request_session_refused: whether the request's token may no longer be used.
-- A token whose `session_id` names a session in app.sessions (sessions are never deleted) must
-- belong to `sub` and be live; a token of this API's own issuer (the connection setting
-- `sparkpath.token_issuer`, default `sparkpath`) must name such a session. Another issuer's token
-- sharing the JWT secret (Supabase Auth carries its own `session_id`) is not ours to judge, and
-- a token that names no session binds nothing, unless such a token was signed out here
-- (POST /auth/logout records it in app.revoked_access_tokens until it expires).
-- Returns: true when the token names a session that is ended, expired, idle or another user's,
--          or, for this API's own tokens, a session that does not exist; or when a token
--          without a session of ours was signed out. False without claims.
create or replace function private.request_session_refused()
returns boolean
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  claims jsonb := nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb;
  own_issuer text := coalesce(nullif(pg_catalog.current_setting('sparkpath.token_issuer', true), ''), 'sparkpath');
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  named_session app.sessions%rowtype;
begin
  if claims is null then
    return false;
  end if;
  -- A token that names no session (a plain HS256 token, the identity service's) binds nothing,
  -- unless it was signed out.
  if not (claims ? 'session_id') then
    return private.access_token_signed_out(claims);
  end if;
  -- Checked by pattern rather than by a failing cast: an exception block would cost a
  -- subtransaction on every request. A malformed (or null) session id or subject is nobody's.
  if coalesce(claims ->> 'session_id' ~ uuid_pattern and claims ->> 'sub' ~ uuid_pattern, false) then
    select s.* into named_session from app.sessions s where s.id = (claims ->> 'session_id')::uuid;
    if not found then
      -- Another issuer's session (e.g. Supabase Auth) is not ours to judge unless its token was
      -- signed out here; our own issuer's tokens must name a session of ours.
      return claims ->> 'iss' is not distinct from own_issuer or private.access_token_signed_out(claims);
    end if;
    return not (named_session.active
      and named_session.user_id = (claims ->> 'sub')::uuid
      and private.session_end_reason(named_session) is null);
  end if;
  return true;
end
$$;
comment on function private.request_session_refused() is
  'True when the request''s token names a session that is ended, expired, idle or another user''s, or (for this API''s own issuer) no session of ours, or is a session-less token that was signed out.';
grant execute on function private.request_session_refused() to anon, authenticated, service_role;

-- private.check_request: PostgREST's pre-request hook and the dispatchers' session check.
-- Errors: PT401 when private.request_session_refused. Not for /rpc/get_session (request.path),
--         which never refuses (GET /auth/session answers 200 to anyone) and reads a refused
--         token as "not signed in" itself.
create or replace function private.check_request()
returns void
language plpgsql
stable security definer
set search_path = ''
as $$
begin
  if pg_catalog.current_setting('request.path', true) is distinct from '/rpc/get_session'
     and private.request_session_refused() then
    raise exception using errcode = 'PT401', message = 'Session is no longer active; sign in again';
  end if;
end
$$;
comment on function private.check_request() is
  'Refuses (PT401) a request whose token private.request_session_refused refuses, except /rpc/get_session. Called by the dispatchers; PostgREST''s db-pre-request hook.';
-- PostgREST calls it as the request role, whichever it is (service_role too, whose api calls
-- private.authorize then refuses); the dispatchers call it as the API's login role.
grant execute on function private.check_request() to anon, authenticated, service_role, sparkpath_api;

-- The dispatchers: PostgREST's per-request contract in one statement.
--
-- PostgREST runs BEGIN; set_config('role'), set_config('request.jwt.claims'),
-- set_config('request.headers'); the pre-request hook; the call; COMMIT. The dispatchers do the
-- same in a single round trip: they set the settings transaction-locally, check the session,
-- then run the api call as the request role (security invoker, so RLS applies), and the api
-- function decides whether its caller may call it (private.authorize).
--
-- Safety: `call` is SQL text, so nothing but the API's login role (sparkpath_api) may execute
-- them, and they live in `private`, which no API exposes. The caller builds `call` from
-- introspected api function names and parameter names only; request values arrive in `args`
-- and are read with `$1->>'name'`.

-- private.begin_request
-- Purpose: the request contract both dispatchers share: transaction-local request.jwt.claims,
--          request.headers and request.path ('/rpc/<function>', as PostgREST sets it), the
--          session check (private.check_request), then the request role.
-- Params:  request_role ('anon' | 'authenticated'), claims (JWT payload text or null), headers
--          (the request headers the API forwards, lower-case names, as PostgREST's
--          request.headers; null for none), call (the api function call text the dispatcher
--          will run).
-- Errors:  42501 for another role or a call that is not an api function; PT401 from the
--          session check.
-- One request per transaction, as with PostgREST: the role it sets lasts until the transaction
-- ends, and request roles may not run the dispatchers, so a second dispatch in the same
-- transaction is refused (42501) unless the role is reset first.
create or replace function private.begin_request(request_role text, claims text, headers jsonb, call text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if begin_request.request_role not in ('anon', 'authenticated') then
    raise exception using errcode = '42501', message = 'unsupported request role';
  end if;
  if begin_request.call !~ '^api\.[a-z_][a-z0-9_]*\(' then
    raise exception using errcode = '42501', message = 'only api functions may be dispatched';
  end if;
  -- one statement: every statement of a plpgsql function starts an executor
  perform pg_catalog.set_config('request.jwt.claims', coalesce(begin_request.claims, ''), true),
          pg_catalog.set_config('request.headers', coalesce(begin_request.headers::text, ''), true),
          pg_catalog.set_config('request.path', '/rpc/' || pg_catalog.substring(begin_request.call, '^api\.([a-z_][a-z0-9_]*)\('), true);
  perform private.check_request();
  perform pg_catalog.set_config('role', begin_request.request_role, true);
end
$$;
comment on function private.begin_request(text,text,jsonb,text) is
  'The PostgREST request contract shared by the dispatchers: transaction-local claims and headers, private.check_request, then the request role. Executable only by the API login role.';
grant execute on function private.begin_request(text,text,jsonb,text) to sparkpath_api;

-- private.dispatch: one api call as the request role; returns its JSON text.
-- Params:  request_role, claims, call, args, headers (see private.begin_request).
create or replace function private.dispatch(request_role text, claims text, call text, args jsonb, headers jsonb default null)
returns text
language plpgsql
set search_path = ''
as $$
declare
  body text;
begin
  perform private.begin_request(dispatch.request_role, dispatch.claims, dispatch.headers, dispatch.call);
  execute 'select (' || dispatch.call || ')::text' into body using dispatch.args;
  return body;
end
$$;
comment on function private.dispatch(text,text,text,jsonb,jsonb) is
  'Runs one api function as the request role with transaction-local JWT claims and headers (the PostgREST contract, private.begin_request) in one statement. Executable only by the API login role.';
grant execute on function private.dispatch(text,text,text,jsonb,jsonb) to sparkpath_api;

-- private.dispatch_snapshot_read
-- Purpose: one snapshot read in one statement: the request contract, the permission decision
--          of the call (private.authorize, before anything else: a body the API holds is never
--          given to a caller the function would refuse), the snapshot the read uses
--          (private.resolve_snapshot_version as the request role), and the content call pinned
--          to that snapshot unless the API already holds its body.
-- Params:  request_role, claims, call as for private.dispatch; args (jsonb; `call` reads
--          args->'snapshot_id', which is replaced by the resolved id); held_versions (the
--          snapshot versions whose body for this call the API or its client already holds);
--          headers as for private.dispatch.
-- Returns: one row (version, snapshot_id, body): body is null when version is one of
--          held_versions, else the call's answer for snapshot_id.
-- Errors:  those of private.begin_request and private.authorize; PT404 for an unknown explicit
--          snapshot_id; the call's own.
create or replace function private.dispatch_snapshot_read(
  request_role text,
  claims text,
  call text,
  args jsonb,
  held_versions text[],
  headers jsonb default null,
  out version text,
  out snapshot_id uuid,
  out body text
)
language plpgsql
set search_path = ''
as $$
declare
  resolved jsonb;
begin
  perform private.begin_request(dispatch_snapshot_read.request_role, dispatch_snapshot_read.claims,
    dispatch_snapshot_read.headers, dispatch_snapshot_read.call);
  perform private.authorize(pg_catalog.substring(dispatch_snapshot_read.call, '^api\.([a-z_][a-z0-9_]*)\('));
  resolved := private.resolve_snapshot_version((dispatch_snapshot_read.args ->> 'snapshot_id')::uuid);
  version := resolved ->> 'version';
  snapshot_id := (resolved ->> 'snapshot_id')::uuid;
  if version = any(dispatch_snapshot_read.held_versions) then
    return;
  end if;
  -- Pinned, so the body belongs to the version reported even if a promote lands meanwhile.
  execute 'select (' || dispatch_snapshot_read.call || ')::text' into body
    using pg_catalog.jsonb_set(dispatch_snapshot_read.args, '{snapshot_id}', coalesce(pg_catalog.to_jsonb(snapshot_id), 'null'::jsonb));
end
$$;
comment on function private.dispatch_snapshot_read(text,text,text,jsonb,text[],jsonb) is
  'One snapshot read in one statement: request contract, the call''s permission decision, snapshot resolution as the request role, and the api call pinned to that snapshot unless its version is in held_versions (then body is null). Executable only by the API login role.';
grant execute on function private.dispatch_snapshot_read(text,text,text,jsonb,text[],jsonb) to sparkpath_api;


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
