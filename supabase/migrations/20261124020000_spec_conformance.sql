-- Spec conformance (issue 23): the SQL half of four of the seven fixes.
--
-- 2. A refresh retried inside the grace window gets the SAME successor token set (Supabase
--    Auth's reuse interval), never a second branch: the rotation stores the successor tokens,
--    sealed by the API with a key only the old refresh token's holder can derive.
-- 3. The cleanup routine's reading of the state table (its comment; the rule is the idle limit,
--    whose default the API now sets to the access-token lifetime plus a 10 s clock skew).
-- 6. Alphabetical order is one ICU collation, app.alphabetical, the same on PostgreSQL 15 and 18.
-- 7. Logout invalidates every token the service accepts: a token without a server-side session
--    is recorded by the digest of its claims until it expires, and private.request_live_for
--    (hence private.check_request) refuses it; GET /auth/session always has a session object.

-- ---------------------------------------------------------------------------------------------
-- 2. Refresh replay inside the grace window
-- ---------------------------------------------------------------------------------------------

-- The successor token set (new refresh token, access token, expiry) of a rotated refresh token,
-- AES-256-GCM sealed by the API with a key derived (HKDF) from the raw old refresh token, which
-- the database never sees (it holds only its SHA-256). Readable only by whoever presents that
-- token again; cleared when the grace window can no longer apply (cleanup) or on revocation.
alter table app.refresh_tokens add column successor_sealed text
  check (successor_sealed is null or pg_catalog.length(successor_sealed) <= 8192);
comment on column app.refresh_tokens.successor_sealed is
  'The successor token set of a rotated token, sealed with a key derived from the raw token (never stored); replayed to a retry inside the grace window.';

-- Rotates a refresh token. Returns {status:'ok', claims, session_id, access_expires_at},
-- {status:'replay', session_id, sealed} or {status:'invalid'|'expired'|'revoked'[, reason]};
-- failures are returned, not raised, so a revocation caused by reuse commits with the answer.
--   unused token          → rotated: marked used, one child token issued (the successor); the
--                           API seals the successor set into the token (seal_refresh_successor)
--                           in the same transaction
--   used, inside grace    → a retry or another tab: the same successor set, sealed ('replay');
--                           no second branch is ever minted
--   used, after grace     → reuse attack: the session and all its tokens are revoked
-- Concurrent refreshes of one session queue on the session row, so a retry always sees the
-- first rotation committed with its sealed successor.
create or replace function private.refresh_session(refresh_hash text, new_refresh_hash text, grace_seconds integer, access_ttl_seconds integer)
returns jsonb
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  token app.refresh_tokens;
  sess app.sessions;
  profile app.users;
begin
  select * into token from app.refresh_tokens t where t.token_hash = refresh_session.refresh_hash;
  if not found then
    return '{"status":"invalid"}'::jsonb;
  end if;
  -- One refresh of a session at a time: concurrent tabs queue here and see each other's rotation.
  select * into sess from app.sessions s where s.id = token.session_id for update;
  select * into token from app.refresh_tokens t where t.id = token.id;

  if not sess.active or token.revoked_at is not null then
    return '{"status":"revoked"}'::jsonb;
  end if;
  if sess.expires_at <= pg_catalog.now()
     or sess.last_activity_at + pg_catalog.make_interval(secs => sess.idle_timeout_seconds) <= pg_catalog.now() then
    update app.sessions
    set active = false, ended_at = pg_catalog.now(),
        end_reason = case when sess.expires_at <= pg_catalog.now() then 'expired' else 'idle' end
    where id = sess.id;
    update app.refresh_tokens set revoked_at = pg_catalog.now(), successor_sealed = null
    where session_id = sess.id and revoked_at is null;
    return '{"status":"expired"}'::jsonb;
  end if;

  if token.rotated_at is not null then
    -- Inside the grace window a retry gets the successor it already has; after it (or without
    -- a sealed successor to give) a used token is a reuse: the whole family goes.
    if token.rotated_at + pg_catalog.make_interval(secs => refresh_session.grace_seconds) >= pg_catalog.now()
       and token.successor_sealed is not null then
      return pg_catalog.jsonb_build_object('status', 'replay', 'session_id', sess.id, 'sealed', token.successor_sealed);
    end if;
    update app.sessions set active = false, ended_at = pg_catalog.now(), end_reason = 'refresh_token_reuse'
    where id = sess.id;
    update app.refresh_tokens set revoked_at = pg_catalog.now(), successor_sealed = null
    where session_id = sess.id and revoked_at is null;
    return '{"status":"revoked","reason":"refresh_token_reuse"}'::jsonb;
  end if;

  update app.refresh_tokens set rotated_at = pg_catalog.now() where id = token.id;
  insert into app.refresh_tokens (session_id, token_hash, parent_id)
  values (sess.id, refresh_session.new_refresh_hash, token.id);

  update app.sessions
  set last_activity_at = pg_catalog.now(),
      access_expires_at = least(pg_catalog.date_trunc('second', pg_catalog.now()) + pg_catalog.make_interval(secs => refresh_session.access_ttl_seconds), sess.expires_at)
  where id = sess.id
  returning * into sess;

  select * into profile from app.users u where u.id = sess.user_id;
  return pg_catalog.jsonb_build_object(
    'status', 'ok',
    'session_id', sess.id,
    'claims', private.token_claims(profile, sess.id),
    'access_expires_at', extract(epoch from sess.access_expires_at)::bigint);
