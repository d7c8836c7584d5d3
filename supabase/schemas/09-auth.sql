-- Auth: users, sessions, refresh tokens, OAuth attempts, the outbox and rate-limit counters.
-- Reached through private security-definer functions only; api.get_session is the one read.

create table app.users (
  id uuid default extensions.gen_random_uuid() primary key,
  provider text not null check (provider = any (array['google'::text, 'github'::text, 'dev'::text])),
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
  'User profiles, keyed by (provider, provider_user_id); created at first sign-in.';
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
  revoked_at timestamp with time zone
);
comment on table app.refresh_tokens is 'Refresh tokens (SHA-256 hashes) with their rotation chain.';
alter table app.refresh_tokens enable row level security;

create index refresh_tokens_session_idx on app.refresh_tokens (session_id);

create index refresh_tokens_parent_idx on app.refresh_tokens (parent_id);

create table app.oauth_attempts (
  id uuid default extensions.gen_random_uuid() primary key,
  state_hash text not null unique check (state_hash ~ '^[0-9a-f]{64}$'::text),
  provider text not null check (provider = any (array['google'::text, 'github'::text])),
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

create or replace function private.user_json(u app.users)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('id', u.id, 'email', u.email, 'display_name', u.display_name, 'provider', u.provider)
$$;

-- The claims the API signs into an access token, recomputed from the database every time.
create or replace function private.token_claims(u app.users, session_id uuid)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'sub', u.id, 'email', u.email, 'user_role', u.user_role,
    'subscription_plan', u.subscription_plan, 'session_id', token_claims.session_id)
$$;

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

-- Rotates a refresh token. Returns {status:'ok', claims, session_id, access_expires_at} or
-- {status:'invalid'|'expired'|'revoked'}; failures are returned, not raised, so a revocation
-- caused by reuse commits together with the answer.
--   unused token          → rotated: marked used, a child token issued
--   used, inside grace    → a concurrent refresh (another tab): a sibling child is issued
--   used, after grace     → reuse attack: the session and all its tokens are revoked
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
  if sess.expires_at <= pg_catalog.now()
     or sess.last_activity_at + pg_catalog.make_interval(secs => sess.idle_timeout_seconds) <= pg_catalog.now() then
    update app.sessions
    set active = false, ended_at = pg_catalog.now(),
        end_reason = case when sess.expires_at <= pg_catalog.now() then 'expired' else 'idle' end
    where id = sess.id;
    update app.refresh_tokens set revoked_at = pg_catalog.now() where session_id = sess.id and revoked_at is null;
    return '{"status":"expired"}'::jsonb;
  end if;

  if token.rotated_at is not null
     and token.rotated_at + pg_catalog.make_interval(secs => refresh_session.grace_seconds) < pg_catalog.now() then
    update app.sessions set active = false, ended_at = pg_catalog.now(), end_reason = 'refresh_token_reuse'
    where id = sess.id;
    update app.refresh_tokens set revoked_at = pg_catalog.now() where session_id = sess.id and revoked_at is null;
    return '{"status":"revoked","reason":"refresh_token_reuse"}'::jsonb;
  end if;

  if token.rotated_at is null then
    update app.refresh_tokens set rotated_at = pg_catalog.now() where id = token.id;
  end if;
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
  'Rotates a refresh token (grace window for concurrent use; reuse after it revokes the session). Returns {status,...}.';

-- Ends a session at logout. 28000 when the session is unknown, not the caller's, or already ended.
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
    raise exception using errcode = '28000', message = 'Session is no longer active';
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

