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
-- Errors:  none of its own. (plpgsql now, so an anonymous caller returns before any table
--          it may not read is planned.)
-- ---------------------------------------------------------------------------------------------
create or replace function api.get_session()
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  caller_id uuid := (select auth.uid());
  claims jsonb := (select auth.jwt());
  named_session uuid;
  state jsonb;
begin
  -- Before any table is touched: anon holds no privilege on the profile and session tables.
  if caller_id is null then
    return '{"authenticated":false,"user":null,"session":null}'::jsonb;
  end if;
  if claims ->> 'session_id' ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' then
    named_session := (claims ->> 'session_id')::uuid;
  end if;

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
        'id', coalesce(named_session,
                       pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(claims::text, 'UTF8')), 'hex'), 32)::uuid),
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
grant execute on function api.get_session() to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- 6. Alphabetical order
-- ---------------------------------------------------------------------------------------------

-- The spec's "sorted alphabetically" is a reader's alphabet, not byte order: case-insensitive
-- ("How Transformers Work" before "HTTP Fundamentals", "apis" among the A's) and accent-aware
-- ("Éclairs" among the E's). ICU's root locale gives exactly that (case and accents only break
-- ties), and it exists wherever PostgreSQL is built with ICU (15 and 18, Supabase included); a
-- named collation keeps the choice in one place. Deterministic (the default), so equality,
-- LIKE and the btree indexes below behave as with any collation.
-- ICU needs a server encoding it supports (UTF8 everywhere Supabase runs; not SQL_ASCII, which
-- initdb picks when it runs without a locale) and a build with ICU. Without them the name still
-- exists, as byte order, so every function works and the warning says what is missing.
do $$
begin
  create collation app.alphabetical (provider = icu, locale = 'und');
exception when feature_not_supported or invalid_parameter_value or undefined_object then
  create collation app.alphabetical from "C";
  raise warning 'app.alphabetical falls back to byte order: % (create the database with encoding UTF8 for case-insensitive, accent-aware titles)', sqlerrm;
end
$$;
comment on collation app.alphabetical is
  'Alphabetical order of titles and names (ICU root locale): case-insensitive, accent-aware; case and accents only break ties.';

-- The indexes that serve "per snapshot, by title (name), then id" keep serving it under the
-- new order: an index only supports an ORDER BY of the same collation.
drop index app.domains_name;
create index domains_name on app.domains (snapshot_id, name collate app.alphabetical, id);
drop index app.discovery_domains_published_name;
create index discovery_domains_published_name on app.domains (snapshot_id, name collate app.alphabetical, id) where is_published;
drop index app.trails_title;
create index trails_title on app.trails (snapshot_id, title collate app.alphabetical, id);
drop index app.discovery_trails_difficulty_title;
create index discovery_trails_difficulty_title on app.trails (snapshot_id, difficulty_level, title collate app.alphabetical, id);
drop index app.concepts_title;
create index concepts_title on app.concepts (snapshot_id, title collate app.alphabetical, id);
drop index app.sparks_title;
create index sparks_title on app.sparks (snapshot_id, title collate app.alphabetical, id);
drop index app.discovery_sparks_difficulty_title;
create index discovery_sparks_difficulty_title on app.sparks (snapshot_id, difficulty, title collate app.alphabetical, id);

-- Every function that orders by a title or name, as it stands, with `collate app.alphabetical`
-- on those sort keys: discovery lists, facets and previews, domains, the spark graph, the
-- learning path's ties within a round and the spark-link list. (Search ranks by score; its
-- title tie-break is left to the search functions' owner.)

-- private.domain_items: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function private.domain_items(page app.domains[], trail_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
set enable_seqscan = 'off'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(domain_items.page) r);
  domain_ids uuid[] := array(select r.id from pg_catalog.unnest(domain_items.page) r);
  preview_ids uuid[] := '{}';
  result jsonb;
begin
  if domain_items.trail_limit is not null then
    preview_ids := array(
      select t.id from pg_catalog.unnest(domain_items.page) p
      cross join lateral (
        select x.id from app.trails x
        where x.snapshot_id = p.snapshot_id and x.domain_id = p.id
        order by x.order_index, x.title collate app.alphabetical, x.id
        limit domain_items.trail_limit) t);
  end if;
  with figures as materialized (
    select r.snapshot_id, r.domain_id, r.trail_count, r.concept_count, r.spark_count, r.estimated_mins
    from app.domain_rollups r
    where r.snapshot_id = any(snapshots) and r.domain_id = any(domain_ids)
  ), preview_figures as materialized (
    select * from private.trail_figures(snapshots, preview_ids)
  )
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'name', p.name, 'description', p.description, 'icon', p.icon, 'color', p.color,
        'trail_count', coalesce(f.trail_count, 0), 'concept_count', coalesce(f.concept_count, 0),
        'spark_count', coalesce(f.spark_count, 0), 'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when domain_items.trail_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('trails', (
                select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                         'id', t.id, 'slug', t.slug, 'title', t.title,
                         'estimated_mins', coalesce(pf.estimated_mins, 0))
                       order by t.order_index, t.title collate app.alphabetical, t.id), '[]'::jsonb)
                from (
                  select x.id, x.slug, x.title, x.order_index from app.trails x
                  where x.snapshot_id = p.snapshot_id and x.domain_id = p.id
                  order by x.order_index, x.title collate app.alphabetical, x.id
                  limit domain_items.trail_limit
                ) t
                left join preview_figures pf on pf.snapshot_id = p.snapshot_id and pf.trail_id = t.id)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(domain_items.page) with ordinality as p
  left join figures f on f.snapshot_id = p.snapshot_id and f.domain_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
comment on function private.domain_items(app.domains[], integer) is
  '';
revoke all on function private.domain_items(app.domains[], integer) from public;
grant execute on function private.domain_items(app.domains[], integer) to anon, authenticated;

-- private.trail_items: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function private.trail_items(page app.trails[], concept_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(trail_items.page) r);
  trail_ids uuid[] := array(select r.id from pg_catalog.unnest(trail_items.page) r);
  preview_ids uuid[] := '{}';
  result jsonb;
begin
  if trail_items.concept_limit is not null then
    preview_ids := array(
      select c.id from pg_catalog.unnest(trail_items.page) p
      cross join lateral (
        select x.id from app.concepts x
        where x.snapshot_id = p.snapshot_id and x.trail_id = p.id
        order by x.order_index, x.title collate app.alphabetical, x.id
        limit trail_items.concept_limit) c);
  end if;
  with preview_figures as materialized (
    select * from private.concept_figures(snapshots, preview_ids)
  )
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'title', p.title, 'description', p.description,
        'difficulty_level', p.difficulty_level,
        'concept_count', coalesce(f.concept_count, 0), 'spark_count', coalesce(f.spark_count, 0),
        'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when trail_items.concept_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('concepts', (
                select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                         'id', c.id, 'slug', c.slug, 'title', c.title,
                         'estimated_mins', coalesce(pf.estimated_mins, 0))
                       order by c.order_index, c.title collate app.alphabetical, c.id), '[]'::jsonb)
                from (
                  select x.id, x.slug, x.title, x.order_index from app.concepts x
                  where x.snapshot_id = p.snapshot_id and x.trail_id = p.id
                  order by x.order_index, x.title collate app.alphabetical, x.id
                  limit trail_items.concept_limit
                ) c
                left join preview_figures pf on pf.snapshot_id = p.snapshot_id and pf.concept_id = c.id)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(trail_items.page) with ordinality as p
  left join private.trail_figures(snapshots, trail_ids) f
    on f.snapshot_id = p.snapshot_id and f.trail_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