end
$$;
comment on function private.refresh_session(text, text, integer, integer) is
  'Rotates a refresh token: one successor per token; a retry inside the grace window gets that successor back sealed (status replay); reuse after it revokes the session. Returns {status,...}.';
revoke all on function private.refresh_session(text, text, integer, integer) from public, anon, authenticated, service_role;

-- Stores the sealed successor token set of the token just rotated (same transaction as
-- refresh_session, which holds the session row, so no retry can miss it).
create function private.seal_refresh_successor(refresh_hash text, sealed text)
returns void
language sql
volatile
security definer
set search_path = ''
as $$
  update app.refresh_tokens t set successor_sealed = seal_refresh_successor.sealed
  where t.token_hash = seal_refresh_successor.refresh_hash and t.rotated_at is not null and t.revoked_at is null
$$;
comment on function private.seal_refresh_successor(text, text) is
  'Stores the sealed successor token set of a just-rotated refresh token (by its SHA-256), for retries inside the grace window.';
revoke all on function private.seal_refresh_successor(text, text) from public, anon, authenticated, service_role;

-- ---------------------------------------------------------------------------------------------
-- 7. Revoked access tokens without a server-side session
-- ---------------------------------------------------------------------------------------------

-- A token this service accepts but whose session is not ours to end (another issuer sharing
-- the JWT secret, e.g. Supabase Auth; a token without session_id) is signed out by recording
-- it until it expires. It is identified by the SHA-256 of its claims as canonical jsonb text:
-- the database never sees the raw token, and the claims (with jti, iat, exp) name it.
create table app.revoked_access_tokens (
  claims_digest text primary key check (claims_digest ~ '^[0-9a-f]{64}$'),
  user_id uuid not null,
  expires_at timestamptz not null,
  revoked_at timestamptz not null default pg_catalog.now()
);
comment on table app.revoked_access_tokens is
  'Signed-out access tokens that have no session row here, by the SHA-256 of their claims, kept until they expire.';
create index revoked_access_tokens_expiry_idx on app.revoked_access_tokens (expires_at);
alter table app.revoked_access_tokens enable row level security;
-- No policy and no grant: only the private functions read or write it.

-- The digest that names a token: SHA-256 (hex) of its claims as canonical jsonb text, so the
-- API's claims text and PostgREST's give the same digest for the same token.
create function private.access_token_digest(claims jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(access_token_digest.claims::text, 'UTF8')), 'hex')
$$;
comment on function private.access_token_digest(jsonb) is
  'SHA-256 (hex) of a token''s claims as canonical jsonb text: how a signed-out token without a session is recorded.';
revoke all on function private.access_token_digest(jsonb) from public, anon, authenticated, service_role;

-- Whether a token without a session row here was signed out (and has not expired yet).
create function private.access_token_signed_out(claims jsonb)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (
    select 1 from app.revoked_access_tokens r
    where r.claims_digest = private.access_token_digest(access_token_signed_out.claims)
      and r.expires_at > pg_catalog.now())
$$;
comment on function private.access_token_signed_out(jsonb) is
  'True when a token (by its claims) without a session row here was signed out and has not expired.';
revoke all on function private.access_token_signed_out(jsonb) from public, anon, authenticated, service_role;

