-- Schemas, the request dispatcher and the metadata enumerations.
--
--   app      tables; never exposed. Request roles reach rows only through RLS.
--   private  security-definer helpers and the dispatcher; never exposed.
--   api      the one exposed schema: security invoker functions only.

create schema if not exists app;
create schema if not exists private;
create schema if not exists api;

revoke all on schema app, private, api from public;
grant usage on schema api to anon, authenticated, service_role;
-- api functions are security invoker, so the request role needs to see the tables they read;
-- row-level security decides which rows.
grant usage on schema app to anon, authenticated;
grant usage on schema private to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Metadata enumerations: the single definition of difficulty levels, journey statuses and
-- learning verbs. Content and journey tables reference them by foreign key.
-- ---------------------------------------------------------------------------------------------

create table app.difficulty_levels (
  value text primary key,
  label text not null,
  sort_order integer not null unique check (sort_order > 0)
);
alter table app.difficulty_levels enable row level security;
create policy "anyone reads difficulty levels" on app.difficulty_levels
  for select to anon, authenticated using (true);
grant select on app.difficulty_levels to anon, authenticated;

create table app.journey_statuses (
  value text primary key,
  label text not null,
  sort_order integer not null unique check (sort_order > 0)
);
alter table app.journey_statuses enable row level security;
create policy "anyone reads journey statuses" on app.journey_statuses
  for select to anon, authenticated using (true);
grant select on app.journey_statuses to anon, authenticated;

create table app.learning_verbs (
  value text primary key,
  label text not null,
  sort_order integer not null unique check (sort_order > 0)
);
alter table app.learning_verbs enable row level security;
create policy "anyone reads learning verbs" on app.learning_verbs
  for select to anon, authenticated using (true);
grant select on app.learning_verbs to anon, authenticated;

insert into app.difficulty_levels (value, label, sort_order) values
  ('beginner', 'Beginner', 1),
  ('intermediate', 'Intermediate', 2),
  ('advanced', 'Advanced', 3),
  ('expert', 'Expert', 4);

-- The spec's journey_statuses enumeration (in_progress, completed, paused). The derived
-- enrollment status additionally uses not_started; see the journeys functions.
insert into app.journey_statuses (value, label, sort_order) values
  ('in_progress', 'In progress', 1),
  ('completed', 'Completed', 2),
  ('paused', 'Paused', 3);

insert into app.learning_verbs (value, label, sort_order) values
  ('started', 'Started', 1),
  ('completed', 'Completed', 2),
  ('mastered', 'Mastered', 3),
  ('bookmarked', 'Bookmarked', 4);

-- api.get_metadata
-- Purpose: every metadata enumeration in one document, in display order.
-- Params:  none.
-- Returns: {difficulty_levels: [{value,label,order}], journey_statuses: [{value,label}],
--           learning_verbs: [{value,label}]}.
-- Errors:  none.
create function api.get_metadata()
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'difficulty_levels', (
      select coalesce(pg_catalog.jsonb_agg(
        pg_catalog.jsonb_build_object('value', d.value, 'label', d.label, 'order', d.sort_order)
        order by d.sort_order), '[]'::jsonb)
      from app.difficulty_levels d),
    'journey_statuses', (
      select coalesce(pg_catalog.jsonb_agg(
        pg_catalog.jsonb_build_object('value', s.value, 'label', s.label)
        order by s.sort_order), '[]'::jsonb)
      from app.journey_statuses s),
    'learning_verbs', (
      select coalesce(pg_catalog.jsonb_agg(
        pg_catalog.jsonb_build_object('value', v.value, 'label', v.label)
        order by v.sort_order), '[]'::jsonb)
      from app.learning_verbs v)
  )
$$;
comment on function api.get_metadata() is
  'Every metadata enumeration (difficulty levels with order, journey statuses, learning verbs). No params. Returns {difficulty_levels, journey_statuses, learning_verbs}. No errors.';
grant execute on function api.get_metadata() to anon, authenticated;

-- api.list_difficulty_levels
-- Purpose: the difficulty levels in order.
-- Params:  none.
-- Returns: {data: [{value,label,order}]}.
-- Errors:  none.
create function api.list_difficulty_levels()
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('data', coalesce(pg_catalog.jsonb_agg(
    pg_catalog.jsonb_build_object('value', d.value, 'label', d.label, 'order', d.sort_order)
    order by d.sort_order), '[]'::jsonb))
  from app.difficulty_levels d
$$;
comment on function api.list_difficulty_levels() is
  'Difficulty levels in order. No params. Returns {data: [{value,label,order}]}. No errors.';
grant execute on function api.list_difficulty_levels() to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- The dispatcher: PostgREST's per-request contract in one statement.
--
-- PostgREST runs BEGIN; set_config('role'); set_config('request.jwt.claims'); call; COMMIT.
-- This function does the same in a single round trip: it sets both transaction-locally, then
-- runs the api call as the request role (security invoker, so RLS applies to that role).
--
-- Safety: `call` is SQL text, so nothing but the API's login role (the owner that runs the
-- migrations) may execute this, and it lives in `private`, which no API exposes. The caller
-- builds `call` from introspected api function names and parameter names only; request values
-- arrive in `args` and are read with `$1->>'name'`.
-- ---------------------------------------------------------------------------------------------
create function private.dispatch(request_role text, claims text, call text, args jsonb)
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
  perform pg_catalog.set_config('role', dispatch.request_role, true);

  execute 'select (' || dispatch.call || ')::text' into body using dispatch.args;
  return body;
end
$$;
comment on function private.dispatch(text, text, text, jsonb) is
  'Runs one api function as the request role with transaction-local JWT claims (the PostgREST contract) in one statement. Executable only by the API login role.';
revoke all on function private.dispatch(text, text, text, jsonb) from public, anon, authenticated, service_role;