comment on function private.trail_items(app.trails[], integer) is
  '';
revoke all on function private.trail_items(app.trails[], integer) from public;
grant execute on function private.trail_items(app.trails[], integer) to anon, authenticated;

-- private.discovery_facets: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function private.discovery_facets(sid uuid, domain_id uuid, trail_id uuid, difficulty text, q text, included boolean[])
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  pattern text := case when discovery_facets.q is null then null
                       else '%' || pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                              discovery_facets.q, '\', '\\'), '%', '\%'), '_', '\_') || '%' end;
  result jsonb;
begin
  -- No filter at all: the snapshot's facets were computed at import (app.snapshot_rollups).
  if discovery_facets.sid is not null and discovery_facets.domain_id is null and discovery_facets.trail_id is null
     and discovery_facets.difficulty is null and discovery_facets.q is null
     and discovery_facets.included = array[true, true, true] then
    select r.facets into result from app.snapshot_rollups r where r.snapshot_id = discovery_facets.sid;
    if result is not null then
      return result;
    end if;
  end if;
  with matching_domains as (
    select d.id, d.snapshot_id from app.domains d
    where discovery_facets.included[1]
      and (discovery_facets.sid is null or d.snapshot_id = discovery_facets.sid)
      and d.is_published
      and (discovery_facets.domain_id is null or d.id = discovery_facets.domain_id)
      and (pattern is null or d.name ilike pattern)
  ), matching_trails as (
    select t.id, t.snapshot_id, t.domain_id, t.difficulty_level from app.trails t
    where discovery_facets.included[2]
      and (discovery_facets.sid is null or t.snapshot_id = discovery_facets.sid)
      and (discovery_facets.domain_id is null or t.domain_id = discovery_facets.domain_id)
      and (discovery_facets.difficulty is null or t.difficulty_level = discovery_facets.difficulty)
      and (pattern is null or t.title ilike pattern)
  ), concept_groups as (
    -- The matching concepts, counted per trail: from the rollups when no text filter applies
    -- (one row per trail instead of one per concept), else from the concepts themselves.
    select t.snapshot_id, t.id as trail_id, t.domain_id, r.concept_count::bigint as n
    from app.trails t
    join app.trail_rollups r on r.snapshot_id = t.snapshot_id and r.trail_id = t.id
    where discovery_facets.included[3] and pattern is null
      and (discovery_facets.sid is null or t.snapshot_id = discovery_facets.sid)
      and (discovery_facets.trail_id is null or t.id = discovery_facets.trail_id)
      and (discovery_facets.domain_id is null or t.domain_id = discovery_facets.domain_id)
      and r.concept_count > 0
    union all
    select c.snapshot_id, c.trail_id, t.domain_id, pg_catalog.count(*) as n from app.concepts c
    join app.trails t on t.snapshot_id = c.snapshot_id and t.id = c.trail_id
    where discovery_facets.included[3] and pattern is not null
      and (discovery_facets.sid is null or c.snapshot_id = discovery_facets.sid)
      and (discovery_facets.trail_id is null or c.trail_id = discovery_facets.trail_id)
      and (discovery_facets.domain_id is null or t.domain_id = discovery_facets.domain_id)
      and c.title ilike pattern
    group by c.snapshot_id, c.trail_id, t.domain_id
  ), per_domain as (
    select x.snapshot_id, x.domain_id, pg_catalog.sum(x.n)::bigint as n from (
      select md.snapshot_id, md.id as domain_id, 1::bigint as n from matching_domains md
      union all select mt.snapshot_id, mt.domain_id, 1::bigint from matching_trails mt
      union all select cg.snapshot_id, cg.domain_id, cg.n from concept_groups cg) x
    group by x.snapshot_id, x.domain_id
  ), per_trail as (
    select x.snapshot_id, x.trail_id, pg_catalog.sum(x.n)::bigint as n from (
      select mt.snapshot_id, mt.id as trail_id, 1::bigint as n from matching_trails mt
      union all select cg.snapshot_id, cg.trail_id, cg.n from concept_groups cg) x
    group by x.snapshot_id, x.trail_id
  )
  select pg_catalog.jsonb_build_object(
    'domains', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                  'slug', d.slug, 'name', d.name, 'count', pd.n) order by d.name collate app.alphabetical, d.slug), '[]'::jsonb)
                from per_domain pd join app.domains d on d.snapshot_id = pd.snapshot_id and d.id = pd.domain_id
                where d.is_published),
    'tracks', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                  'slug', t.slug, 'name', t.title, 'count', pt.n) order by t.title collate app.alphabetical, t.slug), '[]'::jsonb)
               from per_trail pt join app.trails t on t.snapshot_id = pt.snapshot_id and t.id = pt.trail_id),
    'difficulties', (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                        'level', l.value,
                        'count', (select pg_catalog.count(*) from matching_trails mt where mt.difficulty_level = l.value))
                      order by l.sort_order)
                     from app.difficulty_levels l),
    'types', pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('type', 'DOMAIN', 'count', (select pg_catalog.count(*) from matching_domains)),
      pg_catalog.jsonb_build_object('type', 'TRAIL', 'count', (select pg_catalog.count(*) from matching_trails)),
      pg_catalog.jsonb_build_object('type', 'CONCEPT', 'count', (select coalesce(pg_catalog.sum(cg.n), 0)::bigint from concept_groups cg))))
  into result;
  return result;
end
$$;
comment on function private.discovery_facets(uuid, uuid, uuid, text, text, boolean[]) is
  '';
revoke all on function private.discovery_facets(uuid, uuid, uuid, text, text, boolean[]) from public;
grant execute on function private.discovery_facets(uuid, uuid, uuid, text, text, boolean[]) to anon, authenticated;

-- api.list_discovery_domains: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_discovery_domains(page integer default 1, per_page integer default 20, trail_limit integer default 5, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  sid uuid;
  total bigint;
  items jsonb;
begin
  perform private.require_range('page', list_discovery_domains.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_domains.per_page, 1, 100);
  perform private.require_range('trail_limit', list_discovery_domains.trail_limit, 0, 100);
  sid := private.resolve_snapshot_id(list_discovery_domains.snapshot_id);

  select pg_catalog.count(*) into total from app.domains d
  where (sid is null or d.snapshot_id = sid) and d.is_published;

  select private.domain_items(pg_catalog.array_agg(page.d order by (page.d).name collate app.alphabetical, (page.d).id), list_discovery_domains.trail_limit)
  into items
  from (
    select d from app.domains d
    where (sid is null or d.snapshot_id = sid) and d.is_published
    order by d.name collate app.alphabetical, d.id
    limit list_discovery_domains.per_page
    offset (list_discovery_domains.page - 1)::bigint * list_discovery_domains.per_page
  ) page;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_domains.page, list_discovery_domains.per_page));
end
$$;
comment on function api.list_discovery_domains(integer, integer, integer, uuid) is
  'GET /discovery/domains. Params: page, per_page (max 100), trail_limit (0-100), snapshot_id. Returns {data: Domain with counts and trails preview, meta}. Errors: 22023, P0002.';
