-- Auth: users, sessions, refresh tokens, OAuth attempts, the outbox and rate-limit counters.
-- Reached through private security-definer functions only; api.get_session is the one read.

create table app.users (
  id uuid default extensions.gen_random_uuid() primary key,
  -- google or github (sign-in here), dev (the token CLI), or the provider Supabase Auth names in
  -- app_metadata (a profile kept by private.sync_auth_user: google, github, email, ...).
  provider text not null check (provider ~ '^[a-z][a-z0-9_]{0,31}$'),
  provider_user_id text not null check ((length(provider_user_id) >= 1) and (length(provider_user_id) <= 255)),
  email text not null check ((length(email) >= 3) and (length(email) <= 320)),
  display_name text default ''::text not null check (length(display_name) <= 200),
  avatar_url text check ((avatar_url is null) or (length(avatar_url) <= 2000)),
  user_role text default 'learner'::text not null check (user_role = any (array['learner'::text, 'admin'::text])),
  subscription_plan text default 'free'::text not null check (subscription_plan = any (array['free'::text, 'premium'::text])),
  created_at timestamp with time zone default now() not null,
  last_login_at timestamp with time zone default now() not null,
  last_login_provider text not null,
  constraint users_provider_identity_key unique (provider, provider_user_id)
);
comment on table app.users is
  'User profiles, keyed by (provider, provider_user_id); created at first sign-in (here, or by Supabase Auth through private.sync_auth_user, with id = auth.users.id).';
alter table app.users enable row level security;
create policy "users read their own profile" on app.users
  for select to authenticated
  using (id = (select auth.uid()));
grant select (id, provider, email, display_name, avatar_url, user_role, subscription_plan, created_at, last_login_at, last_login_provider) on app.users to authenticated;

create table app.sessions (
  id uuid default extensions.gen_random_uuid() primary key,
  user_id uuid not null references app.users (id) on delete cascade,
  provider text not null,
  active boolean default true not null,
  created_at timestamp with time zone default now() not null,
  last_activity_at timestamp with time zone default now() not null,
  user_agent text check ((user_agent is null) or (length(user_agent) <= 512)),
  ip_address inet,
  access_token_hash text check ((access_token_hash is null) or (access_token_hash ~ '^[0-9a-f]{64}$'::text)),
  access_expires_at timestamp with time zone not null,
  idle_timeout_seconds integer not null check (idle_timeout_seconds > 0),
  expires_at timestamp with time zone not null,
  ended_at timestamp with time zone,
  end_reason text check (end_reason = any (array['logout'::text, 'expired'::text, 'idle'::text, 'refresh_token_reuse'::text])),
  constraint sessions_check check (active = (ended_at is null))
);
comment on table app.sessions is
  'Sign-in sessions; tokens only as SHA-256 hashes. Inactive once ended (logout, expiry, reuse).';
alter table app.sessions enable row level security;
create policy "users read their own sessions" on app.sessions
  for select to authenticated
  using (user_id = (select auth.uid()));
grant select (id, user_id, provider, active, created_at, last_activity_at, user_agent, ip_address, access_expires_at, idle_timeout_seconds, expires_at, ended_at, end_reason) on app.sessions to authenticated;

create index sessions_user_idx on app.sessions (user_id);

create index sessions_active_idx on app.sessions (access_expires_at) where active;

create table app.refresh_tokens (
  id uuid default extensions.gen_random_uuid() primary key,
  session_id uuid not null references app.sessions (id) on delete cascade,
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'::text),
  parent_id uuid references app.refresh_tokens (id) on delete cascade,
  created_at timestamp with time zone default now() not null,
  rotated_at timestamp with time zone,
  revoked_at timestamp with time zone,
  -- The successor token set (new refresh token, access token, expiry) of a rotated token,
  -- AES-256-GCM sealed by the API with a key derived (HKDF) from the raw old refresh token, which
  -- the database never sees (it holds only its SHA-256). Readable only by whoever presents that
  -- token again; cleared when the grace window can no longer apply (cleanup) or on revocation.
  successor_sealed text check (successor_sealed is null or pg_catalog.length(successor_sealed) <= 8192)
);
comment on table app.refresh_tokens is 'Refresh tokens (SHA-256 hashes) with their rotation chain.';
comment on column app.refresh_tokens.successor_sealed is
  'The successor token set of a rotated token, sealed with a key derived from the raw token (never stored); replayed to a retry inside the grace window.';
