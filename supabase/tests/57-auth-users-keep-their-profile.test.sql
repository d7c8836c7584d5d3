-- The profile of a Supabase Auth user follows its auth.users row (private.sync_auth_user): created
-- at sign-up with the same id, the provider and the last login recorded, its name, email and
-- avatar kept up to date, deleted with the user; the custom access token hook then reads it.
-- auth.users exists only where Supabase Auth runs: here a GoTrue-shaped table is created inside
-- this transaction when the database has none, and the trigger attached as the migrations do.
begin;
select plan(15);

-- The columns the trigger reads, as GoTrue declares them; a GoTrue-made table has more.
create table if not exists auth.users (
  id uuid primary key,
  email varchar(255),
  phone text unique default null,
  raw_app_meta_data jsonb,
  raw_user_meta_data jsonb,
  created_at timestamptz,
  last_sign_in_at timestamptz
);

select ok(private.attach_auth_users_trigger(), 'the trigger is attached where auth.users exists');
select is((select count(*)::int from pg_catalog.pg_trigger t where t.tgrelid = 'auth.users'::regclass and t.tgname = 'sparkpath_sync_profile'), 1,
  'attaching it again keeps one trigger');

-- Supabase Auth signs a GitHub user up, writing the row as supabase_auth_admin (which owns
-- auth.users on Supabase and holds nothing in app).
grant usage on schema auth to supabase_auth_admin;
grant insert, update, delete on auth.users to supabase_auth_admin;
set local role supabase_auth_admin;
insert into auth.users (id, email, raw_app_meta_data, raw_user_meta_data, created_at, last_sign_in_at)
values ('0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b', 'Grace@Example.com',
        '{"provider": "github", "providers": ["github"]}',
        '{"full_name": "Grace Hopper", "user_name": "ghopper", "avatar_url": "https://avatars.example.com/g.png"}',
        now(), null);
reset role;

select results_eq(
  $$ select id, provider, provider_user_id, email, display_name, avatar_url, user_role, subscription_plan, last_login_provider
     from app.users where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b' $$,
  $$ values ('0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b'::uuid, 'github', '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b', 'grace@example.com',
             'Grace Hopper', 'https://avatars.example.com/g.png', 'learner', 'free', 'github') $$,
  'sign-up creates the profile with the same id, the provider, a lower-case email, the name and avatar, as a learner on the free plan');
select is((select pg_catalog.array_agg(e.event_type) from app.outbox_events e where e.aggregate_id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b'),
  array['identity.user_registered'], 'sign-up writes identity.user_registered');

-- Supabase Auth records the sign-in (the PKCE exchange) and refreshes the provider's metadata.
update auth.users set last_sign_in_at = '2026-11-20 10:00:00+00',
  raw_user_meta_data = raw_user_meta_data || '{"full_name": "Grace B. Hopper"}'
where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b';
select results_eq(
  $$ select display_name, last_login_at from app.users where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b' $$,
  $$ values ('Grace B. Hopper', '2026-11-20 10:00:00+00'::timestamptz) $$,
  'a sign-in records the last login and the name the provider now gives');
select is((select pg_catalog.array_agg(e.event_type order by e.id) from app.outbox_events e where e.aggregate_id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b'),
  array['identity.user_registered', 'identity.user_authenticated'], 'a sign-in writes identity.user_authenticated');

update auth.users set raw_user_meta_data = raw_user_meta_data - 'full_name' - 'user_name' - 'avatar_url'
where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b';
select results_eq(
  $$ select display_name, avatar_url, last_login_at from app.users where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b' $$,
  $$ values ('Grace B. Hopper', 'https://avatars.example.com/g.png', '2026-11-20 10:00:00+00'::timestamptz) $$,
  'metadata without a name or avatar keeps the ones the profile has, and no sign-in is recorded');
select is((select count(*)::int from app.outbox_events e where e.aggregate_id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b'), 2,
  'an update that is not a sign-in writes no event');

-- An admin promotes her; the hook reads the profile for her next token.
update app.users set user_role = 'admin' where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b';
select is(private.custom_access_token_hook('{"user_id": "0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b", "claims": {"sub": "0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b"}, "authentication_method": "oauth"}')
          -> 'claims' ->> 'user_role', 'admin',
  'the hook gives the profile''s role to the user''s next token');

-- Google names the picture differently; email sign-ups name no provider of ours.
insert into auth.users (id, email, raw_app_meta_data, raw_user_meta_data, created_at)
values ('1c7b4a6f-2d3e-4f90-8b1c-2d3e4f5a6b7c', 'alan@example.com', '{"provider": "google"}', '{"name": "Alan Turing", "picture": "https://lh3.example.com/a"}', now()),
       ('2d8c5b7a-3e4f-4a01-9c2d-3e4f5a6b7c8d', 'kate@example.com', '{"provider": "email"}', '{}', now()),
       ('3e9d6c8b-4f5a-4b12-8d3e-4f5a6b7c8d9e', 'odd@example.com', '{"provider": "Not A Name!"}', '{}', now());
select results_eq(
  $$ select provider, display_name, avatar_url from app.users
     where id in ('1c7b4a6f-2d3e-4f90-8b1c-2d3e4f5a6b7c', '2d8c5b7a-3e4f-4a01-9c2d-3e4f5a6b7c8d', '3e9d6c8b-4f5a-4b12-8d3e-4f5a6b7c8d9e')
     order by email $$,
  $$ values ('google', 'Alan Turing', 'https://lh3.example.com/a'), ('email', '', null), ('supabase', '', null) $$,
  'Google''s name and picture are read, email sign-ups are recorded as email, an unreadable provider as supabase');

-- A phone sign-up has no email: no profile, and the sign-up itself still succeeds.
select lives_ok($$ insert into auth.users (id, phone, raw_app_meta_data, created_at)
                   values ('4fae7d9c-5a6b-4c23-9e4f-5a6b7c8d9e0f', '15555550100', '{"provider": "phone"}', now()) $$,
  'a sign-up without an email succeeds');
select is_empty($$ select 1 from app.users where id = '4fae7d9c-5a6b-4c23-9e4f-5a6b7c8d9e0f' $$,
  'a user without an email gets no profile');

-- Deleting the user (dashboard, admin API) deletes the profile and its sessions here.
insert into app.sessions (user_id, provider, access_expires_at, idle_timeout_seconds, expires_at)
values ('0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b', 'github', now() + interval '1 hour', 3600, now() + interval '1 day');
delete from auth.users where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b';
select is_empty($$ select 1 from app.users where id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b' $$,
  'deleting the user deletes the profile');
select is_empty($$ select 1 from app.sessions where user_id = '0b6a3f5e-1c2d-4e8f-9a0b-1c2d3e4f5a6b' $$,
  'and the sessions it had here');

select is((select count(*)::int from app.users u
           where u.id in ('1c7b4a6f-2d3e-4f90-8b1c-2d3e4f5a6b7c', '2d8c5b7a-3e4f-4a01-9c2d-3e4f5a6b7c8d', '3e9d6c8b-4f5a-4b12-8d3e-4f5a6b7c8d9e')), 3,
  'every other Supabase Auth user still has its profile');

select * from finish();
rollback;