revoke all on function api.list_discovery_domains(integer, integer, integer, uuid) from public;
grant execute on function api.list_discovery_domains(integer, integer, integer, uuid) to anon, authenticated;

-- api.list_discovery_trails: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_discovery_trails(page integer default 1, per_page integer default 20, domain text default null, difficulty text default null, concept_limit integer default 5, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  sid uuid;
  did uuid;
  total bigint;
  items jsonb;
begin
  perform private.require_range('page', list_discovery_trails.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_trails.per_page, 1, 100);
  perform private.require_range('concept_limit', list_discovery_trails.concept_limit, 0, 50);
  perform private.require_difficulty('difficulty', list_discovery_trails.difficulty);
  sid := private.resolve_snapshot_id(list_discovery_trails.snapshot_id);
  if list_discovery_trails.domain is not null then
    did := private.find_entity_id('domain', sid, list_discovery_trails.domain, 'domain');
  end if;

  select pg_catalog.count(*) into total from app.trails t
  where (sid is null or t.snapshot_id = sid)
    and (did is null or t.domain_id = did)
    and (list_discovery_trails.difficulty is null or t.difficulty_level = list_discovery_trails.difficulty);

  select private.trail_items(pg_catalog.array_agg(page.t order by (page.t).title collate app.alphabetical, (page.t).id), list_discovery_trails.concept_limit)
  into items
  from (
    select t from app.trails t
    where (sid is null or t.snapshot_id = sid)
      and (did is null or t.domain_id = did)
      and (list_discovery_trails.difficulty is null or t.difficulty_level = list_discovery_trails.difficulty)
    order by t.title collate app.alphabetical, t.id
    limit list_discovery_trails.per_page
    offset (list_discovery_trails.page - 1)::bigint * list_discovery_trails.per_page
  ) page;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_trails.page, list_discovery_trails.per_page));
end
$$;
comment on function api.list_discovery_trails(integer, integer, text, text, integer, uuid) is
  'GET /discovery/trails. Params: page, per_page (max 100), domain slug, difficulty, concept_limit (0-50), snapshot_id. Returns {data: Trail with concepts preview, meta}. Errors: 22023, P0002 unknown domain/snapshot.';
revoke all on function api.list_discovery_trails(integer, integer, text, text, integer, uuid) from public;
grant execute on function api.list_discovery_trails(integer, integer, text, text, integer, uuid) to anon, authenticated;

-- api.list_discovery_concepts: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_discovery_concepts(page integer default 1, per_page integer default 20, trail text default null, spark_limit integer default 3, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  sid uuid;
  tid uuid;
  total bigint;
  items jsonb;
  skip bigint := (list_discovery_concepts.page - 1)::bigint * list_discovery_concepts.per_page;
begin
  perform private.require_range('page', list_discovery_concepts.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_concepts.per_page, 1, 100);
  perform private.require_range('spark_limit', list_discovery_concepts.spark_limit, 0, 50);
  sid := private.resolve_snapshot_id(list_discovery_concepts.snapshot_id);

  if list_discovery_concepts.trail is null then
    select pg_catalog.count(*) into total from app.concepts c where (sid is null or c.snapshot_id = sid);
    select private.concept_items(pg_catalog.array_agg(page.c order by (page.c).title collate app.alphabetical, (page.c).id), list_discovery_concepts.spark_limit)
    into items
    from (
      select c from app.concepts c
      where (sid is null or c.snapshot_id = sid)
      order by c.title collate app.alphabetical, c.id
      limit list_discovery_concepts.per_page offset skip
    ) page;
  else
    tid := private.find_entity_id('trail', sid, list_discovery_concepts.trail, 'trail');
    select pg_catalog.count(*) into total from app.concepts c
    where (sid is null or c.snapshot_id = sid) and c.trail_id = tid;
    select private.concept_items(
             pg_catalog.array_agg(page.c order by (page.c).order_index, (page.c).title collate app.alphabetical, (page.c).id),
             list_discovery_concepts.spark_limit)
    into items
    from (
      select c from app.concepts c
      where (sid is null or c.snapshot_id = sid) and c.trail_id = tid
      order by c.order_index, c.title collate app.alphabetical, c.id
      limit list_discovery_concepts.per_page offset skip
    ) page;
  end if;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_concepts.page, list_discovery_concepts.per_page));
end
$$;
comment on function api.list_discovery_concepts(integer, integer, text, integer, uuid) is
  'GET /discovery/concepts. Params: page, per_page (max 100), trail slug, spark_limit (0-50), snapshot_id. Returns {data: Concept with sparks preview, meta}. Errors: 22023, P0002 unknown trail/snapshot.';
revoke all on function api.list_discovery_concepts(integer, integer, text, integer, uuid) from public;
grant execute on function api.list_discovery_concepts(integer, integer, text, integer, uuid) to anon, authenticated;

-- api.list_discovery_sparks: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_discovery_sparks(page integer default 1, per_page integer default 20, concept text default null, difficulty text default null, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  sid uuid;
  cid uuid;
  total bigint;
  items jsonb;
  skip bigint := (list_discovery_sparks.page - 1)::bigint * list_discovery_sparks.per_page;
begin
  perform private.require_range('page', list_discovery_sparks.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_sparks.per_page, 1, 100);
  perform private.require_difficulty('difficulty', list_discovery_sparks.difficulty);
  sid := private.resolve_snapshot_id(list_discovery_sparks.snapshot_id);

  if list_discovery_sparks.concept is null then
    select pg_catalog.count(*) into total from app.sparks s
    where (sid is null or s.snapshot_id = sid)
      and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty);
    select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
        'id', s.id, 'slug', s.slug, 'title', s.title, 'summary', s.summary,
        'difficulty', s.difficulty, 'estimated_mins', s.estimated_mins) order by s.title collate app.alphabetical, s.id)
    into items
    from (
      select s.* from app.sparks s
      where (sid is null or s.snapshot_id = sid)
        and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty)
      order by s.title collate app.alphabetical, s.id
      limit list_discovery_sparks.per_page offset skip
    ) s;
  else
    cid := private.find_entity_id('concept', sid, list_discovery_sparks.concept, 'concept');
    select pg_catalog.count(*) into total
    from app.concept_sparks cs
    join app.sparks s on s.snapshot_id = cs.snapshot_id and s.id = cs.spark_id
    where (sid is null or cs.snapshot_id = sid) and cs.concept_id = cid
      and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty);
    select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
        'id', x.id, 'slug', x.slug, 'title', x.title, 'summary', x.summary,
        'difficulty', x.difficulty, 'estimated_mins', x.estimated_mins) order by x.order_index, x.title collate app.alphabetical, x.id)
    into items
    from (
      select s.*, cs.order_index
      from app.concept_sparks cs
      join app.sparks s on s.snapshot_id = cs.snapshot_id and s.id = cs.spark_id
      where (sid is null or cs.snapshot_id = sid) and cs.concept_id = cid
        and (list_discovery_sparks.difficulty is null or s.difficulty = list_discovery_sparks.difficulty)
      order by cs.order_index, s.title collate app.alphabetical, s.id
      limit list_discovery_sparks.per_page offset skip
    ) x;
  end if;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_sparks.page, list_discovery_sparks.per_page));
end
$$;
comment on function api.list_discovery_sparks(integer, integer, text, text, uuid) is
  'GET /discovery/sparks. Params: page, per_page (max 100), concept slug, difficulty, snapshot_id. Returns {data: Spark[], meta}. Errors: 22023, P0002 unknown concept/snapshot.';
