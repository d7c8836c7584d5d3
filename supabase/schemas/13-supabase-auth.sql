-- Supabase Auth: the custom access token hook and the profile of each auth.users row.
--
-- On a Supabase project, Supabase Auth (GoTrue) can own sign-in (AUTH_PROVIDER=supabase, or any
-- client signing in with supabase-js): it writes auth.users and signs the access tokens. Two
-- pieces join it to this schema:
--   * private.custom_access_token_hook: Supabase Auth calls it, as supabase_auth_admin, before it
--     signs every access token (config.toml [auth.hook.custom_access_token]); it adds the claims
--     that decide the caller's role, from app.users, as this API's own tokens carry them;
--   * private.sync_auth_user: a trigger on auth.users that keeps the app.users profile of each
--     Supabase Auth user (created at sign-up, with the same id; last login recorded; deleted
--     with the user), as Supabase's "managing user data" guide does.
-- auth.users exists only where Supabase Auth runs: private.attach_auth_users_trigger() attaches
-- the trigger when the table is there and does nothing elsewhere.

-- private.custom_access_token_hook
-- Purpose: Supabase Auth's custom access token hook (a Postgres function hook).
-- Params:  event, as Supabase Auth sends it: {user_id, claims, authentication_method}; claims are
--          the token's (iss, aud, exp, iat, sub, email, phone, role, aal, amr, session_id,
--          is_anonymous, app_metadata, user_metadata).
-- Returns: {claims}: the same claims plus user_role and subscription_plan of the user's profile
--          (private.role_claims). A user without a profile keeps the claims unchanged, which the
--          API and the database read as learner on the free plan.
-- Errors:  none of its own (Supabase Auth always sends a uuid user_id).
create or replace function private.custom_access_token_hook(event jsonb)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('claims',
    coalesce(custom_access_token_hook.event -> 'claims', '{}'::jsonb)
    || coalesce((select private.role_claims(u) from app.users u
                 where u.id = (custom_access_token_hook.event ->> 'user_id')::uuid), '{}'::jsonb))
$$;
comment on function private.custom_access_token_hook(jsonb) is
  'Supabase Auth''s custom access token hook: returns {claims} with user_role and subscription_plan of the user''s profile added. Executable by supabase_auth_admin only.';
-- Supabase Auth reaches the hook through the schema; every other private function stays closed
-- to it (functions are granted one by one).
grant usage on schema private to supabase_auth_admin;
grant execute on function private.custom_access_token_hook(jsonb) to supabase_auth_admin;

-- private.sync_auth_user
-- Purpose: keeps the profile of a Supabase Auth user (trigger on auth.users, after each row).
--   insert → the profile, with the same id: provider = app_metadata.provider (a name that does not
--            look like one becomes 'supabase'), provider_user_id = the user id, email,
--            display_name = user_metadata full_name, name or user_name, avatar_url =
--            user_metadata avatar_url or picture, learner on the free plan; outbox
--            identity.user_registered.
--   update → email, name, avatar and last login follow; a new last_sign_in_at writes
--            identity.user_authenticated.
--   delete → the profile goes (its sessions here with it).
-- A user without a usable email (phone or anonymous sign-in) gets no profile: a failing trigger
-- would refuse the sign-up itself, and such a token still works as a learner on the free plan.
create or replace function private.sync_auth_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  provider text;
  display_name text;
  avatar_url text;
  created boolean;
begin
  if tg_op = 'DELETE' then
    delete from app.users u where u.id = old.id;
    return old;
  end if;
  if new.email is null or pg_catalog.length(new.email) not between 3 and 320 then
    return new;
  end if;
  provider := coalesce(pg_catalog.substring(new.raw_app_meta_data ->> 'provider', '^[a-z][a-z0-9_]{0,31}$'), 'supabase');
  display_name := pg_catalog.left(coalesce(new.raw_user_meta_data ->> 'full_name', new.raw_user_meta_data ->> 'name',
                                           new.raw_user_meta_data ->> 'user_name', ''), 200);
  avatar_url := coalesce(new.raw_user_meta_data ->> 'avatar_url', new.raw_user_meta_data ->> 'picture');
  if pg_catalog.length(avatar_url) > 2000 then
    avatar_url := null;
  end if;

  insert into app.users as u (id, provider, provider_user_id, email, display_name, avatar_url, created_at, last_login_at, last_login_provider)
  values (new.id, provider, new.id::text, pg_catalog.lower(new.email), display_name, avatar_url,
          pg_catalog.now(), coalesce(new.last_sign_in_at, pg_catalog.now()), provider)
  on conflict (id) do update
    set email = excluded.email,
        display_name = case when excluded.display_name = '' then u.display_name else excluded.display_name end,
        avatar_url = coalesce(excluded.avatar_url, u.avatar_url),
        last_login_at = coalesce(new.last_sign_in_at, u.last_login_at),
        last_login_provider = excluded.last_login_provider
  returning (u.xmax = 0) into created;

  if created then
    insert into app.outbox_events (event_type, aggregate_id, payload)
    values ('identity.user_registered', new.id,
            pg_catalog.jsonb_build_object('user_id', new.id, 'provider', provider, 'session_id', null, 'occurred_at', pg_catalog.now()));
  elsif new.last_sign_in_at is distinct from old.last_sign_in_at then
    insert into app.outbox_events (event_type, aggregate_id, payload)
    values ('identity.user_authenticated', new.id,
            pg_catalog.jsonb_build_object('user_id', new.id, 'provider', provider, 'session_id', null, 'occurred_at', pg_catalog.now()));
  end if;
  return new;
end
$$;
comment on function private.sync_auth_user() is
  'Trigger on auth.users: creates, updates and deletes the app.users profile of a Supabase Auth user (same id) and writes the identity outbox events.';

-- private.attach_auth_users_trigger
-- Purpose: attaches private.sync_auth_user to auth.users where Supabase Auth keeps its users;
--          run by the migrations, and by hand after Supabase Auth was installed later.
-- Returns: true when the trigger is attached, false when there is no auth.users table.
create or replace function private.attach_auth_users_trigger()
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  if pg_catalog.to_regclass('auth.users') is null then
    return false;
  end if;
  execute 'create or replace trigger sparkpath_sync_profile '
    'after insert or update of email, raw_app_meta_data, raw_user_meta_data, last_sign_in_at or delete on auth.users '
    'for each row execute function private.sync_auth_user()';
  return true;
end
$$;
comment on function private.attach_auth_users_trigger() is
  'Attaches private.sync_auth_user to auth.users when that table exists (Supabase); returns whether it did.';

select private.attach_auth_users_trigger();
