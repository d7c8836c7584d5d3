-- api.get_session and private.sign_out read a token's subject and session id with
-- private.uuid_or_null (the one uuid-shape check) instead of their own copies of its pattern.
-- Same answers: the pattern was the same, only spelled with A-F instead of case-insensitively.
set check_function_bodies = off;

CREATE OR REPLACE FUNCTION api.get_session()
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
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
$function$
;

CREATE OR REPLACE FUNCTION private.sign_out(claims jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
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
$function$
;