alter table app.refresh_tokens enable row level security;

create index refresh_tokens_session_idx on app.refresh_tokens (session_id);

create index refresh_tokens_parent_idx on app.refresh_tokens (parent_id);

create table app.oauth_attempts (
  id uuid default extensions.gen_random_uuid() primary key,
  state_hash text not null unique check (state_hash ~ '^[0-9a-f]{64}$'::text),
  provider text not null check (provider = any (array['google'::text, 'github'::text, 'dev'::text])),
  code_verifier text,
  nonce text,
  redirect_url text not null,
  browser_hash text not null check (browser_hash ~ '^[0-9a-f]{64}$'::text),
  created_at timestamp with time zone default now() not null,
  expires_at timestamp with time zone not null,
  consumed_at timestamp with time zone
);
comment on table app.oauth_attempts is
  'Server-side record of each OAuth attempt: single use, ~10 minutes, bound to the browser.';
alter table app.oauth_attempts enable row level security;

create index oauth_attempts_expiry_idx on app.oauth_attempts (expires_at);

create table app.outbox_events (
  id bigint generated always as identity primary key,
  event_type text not null check (event_type = any (array['identity.user_registered'::text, 'identity.user_authenticated'::text, 'identity.user_logged_out'::text])),
  aggregate_id uuid not null,
  payload jsonb not null,
  occurred_at timestamp with time zone default now() not null,
  published_at timestamp with time zone
);
comment on table app.outbox_events is
  'Transactional outbox: events written with the change that causes them, for a publisher to relay.';
alter table app.outbox_events enable row level security;

create index outbox_events_unpublished_idx on app.outbox_events (id) where (published_at is null);

-- A token this service accepts but whose session is not ours to end (another issuer sharing
-- the JWT secret, e.g. Supabase Auth; a token without session_id) is signed out by recording
-- it until it expires. It is identified by the SHA-256 of its claims as canonical jsonb text:
-- the database never sees the raw token, and the claims (with jti, iat, exp) name it.
-- private.check_request refuses a recorded token; the cleanup routine forgets it after exp.
create table app.revoked_access_tokens (
  claims_digest text primary key check (claims_digest ~ '^[0-9a-f]{64}$'),
  user_id uuid not null,
  expires_at timestamptz not null,
  revoked_at timestamptz not null default pg_catalog.now()
);
comment on table app.revoked_access_tokens is
  'Signed-out access tokens that have no session row here, by the SHA-256 of their claims, kept until they expire.';
-- No policy and no grant: only the private functions read or write it.
alter table app.revoked_access_tokens enable row level security;

create index revoked_access_tokens_expiry_idx on app.revoked_access_tokens (expires_at);

create or replace function private.user_json(u app.users)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('id', u.id, 'email', u.email, 'display_name', u.display_name, 'provider', u.provider)
$$;
comment on function private.user_json(app.users) is
  'A user as the auth endpoints show one: {id, email, display_name, provider}.';

-- Why a session can no longer be used or renewed: 'expired' once its absolute lifetime is over,
-- 'idle' once it has gone unrefreshed for longer than its inactivity limit; null while it is
-- within both. (Whether it was ended already is `active`.) plpgsql: a simple expression, cheap
-- enough for the session check every request makes.
create or replace function private.session_end_reason(session app.sessions)
returns text
language plpgsql
stable
set search_path = ''
as $$
begin
  return case
    when (session).expires_at <= pg_catalog.now() then 'expired'
    when (session).last_activity_at + pg_catalog.make_interval(secs => (session).idle_timeout_seconds) <= pg_catalog.now() then 'idle'
  end;
end
$$;
comment on function private.session_end_reason(app.sessions) is
  'expired (absolute lifetime over) | idle (unrefreshed past its inactivity limit) | null (within both) for a session row.';

-- The custom claims that decide a caller's role: the same in this API's own tokens
-- (private.token_claims) and in Supabase Auth's (private.custom_access_token_hook).
create or replace function private.role_claims(u app.users)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('user_role', u.user_role, 'subscription_plan', u.subscription_plan)
$$;
comment on function private.role_claims(app.users) is
  'The user_role and subscription_plan claims of a profile, for every token that names it.';