revoke all on function api.list_discovery_sparks(integer, integer, text, text, uuid) from public;
grant execute on function api.list_discovery_sparks(integer, integer, text, text, uuid) to anon, authenticated;

-- api.list_discovery_items: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_discovery_items(page integer default 1, per_page integer default 20, types text default null, domain text default null, track text default null, difficulty text default null, q text default null, include_facets boolean default false, nested_limit integer default 3, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  sid uuid;
  did uuid;
  tid uuid;
  requested text[];
  included boolean[];
  pattern text;
  quotas integer[];
  caps bigint[];
  total bigint;
  before_page bigint[];
  through_page bigint[];
  nested integer := case when list_discovery_items.nested_limit = 0 then null else list_discovery_items.nested_limit end;
  domain_part jsonb;
  trail_part jsonb;
  concept_part jsonb;
  body jsonb;
begin
  perform private.require_range('page', list_discovery_items.page, 1, 100000);
  perform private.require_range('per_page', list_discovery_items.per_page, 1, 100);
  perform private.require_range('nested_limit', list_discovery_items.nested_limit, 0, 10);
  perform private.require_difficulty('difficulty', list_discovery_items.difficulty);
  if list_discovery_items.types is null then
    requested := array['domain', 'trail', 'concept'];
  else
    requested := pg_catalog.string_to_array(pg_catalog.lower(list_discovery_items.types), ',');
    if pg_catalog.cardinality(requested) = 0
       or exists (select 1 from pg_catalog.unnest(requested) r where r not in ('domain', 'trail', 'concept')) then
      raise exception using
        errcode = '22023',
        message = 'types must be a comma-separated subset of domain, trail, concept',
        detail = pg_catalog.jsonb_build_object('field', 'types', 'value', list_discovery_items.types)::text;
    end if;
  end if;
  sid := private.resolve_snapshot_id(list_discovery_items.snapshot_id);
  if list_discovery_items.domain is not null then
    did := private.find_entity_id('domain', sid, list_discovery_items.domain, 'domain');
  end if;
  if list_discovery_items.track is not null then
    tid := private.find_entity_id('trail', sid, list_discovery_items.track, 'track');
  end if;

  -- Rule 5: a track keeps only concepts; rule 6: a difficulty keeps only trails; rule 7: types.
  included := array[
    'domain' = any(requested) and tid is null and list_discovery_items.difficulty is null,
    'trail' = any(requested) and tid is null,
    'concept' = any(requested) and list_discovery_items.difficulty is null];
  if list_discovery_items.q is not null then
    pattern := '%' || pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                 list_discovery_items.q, '\', '\\'), '%', '\%'), '_', '\_') || '%';
  end if;

  caps := array[
    case when included[1] then (
      select pg_catalog.count(*) from app.domains d
      where (sid is null or d.snapshot_id = sid) and d.is_published
        and (did is null or d.id = did)
        and (pattern is null or d.name ilike pattern)) else 0 end,
    case when included[2] then (
      select pg_catalog.count(*) from app.trails t
      where (sid is null or t.snapshot_id = sid)
        and (did is null or t.domain_id = did)
        and (list_discovery_items.difficulty is null or t.difficulty_level = list_discovery_items.difficulty)
        and (pattern is null or t.title ilike pattern)) else 0 end,
    case when not included[3] then 0
         -- no text filter: the concepts of the domains (or of the track) are in the rollups
         when pattern is null and tid is null then (
      select coalesce(pg_catalog.sum(r.concept_count), 0)::bigint from app.domain_rollups r
      where (sid is null or r.snapshot_id = sid) and (did is null or r.domain_id = did))
         when pattern is null then (
      select coalesce(pg_catalog.sum(r.concept_count), 0)::bigint from app.trails t
      join app.trail_rollups r on r.snapshot_id = t.snapshot_id and r.trail_id = t.id
      where (sid is null or t.snapshot_id = sid) and t.id = tid and (did is null or t.domain_id = did))
         else (
      select pg_catalog.count(*) from app.concepts c
      where (sid is null or c.snapshot_id = sid)
        and (tid is null or c.trail_id = tid)
        and (did is null or exists (select 1 from app.trails t
                                    where t.snapshot_id = c.snapshot_id and t.id = c.trail_id and t.domain_id = did))
        and (pattern is null or c.title ilike pattern)) end];
  total := caps[1] + caps[2] + caps[3];
  quotas := private.discovery_quotas(list_discovery_items.per_page, included);
  before_page := private.discovery_allocation(
    least((list_discovery_items.page - 1)::bigint * list_discovery_items.per_page, total), caps, quotas);
  through_page := private.discovery_allocation(
    least(list_discovery_items.page::bigint * list_discovery_items.per_page, total), caps, quotas);

  if through_page[1] > before_page[1] then
    select (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('type', 'DOMAIN') || i order by n)
            from pg_catalog.jsonb_array_elements(
              private.domain_items(pg_catalog.array_agg(page.d order by (page.d).name collate app.alphabetical, (page.d).id), null)) with ordinality as e(i, n))
    into domain_part
    from (
      select d from app.domains d
      where (sid is null or d.snapshot_id = sid) and d.is_published
        and (did is null or d.id = did)
        and (pattern is null or d.name ilike pattern)
      order by d.name collate app.alphabetical, d.id
      limit through_page[1] - before_page[1] offset before_page[1]
    ) page;
  end if;
  if through_page[2] > before_page[2] then
    select (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('type', 'TRAIL') || i order by n)
            from pg_catalog.jsonb_array_elements(
              private.trail_items(pg_catalog.array_agg(page.t order by (page.t).title collate app.alphabetical, (page.t).id), nested))
              with ordinality as e(i, n))
    into trail_part
    from (
      select t from app.trails t
      where (sid is null or t.snapshot_id = sid)
        and (did is null or t.domain_id = did)
        and (list_discovery_items.difficulty is null or t.difficulty_level = list_discovery_items.difficulty)
        and (pattern is null or t.title ilike pattern)
      order by t.title collate app.alphabetical, t.id
      limit through_page[2] - before_page[2] offset before_page[2]
    ) page;
  end if;
  if through_page[3] > before_page[3] then
    select (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('type', 'CONCEPT') || i order by n)
            from pg_catalog.jsonb_array_elements(
              private.concept_items(pg_catalog.array_agg(page.c order by (page.c).title collate app.alphabetical, (page.c).id), nested))
              with ordinality as e(i, n))
    into concept_part
    from (
      select c from app.concepts c
      where (sid is null or c.snapshot_id = sid)
        and (tid is null or c.trail_id = tid)
        and (did is null or exists (select 1 from app.trails t
                                    where t.snapshot_id = c.snapshot_id and t.id = c.trail_id and t.domain_id = did))
        and (pattern is null or c.title ilike pattern)
      order by c.title collate app.alphabetical, c.id
      limit through_page[3] - before_page[3] offset before_page[3]
    ) page;
  end if;

  body := pg_catalog.jsonb_build_object(
    'data', coalesce(domain_part, '[]'::jsonb) || coalesce(trail_part, '[]'::jsonb) || coalesce(concept_part, '[]'::jsonb),
    'meta', private.page_meta(total, list_discovery_items.page, list_discovery_items.per_page));
  if list_discovery_items.include_facets then
    body := body || pg_catalog.jsonb_build_object('facets', private.discovery_facets(
      sid, did, tid, list_discovery_items.difficulty, list_discovery_items.q, included));
  end if;
  return body;