-- private.request_live_for
-- Purpose: how long private.check_request will keep passing a request with these claims.
-- Params:  claims (the verified JWT payload; null for a request without one).
-- Returns: seconds (> 0) until the named session ends by time (absolute or idle limit);
--          'Infinity' when the claims bind no session of ours (no session_id, or another
--          issuer's session that app.sessions does not hold) and the token was not signed out
--          (app.revoked_access_tokens); null when check_request refuses them now. A change to
--          the session row, or a sign-out of a session-less token (NOTIFY sparkpath_sessions
--          'user:<sub>'), voids the answer.
-- Errors:  none.
create or replace function private.request_live_for(claims jsonb)
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
  if claims is null then
    return 'Infinity';
  end if;
  if not (claims ? 'session_id') then
    return case when private.access_token_signed_out(claims) then null else 'Infinity' end;
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
    -- Another issuer's session (e.g. Supabase Auth) is not ours to judge, unless the token was
    -- signed out here; our own issuer's tokens must name a session of ours.
    return case when claims ->> 'iss' is distinct from own_issuer and not private.access_token_signed_out(claims)
                then 'Infinity' end;
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
  'Seconds for which private.check_request keeps passing these claims unless their session row changes: Infinity when they bind no session of ours and were not signed out, null when refused now. Executable only by the API login role.';
revoke all on function private.request_live_for(jsonb) from public, anon, authenticated, service_role;

-- private.sign_out
-- Purpose: POST /auth/logout for any token the service accepts (claims already verified).
--          A token naming a session of ours ends that session (as private.end_session: its
--          refresh tokens revoked, identity.user_logged_out written). Any other token is
--          recorded in app.revoked_access_tokens until its exp, and the same event written.
-- Params:  claims (the verified JWT payload).
-- Returns: {success:true, message}.
-- Errors:  28000 when the session is not the caller's or already ended, or the token was
--          already signed out; 22023 for claims without a uuid sub or a numeric exp.
create function private.sign_out(claims jsonb)
returns jsonb
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  claimed_user uuid;
  named_session uuid;
begin
  if not coalesce(sign_out.claims ->> 'sub' ~ uuid_pattern, false)
     or pg_catalog.jsonb_typeof(sign_out.claims -> 'exp') is distinct from 'number' then
    raise exception using errcode = '22023', message = 'The token names no user or has no expiry';
  end if;
  -- A token the session check already refuses (ended, unknown to our issuer, signed out) has
  -- nothing left to sign out.
  if private.request_live_for(sign_out.claims) is null then
    raise exception using errcode = '28000', message = 'Session is no longer active';
  end if;
  claimed_user := (sign_out.claims ->> 'sub')::uuid;
  if coalesce(sign_out.claims ->> 'session_id' ~ uuid_pattern, false) then
    named_session := (sign_out.claims ->> 'session_id')::uuid;
  end if;

  if named_session is not null and exists (select 1 from app.sessions s where s.id = named_session) then
    return private.end_session(named_session, claimed_user);
  end if;

  insert into app.revoked_access_tokens (claims_digest, user_id, expires_at)
  values (private.access_token_digest(sign_out.claims), claimed_user,
          pg_catalog.to_timestamp((sign_out.claims ->> 'exp')::double precision))
  on conflict (claims_digest) do nothing;
  if not found then
    raise exception using errcode = '28000', message = 'Session is no longer active';
  end if;
  insert into app.outbox_events (event_type, aggregate_id, payload)
  values ('identity.user_logged_out', claimed_user,
          pg_catalog.jsonb_build_object('user_id', claimed_user, 'session_id', named_session,
            'occurred_at', pg_catalog.now()));
  return pg_catalog.jsonb_build_object('success', true, 'message', 'Signed out');
end
$$;
comment on function private.sign_out(jsonb) is
  'Logout for any accepted token: ends its session here, or records the session-less token (claims digest) until it expires; writes identity.user_logged_out. 28000 when already signed out.';
revoke all on function private.sign_out(jsonb) from public, anon, authenticated, service_role;

-- private.notify_token_signed_out
-- Purpose: NOTIFY sparkpath_sessions 'user:<id>' for a signed-out session-less token, so every
--          API instance stops vouching for that user's tokens at once (they ask again).
create function private.notify_token_signed_out()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('sparkpath_sessions', 'user:' || new.user_id::text);
  return null;
end
$$;
comment on function private.notify_token_signed_out() is
  'Trigger: NOTIFY sparkpath_sessions user:<id> when a session-less token of that user is signed out.';
revoke all on function private.notify_token_signed_out() from public, anon, authenticated, service_role;

create trigger revoked_access_tokens_notify_signed_out
  after insert on app.revoked_access_tokens
  for each row execute function private.notify_token_signed_out();

-- ---------------------------------------------------------------------------------------------
-- 3 and 7. The cleanup routine
-- ---------------------------------------------------------------------------------------------

-- The cleanup routine (server interval, or pg_cron: `select private.cleanup_sessions()`).
-- The spec's state table: "active → inactive on access token expiry, handled by the cleanup
-- routine". A session whose access token has expired is deactivated once it can no longer be
-- refreshed: its idle limit (seconds without a refresh) or its absolute lifetime is over. The
-- API's default idle limit is the access-token lifetime plus a 10 s clock skew
-- (SESSION_IDLE_TIMEOUT_S), so by default an access token that expires without a refresh ends
-- its session, as the table says; deployments may configure a longer idle limit. Also clears
-- sealed refresh successors past any grace window (at most 300 s), forgets signed-out tokens
-- that have expired, and deletes OAuth attempts that expired more than a day ago.
create or replace function private.cleanup_sessions()
returns jsonb
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  deactivated integer;
  attempts integer;
begin
  with ended as (
    update app.sessions s
    set active = false, ended_at = pg_catalog.now(),
        end_reason = case when s.expires_at <= pg_catalog.now() then 'expired' else 'idle' end
    where s.active
      and s.access_expires_at <= pg_catalog.now()
      and (s.expires_at <= pg_catalog.now()
           or s.last_activity_at + pg_catalog.make_interval(secs => s.idle_timeout_seconds) <= pg_catalog.now())
    returning s.id)
  select pg_catalog.count(*) into deactivated from ended;

  update app.refresh_tokens t set revoked_at = pg_catalog.now(), successor_sealed = null
  where t.revoked_at is null
    and exists (select 1 from app.sessions s where s.id = t.session_id and not s.active);

  update app.refresh_tokens t set successor_sealed = null
  where t.successor_sealed is not null and t.rotated_at < pg_catalog.now() - interval '300 seconds';

  delete from app.revoked_access_tokens r where r.expires_at <= pg_catalog.now();

  delete from app.oauth_attempts a where a.expires_at < pg_catalog.now() - interval '1 day';
  get diagnostics attempts = row_count;

  return pg_catalog.jsonb_build_object('sessions_deactivated', deactivated, 'oauth_attempts_deleted', attempts);
end
$$;
comment on function private.cleanup_sessions() is
  'Deactivates sessions whose access token expired and that can no longer be refreshed (idle limit, by default the token lifetime + 10 s, or absolute limit), revokes their refresh tokens, clears stale sealed successors and expired sign-outs, purges old OAuth attempts.';
revoke all on function private.cleanup_sessions() from public, anon, authenticated, service_role;

-- ---------------------------------------------------------------------------------------------
-- api.get_session
-- Purpose: the caller's sign-in state for GET /auth/session.
-- Params:  none (reads the JWT claims).
-- Returns: {authenticated:true, user:{id,email,display_name,provider,avatar_url},
--           session:{id,provider,expires_at,created_at}}, or the anonymous shape
--           {authenticated:false, user:null, session:null}. The session is the row the token
--           names; for a token without a session row here (another issuer's, or none named) it
--           is built from the claims: id = session_id (else a uuid from the claims digest),
--           provider = app_metadata.provider (else the profile's, else the issuer),
--           expires_at = exp, created_at = iat (else nbf, else exp); the development bypass
--           has no token, so its expires_at and created_at are null. The dispatcher has already
--           refused a token whose session is not live or that was signed out (28000).
-- Errors:  none of its own.
-- ---------------------------------------------------------------------------------------------
create or replace function api.get_session()
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  with caller as (
    select c.user_id, c.claims,
           case when c.claims ->> 'session_id' ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
                then (c.claims ->> 'session_id')::uuid end as session_id
    from (select (select auth.uid()) as user_id, (select auth.jwt()) as claims) c
  ), profile as (
    select u.id, u.email, u.display_name, u.provider, u.avatar_url from app.users u, caller where u.id = caller.user_id
  )
  select case when caller.user_id is null then
    '{"authenticated":false,"user":null,"session":null}'::jsonb
  else pg_catalog.jsonb_build_object(
    'authenticated', true,
    'user', coalesce(
      (select pg_catalog.jsonb_build_object('id', p.id, 'email', p.email, 'display_name', p.display_name,
                'provider', p.provider, 'avatar_url', p.avatar_url)
       from profile p),
      -- A valid token of a user without a profile here (e.g. minted by Supabase itself).
      pg_catalog.jsonb_build_object('id', caller.user_id, 'email', caller.claims ->> 'email',
        'display_name', '', 'provider', null, 'avatar_url', null)),
    'session', coalesce(
      (select pg_catalog.jsonb_build_object('id', s.id, 'provider', s.provider,
         'expires_at', s.access_expires_at, 'created_at', s.created_at)
       from app.sessions s
       where s.id = caller.session_id and s.user_id = caller.user_id),
      pg_catalog.jsonb_build_object(
        'id', coalesce(caller.session_id,
                       pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(caller.claims::text, 'UTF8')), 'hex'), 32)::uuid),
        'provider', coalesce(caller.claims -> 'app_metadata' ->> 'provider', (select p.provider from profile p),
                             caller.claims ->> 'iss', 'jwt'),
        'expires_at', pg_catalog.to_timestamp((caller.claims ->> 'exp')::double precision),
        'created_at', pg_catalog.to_timestamp(coalesce(caller.claims ->> 'iat', caller.claims ->> 'nbf', caller.claims ->> 'exp')::double precision))))
  end
  from caller
$$;
comment on function api.get_session() is
  'The caller''s sign-in state: {authenticated, user, session} (anonymous: false, null, null); an authenticated caller always has a session object (its row, or built from the token''s claims). No params. No errors of its own.';
grant execute on function api.get_session() to anon, authenticated;
