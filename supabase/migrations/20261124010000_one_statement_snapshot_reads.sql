-- One statement per snapshot read.
--
-- Snapshot content never changes, so the API keeps response bodies in memory keyed by snapshot
-- version. Until now a read cost two statements: api.resolve_snapshot (which version answers?),
-- then the content call pinned to it. private.dispatch_snapshot_read does both in one: it checks
-- the session, resolves the snapshot as the request role, and runs the content call only when
-- the API does not already hold a body for the resolved version.
--
-- The request contract (validate, set claims, check the session, set the role) is the same for
-- both dispatchers, so it lives once, in private.begin_request.
--
-- Also here: private.peek_rate_limit, so the shared rate-limit store can charge a signed-in
-- caller only after the session check passed.

-- private.begin_request
-- Purpose: PostgREST's per-request contract, transaction-locally: request.jwt.claims, the
--          session check (private.check_request), then the request role.
-- Params:  request_role ('anon' | 'authenticated'), claims (JWT payload text or null), call
--          (the api function call text the dispatcher will run).
-- Returns: nothing.
-- Errors:  42501 for another role or a call that is not an api function; 28000 from the
--          session check.
-- One request per transaction, as with PostgREST: the role it sets lasts until the transaction
-- ends, and request roles may not run the dispatchers (nor this), so a second dispatch in the
-- same transaction is refused (42501) unless the role is reset first.
create function private.begin_request(request_role text, claims text, call text)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  if begin_request.request_role not in ('anon', 'authenticated') then
    raise exception using errcode = '42501', message = 'unsupported request role';
  end if;
  if begin_request.call !~ '^api\.[a-z_][a-z0-9_]*\(' then
    raise exception using errcode = '42501', message = 'only api functions may be dispatched';
  end if;
  perform pg_catalog.set_config('request.jwt.claims', coalesce(begin_request.claims, ''), true);
  perform private.check_request();
  perform pg_catalog.set_config('role', begin_request.request_role, true);
end
$$;
comment on function private.begin_request(text, text, text) is
  'The PostgREST request contract shared by the dispatchers: transaction-local claims, private.check_request, then the request role. Executable only by the API login role.';
revoke all on function private.begin_request(text, text, text) from public, anon, authenticated, service_role;

-- private.dispatch: same signature and behaviour, the contract now from private.begin_request.
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
  perform private.begin_request(dispatch.request_role, dispatch.claims, dispatch.call);
  execute 'select (' || dispatch.call || ')::text' into body using dispatch.args;
  return body;
end
$$;
comment on function private.dispatch(text, text, text, jsonb) is
  'Runs one api function as the request role with transaction-local JWT claims (the PostgREST contract, private.begin_request) in one statement. Executable only by the API login role.';
revoke all on function private.dispatch(text, text, text, jsonb) from public, anon, authenticated, service_role;

-- private.dispatch_snapshot_read
-- Purpose: one snapshot read in one statement: the request contract, the snapshot the read
--          uses (api.resolve_snapshot as the request role), and the content call pinned to
--          that snapshot unless the API already holds its body.
-- Params:  request_role, claims, call as for private.dispatch; args (jsonb; `call` reads
--          args->'snapshot_id', which is replaced by the resolved id); held_versions (the
--          snapshot versions whose body for this call the API or its client already holds).
-- Returns: one row (version, snapshot_id, body): body is null when version is one of
--          held_versions, else the call's answer for snapshot_id.
-- Errors:  those of private.begin_request; P0002 for an unknown explicit snapshot_id; the
--          call's own.
create function private.dispatch_snapshot_read(
  request_role text,
  claims text,
  call text,
  args jsonb,
  held_versions text[],
  out version text,
  out snapshot_id uuid,
  out body text
)
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  resolved jsonb;
begin
  perform private.begin_request(dispatch_snapshot_read.request_role, dispatch_snapshot_read.claims, dispatch_snapshot_read.call);
  resolved := api.resolve_snapshot((dispatch_snapshot_read.args ->> 'snapshot_id')::uuid);
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
comment on function private.dispatch_snapshot_read(text, text, text, jsonb, text[]) is
  'One snapshot read in one statement: request contract, snapshot resolution as the request role, and the api call pinned to that snapshot unless its version is in held_versions (then body is null). Executable only by the API login role.';
revoke all on function private.dispatch_snapshot_read(text, text, text, jsonb, text[]) from public, anon, authenticated, service_role;

-- Rate limits are charged after identity: a signed-in caller's request is counted only once its
-- session check passed, so the API first asks how much of the window is used without counting.
-- private.peek_rate_limit
-- Purpose: the count of `key` in the current window of `window_ms`, without counting a request.
-- Params:  key, window_ms as for private.hit_rate_limit.
-- Returns: {count, reset_at} (reset_at in epoch milliseconds; count 0 for an unseen key).
-- Errors:  none.
create function private.peek_rate_limit(key text, window_ms integer)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  with bounds as (
    select pg_catalog.to_timestamp(
             pg_catalog.floor(extract(epoch from pg_catalog.clock_timestamp()) * 1000 / peek_rate_limit.window_ms)
             * peek_rate_limit.window_ms / 1000.0) as start)
  select pg_catalog.jsonb_build_object(
    'count', coalesce((select c.count from app.rate_limit_counters c where c.key = peek_rate_limit.key and c.window_start = b.start), 0),
    'reset_at', (extract(epoch from b.start) * 1000)::bigint + peek_rate_limit.window_ms)
  from bounds b
$$;
comment on function private.peek_rate_limit(text, integer) is 'The caller''s count in its current fixed window, without counting; returns {count, reset_at}.';
revoke all on function private.peek_rate_limit(text, integer) from public, anon, authenticated, service_role;