end
$$;
comment on function api.list_discovery_items(integer, integer, text, text, text, text, text, boolean, integer, uuid) is
  'GET /discovery/all. Params: page, per_page (max 100), types, domain, track, difficulty, q, include_facets, nested_limit (0-10), snapshot_id. Returns {data: mixed DOMAIN/TRAIL/CONCEPT items split by type share, meta, facets?}. Errors: 22023, P0002.';
revoke all on function api.list_discovery_items(integer, integer, text, text, text, text, text, boolean, integer, uuid) from public;
grant execute on function api.list_discovery_items(integer, integer, text, text, text, text, text, boolean, integer, uuid) to anon, authenticated;

-- api.browse_catalog: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.browse_catalog(page integer default 1, per_page integer default 20, domain text default null, difficulty text default null, trail_limit integer default 5, concept_limit integer default 5, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  sid uuid;
  did uuid;
  total bigint;
  page_domains app.domains[];
  page_trails app.trails[];
  page_concepts app.concepts[];
  items jsonb;
begin
  perform private.require_range('page', browse_catalog.page, 1, 100000);
  perform private.require_range('per_page', browse_catalog.per_page, 1, 50);
  perform private.require_range('trail_limit', browse_catalog.trail_limit, 0, 20);
  perform private.require_range('concept_limit', browse_catalog.concept_limit, 0, 20);
  perform private.require_difficulty('difficulty', browse_catalog.difficulty);
  sid := private.resolve_snapshot_id(browse_catalog.snapshot_id);
  if browse_catalog.domain is not null then
    did := private.find_entity_id('domain', sid, browse_catalog.domain, 'domain');
  end if;

  select pg_catalog.count(*) into total from app.domains d
  where (sid is null or d.snapshot_id = sid) and d.is_published
    and (did is null or d.id = did)
    and (browse_catalog.difficulty is null or exists (
      select 1 from app.trails t where t.snapshot_id = d.snapshot_id and t.domain_id = d.id
        and t.difficulty_level = browse_catalog.difficulty));

  select pg_catalog.array_agg(page.d order by (page.d).name collate app.alphabetical, (page.d).id) into page_domains
  from (
    select d from app.domains d
    where (sid is null or d.snapshot_id = sid) and d.is_published
      and (did is null or d.id = did)
      and (browse_catalog.difficulty is null or exists (
        select 1 from app.trails t where t.snapshot_id = d.snapshot_id and t.domain_id = d.id
          and t.difficulty_level = browse_catalog.difficulty))
    order by d.name collate app.alphabetical, d.id
    limit browse_catalog.per_page
    offset (browse_catalog.page - 1)::bigint * browse_catalog.per_page
  ) page;

  page_trails := array(
    select t.x from pg_catalog.unnest(page_domains) p
    cross join lateral (
      select x from app.trails x
      where x.snapshot_id = p.snapshot_id and x.domain_id = p.id
        and (browse_catalog.difficulty is null or x.difficulty_level = browse_catalog.difficulty)
      order by x.order_index, x.title collate app.alphabetical, x.id
      limit browse_catalog.trail_limit) t);
  page_concepts := array(
    select c.x from pg_catalog.unnest(page_trails) p
    cross join lateral (
      select x from app.concepts x
      where x.snapshot_id = p.snapshot_id and x.trail_id = p.id
      order by x.order_index, x.title collate app.alphabetical, x.id
      limit browse_catalog.concept_limit) c);

  -- The three item lists come back in the order of their arrays; ordinality ties them together.
  -- Each list is built once (materialized) and nested by grouping: concepts per trail, then
  -- trails per domain, instead of rescanning the lists once per parent.
  with d as materialized (
    select p.snapshot_id, p.id, e.item, e.n
    from pg_catalog.jsonb_array_elements(private.domain_items(page_domains, null)) with ordinality as e(item, n)
    join pg_catalog.unnest(page_domains) with ordinality as p on p.ordinality = e.n
  ), t as materialized (
    select p.snapshot_id, p.id, p.domain_id, e.item - 'description' as item, e.n
    from pg_catalog.jsonb_array_elements(private.trail_items(page_trails, null)) with ordinality as e(item, n)
    join pg_catalog.unnest(page_trails) with ordinality as p on p.ordinality = e.n
  ), c as materialized (
    select p.snapshot_id, p.trail_id, e.item - 'description' as item, e.n
    from pg_catalog.jsonb_array_elements(private.concept_items(page_concepts, null)) with ordinality as e(item, n)
    join pg_catalog.unnest(page_concepts) with ordinality as p on p.ordinality = e.n
  ), concepts_by_trail as (
    select c.snapshot_id, c.trail_id, pg_catalog.jsonb_agg(c.item order by c.n) as items
    from c group by c.snapshot_id, c.trail_id
  ), trails_by_domain as (
    select t.snapshot_id, t.domain_id,
           pg_catalog.jsonb_agg(t.item || pg_catalog.jsonb_build_object('concepts', coalesce(cb.items, '[]'::jsonb))
                                order by t.n) as items
    from t
    left join concepts_by_trail cb on cb.snapshot_id = t.snapshot_id and cb.trail_id = t.id
    group by t.snapshot_id, t.domain_id
  )
  select pg_catalog.jsonb_agg(
           d.item || pg_catalog.jsonb_build_object('trails', coalesce(tb.items, '[]'::jsonb))
           order by d.n)
  into items
  from d
  left join trails_by_domain tb on tb.snapshot_id = d.snapshot_id and tb.domain_id = d.id;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, browse_catalog.page, browse_catalog.per_page));
end
$$;
comment on function api.browse_catalog(integer, integer, text, text, integer, integer, uuid) is
  'GET /discovery/browse. Params: page, per_page (max 50), domain, difficulty, trail_limit (0-20), concept_limit (0-20), snapshot_id. Returns {data: domain -> trails -> concepts tree with counts, meta}. Errors: 22023, P0002.';
revoke all on function api.browse_catalog(integer, integer, text, text, integer, integer, uuid) from public;
grant execute on function api.browse_catalog(integer, integer, text, text, integer, integer, uuid) to anon, authenticated;

