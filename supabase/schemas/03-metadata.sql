-- The alphabetical collation and the metadata enumerations. (The schemas are created in
-- 02-callers.sql.)

-- The spec's "sorted alphabetically" is a reader's alphabet, not byte order: case-insensitive
-- ("How Transformers Work" before "HTTP Fundamentals", "apis" among the A's) and accent-aware
-- ("Éclairs" among the E's). ICU's root locale gives exactly that (case and accents only break
-- ties), and it exists wherever PostgreSQL is built with ICU (15 and 18, Supabase included); a
-- named collation keeps the choice in one place. Deterministic (the default), so equality,
-- LIKE and btree indexes behave as with any collation. Every title and name ordering (content
-- indexes, discovery, domains, graph) uses it, so it is created before the tables.
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

-- The metadata enumerations: the single definition of difficulty levels, journey statuses and
-- learning verbs, referenced by foreign keys. Their rows are data: a schema diff does not carry
-- them, so changing one needs a hand-written migration too.

create table app.difficulty_levels (
  value text primary key,
  label text not null,
  sort_order integer not null unique check (sort_order > 0)
);
comment on table app.difficulty_levels is
  'The spec''s difficulty levels (value, label, sort order), as GET /metadata/difficulty-levels lists them.';
alter table app.difficulty_levels enable row level security;
create policy "anyone reads difficulty levels" on app.difficulty_levels
  for select to anon, authenticated
  using (true);
grant select on app.difficulty_levels to anon, authenticated;
insert into app.difficulty_levels (value, label, sort_order) values
  ('beginner', 'Beginner', 1),
  ('intermediate', 'Intermediate', 2),
  ('advanced', 'Advanced', 3),
  ('expert', 'Expert', 4);

create table app.journey_statuses (
  value text primary key,
  label text not null,
  sort_order integer not null unique check (sort_order > 0)
);
comment on table app.journey_statuses is
  'The spec''s journey statuses (value, label, sort order), as GET /metadata lists them.';
alter table app.journey_statuses enable row level security;
create policy "anyone reads journey statuses" on app.journey_statuses
  for select to anon, authenticated
  using (true);
grant select on app.journey_statuses to anon, authenticated;
-- The spec's journey_statuses enumeration (in_progress, completed, paused). The derived
-- enrollment status additionally uses not_started; see the journeys functions.
insert into app.journey_statuses (value, label, sort_order) values
  ('in_progress', 'In progress', 1),
  ('completed', 'Completed', 2),
  ('paused', 'Paused', 3);

create table app.learning_verbs (
  value text primary key,
  label text not null,
  sort_order integer not null unique check (sort_order > 0)
);
comment on table app.learning_verbs is
  'The learning event verbs (value, label, sort order), as GET /metadata lists them.';
alter table app.learning_verbs enable row level security;
create policy "anyone reads learning verbs" on app.learning_verbs
  for select to anon, authenticated
  using (true);
grant select on app.learning_verbs to anon, authenticated;
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
create or replace function api.get_metadata()
returns jsonb
language sql
stable
set search_path = ''
as $$
  select private.authorize('get_metadata');
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
grant execute on function api.get_metadata() to anon, authenticated, service_role;

-- api.list_difficulty_levels
-- Purpose: the difficulty levels in order.
-- Params:  none.
-- Returns: {data: [{value,label,order}]}.
-- Errors:  none.
create or replace function api.list_difficulty_levels()
returns jsonb
language sql
stable
set search_path = ''
as $$
  select private.authorize('list_difficulty_levels');
  select pg_catalog.jsonb_build_object('data', coalesce(pg_catalog.jsonb_agg(
    pg_catalog.jsonb_build_object('value', d.value, 'label', d.label, 'order', d.sort_order)
    order by d.sort_order), '[]'::jsonb))
  from app.difficulty_levels d
$$;
comment on function api.list_difficulty_levels() is
  'Difficulty levels in order. No params. Returns {data: [{value,label,order}]}. No errors.';
grant execute on function api.list_difficulty_levels() to anon, authenticated, service_role;