-- The claims the API signs into an access token, recomputed from the database every time.
create or replace function private.token_claims(u app.users, session_id uuid)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('sub', u.id, 'email', u.email, 'session_id', token_claims.session_id)
         || private.role_claims(u)
$$;
comment on function private.token_claims(app.users,uuid) is
  '{sub, email, session_id} and private.role_claims of a user row and session: what the API signs into an access token. Its callers pass the freshly read profile, so every token carries current claims.';

-- Records one attempt started at /auth/login.
create or replace function private.start_oauth_attempt(provider text, state_hash text, code_verifier text, nonce text, redirect_url text, browser_hash text, ttl_seconds integer)
returns void
language sql
security definer
set search_path = ''
as $$
  insert into app.oauth_attempts (provider, state_hash, code_verifier, nonce, redirect_url, browser_hash, expires_at)
  values (start_oauth_attempt.provider, start_oauth_attempt.state_hash, start_oauth_attempt.code_verifier,
          start_oauth_attempt.nonce, start_oauth_attempt.redirect_url, start_oauth_attempt.browser_hash,
          pg_catalog.now() + pg_catalog.make_interval(secs => start_oauth_attempt.ttl_seconds))
$$;
comment on function private.start_oauth_attempt(text,text,text,text,text,text,integer) is
  'Stores an OAuth attempt (state hash, PKCE verifier, nonce, validated redirect, browser binding, expiry).';
grant execute on function private.start_oauth_attempt(text,text,text,text,text,text,integer) to sparkpath_api;