-- api.list_domains: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_domains(page integer default 1, per_page integer default 20, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  sid uuid;
  total bigint;
  items jsonb;
begin
  perform private.require_range('page', list_domains.page, 1, 100000);
  perform private.require_range('per_page', list_domains.per_page, 1, 100);
  sid := private.resolve_snapshot_id(list_domains.snapshot_id);
  select pg_catalog.count(*) into total from app.domains d
  where (sid is null or d.snapshot_id = sid) and d.is_published;
  select pg_catalog.jsonb_agg(private.domain_summary(d) order by d.name collate app.alphabetical, d.id) into items
  from (
    select d.* from app.domains d
    where (sid is null or d.snapshot_id = sid) and d.is_published
    order by d.name collate app.alphabetical, d.id
    limit list_domains.per_page offset (list_domains.page - 1)::bigint * list_domains.per_page
  ) d;
  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', private.page_meta(total, list_domains.page, list_domains.per_page));
end
$$;
comment on function api.list_domains(integer, integer, uuid) is
  'GET /discovery/domains/. Params: page, per_page (max 100), snapshot_id. Returns {data: Domain[] (id,slug,name,description,icon,color,trail_count), meta}. Errors: 22023, P0002.';
revoke all on function api.list_domains(integer, integer, uuid) from public;
grant execute on function api.list_domains(integer, integer, uuid) to anon, authenticated;

-- api.get_domain_trails: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.get_domain_trails(slug text, page integer default 1, trail_limit integer default 5, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  d app.domains;
  total bigint;
  concepts bigint;
  page_ids uuid[];
  items jsonb;
begin
  perform private.require_range('page', get_domain_trails.page, 1, 100000);
  perform private.require_range('trail_limit', get_domain_trails.trail_limit, 1, 100);
  d := private.find_domain(private.resolve_snapshot_id(get_domain_trails.snapshot_id), get_domain_trails.slug);
  -- trail total and total_concept_count from the domain's rollup
  select coalesce(pg_catalog.max(r.trail_count), 0), coalesce(pg_catalog.max(r.concept_count), 0)
  into total, concepts
  from app.domain_rollups r where r.snapshot_id = d.snapshot_id and r.domain_id = d.id;
  page_ids := array(
    select t.id from app.trails t
    where t.snapshot_id = d.snapshot_id and t.domain_id = d.id
    order by t.order_index, t.title collate app.alphabetical, t.id
    limit get_domain_trails.trail_limit
    offset (get_domain_trails.page - 1)::bigint * get_domain_trails.trail_limit);
  select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
      'id', t.id, 'title', t.title, 'slug', t.slug, 'estimated_mins', coalesce(f.estimated_mins, 0))
    order by t.order_index, t.title collate app.alphabetical, t.id)
  into items
  from app.trails t
  left join private.trail_figures(array[d.snapshot_id], page_ids) f on f.trail_id = t.id
  where t.snapshot_id = d.snapshot_id and t.id = any(page_ids);
  return private.domain_summary(d) || pg_catalog.jsonb_build_object(
    'trails', coalesce(items, '[]'::jsonb),
    'trail_meta', private.page_meta(total, get_domain_trails.page, get_domain_trails.trail_limit)
                  || pg_catalog.jsonb_build_object('total_concept_count', concepts));
end
$$;
comment on function api.get_domain_trails(text, integer, integer, uuid) is
  'GET /discovery/domains/{slug}/trails. Params: slug (slug or UUID), page, trail_limit (1-100), snapshot_id. Returns domain fields, trails page and trail_meta. Errors: 22023, P0002.';
revoke all on function api.get_domain_trails(text, integer, integer, uuid) from public;
grant execute on function api.get_domain_trails(text, integer, integer, uuid) to anon, authenticated;