-- The cleanup routine (server interval, or pg_cron: `select private.cleanup_sessions()`).
-- Reading of the spec's "active → inactive on access token expiry handled by the cleanup
-- routine": a session whose access token has expired is deactivated once it can no longer be
-- renewed, i.e. its absolute lifetime is over or it has been idle (no refresh) for longer
-- than its inactivity limit. A session whose access token merely expired while it is still
-- refreshable stays active, otherwise refresh would race the cleanup. Also deletes OAuth
-- attempts that expired more than a day ago.
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
    set active = false, ended_at = pg_catalog.now(),
        end_reason = case when s.expires_at <= pg_catalog.now() then 'expired' else 'idle' end
    where s.active
      and s.access_expires_at <= pg_catalog.now()
      and (s.expires_at <= pg_catalog.now()
           or s.last_activity_at + pg_catalog.make_interval(secs => s.idle_timeout_seconds) <= pg_catalog.now())
    returning s.id)
  select pg_catalog.count(*) into deactivated from ended;

  update app.refresh_tokens t set revoked_at = pg_catalog.now()
  where t.revoked_at is null
    and exists (select 1 from app.sessions s where s.id = t.session_id and not s.active);

  delete from app.oauth_attempts a where a.expires_at < pg_catalog.now() - interval '1 day';
  get diagnostics attempts = row_count;

  return pg_catalog.jsonb_build_object('sessions_deactivated', deactivated, 'oauth_attempts_deleted', attempts);
end
$$;
comment on function private.cleanup_sessions() is
  'Deactivates sessions whose access token expired and that can no longer be refreshed (absolute or idle limit), revokes their refresh tokens, purges old OAuth attempts.';

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
--           session:{id,provider,expires_at,created_at}|null}, or the anonymous shape
--           {authenticated:false, user:null, session:null}. The dispatcher has already
--           refused a session-bound token whose session is not live (28000).
-- Errors:  none of its own.
-- ---------------------------------------------------------------------------------------------
create or replace function api.get_session()
returns jsonb
language sql
stable
set search_path = ''
as $$
  select case when (select auth.uid()) is null then
    '{"authenticated":false,"user":null,"session":null}'::jsonb
  else pg_catalog.jsonb_build_object(
    'authenticated', true,
    'user', coalesce(
      (select pg_catalog.jsonb_build_object('id', u.id, 'email', u.email, 'display_name', u.display_name,
                'provider', u.provider, 'avatar_url', u.avatar_url)
       from app.users u where u.id = (select auth.uid())),
      -- A valid token of a user without a profile here (e.g. minted by Supabase itself).
      pg_catalog.jsonb_build_object('id', (select auth.uid()), 'email', (select auth.jwt()) ->> 'email',
        'display_name', '', 'provider', null, 'avatar_url', null)),
    'session', (
      select pg_catalog.jsonb_build_object('id', s.id, 'provider', s.provider,
        'expires_at', s.access_expires_at, 'created_at', s.created_at)
      from app.sessions s
      where s.id = ((select auth.jwt()) ->> 'session_id')::uuid and s.user_id = (select auth.uid())))
  end
$$;
comment on function api.get_session() is
  'The caller''s sign-in state: {authenticated, user, session} (anonymous: false, null, null). No params. No errors of its own.';
grant execute on function api.get_session() to anon, authenticated;

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

-- Counts one request for `key` in the current window of `window_ms`; returns {count, reset_at}
-- (reset_at in epoch milliseconds).
create or replace function private.hit_rate_limit(key text, window_ms integer)
returns jsonb
language sql
security definer
set search_path = ''
as $$
  with bounds as (
    select pg_catalog.to_timestamp(
             pg_catalog.floor(extract(epoch from pg_catalog.clock_timestamp()) * 1000 / hit_rate_limit.window_ms)
             * hit_rate_limit.window_ms / 1000.0) as start),
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

-- The count of `key` in the current window without counting a request: a signed-in caller is
-- charged only once its session check passed, so the API first asks how much is used.
create or replace function private.peek_rate_limit(key text, window_ms integer)
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
comment on function private.peek_rate_limit(text,integer) is
  'The caller''s count in its current fixed window, without counting; returns {count, reset_at}.';

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