-- Consumes an attempt exactly once. Errors (22023, detail.reason): unknown_state,
-- state_already_used, state_expired, browser_mismatch.
create or replace function private.consume_oauth_attempt(state_hash text, browser_hash text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  attempt app.oauth_attempts;
begin
  select * into attempt from app.oauth_attempts a
  where a.state_hash = consume_oauth_attempt.state_hash
  for update;
  if not found then
    raise exception using errcode = '22023', message = 'The state parameter does not match any sign-in attempt',
      detail = '{"reason":"unknown_state"}';
  end if;
  if attempt.consumed_at is not null then
    raise exception using errcode = '22023', message = 'This sign-in attempt was already used',
      detail = '{"reason":"state_already_used"}';
  end if;
  if attempt.expires_at <= pg_catalog.now() then
    raise exception using errcode = '22023', message = 'This sign-in attempt has expired; start again',
      detail = '{"reason":"state_expired"}';
  end if;
  if consume_oauth_attempt.browser_hash is null or attempt.browser_hash <> consume_oauth_attempt.browser_hash then
    raise exception using errcode = '22023', message = 'This sign-in attempt was started in another browser',
      detail = '{"reason":"browser_mismatch"}';
  end if;

  update app.oauth_attempts set consumed_at = pg_catalog.now(), code_verifier = null, nonce = null
  where id = attempt.id;

  return pg_catalog.jsonb_build_object('provider', attempt.provider, 'code_verifier', attempt.code_verifier,
    'nonce', attempt.nonce, 'redirect_url', attempt.redirect_url);
end
$$;
comment on function private.consume_oauth_attempt(text,text) is
  'Consumes an OAuth attempt once; 22023 with detail.reason unknown_state|state_already_used|state_expired|browser_mismatch.';
grant execute on function private.consume_oauth_attempt(text,text) to sparkpath_api;

-- Completes a sign-in: creates or updates the profile, opens a session with its first refresh
-- token, and writes identity.user_registered or identity.user_authenticated, all at once.
-- Concurrent first callbacks of one identity meet on the unique key: exactly one profile.
-- The access token hash follows in private.record_access_token inside the same transaction
-- (the token can only be signed once the claims below are known).
create or replace function private.sign_in(provider text, provider_user_id text, email text, display_name text, avatar_url text, user_agent text, ip_address text, refresh_hash text, access_ttl_seconds integer, idle_timeout_seconds integer, max_lifetime_seconds integer)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  profile app.users;
  profile_id uuid;
  created boolean;
  new_session app.sessions;
  ip inet;
begin
  begin
    ip := sign_in.ip_address::inet;
  exception when others then
    ip := null;
  end;

  insert into app.users as u (provider, provider_user_id, email, display_name, avatar_url, last_login_provider)
  values (sign_in.provider, sign_in.provider_user_id, pg_catalog.lower(sign_in.email),
          coalesce(pg_catalog.left(sign_in.display_name, 200), ''), sign_in.avatar_url, sign_in.provider)
  on conflict on constraint users_provider_identity_key do update
    set email = excluded.email,
        display_name = case when excluded.display_name = '' then u.display_name else excluded.display_name end,
        avatar_url = coalesce(excluded.avatar_url, u.avatar_url),
        last_login_at = pg_catalog.now(),
        last_login_provider = excluded.last_login_provider
  returning u.id, (u.xmax = 0) into profile_id, created;
  select * into profile from app.users u where u.id = profile_id;

  insert into app.sessions (user_id, provider, user_agent, ip_address, access_expires_at, idle_timeout_seconds, expires_at)
  values (profile.id, sign_in.provider, pg_catalog.left(sign_in.user_agent, 512), ip,
          pg_catalog.date_trunc('second', pg_catalog.now()) + pg_catalog.make_interval(secs => sign_in.access_ttl_seconds),
          sign_in.idle_timeout_seconds,
          pg_catalog.date_trunc('second', pg_catalog.now()) + pg_catalog.make_interval(secs => sign_in.max_lifetime_seconds))
  returning * into new_session;

  insert into app.refresh_tokens (session_id, token_hash) values (new_session.id, sign_in.refresh_hash);

  insert into app.outbox_events (event_type, aggregate_id, payload)
  values (case when created then 'identity.user_registered' else 'identity.user_authenticated' end, profile.id,
          pg_catalog.jsonb_build_object('user_id', profile.id, 'provider', sign_in.provider,
            'session_id', new_session.id, 'occurred_at', pg_catalog.now()));

  return pg_catalog.jsonb_build_object(
    'user', private.user_json(profile),
    'is_new_user', created,
    'session_id', new_session.id,
    'claims', private.token_claims(profile, new_session.id),
    'access_expires_at', extract(epoch from new_session.access_expires_at)::bigint);
end
$$;
comment on function private.sign_in(text,text,text,text,text,text,text,text,integer,integer,integer) is
  'Upserts the profile by (provider, provider_user_id), opens a session with its first refresh token hash, writes the outbox event.';
grant execute on function private.sign_in(text,text,text,text,text,text,text,text,integer,integer,integer) to sparkpath_api;

-- Stores the hash of the access token just signed for a session.
create or replace function private.record_access_token(session_id uuid, access_hash text)
returns void
language sql
security definer
set search_path = ''
as $$
  update app.sessions set access_token_hash = record_access_token.access_hash
  where id = record_access_token.session_id
$$;
comment on function private.record_access_token(uuid,text) is 'Stores the SHA-256 of the newest access token of a session.';
grant execute on function private.record_access_token(uuid,text) to sparkpath_api;

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
  if private.session_end_reason(sess) is not null then
    update app.sessions
    set active = false, ended_at = pg_catalog.now(), end_reason = private.session_end_reason(sess)
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
comment on function private.refresh_session(text,text,integer,integer) is
  'Rotates a refresh token: one successor per token; a retry inside the grace window gets that successor back sealed (status replay); reuse after it revokes the session. Returns {status,...}.';
grant execute on function private.refresh_session(text,text,integer,integer) to sparkpath_api;

-- Stores the sealed successor token set of the token just rotated (same transaction as
-- refresh_session, which holds the session row, so no retry can miss it).
create or replace function private.seal_refresh_successor(refresh_hash text, sealed text)
returns void
language sql
security definer
set search_path = ''
as $$
  update app.refresh_tokens t set successor_sealed = seal_refresh_successor.sealed
  where t.token_hash = seal_refresh_successor.refresh_hash and t.rotated_at is not null and t.revoked_at is null
$$;
comment on function private.seal_refresh_successor(text,text) is
  'Stores the sealed successor token set of a just-rotated refresh token (by its SHA-256), for retries inside the grace window.';
grant execute on function private.seal_refresh_successor(text,text) to sparkpath_api;

-- Ends a session at logout. PT401 when the session is unknown, not the caller's, or already ended.
create or replace function private.end_session(session_id uuid, user_id uuid)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
  update app.sessions s set active = false, ended_at = pg_catalog.now(), end_reason = 'logout'
  where s.id = end_session.session_id and s.user_id = end_session.user_id and s.active;
  if not found then
    raise exception using errcode = 'PT401', message = 'Session is no longer active';
  end if;
  update app.refresh_tokens t set revoked_at = pg_catalog.now()
  where t.session_id = end_session.session_id and t.revoked_at is null;
  insert into app.outbox_events (event_type, aggregate_id, payload)
  values ('identity.user_logged_out', end_session.user_id,
          pg_catalog.jsonb_build_object('user_id', end_session.user_id, 'session_id', end_session.session_id,
            'occurred_at', pg_catalog.now()));
  return pg_catalog.jsonb_build_object('success', true, 'message', 'Signed out');
end
$$;
comment on function private.end_session(uuid,uuid) is
  'Logout: deactivates the session, revokes its refresh tokens, writes identity.user_logged_out.';

-- The digest that names a token: SHA-256 (hex) of its claims as canonical jsonb text, with `sub`
-- and `session_id` in lower case, so the same token gives the same digest whichever door it
-- comes through: PostgREST forwards the claims as signed, the API with its ids lower-cased
-- (uuids compare case-insensitively, their text does not).
create or replace function private.access_token_digest(claims jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
    (access_token_digest.claims || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
      'sub', pg_catalog.lower(access_token_digest.claims ->> 'sub'),
      'session_id', pg_catalog.lower(access_token_digest.claims ->> 'session_id'))))::text, 'UTF8')), 'hex')