-- api.list_related_domains: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_related_domains(slug text, related_limit integer default 4, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  d app.domains;
  total bigint := 0;
  items jsonb;
begin
  perform private.require_range('limit', list_related_domains.related_limit, 1, 10);
  d := private.find_domain(private.resolve_snapshot_id(list_related_domains.snapshot_id), list_related_domains.slug);
  if d.category_id is not null then
    select pg_catalog.count(*) into total from app.domains r
    where r.snapshot_id = d.snapshot_id and r.category_id = d.category_id and r.id <> d.id and r.is_published;
  end if;
  if total > 0 then
    select pg_catalog.jsonb_agg(private.domain_summary(r) order by r.name collate app.alphabetical, r.id) into items
    from (
      select r.* from app.domains r
      where r.snapshot_id = d.snapshot_id and r.category_id = d.category_id and r.id <> d.id and r.is_published
      order by r.name collate app.alphabetical, r.id
      limit list_related_domains.related_limit
    ) r;
  else
    select pg_catalog.count(*) into total from app.domains r
    where r.snapshot_id = d.snapshot_id and r.id <> d.id and r.is_published;
    select pg_catalog.jsonb_agg(private.domain_summary(r) order by pg_catalog.md5(r.id::text || d.id::text)) into items
    from (
      select r.* from app.domains r
      where r.snapshot_id = d.snapshot_id and r.id <> d.id and r.is_published
      order by pg_catalog.md5(r.id::text || d.id::text)
      limit list_related_domains.related_limit
    ) r;
  end if;
  return pg_catalog.jsonb_build_object(
    'data', coalesce(items, '[]'::jsonb),
    'meta', pg_catalog.jsonb_build_object('total', total, 'page', 1, 'per_page', list_related_domains.related_limit));
end
$$;
comment on function api.list_related_domains(text, integer, uuid) is
  'GET /discovery/domains/{slug}/related. Params: slug (slug or UUID), related_limit (1-10), snapshot_id. Returns {data: Domain[], meta: {total,page,per_page}}; same category, else pseudo-random domains. Errors: 22023, P0002.';
revoke all on function api.list_related_domains(text, integer, uuid) from public;
grant execute on function api.list_related_domains(text, integer, uuid) to anon, authenticated;

-- api.get_spark_graph: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.get_spark_graph(slug text, direction text default 'ancestors'::text, max_depth integer default 3, snapshot_id uuid default null)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  root record;
  result json;
begin
  if get_spark_graph.direction is null or get_spark_graph.direction not in ('ancestors', 'descendants', 'both') then
    raise exception using errcode = '22023', message = 'direction must be ancestors, descendants or both',
      detail = pg_catalog.jsonb_build_object('field', 'direction', 'value', get_spark_graph.direction)::text;
  end if;
  if get_spark_graph.max_depth is null or get_spark_graph.max_depth not between 0 and 10 then
    raise exception using errcode = '22023', message = 'max_depth must be between 0 and 10',
      detail = pg_catalog.jsonb_build_object('field', 'max_depth', 'value', get_spark_graph.max_depth)::text;
  end if;
  select f.snapshot_id, f.id into root
  from private.find_spark(get_spark_graph.slug, private.resolve_snapshot_id(get_spark_graph.snapshot_id)) f;
  if root.id is null then
    raise exception using errcode = 'P0002', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('slug', get_spark_graph.slug)::text;
  end if;

  -- The walk: one row per level (the nodes first reached at that depth, and all seen so far).
  with recursive
  up (depth, frontier, seen) as (
    select 0, array[root.id], array[root.id]
    where (select get_spark_graph.direction) in ('ancestors', 'both')
    union all
    select u.depth + 1, nxt.ids, u.seen || nxt.ids
    from up u
    cross join lateral (
      select coalesce(pg_catalog.array_agg(x.id), '{}')
      from (
        select pg_catalog.unnest(g.parents)
        from app.spark_graph_nodes g
        where g.snapshot_id = root.snapshot_id and g.spark_id = any (u.frontier)
        except
        select pg_catalog.unnest(u.seen)
      ) x(id)
    ) nxt(ids)
    where u.depth < get_spark_graph.max_depth and pg_catalog.cardinality(u.frontier) > 0
  ),
  down (depth, frontier, seen) as (
    select 0, array[root.id], array[root.id]
    where (select get_spark_graph.direction) in ('descendants', 'both')
    union all
    select d.depth + 1, nxt.ids, d.seen || nxt.ids
    from down d
    cross join lateral (
      select coalesce(pg_catalog.array_agg(x.id), '{}')
      from (
        select pg_catalog.unnest(g.children)
        from app.spark_graph_nodes g
        where g.snapshot_id = root.snapshot_id and g.spark_id = any (d.frontier)
        except
        select pg_catalog.unnest(d.seen)
      ) x(id)
    ) nxt(ids)
    where d.depth < get_spark_graph.max_depth and pg_catalog.cardinality(d.frontier) > 0
  ),
  -- Every reached node once, at its shortest depth.
  reached (id, depth) as materialized (
    select f.id, pg_catalog.min(f.depth)
    from (
      select n.id, u.depth from up u cross join pg_catalog.unnest(u.frontier) n(id)
      union all
      select n.id, d.depth from down d cross join pg_catalog.unnest(d.frontier) n(id)
    ) f
    group by f.id
  ),
  -- Their rows: one index scan per depth (spark_id = any of that depth's ids). The lateral
  -- keeps the plan a nested loop over the few depth groups whatever the row estimates.
  nodes as materialized (
    select b.depth, g.spark_id, g.node_head, g.node_tail, g.sort_title, g.parents, g.edges_in
    from (select r.depth, pg_catalog.array_agg(r.id) as ids from reached r group by r.depth) b
    cross join lateral (
      select g.spark_id, g.node_head, g.node_tail, g.sort_title, g.parents, g.edges_in
      from app.spark_graph_nodes g
      where g.snapshot_id = root.snapshot_id and g.spark_id = any (b.ids)
    ) g
  )
  -- concat builds each string in one allocation; chains of || would copy the growing body.
  select pg_catalog.concat(
    '{"edges": [',
    -- "(... in (...)) is true" keeps the membership test a hashed subplan (built once), never a
    -- join the planner could misplace inside the per-node loop.
    -- unnest in the select list (ProjectSet) zips the two arrays without a tuplestore per node.
    (select pg_catalog.string_agg(e.edge, ', ' order by e.source_id, e.target_id)
     from (
       select pg_catalog.unnest(n.parents) as source_id, n.spark_id as target_id, pg_catalog.unnest(n.edges_in) as edge
       from nodes n
     ) e
     where (e.source_id in (select r.id from reached r)) is true),
    '], "nodes": [',
    (select pg_catalog.string_agg(pg_catalog.concat(n.node_head, n.depth, n.node_tail), ', '
              order by n.depth, n.sort_title collate app.alphabetical, n.spark_id)
     from nodes n),
    '], "root_id": "', root.id, '", "direction": ', pg_catalog.to_json(get_spark_graph.direction),
    ', "max_depth": ', get_spark_graph.max_depth, '}'
  )::json into result;
  return result;
end
$$;
comment on function api.get_spark_graph(text, text, integer, uuid) is
  'Prerequisite subgraph around a spark. Params: slug, direction (ancestors|descendants|both, default ancestors), max_depth (0..10, default 3), snapshot_id. Returns {root_id, direction, max_depth, nodes:[{id,slug,title,depth}], edges:[{source,target,weight,type}]}. Errors: 22023 invalid direction/max_depth, P0002 unknown slug/snapshot.';
revoke all on function api.get_spark_graph(text, text, integer, uuid) from public;
grant execute on function api.get_spark_graph(text, text, integer, uuid) to anon, authenticated;

-- api.get_learning_path: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.get_learning_path(target text, skip_mastered boolean default true, snapshot_id uuid default null)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  root record;
  stored_rounds boolean;
  ids uuid[];
  steps text[];
  titles text[];
  minutes integer[];
  rounds integer[];
  mastered uuid[] := '{}';
  caller uuid := auth.uid();
  result json;
begin
  select f.snapshot_id, f.id into root
  from private.find_spark(get_learning_path.target, private.resolve_snapshot_id(get_learning_path.snapshot_id)) f;
  if root.id is null then
    raise exception using errcode = 'P0002', message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('target', get_learning_path.target)::text;
  end if;

  -- The closure, level by level: one index scan of app.spark_graph_nodes per level, whose rows
  -- give both the next level (parents) and everything the body needs (step text, order keys),
  -- carried out of the walk in arrays: no second look-up per member.
  with recursive
  walk (frontier, seen, ids, steps, titles, minutes, rounds) as (
    select array[root.id], array[root.id], '{}'::uuid[], '{}'::text[], '{}'::text[], '{}'::integer[], '{}'::integer[]
    union all
    select lv.next, w.seen || lv.next, lv.ids, lv.steps, lv.titles, lv.minutes, lv.rounds
    from walk w
    cross join lateral (
      with members as materialized (
        select g.spark_id, g.parents, g.path_step, g.sort_title, g.estimated_mins, g.round
        from app.spark_graph_nodes g
        where g.snapshot_id = root.snapshot_id and g.spark_id = any (w.frontier)
      )
      select
        (select coalesce(pg_catalog.array_agg(x.id), '{}')
         from (select pg_catalog.unnest(m.parents) from members m except select pg_catalog.unnest(w.seen)) x(id)) as next,
        a.*
      from (
        select pg_catalog.array_agg(m.spark_id) as ids, pg_catalog.array_agg(m.path_step) as steps,
          pg_catalog.array_agg(m.sort_title) as titles, pg_catalog.array_agg(m.estimated_mins) as minutes,
          pg_catalog.array_agg(m.round) as rounds
        from members m
      ) a
    ) lv
    where pg_catalog.cardinality(w.frontier) > 0
  )
  select pg_catalog.array_agg(c.id), pg_catalog.array_agg(c.step), pg_catalog.array_agg(c.title),
    pg_catalog.array_agg(c.minutes), pg_catalog.array_agg(c.round)
  into ids, steps, titles, minutes, rounds
  from walk w
  cross join rows from (pg_catalog.unnest(w.ids), pg_catalog.unnest(w.steps), pg_catalog.unnest(w.titles),
                        pg_catalog.unnest(w.minutes), pg_catalog.unnest(w.rounds)) c(id, step, title, minutes, round);

  -- Rounds stored at import (app.spark_rounds, copied into the rows) hold all or none of a
  -- snapshot's sparks: the target's tells which.
  stored_rounds := rounds[pg_catalog.array_position(ids, root.id)] is not null;
  if not stored_rounds then
    -- Kahn's algorithm in rounds, set-based: the round of a spark is the length of the longest
    -- prerequisite chain above it inside the closure (0 for sparks without prerequisites), which is
    -- exactly the round in which Kahn's algorithm frees it. The closure's links are the parents of
    -- its members (every parent of a member is a member). Cost: closure links x longest chain.
    -- Cycle guard: rounds stop growing at the closure size, and sparks that never become free
    -- (members of a cycle) take that size as their round, i.e. go last.
    with recursive
    closure_links (source_id, target_id) as materialized (
      select pg_catalog.unnest(g.parents), g.spark_id
      from app.spark_graph_nodes g
      where g.snapshot_id = root.snapshot_id and g.spark_id = any (ids)
    ),
    computed (id, round) as (
      select c.id, 0
      from pg_catalog.unnest(ids) c(id)
      where not exists (select from closure_links k where k.target_id = c.id)
      union
      select k.target_id, r.round + 1
      from computed r
      join closure_links k on k.source_id = r.id
      where r.round < pg_catalog.cardinality(ids)
    ),
    latest (id, round) as (
      select r.id, pg_catalog.max(r.round) from computed r group by r.id
    )
    -- in the order of ids: a left join by position, no per-id search
    select pg_catalog.array_agg(coalesce(l.round, pg_catalog.cardinality(ids)) order by c.ord)
    into rounds
    from pg_catalog.unnest(ids) with ordinality c(id, ord)
    left join latest l on l.id = c.id;
  end if;

  -- learning_events is readable only by signed-in users (RLS: their own rows); anon has no
  -- grant at all, so look only when this role may.
  if get_learning_path.skip_mastered and caller is not null
     and pg_catalog.has_table_privilege('app.learning_events', 'select') then
    select coalesce(pg_catalog.array_agg(distinct e.spark_id), '{}') into mastered
    from app.learning_events e
    where e.user_id = caller and e.verb = 'mastered' and e.spark_id = any (ids);
  end if;

  -- The body from the carried step texts (a member without a stored round, impossible while
  -- rounds are all or none, is left out as before).
  select pg_catalog.concat(
    '{"path": [',
    pg_catalog.string_agg(c.step, ', ' order by c.round, c.title collate app.alphabetical, c.id),
    '], "target_id": "', root.id,
    '", "total_mins": ', coalesce(pg_catalog.sum(c.minutes), 0),
    ', "skipped_count": ', pg_catalog.cardinality(mastered), '}'
  )::json into result
  from rows from (pg_catalog.unnest(ids), pg_catalog.unnest(steps), pg_catalog.unnest(titles),
                  pg_catalog.unnest(minutes), pg_catalog.unnest(rounds)) c(id, step, title, minutes, round)
  where c.round is not null
    and not (c.id = any (mastered));
  return result;
end
$$;
comment on function api.get_learning_path(text, boolean, uuid) is
  'Learning path to a target spark: all prerequisite ancestors plus the target, prerequisites first (Kahn rounds, then lower(title), then id). Params: target, skip_mastered (default true), snapshot_id. Returns {target_id, path:[{slug,title,estimated_mins}], total_mins, skipped_count}. Errors: P0002 unknown target/snapshot.';
revoke all on function api.get_learning_path(text, boolean, uuid) from public;
grant execute on function api.get_learning_path(text, boolean, uuid) to anon, authenticated;

-- api.list_spark_links: unchanged but for `collate app.alphabetical` on its title/name sort keys.
create or replace function api.list_spark_links(spark text default null, type text default null, direction text default null, page integer default 1, per_page integer default 20, snapshot_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  snapshot uuid;
  anchor_snapshot uuid;
  anchor uuid;
  result jsonb;
begin
  if list_spark_links.type is not null and list_spark_links.type not in ('prerequisite', 'related', 'extends') then
    raise exception using errcode = '22023', message = 'type must be prerequisite, related or extends',
      detail = pg_catalog.jsonb_build_object('field', 'type', 'value', list_spark_links.type)::text;
  end if;
  if list_spark_links.direction is not null and list_spark_links.direction not in ('outgoing', 'incoming', 'both') then
    raise exception using errcode = '22023', message = 'direction must be outgoing, incoming or both',
      detail = pg_catalog.jsonb_build_object('field', 'direction', 'value', list_spark_links.direction)::text;
  end if;
  if list_spark_links.direction is not null and list_spark_links.spark is null then
    raise exception using errcode = '22023', message = 'direction needs a spark',
      detail = pg_catalog.jsonb_build_object('field', 'direction')::text;
  end if;
  if list_spark_links.page is null or list_spark_links.page < 1 then
    raise exception using errcode = '22023', message = 'page must be at least 1',
      detail = pg_catalog.jsonb_build_object('field', 'page')::text;
  end if;
  if list_spark_links.per_page is null or list_spark_links.per_page not between 1 and 100 then
    raise exception using errcode = '22023', message = 'per_page must be between 1 and 100',
      detail = pg_catalog.jsonb_build_object('field', 'per_page')::text;
  end if;

  snapshot := private.resolve_snapshot_id(list_spark_links.snapshot_id);
  if list_spark_links.spark is not null then
    select f.snapshot_id, f.id into anchor_snapshot, anchor from private.find_spark(list_spark_links.spark, snapshot) f;
    if anchor is null then
      raise exception using errcode = 'P0002', message = 'spark not found',
        detail = pg_catalog.jsonb_build_object('spark', list_spark_links.spark)::text;
    end if;
    snapshot := anchor_snapshot;
  end if;

  with links as (
    -- outgoing: the primary key (snapshot_id, source_id, ...) serves it
    select l.* from app.spark_links l
    where anchor is not null and coalesce(list_spark_links.direction, 'both') in ('outgoing', 'both')
      and l.snapshot_id = snapshot and l.source_id = anchor
    union all
    -- incoming: spark_links_target (snapshot_id, target_id, source_id) serves it
    select l.* from app.spark_links l
    where anchor is not null and coalesce(list_spark_links.direction, 'both') in ('incoming', 'both')
      and l.snapshot_id = snapshot and l.target_id = anchor
    union all
    select l.* from app.spark_links l
    where anchor is null and (snapshot is null or l.snapshot_id = snapshot)
  ),
  filtered as (
    select l.* from links l
    where list_spark_links.type is null or l.type = list_spark_links.type
  ),
  described as (
    select f.snapshot_id, f.type, f.weight,
           src.id as source_id, src.slug as source_slug, src.title as source_title,
           dst.id as target_id, dst.slug as target_slug, dst.title as target_title
    from filtered f
    join app.sparks src on src.snapshot_id = f.snapshot_id and src.id = f.source_id
    join app.sparks dst on dst.snapshot_id = f.snapshot_id and dst.id = f.target_id
  ),
  page_rows as (
    select d.*, pg_catalog.row_number() over (
             order by pg_catalog.lower(d.source_title) collate app.alphabetical, pg_catalog.lower(d.target_title) collate app.alphabetical, d.type,
                      d.source_id, d.target_id, d.snapshot_id) as position
    from described d
    order by position
    offset (list_spark_links.page - 1) * list_spark_links.per_page
    limit list_spark_links.per_page
  ),
  total as (select pg_catalog.count(*)::integer as n from filtered)
  select pg_catalog.jsonb_build_object(
    'data', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'source', pg_catalog.jsonb_build_object('id', p.source_id, 'slug', p.source_slug, 'title', p.source_title),
               'target', pg_catalog.jsonb_build_object('id', p.target_id, 'slug', p.target_slug, 'title', p.target_title),
               'type', p.type,
               'weight', p.weight::double precision)
             order by p.position)
      from page_rows p), '[]'::jsonb),
    'meta', pg_catalog.jsonb_build_object(
      'total', t.n,
      'page', list_spark_links.page,
      'per_page', list_spark_links.per_page,
      'total_pages', (t.n + list_spark_links.per_page - 1) / list_spark_links.per_page,
      'has_next', list_spark_links.page * list_spark_links.per_page < t.n,
      'has_prev', list_spark_links.page > 1)
  ) into result
  from total t;
  return result;
end
$$;
comment on function api.list_spark_links(text, text, text, integer, integer, uuid) is
  'Paginated spark relationships. Params: spark (slug), type (prerequisite|related|extends), direction (outgoing|incoming|both, needs spark), page, per_page (max 100), snapshot_id. Returns {data:[{source:{id,slug,title},target:{id,slug,title},type,weight}], meta}. Errors: 22023 invalid parameter, P0002 unknown spark/snapshot.';
revoke all on function api.list_spark_links(text, text, text, integer, integer, uuid) from public;
grant execute on function api.list_spark_links(text, text, text, integer, integer, uuid) to anon, authenticated;