$$;
comment on function private.access_token_digest(jsonb) is
  'SHA-256 (hex) of a token''s claims as canonical jsonb text, ids lower-cased: how a signed-out token without a session is recorded.';
-- api.get_session (security invoker) names a session-less token's session by it too.
grant execute on function private.access_token_digest(jsonb) to authenticated;

-- Whether a token without a session row here was signed out (and has not expired yet).
create or replace function private.access_token_signed_out(claims jsonb)
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

-- private.sign_out
-- Purpose: POST /auth/logout for any token the service accepts (claims already verified).
--          A token naming a session of ours ends that session (as private.end_session: its
--          refresh tokens revoked, identity.user_logged_out written). Any other token is
--          recorded in app.revoked_access_tokens until its exp, and the same event written.
-- Params:  claims (the verified JWT payload).
-- Returns: {success:true, message}.
-- Errors:  PT401 when the session is not the caller's or already ended, or the token was
--          already signed out; 22023 for claims without a uuid sub or a numeric exp.
create or replace function private.sign_out(claims jsonb)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  claimed_user uuid := private.uuid_or_null(sign_out.claims ->> 'sub');
  named_session uuid := private.uuid_or_null(sign_out.claims ->> 'session_id');
  outer_claims text;
begin
  if claimed_user is null
     or pg_catalog.jsonb_typeof(sign_out.claims -> 'exp') is distinct from 'number' then
    raise exception using errcode = '22023', message = 'The token names no user or has no expiry';
  end if;
  -- The session check of every request, on these claims (set as the dispatcher sets them, then
  -- put back): a token it refuses (ended, unknown to our issuer, signed out) has nothing left to
  -- sign out (PT401).
  outer_claims := pg_catalog.current_setting('request.jwt.claims', true);
  perform pg_catalog.set_config('request.jwt.claims', sign_out.claims::text, true);
  perform private.check_request();
  perform pg_catalog.set_config('request.jwt.claims', coalesce(outer_claims, ''), true);

  if named_session is not null and exists (select 1 from app.sessions s where s.id = named_session) then
    return private.end_session(named_session, claimed_user);
  end if;

  insert into app.revoked_access_tokens (claims_digest, user_id, expires_at)
  values (private.access_token_digest(sign_out.claims), claimed_user,
          pg_catalog.to_timestamp((sign_out.claims ->> 'exp')::double precision))
  on conflict (claims_digest) do nothing;
  if not found then
    raise exception using errcode = 'PT401', message = 'Session is no longer active';
  end if;
  insert into app.outbox_events (event_type, aggregate_id, payload)
  values ('identity.user_logged_out', claimed_user,
          pg_catalog.jsonb_build_object('user_id', claimed_user, 'session_id', named_session,
            'occurred_at', pg_catalog.now()));
  return pg_catalog.jsonb_build_object('success', true, 'message', 'Signed out');
end
$$;
comment on function private.sign_out(jsonb) is
  'Logout for any accepted token: ends its session here, or records the session-less token (claims digest) until it expires; writes identity.user_logged_out. PT401 when already signed out.';
grant execute on function private.sign_out(jsonb) to sparkpath_api;

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
security definer
set search_path = ''
as $$
declare
  deactivated integer;
  attempts integer;
begin
  with ended as (
    update app.sessions s
    set active = false, ended_at = pg_catalog.now(), end_reason = private.session_end_reason(s)
    where s.active
      and s.access_expires_at <= pg_catalog.now()
      and private.session_end_reason(s) is not null
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
grant execute on function private.cleanup_sessions() to sparkpath_api;

-- Development only (the token CLI refuses NODE_ENV=production): sets role and plan.
create or replace function private.set_user_access(user_id uuid, user_role text, subscription_plan text)
returns void
language sql
security definer
set search_path = ''
as $$
  update app.users u
  set user_role = coalesce(set_user_access.user_role, u.user_role),
      subscription_plan = coalesce(set_user_access.subscription_plan, u.subscription_plan)
  where u.id = set_user_access.user_id
$$;
comment on function private.set_user_access(uuid,text,text) is 'Sets a user''s role and plan (token CLI).';

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
--           has no token, so its expires_at and created_at are null. A token whose session is
--           over or that was signed out, the service_role key and claims the API does not
--           accept give the anonymous shape.
-- Errors:  none; it never refuses. (plpgsql, so an anonymous caller returns before any table it
--          may not read is planned.)
-- ---------------------------------------------------------------------------------------------
-- volatile, though it only reads: whether a session is live is asked of the primary, never of a
-- read replica that may not have replayed a sign-in or logout of a moment ago (the API routes
-- only stable and immutable calls to a replica; docs/architecture.md, "Read replicas").
create or replace function api.get_session()
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  -- GET /auth/session never refuses (the spec: 200 for an anonymous caller): credentials the
  -- API does not accept (private.request_caller is null: the service_role key, unknown claims)
  -- and a token whose session is over (private.check_request lets this one call through) read
  -- as "not signed in".
  caller_role constant text := private.request_caller();
  caller_id uuid := case when caller_role is not null and not private.request_session_refused() then (select auth.uid()) end;
  claims jsonb := (select auth.jwt());
  named_session uuid;
  state jsonb;
begin
  -- Before any table is touched: anon holds no privilege on the profile and session tables.
  if caller_id is null then
    return '{"authenticated":false,"user":null,"session":null}'::jsonb;
  end if;
  named_session := private.uuid_or_null(claims ->> 'session_id');

  select pg_catalog.jsonb_build_object(
    'authenticated', true,
    'user', case
      when u.id is not null then
        pg_catalog.jsonb_build_object('id', u.id, 'email', u.email, 'display_name', u.display_name,
          'provider', u.provider, 'avatar_url', u.avatar_url)
      -- A valid token of a user without a profile here (e.g. minted by Supabase itself).
      else pg_catalog.jsonb_build_object('id', caller_id, 'email', claims ->> 'email',
        'display_name', '', 'provider', null, 'avatar_url', null) end,
    'session', coalesce(
      (select pg_catalog.jsonb_build_object('id', s.id, 'provider', s.provider,
         'expires_at', s.access_expires_at, 'created_at', s.created_at)
       from app.sessions s
       where s.id = named_session and s.user_id = caller_id),
      pg_catalog.jsonb_build_object(
        'id', coalesce(named_session, pg_catalog.left(private.access_token_digest(claims), 32)::uuid),
        'provider', coalesce(claims -> 'app_metadata' ->> 'provider', u.provider, claims ->> 'iss', 'jwt'),
        'expires_at', pg_catalog.to_timestamp((claims ->> 'exp')::double precision),
        'created_at', pg_catalog.to_timestamp(coalesce(claims ->> 'iat', claims ->> 'nbf', claims ->> 'exp')::double precision))))
    into state
  from (select 1) one
  left join app.users u on u.id = caller_id;
  return state;
end
$$;
comment on function api.get_session() is
  'The caller''s sign-in state: {authenticated, user, session} (anonymous: false, null, null); an authenticated caller always has a session object (its row, or built from the token''s claims). No params. No errors of its own.';
grant execute on function api.get_session() to anon, authenticated, service_role;

-- Shared rate-limit counters for several API instances (RATE_LIMIT_STORE=postgres).
--
-- Fixed windows per caller key. Unlogged: counters are disposable, and skipping the WAL keeps
-- the per-request upsert cheap. Only the API's login role touches them, through the functions.
create unlogged table app.rate_limit_counters (
  key text not null check (length(key) <= 200),
  window_start timestamp with time zone not null,
  count integer not null,
  constraint rate_limit_counters_pkey primary key (key, window_start)
);
comment on table app.rate_limit_counters is
  'Fixed-window request counters shared by API instances (RATE_LIMIT_STORE=postgres).';
alter table app.rate_limit_counters enable row level security;

-- The start of the fixed window of `window_ms` that holds now: the one window rule both the
-- count and the look at it use.
create or replace function private.rate_limit_window_start(window_ms integer)
returns timestamptz
language sql
set search_path = ''
as $$
  select pg_catalog.to_timestamp(
           pg_catalog.floor(extract(epoch from pg_catalog.clock_timestamp()) * 1000 / rate_limit_window_start.window_ms)
           * rate_limit_window_start.window_ms / 1000.0)
$$;
comment on function private.rate_limit_window_start(integer) is
  'Start of the current fixed rate-limit window of window_ms milliseconds.';

-- Counts one request for `key` in the current window of `window_ms`; returns {count, reset_at}
-- (reset_at in epoch milliseconds).
create or replace function private.hit_rate_limit(key text, window_ms integer)
returns jsonb
language sql
security definer
set search_path = ''
as $$
  with bounds as (select private.rate_limit_window_start(hit_rate_limit.window_ms) as start),
  hit as (
    insert into app.rate_limit_counters as c (key, window_start, count)
    select hit_rate_limit.key, b.start, 1 from bounds b
    on conflict on constraint rate_limit_counters_pkey do update set count = c.count + 1
    returning c.count, c.window_start)
  select pg_catalog.jsonb_build_object(
    'count', h.count,
    'reset_at', (extract(epoch from h.window_start) * 1000)::bigint + hit_rate_limit.window_ms)
  from hit h
$$;
comment on function private.hit_rate_limit(text,integer) is
  'Counts one request in the caller''s current fixed window; returns {count, reset_at}.';
grant execute on function private.hit_rate_limit(text,integer) to sparkpath_api;

-- The count of `key` in the current window without counting a request: a signed-in caller is
-- charged only once its session check passed, so the API first asks how much is used.
create or replace function private.peek_rate_limit(key text, window_ms integer)
returns jsonb
language sql
security definer
set search_path = ''
as $$
  with bounds as (select private.rate_limit_window_start(peek_rate_limit.window_ms) as start)
  select pg_catalog.jsonb_build_object(
    'count', coalesce((select c.count from app.rate_limit_counters c where c.key = peek_rate_limit.key and c.window_start = b.start), 0),
    'reset_at', (extract(epoch from b.start) * 1000)::bigint + peek_rate_limit.window_ms)
  from bounds b
$$;
comment on function private.peek_rate_limit(text,integer) is
  'The caller''s count in its current fixed window, without counting; returns {count, reset_at}.';
grant execute on function private.peek_rate_limit(text,integer) to sparkpath_api;

-- Drops windows that ended more than an hour ago (run by the server's cleanup interval or pg_cron).
create or replace function private.purge_rate_limits()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  purged integer;
begin
  delete from app.rate_limit_counters c where c.window_start < pg_catalog.now() - interval '1 hour';
  get diagnostics purged = row_count;
  return purged;
end
$$;
comment on function private.purge_rate_limits() is 'Deletes rate-limit windows older than an hour; returns how many.';
grant execute on function private.purge_rate_limits() to sparkpath_api;
