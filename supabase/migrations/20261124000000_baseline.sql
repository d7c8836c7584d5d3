-- Baseline: the whole schema as supabase/schemas declares it on 2026-11-24, replacing the 30
-- migrations written before the first release. It is the schema files concatenated in order
-- (01-platform.sql … 10-dispatch.sql) rather than a migra diff from an empty database, because
-- a diff cannot carry the platform shim's guarded role and extension setup, the enumerations'
-- rows, the function settings that depend on the server (enable_presorted_aggregate from
-- PostgreSQL 16, session_replication_role for a superuser), the authenticator's db-pre-request
-- setting, or comments. `npm test` checks that it gives exactly the catalog of supabase/schemas.
-- Later changes: edit supabase/schemas, then `npm run db:diff -- <name>`.
-- Edited in place once: those two settings were SET clauses of private.write_staged_content and
-- private.caller_journeys, which made this file fail on PostgreSQL 15 and for Supabase's
-- postgres (no superuser) before it changed anything; the DO blocks that replace them give the
-- same functions wherever it applied.

-- ==== supabase/schemas/01-platform.sql ====

-- The platform: make a vanilla PostgreSQL look like a Supabase project, and do nothing on one.
--
-- On Supabase the roles, the `extensions` schema and the `auth` helpers already exist and `auth`
-- belongs to another owner, so every step is guarded. This file comes first: everything else
-- grants to these roles and calls these helpers.
-- PostgREST's request roles. nologin: only the API's login role switches into them.
do $$
begin
  if not exists (select from pg_catalog.pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_catalog.pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_catalog.pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
end
$$;

-- The login role that runs migrations is the one the API connects with; it must be able to
-- `set role` into the request roles (PostgREST's authenticator does the same).
do $$
declare
  request_role text;
begin
  foreach request_role in array array['anon', 'authenticated', 'service_role'] loop
    if not pg_catalog.pg_has_role(current_user, request_role, 'member') then
      execute pg_catalog.format('grant %I to %I', request_role, current_user);
    end if;
  end loop;
end
$$;

create schema if not exists extensions;
grant usage on schema extensions to anon, authenticated, service_role;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists pg_trgm with schema extensions;
create extension if not exists unaccent with schema extensions;

-- Functions are private until granted: each object's grant sits right below it.
alter default privileges revoke execute on functions from public;

-- auth.uid(), auth.role(), auth.jwt() exactly as Supabase defines them, only where the
-- `auth` schema is ours to write (absent, or owned by the migrating role).
do $$
begin
  if not exists (select from pg_catalog.pg_namespace where nspname = 'auth') then
    execute 'create schema auth';
  end if;

  if (select pg_catalog.pg_get_userbyid(nspowner) from pg_catalog.pg_namespace where nspname = 'auth')
       is distinct from current_user then
    return;
  end if;

  grant usage on schema auth to anon, authenticated, service_role;

  if to_regprocedure('auth.uid()') is null then
    execute $fn$
      create function auth.uid() returns uuid
      language sql stable
      set search_path = ''
      as $body$
        select coalesce(
          nullif(current_setting('request.jwt.claim.sub', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
        )::uuid
      $body$
    $fn$;
    grant execute on function auth.uid() to anon, authenticated, service_role;
  end if;

  if to_regprocedure('auth.role()') is null then
    execute $fn$
      create function auth.role() returns text
      language sql stable
      set search_path = ''
      as $body$
        select coalesce(
          nullif(current_setting('request.jwt.claim.role', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
        )::text
      $body$
    $fn$;
    grant execute on function auth.role() to anon, authenticated, service_role;
  end if;

  if to_regprocedure('auth.jwt()') is null then
    execute $fn$
      create function auth.jwt() returns jsonb
      language sql stable
      set search_path = ''
      as $body$
        select coalesce(
          nullif(current_setting('request.jwt.claim', true), ''),
          nullif(current_setting('request.jwt.claims', true), '')
        )::jsonb
      $body$
    $fn$;
    grant execute on function auth.jwt() to anon, authenticated, service_role;
  end if;
end
$$;

-- ==== supabase/schemas/02-metadata.sql ====

-- Schemas, the alphabetical collation and the metadata enumerations.
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
create or replace function api.list_difficulty_levels()
returns jsonb
language sql
stable
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

-- ==== supabase/schemas/03-content.sql ====

-- Content: snapshots and the versioned catalog (categories, domains, trails, concepts, sparks,
-- links, beacons), which anyone reads, the snapshots api, and the rollups computed once per snapshot.

-- Request parameters and pagination, shared by every list of the api.

-- Raises 22023 naming the field when an integer parameter is outside [low, high].
create or replace function private.require_range(field text, value integer, low integer, high integer)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
  if require_range.value is null or require_range.value < require_range.low or require_range.value > require_range.high then
    raise exception using
      errcode = '22023',
      message = pg_catalog.format('%s must be an integer between %s and %s', require_range.field, require_range.low, require_range.high),
      detail = pg_catalog.jsonb_build_object('field', require_range.field, 'value', require_range.value,
                                             'min', require_range.low, 'max', require_range.high)::text;
  end if;
end
$$;
grant execute on function private.require_range(text,integer,integer,integer) to anon, authenticated;

-- Raises 22023 when a difficulty is not one of the metadata levels (null passes).
create or replace function private.require_difficulty(field text, value text)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
  if require_difficulty.value is not null
     and not exists (select 1 from app.difficulty_levels l where l.value = require_difficulty.value) then
    raise exception using
      errcode = '22023',
      message = pg_catalog.format('%s must be one of beginner, intermediate, advanced, expert', require_difficulty.field),
      detail = pg_catalog.jsonb_build_object('field', require_difficulty.field, 'value', require_difficulty.value)::text;
  end if;
end
$$;
grant execute on function private.require_difficulty(text,text) to anon, authenticated;

-- The six pagination fields.
create or replace function private.page_meta(total bigint, page integer, per_page integer)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'total', page_meta.total,
    'page', page_meta.page,
    'per_page', page_meta.per_page,
    'total_pages', (page_meta.total + page_meta.per_page - 1) / page_meta.per_page,
    'has_next', page_meta.page < (page_meta.total + page_meta.per_page - 1) / page_meta.per_page,
    'has_prev', page_meta.page > 1)
$$;
grant execute on function private.page_meta(bigint,integer,integer) to anon, authenticated;

-- private.search_normalize
-- Purpose: the one text normalisation of search: unaccent (pinned dictionary) and lower-case.
create or replace function private.search_normalize(value text)
returns text
language sql
immutable parallel safe
set search_path = ''
as $$
  select pg_catalog.lower(extensions.unaccent('extensions.unaccent'::regdictionary, coalesce(value, '')))
$$;
comment on function private.search_normalize(text) is
  'Search normalisation: unaccent with a pinned dictionary, then lower-case. Immutable so indexes can use it.';
grant execute on function private.search_normalize(text) to anon, authenticated;

-- private.search_document
-- Purpose: the weighted search document of one content row: title A, body B.
create or replace function private.search_document(title text, body text)
returns tsvector
language sql
immutable parallel safe
set search_path = ''
as $$
  select pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, private.search_normalize(search_document.title)), 'A')
      || pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, private.search_normalize(search_document.body)), 'B')
$$;
comment on function private.search_document(text,text) is
  'Weighted english tsvector of a content row: title at weight A, summary/description at weight B.';
grant execute on function private.search_document(text,text) to anon, authenticated;

create table app.snapshots (
  id uuid default extensions.gen_random_uuid() primary key,
  name text not null check ((length(name) >= 1) and (length(name) <= 200)),
  version_label text not null check ((length(version_label) >= 1) and (length(version_label) <= 100)),
  description text default ''::text not null,
  status text not null check (status = any (array['draft'::text, 'published'::text, 'archived'::text])),
  created_at timestamp with time zone default now() not null,
  published_at timestamp with time zone,
  parent_snapshot_id uuid references app.snapshots (id),
  constraint snapshots_check check ((status = 'draft'::text) = (published_at is null))
);
alter table app.snapshots enable row level security;
create policy "anyone reads snapshots" on app.snapshots
  for select to anon, authenticated
  using (true);
grant select on app.snapshots to anon, authenticated;

-- The published snapshot is the current one; at most one at any moment, also under concurrent
-- promotes (the second promote waits on this index and then fails or re-checks).
create unique index snapshots_one_current on app.snapshots ((true)) where (status = 'published'::text);

create index snapshots_status_created on app.snapshots (status, created_at desc);

create index snapshots_parent on app.snapshots (parent_snapshot_id);

create table app.categories (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  slug text not null,
  name text not null,
  constraint categories_pkey primary key (snapshot_id, id),
  constraint categories_snapshot_id_slug_key unique (snapshot_id, slug)
);
alter table app.categories enable row level security;
create policy "anyone reads categories" on app.categories
  for select to anon, authenticated
  using (true);
grant select on app.categories to anon, authenticated;

create table app.domains (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  slug text not null,
  name text not null,
  description text default ''::text not null,
  icon text default ''::text not null,
  color text default '#6B7280'::text not null check (color ~ '^#[0-9A-Fa-f]{6}$'::text),
  is_published boolean default true not null,
  category_id uuid,
  learning_outcomes text[] default '{}'::text[] not null,
  search_vector tsvector generated always as (private.search_document(name, description)) stored,
  search_title text generated always as (private.search_normalize(name)) stored,
  constraint domains_pkey primary key (snapshot_id, id),
  constraint domains_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint domains_snapshot_id_category_id_fkey foreign key (snapshot_id, category_id) references app.categories (snapshot_id, id)
);
alter table app.domains enable row level security;
create policy "anyone reads domains" on app.domains
  for select to anon, authenticated
  using (true);
grant select on app.domains to anon, authenticated;

create index domains_category on app.domains (snapshot_id, category_id);

-- In the order the lists use (an index serves an ORDER BY only in its own collation).
create index domains_name on app.domains (snapshot_id, name collate app.alphabetical, id);

create table app.trails (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  domain_id uuid not null,
  slug text not null,
  title text not null,
  description text default ''::text not null,
  difficulty_level text references app.difficulty_levels (value),
  order_index integer default 0 not null,
  search_vector tsvector generated always as (private.search_document(title, description)) stored,
  search_title text generated always as (private.search_normalize(title)) stored,
  constraint trails_pkey primary key (snapshot_id, id),
  constraint trails_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint trails_snapshot_id_domain_id_fkey foreign key (snapshot_id, domain_id) references app.domains (snapshot_id, id)
);
alter table app.trails enable row level security;
create policy "anyone reads trails" on app.trails
  for select to anon, authenticated
  using (true);
grant select on app.trails to anon, authenticated;

create index trails_domain on app.trails (snapshot_id, domain_id, order_index);

create index trails_title on app.trails (snapshot_id, title collate app.alphabetical, id);

create table app.concepts (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  trail_id uuid not null,
  slug text not null,
  title text not null,
  description text default ''::text not null,
  order_index integer default 0 not null,
  search_vector tsvector generated always as (private.search_document(title, description)) stored,
  search_title text generated always as (private.search_normalize(title)) stored,
  constraint concepts_pkey primary key (snapshot_id, id),
  constraint concepts_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint concepts_snapshot_id_trail_id_fkey foreign key (snapshot_id, trail_id) references app.trails (snapshot_id, id)
);
alter table app.concepts enable row level security;
create policy "anyone reads concepts" on app.concepts
  for select to anon, authenticated
  using (true);
grant select on app.concepts to anon, authenticated;

create index concepts_trail on app.concepts (snapshot_id, trail_id, order_index);

create index concepts_title on app.concepts (snapshot_id, title collate app.alphabetical, id);

create table app.sparks (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  slug text not null,
  title text not null,
  summary text default ''::text not null,
  difficulty text not null references app.difficulty_levels (value),
  estimated_mins integer not null check ((estimated_mins >= 1) and (estimated_mins <= 600)),
  search_vector tsvector generated always as (private.search_document(title, summary)) stored,
  search_title text generated always as (private.search_normalize(title)) stored,
  constraint sparks_pkey primary key (snapshot_id, id),
  constraint sparks_snapshot_id_slug_key unique (snapshot_id, slug)
);
alter table app.sparks enable row level security;
create policy "anyone reads sparks" on app.sparks
  for select to anon, authenticated
  using (true);
grant select on app.sparks to anon, authenticated;

create index sparks_title on app.sparks (snapshot_id, title collate app.alphabetical, id);

-- A spark may appear in several concepts; its position inside a concept is order_index.
create table app.concept_sparks (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  concept_id uuid not null,
  spark_id uuid not null,
  order_index integer default 0 not null,
  constraint concept_sparks_pkey primary key (snapshot_id, concept_id, spark_id),
  constraint concept_sparks_snapshot_id_concept_id_fkey foreign key (snapshot_id, concept_id) references app.concepts (snapshot_id, id),
  constraint concept_sparks_snapshot_id_spark_id_fkey foreign key (snapshot_id, spark_id) references app.sparks (snapshot_id, id)
);
alter table app.concept_sparks enable row level security;
create policy "anyone reads concept sparks" on app.concept_sparks
  for select to anon, authenticated
  using (true);
grant select on app.concept_sparks to anon, authenticated;

create index concept_sparks_spark on app.concept_sparks (snapshot_id, spark_id);

-- Edge source -> target reads "source comes before target": for type `prerequisite`, the
-- source must be known first. Indexed in both directions so traversal cost follows the
-- visited subgraph.
create table app.spark_links (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  source_id uuid not null,
  target_id uuid not null,
  type text not null check (type = any (array['prerequisite'::text, 'related'::text, 'extends'::text])),
  weight numeric(6,3) default 1 not null check (weight > (0)::numeric),
  constraint spark_links_pkey primary key (snapshot_id, source_id, target_id, type),
  constraint spark_links_snapshot_id_source_id_fkey foreign key (snapshot_id, source_id) references app.sparks (snapshot_id, id),
  constraint spark_links_snapshot_id_target_id_fkey foreign key (snapshot_id, target_id) references app.sparks (snapshot_id, id),
  constraint spark_links_check check (source_id <> target_id)
);
alter table app.spark_links enable row level security;
create policy "anyone reads spark links" on app.spark_links
  for select to anon, authenticated
  using (true);
grant select on app.spark_links to anon, authenticated;

create index spark_links_target on app.spark_links (snapshot_id, target_id, source_id);

create table app.concept_links (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  source_id uuid not null,
  target_id uuid not null,
  type text not null check (type = any (array['prerequisite'::text, 'related'::text, 'extends'::text])),
  weight numeric(6,3) default 1 not null check (weight > (0)::numeric),
  constraint concept_links_pkey primary key (snapshot_id, source_id, target_id, type),
  constraint concept_links_snapshot_id_source_id_fkey foreign key (snapshot_id, source_id) references app.concepts (snapshot_id, id),
  constraint concept_links_snapshot_id_target_id_fkey foreign key (snapshot_id, target_id) references app.concepts (snapshot_id, id),
  constraint concept_links_check check (source_id <> target_id)
);
alter table app.concept_links enable row level security;
create policy "anyone reads concept links" on app.concept_links
  for select to anon, authenticated
  using (true);
grant select on app.concept_links to anon, authenticated;

create index concept_links_target on app.concept_links (snapshot_id, target_id, source_id);

-- Beacons: milestones a learner can aim for inside a trail (e.g. "Build your first API"),
-- optionally pinned to the concept that unlocks them.
create table app.beacons (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  trail_id uuid not null,
  concept_id uuid,
  slug text not null,
  title text not null,
  description text default ''::text not null,
  constraint beacons_pkey primary key (snapshot_id, id),
  constraint beacons_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint beacons_snapshot_id_concept_id_fkey foreign key (snapshot_id, concept_id) references app.concepts (snapshot_id, id),
  constraint beacons_snapshot_id_trail_id_fkey foreign key (snapshot_id, trail_id) references app.trails (snapshot_id, id)
);
alter table app.beacons enable row level security;
create policy "anyone reads beacons" on app.beacons
  for select to anon, authenticated
  using (true);
grant select on app.beacons to anon, authenticated;

create index beacons_trail on app.beacons (snapshot_id, trail_id);

create index beacons_concept on app.beacons (snapshot_id, concept_id);

-- Content imports: one row per import attempt, successful or not.
create table app.content_imports (
  id uuid default extensions.gen_random_uuid() primary key,
  snapshot_id uuid references app.snapshots (id) on delete set null,
  status text not null check (status = any (array['running'::text, 'succeeded'::text, 'failed'::text])),
  counts jsonb default '{}'::jsonb not null,
  error jsonb,
  started_at timestamp with time zone default now() not null,
  finished_at timestamp with time zone,
  timings jsonb default '{}'::jsonb not null,
  name text,
  version_label text
);
alter table app.content_imports enable row level security;

create index content_imports_snapshot on app.content_imports (snapshot_id);

-- private.resolve_snapshot_id
-- Purpose: the snapshot selection rule shared by every content read.
-- Params:  requested, an explicit snapshot id or null.
-- Returns: the requested snapshot (draft and archived included); else the current (published)
--          one; else null, meaning "no snapshot filter" (nothing has been published yet).
-- Errors:  P0002 when an explicit id names no snapshot.
create or replace function private.resolve_snapshot_id(requested uuid)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  chosen uuid;
begin
  if resolve_snapshot_id.requested is not null then
    select s.id into chosen from app.snapshots s where s.id = resolve_snapshot_id.requested;
    if chosen is null then
      raise exception using
        errcode = 'P0002',
        message = 'snapshot not found',
        detail = pg_catalog.jsonb_build_object('snapshot_id', resolve_snapshot_id.requested)::text;
    end if;
    return chosen;
  end if;
  select s.id into chosen from app.snapshots s where s.status = 'published';
  return chosen;
end
$$;
comment on function private.resolve_snapshot_id(uuid) is
  'Snapshot selection: explicit id (any status) -> current -> null (no filter). Raises P0002 for an unknown explicit id.';
grant execute on function private.resolve_snapshot_id(uuid) to anon, authenticated;

-- api.list_snapshots
-- Purpose: the snapshots, newest first, one page at a time, optionally filtered by status.
-- Params:  page (1..100000, default 1), per_page (1..100, default 20), status (draft, published,
--          archived; null for all).
-- Returns: {data: [{id, name, version_label, description, status,
--           entity_counts: {domains, trails, concepts, sparks}, created_at, published_at}],
--           meta: {total, page, per_page, total_pages, has_next, has_prev}}.
-- Errors:  22023 when page, per_page or status is out of range.
create or replace function api.list_snapshots(page integer default 1, per_page integer default 20, status text default null::text)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  wanted_page constant integer := coalesce(list_snapshots.page, 1);
  wanted_size constant integer := coalesce(list_snapshots.per_page, 20);
  total bigint;
  page_rows jsonb;
begin
  perform private.require_range('page', wanted_page, 1, 100000);
  perform private.require_range('per_page', wanted_size, 1, 100);
  if list_snapshots.status is not null and list_snapshots.status not in ('draft', 'published', 'archived') then
    raise exception using errcode = '22023', message = 'status must be one of draft, published, archived',
      detail = pg_catalog.jsonb_build_object('field', 'status', 'value', list_snapshots.status)::text;
  end if;

  select pg_catalog.count(*) into total
  from app.snapshots s
  where list_snapshots.status is null or s.status = list_snapshots.status;

  select coalesce(pg_catalog.jsonb_agg(private.snapshot_json(p.id, false, false) order by p.created_at desc, p.id desc), '[]'::jsonb)
  into page_rows
  from (
    select s.id, s.created_at
    from app.snapshots s
    where list_snapshots.status is null or s.status = list_snapshots.status
    order by s.created_at desc, s.id desc
    limit wanted_size offset (wanted_page - 1)::bigint * wanted_size
  ) p;

  return pg_catalog.jsonb_build_object(
    'data', page_rows,
    'meta', private.page_meta(total, wanted_page, wanted_size));
end
$$;
comment on function api.list_snapshots(integer,integer,text) is
  'Snapshots newest first, paginated. Params: page (default 1), per_page (default 20, max 100), status (draft|published|archived). Returns {data, meta}. Errors: 22023 invalid page, per_page or status.';
grant execute on function api.list_snapshots(integer,integer,text) to anon, authenticated;

-- api.get_current_snapshot
-- Purpose: the current (published) snapshot.
-- Params:  none.
-- Returns: {id, name, version_label, description, status, entity_counts: {domains, trails,
--           concepts, sparks, beacons, concept_sparks, spark_links, concept_links},
--           created_at, published_at, parent_snapshot_id}.
-- Errors:  P0002 when no snapshot has been published.
create or replace function api.get_current_snapshot()
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  current_id uuid;
begin
  select s.id into current_id from app.snapshots s where s.status = 'published';
  if current_id is null then
    raise exception using errcode = 'P0002', message = 'No snapshot has been published yet';
  end if;
  return private.snapshot_json(current_id, true, true);
end
$$;
comment on function api.get_current_snapshot() is
  'The current (published) snapshot with all entity counts and parent_snapshot_id. No params. Errors: P0002 when none has been published.';
grant execute on function api.get_current_snapshot() to anon, authenticated;

-- api.get_snapshot
-- Purpose: one snapshot by id, whatever its status.
-- Params:  id (uuid).
-- Returns: {id, name, version_label, description, status, entity_counts: {domains, trails,
--           concepts, sparks}, created_at, published_at, parent_snapshot_id}.
-- Errors:  P0002 unknown id.
create or replace function api.get_snapshot(id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  body jsonb;
begin
  body := private.snapshot_json(get_snapshot.id, true, false);
  if body is null then
    raise exception using errcode = 'P0002', message = 'Snapshot not found',
      detail = pg_catalog.jsonb_build_object('id', get_snapshot.id)::text;
  end if;
  return body;
end
$$;
comment on function api.get_snapshot(uuid) is
  'One snapshot by id (draft, published or archived) with parent_snapshot_id. Params: id. Errors: P0002 unknown id.';
grant execute on function api.get_snapshot(uuid) to anon, authenticated;

create table app.domain_rollups (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  domain_id uuid not null,
  trail_count integer not null,
  concept_count integer not null,
  spark_count integer not null,
  estimated_mins integer not null,
  constraint domain_rollups_pkey primary key (snapshot_id, domain_id)
);
alter table app.domain_rollups enable row level security;
create policy "anyone reads domain rollups" on app.domain_rollups
  for select to anon, authenticated
  using (true);
grant select on app.domain_rollups to anon, authenticated;

create table app.trail_rollups (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  concept_count integer not null,
  spark_count integer not null,
  estimated_mins integer not null,
  constraint trail_rollups_pkey primary key (snapshot_id, trail_id)
);
alter table app.trail_rollups enable row level security;
create policy "anyone reads trail rollups" on app.trail_rollups
  for select to anon, authenticated
  using (true);
grant select on app.trail_rollups to anon, authenticated;

create table app.concept_rollups (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  concept_id uuid not null,
  spark_count integer not null,
  estimated_mins integer not null,
  constraint concept_rollups_pkey primary key (snapshot_id, concept_id)
);
alter table app.concept_rollups enable row level security;
create policy "anyone reads concept rollups" on app.concept_rollups
  for select to anon, authenticated
  using (true);
grant select on app.concept_rollups to anon, authenticated;

-- Whole-snapshot figures: the unfiltered facet lists of /discovery/facets and /discovery/all
-- (private.discovery_facets with no filter), which list every trail of the snapshot.
create table app.snapshot_rollups (
  snapshot_id uuid primary key references app.snapshots (id) on delete cascade,
  facets jsonb not null,
  entity_counts jsonb
);
alter table app.snapshot_rollups enable row level security;
create policy "anyone reads snapshot rollups" on app.snapshot_rollups
  for select to anon, authenticated
  using (true);
grant select on app.snapshot_rollups to anon, authenticated;

-- private.refresh_content_rollups
-- Purpose: (re)computes the rollup rows of one snapshot from its content rows, set-based (one
--          aggregate per level; a 500,000-spark snapshot takes seconds). Called by the import in
--          the transaction that writes the content; idempotent. Also stores the snapshot's
--          unfiltered facets (app.snapshot_rollups, computed by private.discovery_facets).
-- Params:  snapshot_id.
-- Returns: {domains, trails, concepts}: the rollup rows written.
create or replace function private.refresh_content_rollups(snapshot_id uuid)
returns jsonb
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
declare
  sid constant uuid := refresh_content_rollups.snapshot_id;
  domains bigint;
  trails bigint;
  concepts bigint;
begin
  delete from app.domain_rollups r where r.snapshot_id = sid;
  delete from app.trail_rollups r where r.snapshot_id = sid;
  delete from app.concept_rollups r where r.snapshot_id = sid;
  delete from app.snapshot_rollups r where r.snapshot_id = sid;

  -- Placements with the minutes of their spark and their concept's trail and domain: the one
  -- pass over concept_sparks every level aggregates.
  create temporary table rollup_placements on commit drop as
  select c.trail_id, t.domain_id, cs.concept_id, cs.spark_id, sp.estimated_mins
  from app.concept_sparks cs
  join app.concepts c on c.snapshot_id = cs.snapshot_id and c.id = cs.concept_id
  join app.trails t on t.snapshot_id = c.snapshot_id and t.id = c.trail_id
  join app.sparks sp on sp.snapshot_id = cs.snapshot_id and sp.id = cs.spark_id
  where cs.snapshot_id = sid and c.snapshot_id = sid and t.snapshot_id = sid and sp.snapshot_id = sid;
  analyze pg_temp.rollup_placements;

  insert into app.concept_rollups (snapshot_id, concept_id, spark_count, estimated_mins)
  select sid, c.id, coalesce(p.n, 0), coalesce(p.m, 0)
  from app.concepts c
  left join (
    select rp.concept_id, pg_catalog.count(*)::integer as n, pg_catalog.sum(rp.estimated_mins)::integer as m
    from pg_temp.rollup_placements rp group by rp.concept_id
  ) p on p.concept_id = c.id
  where c.snapshot_id = sid;
  get diagnostics concepts = row_count;

  insert into app.trail_rollups (snapshot_id, trail_id, concept_count, spark_count, estimated_mins)
  select sid, t.id, coalesce(cc.n, 0), coalesce(p.n, 0), coalesce(p.m, 0)
  from app.trails t
  left join (
    select c.trail_id, pg_catalog.count(*)::integer as n
    from app.concepts c where c.snapshot_id = sid group by c.trail_id
  ) cc on cc.trail_id = t.id
  left join (
    -- distinct sparks of the trail
    select d.trail_id, pg_catalog.count(*)::integer as n, pg_catalog.sum(d.estimated_mins)::integer as m
    from (select distinct rp.trail_id, rp.spark_id, rp.estimated_mins from pg_temp.rollup_placements rp) d
    group by d.trail_id
  ) p on p.trail_id = t.id
  where t.snapshot_id = sid;
  get diagnostics trails = row_count;

  insert into app.domain_rollups (snapshot_id, domain_id, trail_count, concept_count, spark_count, estimated_mins)
  select sid, d.id, coalesce(tc.trails, 0), coalesce(tc.concepts, 0), coalesce(p.n, 0), coalesce(p.m, 0)
  from app.domains d
  left join (
    select t.domain_id, pg_catalog.count(*)::integer as trails, pg_catalog.sum(r.concept_count)::integer as concepts
    from app.trails t
    join app.trail_rollups r on r.snapshot_id = t.snapshot_id and r.trail_id = t.id
    where t.snapshot_id = sid
    group by t.domain_id
  ) tc on tc.domain_id = d.id
  left join (
    -- distinct sparks of the domain
    select x.domain_id, pg_catalog.count(*)::integer as n, pg_catalog.sum(x.estimated_mins)::integer as m
    from (select distinct rp.domain_id, rp.spark_id, rp.estimated_mins from pg_temp.rollup_placements rp) x
    group by x.domain_id
  ) p on p.domain_id = d.id
  where d.snapshot_id = sid;
  get diagnostics domains = row_count;

  drop table pg_temp.rollup_placements;

  -- The unfiltered facets, computed by the reader itself (from the trail rollups just written).
  insert into app.snapshot_rollups (snapshot_id, facets)
  values (sid, private.discovery_facets(sid, null, null, null, null, array[true, true, true]));
  return pg_catalog.jsonb_build_object('domains', domains, 'trails', trails, 'concepts', concepts);
end
$$;
comment on function private.refresh_content_rollups(uuid) is
  'Recomputes the domain/trail/concept rollups (counts and minutes) and the unfiltered facets of one snapshot from its content rows.';

-- private.snapshot_entity_counts
-- Purpose: every entity count of one snapshot, counted from the content tables.
-- Params:  snapshot_id.
-- Returns: {domains, trails, concepts, sparks, beacons, concept_sparks, spark_links, concept_links}.
-- Errors:  none.
create or replace function private.snapshot_entity_counts(snapshot_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'domains', (select pg_catalog.count(*) from app.domains x where x.snapshot_id = snapshot_entity_counts.snapshot_id),
    'trails', (select pg_catalog.count(*) from app.trails x where x.snapshot_id = snapshot_entity_counts.snapshot_id),
    'concepts', (select pg_catalog.count(*) from app.concepts x where x.snapshot_id = snapshot_entity_counts.snapshot_id),
    'sparks', (select pg_catalog.count(*) from app.sparks x where x.snapshot_id = snapshot_entity_counts.snapshot_id),
    'beacons', (select pg_catalog.count(*) from app.beacons x where x.snapshot_id = snapshot_entity_counts.snapshot_id),
    'concept_sparks', (select pg_catalog.count(*) from app.concept_sparks x where x.snapshot_id = snapshot_entity_counts.snapshot_id),
    'spark_links', (select pg_catalog.count(*) from app.spark_links x where x.snapshot_id = snapshot_entity_counts.snapshot_id),
    'concept_links', (select pg_catalog.count(*) from app.concept_links x where x.snapshot_id = snapshot_entity_counts.snapshot_id))
$$;
comment on function private.snapshot_entity_counts(uuid) is 'Every entity count of one snapshot, counted from the content tables.';
grant execute on function private.snapshot_entity_counts(uuid) to anon, authenticated;

create or replace function private.fill_snapshot_entity_counts()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.entity_counts := private.snapshot_entity_counts(new.snapshot_id);
  return new;
end
$$;
comment on function private.fill_snapshot_entity_counts() is
  'Trigger: (re)computes a snapshot''s entity counts whenever its rollup row is written.';

create trigger snapshot_rollups_entity_counts
  before insert or update on app.snapshot_rollups
  for each row execute function private.fill_snapshot_entity_counts();

-- private.snapshot_json: same output as before; counts come from the rollup row when present.
create or replace function private.snapshot_json(snapshot_id uuid, with_parent boolean, all_counts boolean)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
      'id', s.id,
      'name', s.name,
      'version_label', s.version_label,
      'description', s.description,
      'status', s.status,
      'entity_counts', case when snapshot_json.all_counts then c.counts
        else c.counts - array['beacons', 'concept_sparks', 'spark_links', 'concept_links'] end,
      'created_at', s.created_at,
      'published_at', s.published_at)
    || case when snapshot_json.with_parent
         then pg_catalog.jsonb_build_object('parent_snapshot_id', s.parent_snapshot_id) else '{}'::jsonb end
  from app.snapshots s
  cross join lateral (
    select coalesce(
      (select r.entity_counts from app.snapshot_rollups r where r.snapshot_id = s.id),
      private.snapshot_entity_counts(s.id)) as counts
  ) c
  where s.id = snapshot_json.snapshot_id
$$;
comment on function private.snapshot_json(uuid,boolean,boolean) is
  'One snapshot as the API shows it; entity counts from its rollup row (computed once at import), else counted live.';
grant execute on function private.snapshot_json(uuid,boolean,boolean) to anon, authenticated;

-- ==== supabase/schemas/04-lifecycle.sql ====

-- Content lifecycle: validating and importing bundles (staged, all or nothing), promote and
-- rollback. Called by the content CLI as the owner; nothing here is exposed.

-- private.content_entity_id
-- Purpose: the id an entity gets when the bundle omits it: an RFC 4122 version-3 UUID (md5) of
--          "<kind>:<slug>" in the Sparkpath namespace. Re-importing the same slug yields the
--          same id, so journeys and links keep pointing at it across snapshots.
-- Params:  kind (category, domain, trail, concept, spark, beacon), slug.
-- Returns: uuid.
create or replace function private.content_entity_id(kind text, slug text)
returns uuid
language sql
immutable parallel safe
set search_path = ''
as $$
  select (pg_catalog.substr(h, 1, 8) || '-' || pg_catalog.substr(h, 9, 4) || '-3' || pg_catalog.substr(h, 14, 3) || '-'
          || pg_catalog.substr('89ab', (pg_catalog.strpos('0123456789abcdef', pg_catalog.substr(h, 17, 1)) - 1) % 4 + 1, 1)
          || pg_catalog.substr(h, 18, 3) || '-' || pg_catalog.substr(h, 21, 12))::uuid
  from (select pg_catalog.md5(
          pg_catalog.decode('5b0a2f3e9c7d4e1a8f6b2c4d3e5f7a91', 'hex')
          || pg_catalog.convert_to(content_entity_id.kind || ':' || content_entity_id.slug, 'UTF8')) as h) digest
$$;
comment on function private.content_entity_id(text,text) is
  'Deterministic entity id: UUID v3 (md5) of "<kind>:<slug>" in namespace 5b0a2f3e-9c7d-4e1a-8f6b-2c4d3e5f7a91.';

-- Parses text as jsonb, or wraps it as {"detail": text} when it is not JSON.
create or replace function private.try_jsonb(value text)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  if try_jsonb.value is null or try_jsonb.value = '' then
    return null;
  end if;
  return try_jsonb.value::jsonb;
exception when others then
  return pg_catalog.jsonb_build_object('detail', try_jsonb.value);
end
$$;

-- private.begin_content_staging
-- Purpose: creates (or empties) the transaction's staging table pg_temp.content_bundle_items
--          (kind = top-level bundle key, position = array index or -1 for a non-array value,
--          item = the element). The CLI then COPYs into it; import_content_bundle fills it
--          from a jsonb document.
create or replace function private.begin_content_staging()
returns void
language plpgsql
set search_path = ''
as $$
begin
  if pg_catalog.to_regclass('pg_temp.content_bundle_items') is null then
    create temporary table content_bundle_items (
    kind text not null,
    position integer not null,
    item jsonb
  ) on commit drop;
  end if;
  truncate pg_temp.content_bundle_items;
end
$$;

-- private.validate_staged_content
-- Purpose: checks the staged bundle as a whole and lists EVERY problem by JSON path: types,
--          required fields, slug format, duplicate slugs and ids, unknown references,
--          difficulty values, colours, estimated_mins range, link types and weights,
--          prerequisite cycles (named). Also fills pg_temp.content_bundle_refs (kind, slug, id),
--          the slug -> id map the writer uses.
-- Params:  snapshot_name, snapshot_version_label: the chosen snapshot metadata (checked too).
-- Returns: jsonb array of {path, message[, cycle]} ordered by path; empty when valid.
create or replace function private.validate_staged_content(snapshot_name text, snapshot_version_label text)
returns jsonb
language plpgsql
set search_path = ''
set work_mem to '256MB'
as $$
declare
  cycle uuid[];
  link record;
  result jsonb;
begin
  if pg_catalog.to_regclass('pg_temp.content_bundle_problems') is null then
    create temporary table content_bundle_problems (
    kind text, position integer, path text, message text, extra jsonb
  ) on commit drop;
  end if;
  truncate pg_temp.content_bundle_problems;

  -- Snapshot metadata.
  if snapshot_name is null or pg_catalog.length(snapshot_name) not between 1 and 200 then
    insert into pg_temp.content_bundle_problems values
      ('snapshot', -1, '$.snapshot.name', 'is required (1 to 200 characters), in the bundle or as --name', null);
  end if;
  if snapshot_version_label is null or pg_catalog.length(snapshot_version_label) not between 1 and 100 then
    insert into pg_temp.content_bundle_problems values
      ('snapshot', -1, '$.snapshot.version_label', 'is required (1 to 100 characters), in the bundle or as --version-label', null);
  end if;

  -- Top-level keys.
  insert into pg_temp.content_bundle_problems
  select i.kind, i.position, case when i.kind = '$' then '$' else '$.' || i.kind end,
         case
           when i.kind = '$' then 'the bundle must be a JSON object'
           when i.kind not in ('$schema', 'snapshot', 'categories', 'domains', 'trails', 'concepts', 'sparks',
                               'beacons', 'spark_links', 'concept_links') then 'is not a bundle key'
           when i.kind = 'snapshot' and pg_catalog.jsonb_typeof(i.item) <> 'object' then 'must be an object'
           when i.kind = '$schema' and pg_catalog.jsonb_typeof(i.item) <> 'string' then 'must be a string'
           when i.kind not in ('snapshot', '$schema') then 'must be an array'
         end, null
  from pg_temp.content_bundle_items i
  where i.position = -1
    and (i.kind not in ('snapshot', '$schema')
         or (i.kind = 'snapshot' and pg_catalog.jsonb_typeof(i.item) <> 'object')
         or (i.kind = '$schema' and pg_catalog.jsonb_typeof(i.item) <> 'string'));
  insert into pg_temp.content_bundle_problems
  select 'snapshot', -1, '$.snapshot.' || k.key, 'is not a snapshot field', null
  from pg_temp.content_bundle_items i, pg_catalog.jsonb_object_keys(i.item) k(key)
  where i.kind = 'snapshot' and i.position = -1 and pg_catalog.jsonb_typeof(i.item) = 'object'
    and k.key not in ('name', 'version_label', 'description');

  -- Items that are not objects.
  insert into pg_temp.content_bundle_problems
  select i.kind, i.position, '$.' || i.kind || '[' || i.position || ']', 'must be an object', null
  from pg_temp.content_bundle_items i
  where i.position >= 0 and pg_catalog.jsonb_typeof(i.item) is distinct from 'object';

  -- Field rules: which fields each kind has, which are required, and their JSON types.
  if pg_catalog.to_regclass('pg_temp.content_bundle_rules') is null then
    create temporary table content_bundle_rules (
    kind text, field text, required boolean, json_type text
  ) on commit drop;
  end if;
  truncate pg_temp.content_bundle_rules;
  insert into pg_temp.content_bundle_rules values
    ('categories', 'id', false, 'string'), ('categories', 'slug', true, 'string'), ('categories', 'name', true, 'string'),
    ('domains', 'id', false, 'string'), ('domains', 'slug', true, 'string'), ('domains', 'name', true, 'string'),
    ('domains', 'description', false, 'string'), ('domains', 'icon', false, 'string'), ('domains', 'color', false, 'string'),
    ('domains', 'is_published', false, 'boolean'), ('domains', 'category', false, 'string'),
    ('domains', 'learning_outcomes', false, 'array'),
    ('trails', 'id', false, 'string'), ('trails', 'slug', true, 'string'), ('trails', 'domain', true, 'string'),
    ('trails', 'title', true, 'string'), ('trails', 'description', false, 'string'),
    ('trails', 'difficulty_level', false, 'string'), ('trails', 'order_index', false, 'number'),
    ('concepts', 'id', false, 'string'), ('concepts', 'slug', true, 'string'), ('concepts', 'trail', true, 'string'),
    ('concepts', 'title', true, 'string'), ('concepts', 'description', false, 'string'),
    ('concepts', 'order_index', false, 'number'), ('concepts', 'sparks', false, 'array'),
    ('sparks', 'id', false, 'string'), ('sparks', 'slug', true, 'string'), ('sparks', 'title', true, 'string'),
    ('sparks', 'summary', false, 'string'), ('sparks', 'difficulty', true, 'string'),
    ('sparks', 'estimated_mins', true, 'number'),
    ('beacons', 'id', false, 'string'), ('beacons', 'slug', true, 'string'), ('beacons', 'trail', true, 'string'),
    ('beacons', 'concept', false, 'string'), ('beacons', 'title', true, 'string'), ('beacons', 'description', false, 'string'),
    ('spark_links', 'source', true, 'string'), ('spark_links', 'target', true, 'string'),
    ('spark_links', 'type', false, 'string'), ('spark_links', 'weight', false, 'number'),
    ('concept_links', 'source', true, 'string'), ('concept_links', 'target', true, 'string'),
    ('concept_links', 'type', false, 'string'), ('concept_links', 'weight', false, 'number');

  -- Unknown fields (typos would otherwise be silently ignored). `item - allowed` is cheap; only
  -- items with leftovers have their keys expanded.
  insert into pg_temp.content_bundle_problems
  select i.kind, i.position, '$.' || i.kind || '[' || i.position || '].' || k.key, 'is not a field of ' || i.kind, null
  from pg_temp.content_bundle_items i
  join (select r.kind, pg_catalog.array_agg(r.field) as fields from pg_temp.content_bundle_rules r group by r.kind) a
    on a.kind = i.kind
  cross join lateral pg_catalog.jsonb_object_keys(i.item - a.fields) k(key)
  where i.position >= 0 and pg_catalog.jsonb_typeof(i.item) = 'object' and (i.item - a.fields) <> '{}'::jsonb;

  -- Required fields and JSON types (null is allowed for optional fields: it means the default).
  insert into pg_temp.content_bundle_problems
  select i.kind, i.position, '$.' || i.kind || '[' || i.position || '].' || r.field,
         case when coalesce(pg_catalog.jsonb_typeof(i.item -> r.field), 'null') = 'null' then 'is required'
              else 'must be ' || case r.json_type when 'array' then 'an array' when 'number' then 'a number'
                                                  else 'a ' || r.json_type end end, null
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_rules r on r.kind = i.kind
  where i.position >= 0 and pg_catalog.jsonb_typeof(i.item) = 'object'
    and ((r.required and coalesce(pg_catalog.jsonb_typeof(i.item -> r.field), 'null') = 'null')
         or coalesce(pg_catalog.jsonb_typeof(i.item -> r.field), 'null') not in ('null', r.json_type));

  -- Values of well-typed fields, each check only on the kinds it concerns.
  insert into pg_temp.content_bundle_problems
  select v.kind, v.position, '$.' || v.kind || '[' || v.position || '].' || v.field, v.message, null
  from (
    select i.kind, i.position, 'slug' as field,
           'must be a lowercase slug (letters, digits, single hyphens; at most 200 characters)' as message
    from pg_temp.content_bundle_items i
    where i.kind in ('categories', 'domains', 'trails', 'concepts', 'sparks', 'beacons') and i.position >= 0
      and pg_catalog.jsonb_typeof(i.item -> 'slug') = 'string'
      and (i.item ->> 'slug' !~ '^[a-z0-9]+(-[a-z0-9]+)*$' or pg_catalog.length(i.item ->> 'slug') > 200)
    union all
    select i.kind, i.position, 'id', 'must be a UUID'
    from pg_temp.content_bundle_items i
    where i.position >= 0 and pg_catalog.jsonb_typeof(i.item) = 'object' and i.item ? 'id'
      and pg_catalog.jsonb_typeof(i.item -> 'id') = 'string'
      and i.item ->> 'id' !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    union all
    select i.kind, i.position, f.field, 'must be 1 to 300 characters'
    from pg_temp.content_bundle_items i
    join (values ('categories', 'name'), ('domains', 'name'), ('trails', 'title'), ('concepts', 'title'),
                 ('sparks', 'title'), ('beacons', 'title')) f(kind, field) on f.kind = i.kind
    where i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> f.field) = 'string'
      and pg_catalog.length(pg_catalog.btrim(i.item ->> f.field)) not between 1 and 300
    union all
    select i.kind, i.position, 'color', 'must be a hex colour like #1A2B3C'
    from pg_temp.content_bundle_items i
    where i.kind = 'domains' and i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> 'color') = 'string'
      and i.item ->> 'color' !~ '^#[0-9A-Fa-f]{6}$'
    union all
    select i.kind, i.position, 'difficulty', 'must be one of beginner, intermediate, advanced, expert'
    from pg_temp.content_bundle_items i
    where i.kind = 'sparks' and i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> 'difficulty') = 'string'
      and i.item ->> 'difficulty' not in (select d.value from app.difficulty_levels d)
    union all
    select i.kind, i.position, 'difficulty_level', 'must be one of beginner, intermediate, advanced, expert, or null'
    from pg_temp.content_bundle_items i
    where i.kind = 'trails' and i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> 'difficulty_level') = 'string'
      and i.item ->> 'difficulty_level' not in (select d.value from app.difficulty_levels d)
    union all
    select i.kind, i.position, 'estimated_mins', 'must be a whole number of minutes from 1 to 600'
    from pg_temp.content_bundle_items i
    where i.kind = 'sparks' and i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> 'estimated_mins') = 'number'
      and ((i.item ->> 'estimated_mins')::numeric not between 1 and 600
           or (i.item ->> 'estimated_mins')::numeric <> pg_catalog.trunc((i.item ->> 'estimated_mins')::numeric))
    union all
    select i.kind, i.position, 'order_index', 'must be a whole number from 0 to 1000000'
    from pg_temp.content_bundle_items i
    where i.kind in ('trails', 'concepts') and i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> 'order_index') = 'number'
      and ((i.item ->> 'order_index')::numeric not between 0 and 1000000
           or (i.item ->> 'order_index')::numeric <> pg_catalog.trunc((i.item ->> 'order_index')::numeric))
    union all
    select i.kind, i.position, 'type', 'must be one of prerequisite, related, extends'
    from pg_temp.content_bundle_items i
    where i.kind in ('spark_links', 'concept_links') and i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> 'type') = 'string'
      and i.item ->> 'type' not in ('prerequisite', 'related', 'extends')
    union all
    select i.kind, i.position, 'weight', 'must be greater than 0 and below 1000'
    from pg_temp.content_bundle_items i
    where i.kind in ('spark_links', 'concept_links') and i.position >= 0 and pg_catalog.jsonb_typeof(i.item -> 'weight') = 'number'
      and (i.item ->> 'weight')::numeric not between 0.001 and 999.999
    union all
    select i.kind, i.position, 'target', 'must differ from source'
    from pg_temp.content_bundle_items i
    where i.kind in ('spark_links', 'concept_links') and i.position >= 0 and pg_catalog.jsonb_typeof(i.item) = 'object'
      and i.item ->> 'source' = i.item ->> 'target'
  ) v;

  -- learning_outcomes and concept sparks: arrays of strings.
  insert into pg_temp.content_bundle_problems
  select i.kind, i.position, '$.' || i.kind || '[' || i.position || '].' || f.field || '[' || (e.n - 1) || ']',
         'must be a string', null
  from pg_temp.content_bundle_items i
  cross join lateral (values ('learning_outcomes'), ('sparks')) f(field)
  cross join lateral pg_catalog.jsonb_array_elements(
    case when pg_catalog.jsonb_typeof(i.item -> f.field) = 'array' then i.item -> f.field else '[]'::jsonb end
  ) with ordinality e(value, n)
  where i.position >= 0 and pg_catalog.jsonb_typeof(i.item) = 'object'
    and ((i.kind = 'domains' and f.field = 'learning_outcomes') or (i.kind = 'concepts' and f.field = 'sparks'))
    and pg_catalog.jsonb_typeof(e.value) <> 'string';

  -- Entity ids: given, or derived from kind and slug.
  if pg_catalog.to_regclass('pg_temp.content_bundle_ids') is null then
    create temporary table content_bundle_ids (
    kind text, slug text, id uuid, position integer
  ) on commit drop;
  end if;
  truncate pg_temp.content_bundle_ids;
  insert into pg_temp.content_bundle_ids
  select i.kind, i.item ->> 'slug',
         case when pg_catalog.jsonb_typeof(i.item -> 'id') = 'string'
                   and i.item ->> 'id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
              then (i.item ->> 'id')::uuid
              else private.content_entity_id(
                case i.kind when 'categories' then 'category' else pg_catalog.rtrim(i.kind, 's') end, i.item ->> 'slug')
         end,
         i.position
  from pg_temp.content_bundle_items i
  where i.position >= 0 and i.kind in ('categories', 'domains', 'trails', 'concepts', 'sparks', 'beacons')
    and pg_catalog.jsonb_typeof(i.item) = 'object' and pg_catalog.jsonb_typeof(i.item -> 'slug') = 'string';

  -- Duplicate slugs and ids within a kind (the first occurrence is the one others are compared to).
  insert into pg_temp.content_bundle_problems
  select d.kind, d.position, '$.' || d.kind || '[' || d.position || '].slug',
         pg_catalog.format('duplicate slug %L (first at $.%s[%s])', d.slug, d.kind, d.first_position), null
  from (select x.*, pg_catalog.min(x.position) over (partition by x.kind, x.slug) as first_position
        from pg_temp.content_bundle_ids x) d
  where d.position <> d.first_position;
  insert into pg_temp.content_bundle_problems
  select d.kind, d.position, '$.' || d.kind || '[' || d.position || '].id',
         pg_catalog.format('duplicate id %s (also used by $.%s[%s])', d.id, d.kind, d.first_position), null
  from (select x.*, pg_catalog.min(x.position) over (partition by x.kind, x.id) as first_position,
               pg_catalog.min(x.position) over (partition by x.kind, x.slug) as first_slug_position
        from pg_temp.content_bundle_ids x) d
  where d.position <> d.first_position and d.position = d.first_slug_position;

  if pg_catalog.to_regclass('pg_temp.content_bundle_refs') is null then
    create temporary table content_bundle_refs (
    kind text, slug text, id uuid, position integer
  ) on commit drop;
  end if;
  truncate pg_temp.content_bundle_refs;
  insert into pg_temp.content_bundle_refs
  select distinct on (x.kind, x.slug) x.kind, x.slug, x.id, x.position
  from pg_temp.content_bundle_ids x
  order by x.kind, x.slug, x.position;
  if pg_catalog.to_regclass('pg_temp.content_bundle_refs_slug') is null then
    create unique index content_bundle_refs_slug on pg_temp.content_bundle_refs (kind, slug);
  end if;
  analyze pg_temp.content_bundle_refs;

  -- References by slug.
  insert into pg_temp.content_bundle_problems
  select i.kind, i.position, '$.' || i.kind || '[' || i.position || '].' || r.field,
         pg_catalog.format('unknown %s %L', r.label, i.item ->> r.field), null
  from pg_temp.content_bundle_items i
  join (values
    ('domains', 'category', 'categories', 'category'), ('trails', 'domain', 'domains', 'domain'),
    ('concepts', 'trail', 'trails', 'trail'), ('beacons', 'trail', 'trails', 'trail'),
    ('beacons', 'concept', 'concepts', 'concept'),
    ('spark_links', 'source', 'sparks', 'spark'), ('spark_links', 'target', 'sparks', 'spark'),
    ('concept_links', 'source', 'concepts', 'concept'), ('concept_links', 'target', 'concepts', 'concept')
  ) r(kind, field, target_kind, label) on r.kind = i.kind
  where i.position >= 0 and pg_catalog.jsonb_typeof(i.item) = 'object'
    and pg_catalog.jsonb_typeof(i.item -> r.field) = 'string'
    and not exists (select 1 from pg_temp.content_bundle_refs x
                    where x.kind = r.target_kind and x.slug = i.item ->> r.field);

  insert into pg_temp.content_bundle_problems
  select i.kind, i.position, '$.' || i.kind || '[' || i.position || '].sparks[' || (e.n - 1) || ']',
         case when x.slug is null then pg_catalog.format('unknown spark %L', e.value #>> '{}')
              else pg_catalog.format('spark %L is listed twice in this concept', e.value #>> '{}') end, null
  from pg_temp.content_bundle_items i
  cross join lateral pg_catalog.jsonb_array_elements(
    case when pg_catalog.jsonb_typeof(i.item -> 'sparks') = 'array' then i.item -> 'sparks' else '[]'::jsonb end
  ) with ordinality e(value, n)
  left join pg_temp.content_bundle_refs x on x.kind = 'sparks' and x.slug = e.value #>> '{}'
  where i.kind = 'concepts' and i.position >= 0 and pg_catalog.jsonb_typeof(e.value) = 'string'
    and (x.slug is null
         or exists (select 1 from pg_catalog.jsonb_array_elements(i.item -> 'sparks') with ordinality o(value, n)
                    where o.value = e.value and o.n < e.n));

  -- A beacon's concept must belong to the beacon's trail.
  insert into pg_temp.content_bundle_problems
  select b.kind, b.position, '$.' || b.kind || '[' || b.position || '].concept',
         pg_catalog.format('concept %L belongs to trail %L, not %L', b.item ->> 'concept', c.item ->> 'trail', b.item ->> 'trail'), null
  from pg_temp.content_bundle_items b
  join pg_temp.content_bundle_refs x on x.kind = 'concepts' and x.slug = b.item ->> 'concept'
  join pg_temp.content_bundle_items c on c.kind = 'concepts' and c.position = x.position
  where b.kind = 'beacons' and b.position >= 0 and pg_catalog.jsonb_typeof(b.item -> 'trail') = 'string'
    and c.item ->> 'trail' is distinct from b.item ->> 'trail';

  -- Duplicate links (same source, target and type).
  insert into pg_temp.content_bundle_problems
  select d.kind, d.position, '$.' || d.kind || '[' || d.position || ']',
         pg_catalog.format('duplicate %s link %L -> %L (first at $.%s[%s])', d.type, d.source, d.target, d.kind, d.first_position), null
  from (select i.kind, i.position, i.item ->> 'source' as source, i.item ->> 'target' as target,
               coalesce(i.item ->> 'type', 'prerequisite') as type,
               pg_catalog.min(i.position) over (
                 partition by i.kind, i.item ->> 'source', i.item ->> 'target', coalesce(i.item ->> 'type', 'prerequisite')) as first_position
        from pg_temp.content_bundle_items i
        where i.kind in ('spark_links', 'concept_links') and i.position >= 0 and pg_catalog.jsonb_typeof(i.item) = 'object'
          and pg_catalog.jsonb_typeof(i.item -> 'source') = 'string' and pg_catalog.jsonb_typeof(i.item -> 'target') = 'string') d
  where d.position <> d.first_position;

  -- Prerequisite cycles, one named per link kind.
  if pg_catalog.to_regclass('pg_temp.content_bundle_edges') is null then
    create temporary table content_bundle_edges (source uuid, target uuid) on commit drop;
  end if;
  for link in select * from (values ('spark_links', 'sparks'), ('concept_links', 'concepts')) v(kind, node_kind) loop
    truncate pg_temp.content_bundle_edges;
    insert into pg_temp.content_bundle_edges
    select distinct s.id, t.id
    from pg_temp.content_bundle_items i
    join pg_temp.content_bundle_refs s on s.kind = link.node_kind and s.slug = i.item ->> 'source'
    join pg_temp.content_bundle_refs t on t.kind = link.node_kind and t.slug = i.item ->> 'target'
    where i.kind = link.kind and i.position >= 0 and coalesce(i.item ->> 'type', 'prerequisite') = 'prerequisite'
      and s.id <> t.id;
    analyze pg_temp.content_bundle_edges;
    cycle := private.find_prerequisite_cycle();
    if cycle is not null then
      insert into pg_temp.content_bundle_problems
      select link.kind, -1, '$.' || link.kind,
             'prerequisite cycle: ' || pg_catalog.string_agg(x.slug, ' -> ' order by c.n),
             pg_catalog.jsonb_build_object('cycle', pg_catalog.jsonb_agg(x.slug order by c.n))
      from pg_catalog.unnest(cycle) with ordinality c(id, n)
      join pg_temp.content_bundle_refs x on x.kind = link.node_kind and x.id = c.id;
    end if;
  end loop;

  select coalesce(pg_catalog.jsonb_agg(
           pg_catalog.jsonb_build_object('path', p.path, 'message', p.message) || coalesce(p.extra, '{}'::jsonb)
           order by pg_catalog.array_position(array['snapshot', '$schema', 'categories', 'domains', 'trails', 'concepts', 'sparks',
                                         'beacons', 'spark_links', 'concept_links'], p.kind) nulls last,
                    p.kind, p.position, p.path, p.message), '[]'::jsonb)
  into result
  from pg_temp.content_bundle_problems p;
  return result;
end
$$;

-- private.write_staged_content
-- Purpose: writes the validated staged bundle into one snapshot, one INSERT ... SELECT per table.
-- Returns: the row counts per table.
create or replace function private.write_staged_content(snapshot_id uuid)
returns jsonb
language plpgsql
set search_path = ''
set work_mem to '256MB'
as $$
declare
  sid constant uuid := write_staged_content.snapshot_id;
  counts jsonb := '{}';
  n bigint;
  link record;
begin
  insert into app.categories (snapshot_id, id, slug, name)
  select sid, x.id, x.slug, pg_catalog.btrim(i.item ->> 'name')
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  where i.kind = 'categories' and i.position >= 0;
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('categories', n);

  insert into app.domains (snapshot_id, id, slug, name, description, icon, color, is_published, category_id, learning_outcomes)
  select sid, x.id, x.slug, pg_catalog.btrim(i.item ->> 'name'), coalesce(i.item ->> 'description', ''),
         coalesce(i.item ->> 'icon', ''), coalesce(i.item ->> 'color', '#6B7280'),
         coalesce((i.item ->> 'is_published')::boolean, true), c.id,
         coalesce(array(select pg_catalog.jsonb_array_elements_text(i.item -> 'learning_outcomes')), '{}')
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  left join pg_temp.content_bundle_refs c on c.kind = 'categories' and c.slug = i.item ->> 'category'
  where i.kind = 'domains' and i.position >= 0;
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('domains', n);

  insert into app.trails (snapshot_id, id, domain_id, slug, title, description, difficulty_level, order_index)
  select sid, x.id, d.id, x.slug, pg_catalog.btrim(i.item ->> 'title'), coalesce(i.item ->> 'description', ''),
         i.item ->> 'difficulty_level',
         coalesce((i.item ->> 'order_index')::integer,
                  (pg_catalog.row_number() over (partition by i.item ->> 'domain' order by i.position))::integer - 1)
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  join pg_temp.content_bundle_refs d on d.kind = 'domains' and d.slug = i.item ->> 'domain'
  where i.kind = 'trails' and i.position >= 0;
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('trails', n);

  insert into app.concepts (snapshot_id, id, trail_id, slug, title, description, order_index)
  select sid, x.id, t.id, x.slug, pg_catalog.btrim(i.item ->> 'title'), coalesce(i.item ->> 'description', ''),
         coalesce((i.item ->> 'order_index')::integer,
                  (pg_catalog.row_number() over (partition by i.item ->> 'trail' order by i.position))::integer - 1)
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  join pg_temp.content_bundle_refs t on t.kind = 'trails' and t.slug = i.item ->> 'trail'
  where i.kind = 'concepts' and i.position >= 0;
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('concepts', n);

  insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
  select sid, x.id, x.slug, pg_catalog.btrim(i.item ->> 'title'), coalesce(i.item ->> 'summary', ''),
         i.item ->> 'difficulty', (i.item ->> 'estimated_mins')::integer
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  where i.kind = 'sparks' and i.position >= 0;
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('sparks', n);

  insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index)
  select sid, x.id, s.id, (e.n - 1)::integer
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  cross join lateral pg_catalog.jsonb_array_elements_text(coalesce(i.item -> 'sparks', '[]'::jsonb)) with ordinality e(slug, n)
  join pg_temp.content_bundle_refs s on s.kind = 'sparks' and s.slug = e.slug
  where i.kind = 'concepts' and i.position >= 0;
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('concept_sparks', n);

  insert into app.beacons (snapshot_id, id, trail_id, concept_id, slug, title, description)
  select sid, x.id, t.id, c.id, x.slug, pg_catalog.btrim(i.item ->> 'title'), coalesce(i.item ->> 'description', '')
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  join pg_temp.content_bundle_refs t on t.kind = 'trails' and t.slug = i.item ->> 'trail'
  left join pg_temp.content_bundle_refs c on c.kind = 'concepts' and c.slug = i.item ->> 'concept'
  where i.kind = 'beacons' and i.position >= 0;
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('beacons', n);

  -- Links between sparks and between concepts, one rule for both tables: type defaults to
  -- prerequisite, weight to 1, both ends are resolved by slug among the nodes of their kind.
  for link in select * from (values ('spark_links', 'sparks'), ('concept_links', 'concepts')) v(kind, node_kind) loop
    execute pg_catalog.format($insert$
      insert into app.%I (snapshot_id, source_id, target_id, type, weight)
      select $1, s.id, t.id, coalesce(i.item ->> 'type', 'prerequisite'), coalesce((i.item ->> 'weight')::numeric, 1)
      from pg_temp.content_bundle_items i
      join pg_temp.content_bundle_refs s on s.kind = $2 and s.slug = i.item ->> 'source'
      join pg_temp.content_bundle_refs t on t.kind = $2 and t.slug = i.item ->> 'target'
      where i.kind = $3 and i.position >= 0
    $insert$, link.kind)
    using sid, link.node_kind, link.kind;
    get diagnostics n = row_count;
    counts := counts || pg_catalog.jsonb_build_object(link.kind, n);
  end loop;

  return counts;
end
$$;
-- Every reference the writes resolve was checked just before, so where the migrating role is a
-- superuser (the embedded database) the writer skips the foreign-key triggers with
-- session_replication_role = replica. Elsewhere (Supabase's postgres is no superuser) they run:
-- slower, same rows. A SET clause in the definition would refuse to create the function there.
do $$
begin
  if (select r.rolsuper from pg_catalog.pg_roles r where r.rolname = current_user) then
    alter function private.write_staged_content(uuid) set session_replication_role to 'replica';
  end if;
end
$$;

-- private.promote_snapshot
-- Purpose: makes a draft the current (published) snapshot and archives the previous current
--          one, in one transaction. Promotes are serialised on an advisory lock, so a second
--          concurrent promote waits and then sees the first one's result (the partial unique
--          index snapshots_one_current is the last line of defence).
-- Params:  snapshot_id; import_id (optional): when given, it must be the import that created
--          the snapshot.
-- Returns: {snapshot_id, status: 'published', previous_snapshot_id}.
-- Errors:  P0002 unknown snapshot or import; 22023 the import did not create that snapshot, or
--          the snapshot is not a draft (already current, or archived: use rollback).
create or replace function private.promote_snapshot(snapshot_id uuid, import_id uuid default null::uuid)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  target app.snapshots;
  imported uuid;
  previous uuid;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('sparkpath.snapshot_lifecycle'));

  if promote_snapshot.import_id is not null then
    select ci.snapshot_id into imported from app.content_imports ci where ci.id = promote_snapshot.import_id;
    if not found then
      raise exception using errcode = 'P0002', message = 'import not found',
        detail = pg_catalog.jsonb_build_object('import_id', promote_snapshot.import_id)::text;
    end if;
    if imported is distinct from promote_snapshot.snapshot_id then
      raise exception using errcode = '22023', message = 'the import did not create this snapshot',
        detail = pg_catalog.jsonb_build_object('import_id', promote_snapshot.import_id,
          'snapshot_id', promote_snapshot.snapshot_id, 'import_snapshot_id', imported)::text;
    end if;
  end if;

  select s.* into target from app.snapshots s where s.id = promote_snapshot.snapshot_id for update;
  if not found then
    raise exception using errcode = 'P0002', message = 'snapshot not found',
      detail = pg_catalog.jsonb_build_object('snapshot_id', promote_snapshot.snapshot_id)::text;
  end if;
  if target.status = 'published' then
    raise exception using errcode = '22023', message = 'the snapshot is already current',
      detail = pg_catalog.jsonb_build_object('snapshot_id', target.id, 'status', target.status)::text;
  elsif target.status = 'archived' then
    raise exception using errcode = '22023', message = 'only a draft can be promoted; use rollback to make an archived snapshot current',
      detail = pg_catalog.jsonb_build_object('snapshot_id', target.id, 'status', target.status)::text;
  end if;

  update app.snapshots s set status = 'archived' where s.status = 'published' returning s.id into previous;
  update app.snapshots s set status = 'published', published_at = pg_catalog.clock_timestamp() where s.id = target.id;
  return pg_catalog.jsonb_build_object('snapshot_id', target.id, 'status', 'published', 'previous_snapshot_id', previous);
end
$$;
comment on function private.promote_snapshot(uuid,uuid) is
  'Draft -> published (current); the previous current -> archived. Serialised on an advisory lock.';

-- private.rollback_snapshot
-- Purpose: makes an archived snapshot current again and archives the current one.
-- Params:  snapshot_id, or null for "the previous one": the current snapshot's parent when it
--          is archived, else the most recently published archived snapshot.
-- Returns: {snapshot_id, status: 'published', previous_snapshot_id}.
-- Errors:  P0002 unknown snapshot (or nothing to roll back to); 22023 not archived.
create or replace function private.rollback_snapshot(snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  target app.snapshots;
  chosen uuid := rollback_snapshot.snapshot_id;
  previous uuid;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('sparkpath.snapshot_lifecycle'));

  if chosen is null then
    select p.id into chosen
    from app.snapshots c join app.snapshots p on p.id = c.parent_snapshot_id
    where c.status = 'published' and p.status = 'archived';
    if chosen is null then
      select s.id into chosen from app.snapshots s where s.status = 'archived'
      order by s.published_at desc nulls last, s.created_at desc limit 1;
    end if;
    if chosen is null then
      raise exception using errcode = 'P0002', message = 'there is no archived snapshot to roll back to';
    end if;
  end if;

  select s.* into target from app.snapshots s where s.id = chosen for update;
  if not found then
    raise exception using errcode = 'P0002', message = 'snapshot not found',
      detail = pg_catalog.jsonb_build_object('snapshot_id', chosen)::text;
  end if;
  if target.status <> 'archived' then
    raise exception using errcode = '22023',
      message = case target.status when 'published' then 'the snapshot is already current'
                else 'only an archived snapshot can be rolled back to; use promote for a draft' end,
      detail = pg_catalog.jsonb_build_object('snapshot_id', target.id, 'status', target.status)::text;
  end if;

  update app.snapshots s set status = 'archived' where s.status = 'published' returning s.id into previous;
  update app.snapshots s set status = 'published', published_at = pg_catalog.clock_timestamp() where s.id = target.id;
  return pg_catalog.jsonb_build_object('snapshot_id', target.id, 'status', 'published', 'previous_snapshot_id', previous);
end
$$;
comment on function private.rollback_snapshot(uuid) is
  'Archived -> published (current again); the current -> archived. Serialised with promote.';

-- private.import_content_bundle
-- Purpose: import a whole bundle given as one jsonb document (seed.sql, tests, small bundles).
--          Stages its items and runs private.import_staged_content.
-- Returns: as private.import_staged_content.
create or replace function private.import_content_bundle(bundle jsonb, name text default null::text, version_label text default null::text, description text default null::text, promote boolean default false)
returns jsonb
language plpgsql
set search_path = ''
as $$
begin
  perform private.begin_content_staging();
  if pg_catalog.jsonb_typeof(import_content_bundle.bundle) is distinct from 'object' then
    insert into pg_temp.content_bundle_items values ('$', -1, import_content_bundle.bundle);
  else
    insert into pg_temp.content_bundle_items (kind, position, item)
    select k.key, -1, k.value
    from pg_catalog.jsonb_each(import_content_bundle.bundle) k(key, value)
    where pg_catalog.jsonb_typeof(k.value) <> 'array';
    insert into pg_temp.content_bundle_items (kind, position, item)
    select k.key, (e.n - 1)::integer, e.value
    from pg_catalog.jsonb_each(import_content_bundle.bundle) k(key, value)
    cross join lateral pg_catalog.jsonb_array_elements(k.value) with ordinality e(value, n)
    where pg_catalog.jsonb_typeof(k.value) = 'array';
  end if;
  return private.import_staged_content(import_content_bundle.name, import_content_bundle.version_label,
                                       import_content_bundle.description, import_content_bundle.promote);
end
$$;
comment on function private.import_content_bundle(jsonb,text,text,text,boolean) is
  'Imports a content bundle given as jsonb into a new draft snapshot (see private.import_staged_content).';

-- private.record_failed_import
-- Purpose: records an import attempt that failed outside the database.
-- Params:  name, version_label (as far as known), error ({code, message, problems, ...}),
--          started_at (when the attempt began).
-- Returns: the import id.
create or replace function private.record_failed_import(name text, version_label text, error jsonb, started_at timestamp with time zone)
returns uuid
language sql
set search_path = ''
as $$
  insert into app.content_imports (status, name, version_label, error, started_at, finished_at, timings)
  values ('failed', record_failed_import.name, record_failed_import.version_label, record_failed_import.error,
          record_failed_import.started_at, pg_catalog.clock_timestamp(),
          pg_catalog.jsonb_build_object('total_ms',
            pg_catalog.round(extract(epoch from pg_catalog.clock_timestamp() - record_failed_import.started_at) * 1000)))
  returning id
$$;
comment on function private.record_failed_import(text,text,jsonb,timestamp with time zone) is
  'Records a failed import attempt (e.g. rejected by the CLI schema check) in app.content_imports.';

-- private.list_content_imports
-- Purpose: the most recent import attempts, for the CLI's `list`.
-- Returns: jsonb array of {id, snapshot_id, status, name, version_label, counts, error message,
--          timings, started_at, finished_at}, newest first.
create or replace function private.list_content_imports(max_rows integer default 10)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(i) order by i.started_at desc), '[]'::jsonb)
  from (
    select ci.id, ci.snapshot_id, ci.status, ci.name, ci.version_label, ci.counts,
           ci.error ->> 'message' as error, ci.timings, ci.started_at, ci.finished_at
    from app.content_imports ci
    order by ci.started_at desc
    limit list_content_imports.max_rows
  ) i
$$;

-- private.list_content_snapshots
-- Purpose: every snapshot with all counts, newest first, for the CLI's `list`.
create or replace function private.list_content_snapshots()
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.jsonb_agg(private.snapshot_json(s.id, true, true) order by s.created_at desc, s.id desc), '[]'::jsonb)
  from app.snapshots s
$$;

create or replace function private.find_prerequisite_cycle()
returns uuid[]
language plpgsql
set search_path = ''
set work_mem to '256MB'
as $$
declare
  walk uuid[] := '{}';
  node uuid;
  seen integer;
  without_predecessor bigint;
  without_successor bigint;
begin
  loop
    delete from pg_temp.content_bundle_edges e
    where not exists (select 1 from pg_temp.content_bundle_edges p where p.target = e.source);
    get diagnostics without_predecessor = row_count;
    delete from pg_temp.content_bundle_edges e
    where not exists (select 1 from pg_temp.content_bundle_edges n where n.source = e.target);
    get diagnostics without_successor = row_count;
    exit when without_predecessor + without_successor = 0;
  end loop;

  select e.source into node from pg_temp.content_bundle_edges e order by e.source limit 1;
  if node is null then
    return null;
  end if;
  if pg_catalog.to_regclass('pg_temp.content_bundle_edges_target') is null then
    create index content_bundle_edges_target on pg_temp.content_bundle_edges (target);
  end if;
  -- Every remaining node has a remaining predecessor: walk backwards until one repeats.
  loop
    seen := pg_catalog.array_position(walk, node);
    exit when seen is not null;
    walk := walk || node;
    select e.source into node from pg_temp.content_bundle_edges e where e.target = node order by e.source limit 1;
  end loop;
  -- walk[seen..] is the cycle backwards; reverse it into edge order and close it.
  walk := array(select w.id from pg_catalog.unnest(walk[seen:]) with ordinality as w(id, n) order by w.n desc);
  return walk || walk[1];
end
$$;

-- The import, unchanged except that it computes the new snapshot's rollups right after writing its
-- content (inside the subtransaction: a failing refresh fails the import; write_ms includes it).
-- private.import_staged_content
-- Purpose: turns the staged bundle (pg_temp.content_bundle_items) into a new draft snapshot,
--          recorded in app.content_imports. The import row is written first; validation and
--          the content writes run in a subtransaction, so a failure leaves the import row
--          ('failed', with the error and every problem) and no content rows.
-- Params:  name, version_label, description: override the bundle's `snapshot` object;
--          promote: also promote the new snapshot in the same transaction.
-- Returns: {import_id, status ('succeeded' | 'failed'), snapshot_id, parent_snapshot_id,
--           counts, timings, error}.
create or replace function private.import_staged_content(name text default null::text, version_label text default null::text, description text default null::text, promote boolean default false)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  started timestamptz := pg_catalog.clock_timestamp();
  validated timestamptz;
  written timestamptz;
  new_import uuid;
  new_snapshot uuid;
  parent uuid;
  meta jsonb;
  chosen_name text;
  chosen_label text;
  chosen_description text;
  problems jsonb;
  import_counts jsonb;
  import_timings jsonb;
  failure jsonb;
  err_state text;
  err_message text;
  err_detail text;
begin
  select i.item into meta from pg_temp.content_bundle_items i where i.kind = 'snapshot' and i.position = -1 limit 1;
  if pg_catalog.jsonb_typeof(meta) is distinct from 'object' then
    meta := '{}';
  end if;
  chosen_name := coalesce(nullif(import_staged_content.name, ''), meta ->> 'name');
  chosen_label := coalesce(nullif(import_staged_content.version_label, ''), meta ->> 'version_label');
  chosen_description := coalesce(import_staged_content.description, meta ->> 'description', '');

  insert into app.content_imports (status, started_at, name, version_label)
  values ('running', started, chosen_name, chosen_label)
  returning id into new_import;

  begin
    select s.id into parent from app.snapshots s where s.status = 'published';
    if pg_catalog.to_regclass('pg_temp.content_bundle_items_kind') is null then
      create index content_bundle_items_kind on pg_temp.content_bundle_items (kind, position);
    end if;
    analyze pg_temp.content_bundle_items;

    problems := private.validate_staged_content(chosen_name, chosen_label);
    if pg_catalog.jsonb_array_length(problems) > 0 then
      raise exception using
        errcode = '22023',
        message = pg_catalog.format('the content bundle has %s problem%s', pg_catalog.jsonb_array_length(problems),
                                    case when pg_catalog.jsonb_array_length(problems) = 1 then '' else 's' end),
        detail = pg_catalog.jsonb_build_object(
          'problem_count', pg_catalog.jsonb_array_length(problems),
          'problems', problems)::text;
    end if;
    validated := pg_catalog.clock_timestamp();

    insert into app.snapshots (name, version_label, description, status, created_at, published_at, parent_snapshot_id)
    values (chosen_name, chosen_label, chosen_description, 'draft', pg_catalog.clock_timestamp(), null, parent)
    returning id into new_snapshot;
    import_counts := private.write_staged_content(new_snapshot);
    perform private.refresh_content_rollups(new_snapshot);
    written := pg_catalog.clock_timestamp();

    import_timings := pg_catalog.jsonb_build_object(
      'validate_ms', pg_catalog.round(extract(epoch from validated - started) * 1000),
      'write_ms', pg_catalog.round(extract(epoch from written - validated) * 1000),
      'total_ms', pg_catalog.round(extract(epoch from written - started) * 1000));
    update app.content_imports ci
    set snapshot_id = new_snapshot, status = 'succeeded', counts = import_counts,
        timings = import_timings, finished_at = written
    where ci.id = new_import;

    if import_staged_content.promote then
      perform private.promote_snapshot(new_snapshot, new_import);
    end if;
  exception when others then
    get stacked diagnostics err_state = returned_sqlstate, err_message = message_text, err_detail = pg_exception_detail;
    failure := pg_catalog.jsonb_build_object('code', err_state, 'message', err_message)
               || coalesce(private.try_jsonb(err_detail), '{}'::jsonb);
    update app.content_imports ci
    set status = 'failed', error = failure, finished_at = pg_catalog.clock_timestamp(),
        timings = pg_catalog.jsonb_build_object('total_ms',
          pg_catalog.round(extract(epoch from pg_catalog.clock_timestamp() - started) * 1000))
    where ci.id = new_import;
    return pg_catalog.jsonb_build_object('import_id', new_import, 'status', 'failed', 'snapshot_id', null,
                                         'parent_snapshot_id', parent, 'error', failure);
  end;

  return pg_catalog.jsonb_build_object(
    'import_id', new_import, 'status', 'succeeded', 'snapshot_id', new_snapshot, 'parent_snapshot_id', parent,
    'snapshot_status', case when import_staged_content.promote then 'published' else 'draft' end,
    'counts', import_counts, 'timings', import_timings);
end
$$;
comment on function private.import_staged_content(text,text,text,boolean) is
  'Staged bundle -> new draft snapshot (optionally promoted), recorded in app.content_imports; failures leave only a failed import row.';

-- ==== supabase/schemas/05-discovery.sql ====

-- Discovery: the public catalog reads (domains, trails, concepts, sparks, /all, facets, browse).

-- Published domains in name order (domain lists, /all, browse, related fallback). Titles and
-- names sort in app.alphabetical everywhere, and an index serves only its own collation.
create index discovery_domains_published_name on app.domains (snapshot_id, name collate app.alphabetical, id) where is_published;

-- Trails filtered by difficulty in title order (/discovery/trails, /discovery/all).
create index discovery_trails_difficulty_title on app.trails (snapshot_id, difficulty_level, title collate app.alphabetical, id);

-- Sparks filtered by difficulty in title order (/discovery/sparks).
create index discovery_sparks_difficulty_title on app.sparks (snapshot_id, difficulty, title collate app.alphabetical, id);

-- Index-only minutes lookup for the spark sums.
create index discovery_sparks_minutes on app.sparks (snapshot_id, id) include (estimated_mins);

-- Sparks of a concept in their position order.
create index discovery_concept_sparks_order on app.concept_sparks (snapshot_id, concept_id, order_index) include (spark_id);

-- `q` text filter of /discovery/all (substring match, case-insensitive).
create index discovery_domains_name_trgm on app.domains using gin (name extensions.gin_trgm_ops);

create index discovery_trails_title_trgm on app.trails using gin (title extensions.gin_trgm_ops);

create index discovery_concepts_title_trgm on app.concepts using gin (title extensions.gin_trgm_ops);

-- Entity lookups by slug inside the selected snapshot; P0002 naming the parameter when absent.
create or replace function private.find_entity_id(kind text, sid uuid, slug text, field text)
returns uuid
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  found_id uuid;
begin
  if find_entity_id.kind = 'domain' then
    select d.id into found_id from app.domains d
    where (find_entity_id.sid is null or d.snapshot_id = find_entity_id.sid) and d.slug = find_entity_id.slug
    limit 1;
  elsif find_entity_id.kind = 'trail' then
    select t.id into found_id from app.trails t
    where (find_entity_id.sid is null or t.snapshot_id = find_entity_id.sid) and t.slug = find_entity_id.slug
    limit 1;
  else
    select c.id into found_id from app.concepts c
    where (find_entity_id.sid is null or c.snapshot_id = find_entity_id.sid) and c.slug = find_entity_id.slug
    limit 1;
  end if;
  if found_id is null then
    raise exception using
      errcode = 'P0002',
      message = pg_catalog.format('%s %s not found', find_entity_id.kind, find_entity_id.slug),
      detail = pg_catalog.jsonb_build_object(find_entity_id.field, find_entity_id.slug)::text;
  end if;
  return found_id;
end
$$;
grant execute on function private.find_entity_id(text,uuid,text,text) to anon, authenticated;

-- A page of concepts (in the given order) with their figures; `sparks` previews (id, slug,
-- title, estimated_mins, position order) only when spark_limit is not null.
create or replace function private.concept_items(page app.concepts[], spark_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(concept_items.page) r);
  concept_ids uuid[] := array(select r.id from pg_catalog.unnest(concept_items.page) r);
  result jsonb;
begin
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'title', p.title, 'description', p.description,
        'order_index', p.order_index,
        'spark_count', coalesce(f.spark_count, 0), 'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when concept_items.spark_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('sparks', (
                select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                         'id', sp.id, 'slug', sp.slug, 'title', sp.title, 'estimated_mins', sp.estimated_mins)
                       order by x.order_index, x.spark_id), '[]'::jsonb)
                from (
                  select cs.spark_id, cs.order_index from app.concept_sparks cs
                  where cs.snapshot_id = p.snapshot_id and cs.concept_id = p.id
                  order by cs.order_index, cs.spark_id
                  limit concept_items.spark_limit
                ) x
                join app.sparks sp on sp.snapshot_id = p.snapshot_id and sp.id = x.spark_id)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(concept_items.page) with ordinality as p
  left join private.concept_figures(snapshots, concept_ids) f
    on f.snapshot_id = p.snapshot_id and f.concept_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
grant execute on function private.concept_items(app.concepts[],integer) to anon, authenticated;

-- private.child_previews
-- Purpose: the preview of each parent's children: its first preview_limit trails (of a domain)
--          or concepts (of a trail) in their order (order_index, title, id), each as
--          {id, slug, title, estimated_mins}. The one rule behind the `trails` of a domain and
--          the `concepts` of a trail in every discovery list.
-- Params:  child_kind 'trail' | 'concept'; parent_snapshots, parent_ids: the parents (parallel
--          arrays); preview_limit (null: no previews).
-- Returns: (snapshot_id, parent_id, items) for each parent that has children.
create or replace function private.child_previews(child_kind text, parent_snapshots uuid[], parent_ids uuid[], preview_limit integer)
returns table(snapshot_id uuid, parent_id uuid, items jsonb)
language plpgsql
stable
set search_path = ''
-- Planned with the kind known, so only that kind's branch is planned and run.
set plan_cache_mode to 'force_custom_plan'
as $$
begin
  if child_previews.preview_limit is null then
    return;
  end if;
  return query
  with children as materialized (
    select p.snapshot_id, p.parent_id, c.id, c.slug, c.title, c.order_index
    from rows from (pg_catalog.unnest(child_previews.parent_snapshots), pg_catalog.unnest(child_previews.parent_ids)) p(snapshot_id, parent_id)
    cross join lateral (
      select k.id, k.slug, k.title, k.order_index
      from (
        select x.id, x.slug, x.title, x.order_index from app.trails x
        where child_previews.child_kind = 'trail' and x.snapshot_id = p.snapshot_id and x.domain_id = p.parent_id
        union all
        select x.id, x.slug, x.title, x.order_index from app.concepts x
        where child_previews.child_kind = 'concept' and x.snapshot_id = p.snapshot_id and x.trail_id = p.parent_id
      ) k
      order by k.order_index, k.title collate app.alphabetical, k.id
      limit child_previews.preview_limit
    ) c
  ),
  figures as materialized (
    select f.snapshot_id, f.trail_id as id, f.estimated_mins
    from private.trail_figures(array(select distinct c.snapshot_id from children c), array(select c.id from children c)) f
    where child_previews.child_kind = 'trail'
    union all
    select f.snapshot_id, f.concept_id, f.estimated_mins
    from private.concept_figures(array(select distinct c.snapshot_id from children c), array(select c.id from children c)) f
    where child_previews.child_kind = 'concept'
  )
  select c.snapshot_id, c.parent_id,
    pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object('id', c.id, 'slug', c.slug, 'title', c.title,
                                    'estimated_mins', coalesce(f.estimated_mins, 0))
      order by c.order_index, c.title collate app.alphabetical, c.id)
  from children c
  left join figures f on f.snapshot_id = c.snapshot_id and f.id = c.id
  group by c.snapshot_id, c.parent_id;
end
$$;
grant execute on function private.child_previews(text,uuid[],uuid[],integer) to anon, authenticated;

-- A page of trails (in the given order) with their figures; `concepts` previews (see
-- private.child_previews) only when concept_limit is not null.
create or replace function private.trail_items(page app.trails[], concept_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(trail_items.page) r);
  trail_ids uuid[] := array(select r.id from pg_catalog.unnest(trail_items.page) r);
  result jsonb;
begin
  with previews as materialized (
    select * from private.child_previews('concept', array(select r.snapshot_id from pg_catalog.unnest(trail_items.page) r), trail_ids,
                                   trail_items.concept_limit)
  )
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'title', p.title, 'description', p.description,
        'difficulty_level', p.difficulty_level,
        'concept_count', coalesce(f.concept_count, 0), 'spark_count', coalesce(f.spark_count, 0),
        'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when trail_items.concept_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('concepts', coalesce(pv.items, '[]'::jsonb)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(trail_items.page) with ordinality as p
  left join private.trail_figures(snapshots, trail_ids) f
    on f.snapshot_id = p.snapshot_id and f.trail_id = p.id
  left join previews pv on pv.snapshot_id = p.snapshot_id and pv.parent_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
grant execute on function private.trail_items(app.trails[],integer) to anon, authenticated;

create or replace function private.discovery_quotas(per_page integer, included boolean[])
returns integer[]
language plpgsql
immutable
set search_path = ''
as $$
declare
  weights constant integer[] := array[10, 25, 65];
  total_weight integer := 0;
  last_included integer := 0;
  quotas integer[] := array[0, 0, 0];
  used integer := 0;
begin
  for i in 1..3 loop
    if discovery_quotas.included[i] then
      total_weight := total_weight + weights[i];
      last_included := i;
    end if;
  end loop;
  if last_included = 0 then
    return quotas;
  end if;
  for i in 1..3 loop
    if discovery_quotas.included[i] then
      if i = last_included then
        quotas[i] := discovery_quotas.per_page - used;
      else
        quotas[i] := (2 * discovery_quotas.per_page * weights[i] + total_weight) / (2 * total_weight);
        used := used + quotas[i];
      end if;
    end if;
  end loop;
  return quotas;
end
$$;
grant execute on function private.discovery_quotas(integer,boolean[]) to anon, authenticated;

create or replace function private.discovery_allocation(budget bigint, caps bigint[], quotas integer[])
returns bigint[]
language plpgsql
immutable
set search_path = ''
as $$
declare
  fallback_weights constant integer[] := array[10, 25, 65];
  alloc bigint[] := array[0, 0, 0];
  open boolean[] := array[true, true, true];
  weights bigint[];
  remaining bigint := discovery_allocation.budget;
  total_weight bigint;
  saturating boolean[];
  any_saturated boolean;
  given bigint;
  best integer;
  best_remainder bigint;
begin
  for i in 1..3 loop
    if discovery_allocation.caps[i] <= 0 then
      open[i] := false;
    end if;
  end loop;
  loop
    total_weight := 0;
    for i in 1..3 loop
      if open[i] then total_weight := total_weight + discovery_allocation.quotas[i]; end if;
    end loop;
    if total_weight = 0 then
      weights := array[0, 0, 0];
      for i in 1..3 loop
        if open[i] then weights[i] := fallback_weights[i]; total_weight := total_weight + fallback_weights[i]; end if;
      end loop;
    else
      weights := array[discovery_allocation.quotas[1], discovery_allocation.quotas[2], discovery_allocation.quotas[3]];
    end if;
    exit when total_weight = 0;
    -- Every type whose proportional share reaches its count is exhausted at this level.
    saturating := array[false, false, false];
    any_saturated := false;
    for i in 1..3 loop
      if open[i] and remaining * weights[i] >= discovery_allocation.caps[i] * total_weight then
        saturating[i] := true;
        any_saturated := true;
      end if;
    end loop;
    if not any_saturated then
      -- Largest remainder among the open types; ties go to the earlier type.
      given := 0;
      for i in 1..3 loop
        if open[i] then
          alloc[i] := remaining * weights[i] / total_weight;
          given := given + alloc[i];
        end if;
      end loop;
      while given < remaining loop
        best := 0;
        best_remainder := -1;
        for i in 1..3 loop
          if open[i] and (remaining * weights[i]) % total_weight > best_remainder then
            best := i;
            best_remainder := (remaining * weights[i]) % total_weight;
          end if;
        end loop;
        alloc[best] := alloc[best] + 1;
        open[best] := false; -- each type gets at most one extra slot
        given := given + 1;
      end loop;
      exit;
    end if;
    for i in 1..3 loop
      if saturating[i] then
        alloc[i] := discovery_allocation.caps[i];
        remaining := remaining - discovery_allocation.caps[i];
        open[i] := false;
      end if;
    end loop;
  end loop;
  return alloc;
end
$$;
grant execute on function private.discovery_allocation(bigint,bigint[],integer[]) to anon, authenticated;

-- api.resolve_snapshot
-- Purpose: the cheap first step of every cached catalog read: which snapshot a read would use,
--          and a version key that changes whenever that answer could change.
-- Params:  snapshot_id (uuid, optional).
-- Returns: {snapshot_id: uuid|null, version: text}. version is the snapshot id, or, when no
--          snapshot is published (no filter), a digest of every snapshot's id and status.
-- Errors:  P0002 when an explicit snapshot_id names no snapshot.
create or replace function api.resolve_snapshot(snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  sid uuid := private.resolve_snapshot_id(resolve_snapshot.snapshot_id);
begin
  return pg_catalog.jsonb_build_object(
    'snapshot_id', sid,
    'version', coalesce(sid::text, (
      select 'all:' || pg_catalog.md5(coalesce(pg_catalog.string_agg(s.id::text || s.status, ',' order by s.id), ''))
      from app.snapshots s)));
end
$$;
comment on function api.resolve_snapshot(uuid) is
  'Snapshot a catalog read uses and a cache version key. Params: snapshot_id (optional). Returns {snapshot_id, version}. Errors: P0002 unknown snapshot_id.';
grant execute on function api.resolve_snapshot(uuid) to anon, authenticated;

-- api.list_discovery_domains
-- Purpose: GET /discovery/domains: published domains in name order with counts and trail previews.
-- Params:  page (>=1), per_page (1-100), trail_limit (0-100, trails previewed per domain),
--          snapshot_id (optional; selection rule).
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count,concept_count,spark_count,
--          estimated_mins,trails:[{id,slug,title,estimated_mins}]}], meta: pagination}.
-- Errors:  22023 out-of-range numbers; P0002 unknown snapshot_id.
create or replace function api.list_discovery_domains(page integer default 1, per_page integer default 20, trail_limit integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
comment on function api.list_discovery_domains(integer,integer,integer,uuid) is
  'GET /discovery/domains. Params: page, per_page (max 100), trail_limit (0-100), snapshot_id. Returns {data: Domain with counts and trails preview, meta}. Errors: 22023, P0002.';
grant execute on function api.list_discovery_domains(integer,integer,integer,uuid) to anon, authenticated;

-- api.list_discovery_trails
-- Purpose: GET /discovery/trails: trails in title order with counts and concept previews.
-- Params:  page, per_page (1-100), domain (slug, optional), difficulty (optional),
--          concept_limit (0-50), snapshot_id (optional).
-- Returns: {data: [{id,slug,title,description,difficulty_level,concept_count,spark_count,
--          estimated_mins,concepts:[{id,slug,title,estimated_mins}]}], meta: pagination}.
-- Errors:  22023 invalid numbers or difficulty; P0002 unknown domain slug or snapshot_id.
create or replace function api.list_discovery_trails(page integer default 1, per_page integer default 20, domain text default null::text, difficulty text default null::text, concept_limit integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
comment on function api.list_discovery_trails(integer,integer,text,text,integer,uuid) is
  'GET /discovery/trails. Params: page, per_page (max 100), domain slug, difficulty, concept_limit (0-50), snapshot_id. Returns {data: Trail with concepts preview, meta}. Errors: 22023, P0002 unknown domain/snapshot.';
grant execute on function api.list_discovery_trails(integer,integer,text,text,integer,uuid) to anon, authenticated;

-- api.list_discovery_concepts
-- Purpose: GET /discovery/concepts: concepts with counts and spark previews. With a trail they
--          come in their position order inside it, otherwise in title order.
-- Params:  page, per_page (1-100), trail (slug, optional), spark_limit (0-50), snapshot_id.
-- Returns: {data: [{id,slug,title,description,order_index,spark_count,estimated_mins,
--          sparks:[{id,slug,title,estimated_mins}]}], meta: pagination}.
-- Errors:  22023 invalid numbers; P0002 unknown trail slug or snapshot_id.
create or replace function api.list_discovery_concepts(page integer default 1, per_page integer default 20, trail text default null::text, spark_limit integer default 3, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
comment on function api.list_discovery_concepts(integer,integer,text,integer,uuid) is
  'GET /discovery/concepts. Params: page, per_page (max 100), trail slug, spark_limit (0-50), snapshot_id. Returns {data: Concept with sparks preview, meta}. Errors: 22023, P0002 unknown trail/snapshot.';
grant execute on function api.list_discovery_concepts(integer,integer,text,integer,uuid) to anon, authenticated;

-- api.list_discovery_sparks
-- Purpose: GET /discovery/sparks: sparks, in their position order inside a concept when one is
--          given, otherwise in title order; optionally of one difficulty.
-- Params:  page, per_page (1-100), concept (slug, optional), difficulty (optional), snapshot_id.
-- Returns: {data: [{id,slug,title,summary,difficulty,estimated_mins}], meta: pagination}.
-- Errors:  22023 invalid numbers or difficulty; P0002 unknown concept slug or snapshot_id.
create or replace function api.list_discovery_sparks(page integer default 1, per_page integer default 20, concept text default null::text, difficulty text default null::text, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
comment on function api.list_discovery_sparks(integer,integer,text,text,uuid) is
  'GET /discovery/sparks. Params: page, per_page (max 100), concept slug, difficulty, snapshot_id. Returns {data: Spark[], meta}. Errors: 22023, P0002 unknown concept/snapshot.';
grant execute on function api.list_discovery_sparks(integer,integer,text,text,uuid) to anon, authenticated;

-- api.get_discovery_facets
-- Purpose: GET /discovery/facets: facet lists over the catalog, scoped by domain, track and
--          difficulty with the same rules as /discovery/all.
-- Params:  domain (slug), track (trail slug), difficulty, snapshot_id (all optional).
-- Returns: {domains:[{slug,name,count}], tracks:[{slug,name,count}], difficulties:[{level,count}],
--          types:[{type,count}]}.
-- Errors:  22023 invalid difficulty; P0002 unknown domain/track/snapshot.
create or replace function api.get_discovery_facets(domain text default null::text, track text default null::text, difficulty text default null::text, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  sid uuid;
  did uuid;
  tid uuid;
begin
  perform private.require_difficulty('difficulty', get_discovery_facets.difficulty);
  sid := private.resolve_snapshot_id(get_discovery_facets.snapshot_id);
  if get_discovery_facets.domain is not null then
    did := private.find_entity_id('domain', sid, get_discovery_facets.domain, 'domain');
  end if;
  if get_discovery_facets.track is not null then
    tid := private.find_entity_id('trail', sid, get_discovery_facets.track, 'track');
  end if;
  return private.discovery_facets(sid, did, tid, get_discovery_facets.difficulty, null, array[
    tid is null and get_discovery_facets.difficulty is null,
    tid is null,
    get_discovery_facets.difficulty is null]);
end
$$;
comment on function api.get_discovery_facets(text,text,text,uuid) is
  'GET /discovery/facets. Params: domain, track, difficulty, snapshot_id. Returns {domains, tracks, difficulties, types}. Errors: 22023, P0002.';
grant execute on function api.get_discovery_facets(text,text,text,uuid) to anon, authenticated;

-- A domain by slug or UUID inside the selected snapshot; P0002 when none matches.
create or replace function private.find_domain(sid uuid, slug_or_id text)
returns app.domains
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
as $$
declare
  found app.domains;
  as_id uuid;
begin
  if find_domain.slug_or_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    as_id := find_domain.slug_or_id::uuid;
    select d.* into found from app.domains d
    where (find_domain.sid is null or d.snapshot_id = find_domain.sid) and d.id = as_id
    limit 1;
  else
    select d.* into found from app.domains d
    where (find_domain.sid is null or d.snapshot_id = find_domain.sid) and d.slug = find_domain.slug_or_id
    limit 1;
  end if;
  if found.id is null then
    raise exception using
      errcode = 'P0002',
      message = pg_catalog.format('domain %s not found', find_domain.slug_or_id),
      detail = pg_catalog.jsonb_build_object('slug', find_domain.slug_or_id)::text;
  end if;
  return found;
end
$$;
grant execute on function private.find_domain(uuid,text) to anon, authenticated;

-- api.list_domains
-- Purpose: GET /discovery/domains/: published domains in name order.
-- Params:  page (>=1), per_page (1-100), snapshot_id (optional).
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count}], meta: pagination}.
-- Errors:  22023 out-of-range numbers; P0002 unknown snapshot_id.
create or replace function api.list_domains(page integer default 1, per_page integer default 20, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
comment on function api.list_domains(integer,integer,uuid) is
  'GET /discovery/domains/. Params: page, per_page (max 100), snapshot_id. Returns {data: Domain[] (id,slug,name,description,icon,color,trail_count), meta}. Errors: 22023, P0002.';
grant execute on function api.list_domains(integer,integer,uuid) to anon, authenticated;

-- api.get_domain
-- Purpose: GET /discovery/domains/{slug}: one domain by slug or UUID (published or not; the
--          is_published field tells).
-- Params:  slug (slug or UUID), snapshot_id (optional).
-- Returns: {id,slug,name,description,icon,color,is_published,trail_count,category_id,learning_outcomes}.
-- Errors:  P0002 unknown domain or snapshot_id.
create or replace function api.get_domain(slug text, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  d app.domains;
begin
  d := private.find_domain(private.resolve_snapshot_id(get_domain.snapshot_id), get_domain.slug);
  return private.domain_summary(d) || pg_catalog.jsonb_build_object(
    'is_published', d.is_published,
    'category_id', d.category_id,
    'learning_outcomes', pg_catalog.to_jsonb(d.learning_outcomes));
end
$$;
comment on function api.get_domain(text,uuid) is
  'GET /discovery/domains/{slug}. Params: slug (slug or UUID), snapshot_id. Returns the domain detail. Errors: P0002 unknown domain/snapshot.';
grant execute on function api.get_domain(text,uuid) to anon, authenticated;

-- api.list_related_domains
-- Purpose: GET /discovery/domains/{slug}/related: published domains of the same category
--          (name order), the requested one excluded. When the domain has no category or no
--          other domain shares it, other published domains in a pseudo-random order instead
--          (a shuffle seeded by the requested domain, so the response is stable per snapshot
--          and therefore cacheable).
-- Params:  slug (slug or UUID), related_limit (1-10), snapshot_id.
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count}], meta: {total,page,per_page}}.
-- Errors:  22023 out-of-range limit; P0002 unknown domain or snapshot_id.
create or replace function api.list_related_domains(slug text, related_limit integer default 4, snapshot_id uuid default null::uuid)
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
comment on function api.list_related_domains(text,integer,uuid) is
  'GET /discovery/domains/{slug}/related. Params: slug (slug or UUID), related_limit (1-10), snapshot_id. Returns {data: Domain[], meta: {total,page,per_page}}; same category, else pseudo-random domains. Errors: 22023, P0002.';
grant execute on function api.list_related_domains(text,integer,uuid) to anon, authenticated;

-- Figures of some concepts: spark_count and estimated_mins (sum over its sparks).
create or replace function private.concept_figures(snapshots uuid[], concept_ids uuid[])
returns table(snapshot_id uuid, concept_id uuid, spark_count integer, estimated_mins integer)
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
set enable_seqscan to 'off'
as $$
begin
  return query
  select r.snapshot_id, r.concept_id, r.spark_count, r.estimated_mins
  from app.concept_rollups r
  where r.snapshot_id = any(concept_figures.snapshots) and r.concept_id = any(concept_figures.concept_ids);
end
$$;
grant execute on function private.concept_figures(uuid[],uuid[]) to anon, authenticated;

-- Figures of some trails: concept_count, spark_count and estimated_mins over the trail's
-- distinct sparks (a spark used by two concepts of the trail counts once).
create or replace function private.trail_figures(snapshots uuid[], trail_ids uuid[])
returns table(snapshot_id uuid, trail_id uuid, concept_count integer, spark_count integer, estimated_mins integer)
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
set enable_seqscan to 'off'
as $$
begin
  return query
  select r.snapshot_id, r.trail_id, r.concept_count, r.spark_count, r.estimated_mins
  from app.trail_rollups r
  where r.snapshot_id = any(trail_figures.snapshots) and r.trail_id = any(trail_figures.trail_ids);
end
$$;
grant execute on function private.trail_figures(uuid[],uuid[]) to anon, authenticated;

-- A page of domains (in the given order) with their figures; `trails` previews (see
-- private.child_previews) only when trail_limit is not null. A domain's sparks are counted once
-- however often they are placed in it (computed by the rollup).
create or replace function private.domain_items(page app.domains[], trail_limit integer)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
set enable_seqscan to 'off'
as $$
declare
  snapshots uuid[] := array(select distinct r.snapshot_id from pg_catalog.unnest(domain_items.page) r);
  domain_ids uuid[] := array(select r.id from pg_catalog.unnest(domain_items.page) r);
  result jsonb;
begin
  with figures as materialized (
    select r.snapshot_id, r.domain_id, r.trail_count, r.concept_count, r.spark_count, r.estimated_mins
    from app.domain_rollups r
    where r.snapshot_id = any(snapshots) and r.domain_id = any(domain_ids)
  ), previews as materialized (
    select * from private.child_previews('trail', array(select r.snapshot_id from pg_catalog.unnest(domain_items.page) r), domain_ids,
                                   domain_items.trail_limit)
  )
  select pg_catalog.jsonb_agg(
      pg_catalog.jsonb_build_object(
        'id', p.id, 'slug', p.slug, 'name', p.name, 'description', p.description, 'icon', p.icon, 'color', p.color,
        'trail_count', coalesce(f.trail_count, 0), 'concept_count', coalesce(f.concept_count, 0),
        'spark_count', coalesce(f.spark_count, 0), 'estimated_mins', coalesce(f.estimated_mins, 0))
      || case when domain_items.trail_limit is null then '{}'::jsonb
              else pg_catalog.jsonb_build_object('trails', coalesce(pv.items, '[]'::jsonb)) end
      order by p.ordinality)
  into result
  from pg_catalog.unnest(domain_items.page) with ordinality as p
  left join figures f on f.snapshot_id = p.snapshot_id and f.domain_id = p.id
  left join previews pv on pv.snapshot_id = p.snapshot_id and pv.parent_id = p.id;
  return coalesce(result, '[]'::jsonb);
end
$$;
grant execute on function private.domain_items(app.domains[],integer) to anon, authenticated;

-- The seven fields every Domain carries.
create or replace function private.domain_summary(d app.domains)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'id', (domain_summary.d).id, 'slug', (domain_summary.d).slug, 'name', (domain_summary.d).name,
    'description', (domain_summary.d).description, 'icon', (domain_summary.d).icon,
    'color', (domain_summary.d).color,
    'trail_count', coalesce((select r.trail_count from app.domain_rollups r
                             where r.snapshot_id = (domain_summary.d).snapshot_id
                               and r.domain_id = (domain_summary.d).id), 0))
$$;
grant execute on function private.domain_summary(app.domains) to anon, authenticated;

-- api.get_domain_trails
-- Purpose: GET /discovery/domains/{slug}/trails: a domain with one page of its trails (trail
--          order); page and trail_limit paginate the trails.
-- Params:  slug (slug or UUID), page (>=1), trail_limit (1-100, trails per page), snapshot_id.
-- Returns: {id,slug,name,description,icon,color,trail_count, trails:[{id,title,slug,estimated_mins}],
--          trail_meta: {total,page,per_page,total_pages,has_next,has_prev,total_concept_count}}.
-- Errors:  22023 out-of-range numbers; P0002 unknown domain or snapshot_id.
create or replace function api.get_domain_trails(slug text, page integer default 1, trail_limit integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
comment on function api.get_domain_trails(text,integer,integer,uuid) is
  'GET /discovery/domains/{slug}/trails. Params: slug (slug or UUID), page, trail_limit (1-100), snapshot_id. Returns domain fields, trails page and trail_meta. Errors: 22023, P0002.';
grant execute on function api.get_domain_trails(text,integer,integer,uuid) to anon, authenticated;

-- An /all item: the list item of its kind with its type first.
create or replace function private.typed_items(items jsonb, type text)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('type', typed_items.type) || e.item order by e.n)
  from pg_catalog.jsonb_array_elements(typed_items.items) with ordinality e(item, n)
$$;
grant execute on function private.typed_items(jsonb,text) to anon, authenticated;

-- api.list_discovery_items
-- Purpose: GET /discovery/all: domains, trails and concepts on one page, split by type share
--          (see the paging math above), alphabetical within each type.
-- Params:  page, per_page (1-100), types (comma list of domain,trail,concept; null = all),
--          domain (slug: content within it), track (trail slug: only its concepts),
--          difficulty (only trails of that level), q (case-insensitive substring of name/title),
--          include_facets, nested_limit (0-10; 0 omits nested items), snapshot_id.
-- Returns: {data: [{type:'DOMAIN',...}|{type:'TRAIL',...,concepts}|{type:'CONCEPT',...,sparks}],
--          meta: pagination over all matching items, facets (when include_facets)}.
-- Errors:  22023 invalid numbers, types or difficulty; P0002 unknown domain/track/snapshot.
create or replace function api.list_discovery_items(page integer default 1, per_page integer default 20, types text default null::text, domain text default null::text, track text default null::text, difficulty text default null::text, q text default null::text, include_facets boolean default false, nested_limit integer default 3, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
    select private.typed_items(private.domain_items(pg_catalog.array_agg(page.d order by (page.d).name collate app.alphabetical, (page.d).id), null), 'DOMAIN')
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
    select private.typed_items(private.trail_items(pg_catalog.array_agg(page.t order by (page.t).title collate app.alphabetical, (page.t).id), nested), 'TRAIL')
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
    select private.typed_items(private.concept_items(pg_catalog.array_agg(page.c order by (page.c).title collate app.alphabetical, (page.c).id), nested), 'CONCEPT')
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
comment on function api.list_discovery_items(integer,integer,text,text,text,text,text,boolean,integer,uuid) is
  'GET /discovery/all. Params: page, per_page (max 100), types, domain, track, difficulty, q, include_facets, nested_limit (0-10), snapshot_id. Returns {data: mixed DOMAIN/TRAIL/CONCEPT items split by type share, meta, facets?}. Errors: 22023, P0002.';
grant execute on function api.list_discovery_items(integer,integer,text,text,text,text,text,boolean,integer,uuid) to anon, authenticated;

-- Facets over every matching item (not just a page): types, domains and tracks with the number
-- of matching items inside them, trails per difficulty level. Concepts are counted from the
-- trail rollups unless `q` filters them by title; with no filter at all the snapshot's facets
-- come from app.snapshot_rollups (computed by this function at import).
create or replace function private.discovery_facets(sid uuid, domain_id uuid, trail_id uuid, difficulty text, q text, included boolean[])
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
grant execute on function private.discovery_facets(uuid,uuid,uuid,text,text,boolean[]) to anon, authenticated;

-- api.browse_catalog
-- Purpose: GET /discovery/browse: everything a catalog page needs in one call: a page of
--          published domains (name order), each with its counts and its trails (trail order,
--          trail_limit), each trail with its counts and its concepts (position order,
--          concept_limit), each concept with its counts.
-- Params:  page, per_page (1-50, over domains), domain (slug: just that domain),
--          difficulty (only trails of that level, and only domains that have one),
--          trail_limit (0-20), concept_limit (0-20), snapshot_id.
-- Returns: {data: [{id,slug,name,description,icon,color,trail_count,concept_count,spark_count,
--          estimated_mins, trails:[{id,slug,title,difficulty_level,concept_count,spark_count,
--          estimated_mins, concepts:[{id,slug,title,order_index,spark_count,estimated_mins}]}]}],
--          meta: pagination over domains}.
-- Errors:  22023 invalid numbers or difficulty; P0002 unknown domain/snapshot.
create or replace function api.browse_catalog(page integer default 1, per_page integer default 20, domain text default null::text, difficulty text default null::text, trail_limit integer default 5, concept_limit integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode to 'force_custom_plan'
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
comment on function api.browse_catalog(integer,integer,text,text,integer,integer,uuid) is
  'GET /discovery/browse. Params: page, per_page (max 50), domain, difficulty, trail_limit (0-20), concept_limit (0-20), snapshot_id. Returns {data: domain -> trails -> concepts tree with counts, meta}. Errors: 22023, P0002.';
grant execute on function api.browse_catalog(integer,integer,text,text,integer,integer,uuid) to anon, authenticated;

-- ==== supabase/schemas/06-search.sql ====

-- Search: full-text search with a trigram fallback, autocomplete, the figures that answer a
-- one-lexeme query without visiting every match, and typo correction against a per-snapshot
-- lexicon.

create index sparks_search on app.sparks using gin (search_vector);

create index concepts_search on app.concepts using gin (search_vector);

create index trails_search on app.trails using gin (search_vector);

create index domains_search on app.domains using gin (search_vector);

create index sparks_title_trgm on app.sparks using gin (search_title extensions.gin_trgm_ops);

create index concepts_title_trgm on app.concepts using gin (search_title extensions.gin_trgm_ops);

create index trails_title_trgm on app.trails using gin (search_title extensions.gin_trgm_ops);

create index domains_name_trgm on app.domains using gin (search_title extensions.gin_trgm_ops);

-- private.search_query
-- Purpose: the tsquery for a normalised search text: websearch_to_tsquery('english'), widened
--          with a prefix match on the last word when the text is plain words ("postgres ind"
--          also finds "postgres indexes"). Stop words never become prefixes.
create or replace function private.search_query(normalized text)
returns tsquery
language plpgsql
immutable parallel safe
set search_path = ''
as $$
declare
  words text[];
  word_count integer;
  last_word text;
  full_query tsquery := pg_catalog.websearch_to_tsquery('pg_catalog.english'::regconfig, search_query.normalized);
  prefix_query tsquery;
begin
  if search_query.normalized !~ '^[[:alnum:][:space:]]+$' then
    return full_query; -- quotes, "or", "-word": the caller wrote websearch syntax; honour it
  end if;
  words := pg_catalog.regexp_split_to_array(pg_catalog.btrim(search_query.normalized), '\s+');
  word_count := pg_catalog.array_length(words, 1);
  last_word := words[word_count];
  if pg_catalog.char_length(last_word) < 2
     or pg_catalog.to_tsvector('pg_catalog.english'::regconfig, last_word) = ''::tsvector then
    return full_query;
  end if;
  prefix_query := pg_catalog.to_tsquery('pg_catalog.simple'::regconfig, pg_catalog.quote_literal(last_word) || ':*');
  if word_count > 1 then
    prefix_query := pg_catalog.websearch_to_tsquery('pg_catalog.english'::regconfig,
                      pg_catalog.array_to_string(words[1:word_count - 1], ' ')) && prefix_query;
  end if;
  return full_query || prefix_query;
end
$$;
comment on function private.search_query(text) is
  'websearch_to_tsquery(english) of a normalised text, OR-ed with a prefix match on its last word when the text is plain words.';
grant execute on function private.search_query(text) to anon, authenticated;

-- private.search_matches
-- Purpose: every content row of the snapshot matching the query, without ranking: the set that
--          facets count and the ranked candidates are drawn from. title_hit (the query matches
--          the title alone, a cheap check on the stored vector) decides which rows are ranked
--          first when there are more matches than the rank cap. `fuzzy` switches from the
--          full-text match to the trigram word-similarity match on titles (typo fallback).
create or replace function private.search_matches(snapshot uuid, query tsquery, normalized text, fuzzy boolean)
returns table(type text, snapshot_id uuid, id uuid, difficulty text, title_hit boolean)
language plpgsql
stable
set search_path = ''
set "pg_trgm.word_similarity_threshold" to '0.4'
as $$
begin
  if not search_matches.fuzzy then
    return query
      select 'spark'::text, s.snapshot_id, s.id, s.difficulty,
             pg_catalog.ts_filter(s.search_vector, '{a}') @@ search_matches.query
        from app.sparks s
       where (search_matches.snapshot is null or s.snapshot_id = search_matches.snapshot)
         and s.search_vector @@ search_matches.query
      union all
      select 'concept', c.snapshot_id, c.id, null,
             pg_catalog.ts_filter(c.search_vector, '{a}') @@ search_matches.query
        from app.concepts c
       where (search_matches.snapshot is null or c.snapshot_id = search_matches.snapshot)
         and c.search_vector @@ search_matches.query
      union all
      select 'trail', t.snapshot_id, t.id, t.difficulty_level,
             pg_catalog.ts_filter(t.search_vector, '{a}') @@ search_matches.query
        from app.trails t
       where (search_matches.snapshot is null or t.snapshot_id = search_matches.snapshot)
         and t.search_vector @@ search_matches.query
      union all
      select 'domain', d.snapshot_id, d.id, null,
             pg_catalog.ts_filter(d.search_vector, '{a}') @@ search_matches.query
        from app.domains d
       where (search_matches.snapshot is null or d.snapshot_id = search_matches.snapshot)
         and d.search_vector @@ search_matches.query;
  else
    return query
      select 'spark'::text, s.snapshot_id, s.id, s.difficulty, true from app.sparks s
       where (search_matches.snapshot is null or s.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) s.search_title
      union all
      select 'concept', c.snapshot_id, c.id, null, true from app.concepts c
       where (search_matches.snapshot is null or c.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) c.search_title
      union all
      select 'trail', t.snapshot_id, t.id, t.difficulty_level, true from app.trails t
       where (search_matches.snapshot is null or t.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) t.search_title
      union all
      select 'domain', d.snapshot_id, d.id, null, true from app.domains d
       where (search_matches.snapshot is null or d.snapshot_id = search_matches.snapshot)
         and search_matches.normalized operator(extensions.<%) d.search_title;
  end if;
end
$$;
comment on function private.search_matches(uuid,tsquery,text,boolean) is
  'Unranked matches (type, snapshot_id, id, difficulty, title_hit) of a search in one snapshot: full-text, or trigram on titles when fuzzy.';
grant execute on function private.search_matches(uuid,tsquery,text,boolean) to anon, authenticated;

-- Autocomplete's first tier walks these in order and stops after `limit` rows: title-prefix
-- suggestions cost the same however many titles share the prefix. Collation "C" makes the
-- btree serve both `like 'prefix%'` and the order.
create index sparks_search_title on app.sparks (snapshot_id, search_title collate "C");

create index concepts_search_title on app.concepts (snapshot_id, search_title collate "C");

create index trails_search_title on app.trails (snapshot_id, search_title collate "C");

create index domains_search_title on app.domains (snapshot_id, search_title collate "C");

-- private.suggest_title_prefixes
-- Purpose: autocomplete tier 0: distinct {text, type} whose normalised title starts with the
--          pattern, in normalised-title order, at most `wanted` per content type (index walks).
create or replace function private.suggest_title_prefixes(snapshot uuid, pattern text, wanted integer)
returns table(type text, text text, norm text)
language sql
stable
set search_path = ''
as $$
  (select distinct on (s.search_title collate "C", s.title) 'spark'::text, s.title, s.search_title
   from app.sparks s
   where (suggest_title_prefixes.snapshot is null or s.snapshot_id = suggest_title_prefixes.snapshot)
     and (s.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by s.search_title collate "C", s.title
   limit suggest_title_prefixes.wanted)
  union all
  (select distinct on (c.search_title collate "C", c.title) 'concept', c.title, c.search_title
   from app.concepts c
   where (suggest_title_prefixes.snapshot is null or c.snapshot_id = suggest_title_prefixes.snapshot)
     and (c.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by c.search_title collate "C", c.title
   limit suggest_title_prefixes.wanted)
  union all
  (select distinct on (t.search_title collate "C", t.title) 'trail', t.title, t.search_title
   from app.trails t
   where (suggest_title_prefixes.snapshot is null or t.snapshot_id = suggest_title_prefixes.snapshot)
     and (t.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by t.search_title collate "C", t.title
   limit suggest_title_prefixes.wanted)
  union all
  (select distinct on (d.search_title collate "C", d.name) 'domain', d.name, d.search_title
   from app.domains d
   where (suggest_title_prefixes.snapshot is null or d.snapshot_id = suggest_title_prefixes.snapshot)
     and (d.search_title collate "C") like suggest_title_prefixes.pattern || '%'
   order by d.search_title collate "C", d.name
   limit suggest_title_prefixes.wanted)
$$;
comment on function private.suggest_title_prefixes(uuid,text,integer) is
  'Autocomplete tier 0: titles starting with a LIKE-escaped pattern, at most `wanted` per content type, via the (snapshot_id, search_title collate C) indexes.';
grant execute on function private.suggest_title_prefixes(uuid,text,integer) to anon, authenticated;

-- private.suggest_title_words
-- Purpose: autocomplete tiers after the title prefixes: titles whose normalised text does not
--          start with `normalized` but has a later word starting with it (tier 1), or, with
--          `trigram`, titles pg_trgm word similarity (>= 0.5) supports (tier 2: q of 4+
--          characters). Suggestions already in `taken` ([{text,type}]) are left out.
-- Params:  snapshot (null: every snapshot), normalized (trimmed), wanted, taken, trigram.
-- Returns: jsonb array of {text, type}, best first (tier, similarity desc, shorter text, text,
--          type), at most `wanted`.
create or replace function private.suggest_title_words(snapshot uuid, normalized text, wanted integer, taken jsonb, trigram boolean)
returns jsonb
language plpgsql
stable
set search_path = ''
set "pg_trgm.word_similarity_threshold" to '0.5'
as $$
declare
  pattern text := pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(suggest_title_words.normalized, '\', '\\'), '%', '\%'), '_', '\_');
  word_start text := '(^|[^[:alnum:]])' || pg_catalog.regexp_replace(suggest_title_words.normalized, '([^[:alnum:][:space:]])', '\\\1', 'g');
  fuzzy boolean := suggest_title_words.trigram and pg_catalog.char_length(suggest_title_words.normalized) >= 4;
  result jsonb;
begin
  with titles as (
    select 'spark'::text as type, s.title as text, s.search_title as norm from app.sparks s
     where (suggest_title_words.snapshot is null or s.snapshot_id = suggest_title_words.snapshot)
       and (s.search_title like '%' || pattern || '%'
            or (fuzzy and suggest_title_words.normalized operator(extensions.<%) s.search_title))
    union all
    select 'concept', c.title, c.search_title from app.concepts c
     where (suggest_title_words.snapshot is null or c.snapshot_id = suggest_title_words.snapshot)
       and (c.search_title like '%' || pattern || '%'
            or (fuzzy and suggest_title_words.normalized operator(extensions.<%) c.search_title))
    union all
    select 'trail', t.title, t.search_title from app.trails t
     where (suggest_title_words.snapshot is null or t.snapshot_id = suggest_title_words.snapshot)
       and (t.search_title like '%' || pattern || '%'
            or (fuzzy and suggest_title_words.normalized operator(extensions.<%) t.search_title))
    union all
    select 'domain', d.name, d.search_title from app.domains d
     where (suggest_title_words.snapshot is null or d.snapshot_id = suggest_title_words.snapshot)
       and (d.search_title like '%' || pattern || '%'
            or (fuzzy and suggest_title_words.normalized operator(extensions.<%) d.search_title))
  ),
  tiered as (
    select t.type, t.text,
           case when t.norm ~ word_start then 1 else 2 end as tier,
           extensions.word_similarity(suggest_title_words.normalized, t.norm) as similarity
    from titles t
    where not (t.norm like pattern || '%') -- tier 0
      and not (suggest_title_words.taken @> pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('text', t.text, 'type', t.type)))
  ),
  -- a substring inside a word ("ql" in "sql") is neither a word prefix nor a typo unless
  -- trigram similarity supports it
  kept as (
    select * from tiered t
    where t.tier = 1 or (fuzzy and t.similarity >= 0.5)
  ),
  unique_suggestions as (
    select distinct on (k.text, k.type) k.* from kept k
    order by k.text, k.type, k.tier, k.similarity desc
  )
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', u.text, 'type', u.type)
           order by u.tier, u.similarity desc, pg_catalog.char_length(u.text), u.text collate app.alphabetical, u.type), '[]'::jsonb)
  into result
  from (
    select * from unique_suggestions u
    order by u.tier, u.similarity desc, pg_catalog.char_length(u.text), u.text collate app.alphabetical, u.type
    limit suggest_title_words.wanted
  ) u;
  return result;
end
$$;
comment on function private.suggest_title_words(uuid, text, integer, jsonb, boolean) is
  'Autocomplete tiers 1 (a later word starts with q) and, with trigram, 2 (pg_trgm word similarity >= 0.5, q of 4+ characters), leaving out the suggestions already taken.';
grant execute on function private.suggest_title_words(uuid, text, integer, jsonb, boolean) to anon, authenticated;

-- private.suggest_title_prefix_list
-- Purpose: autocomplete tier 0 as a jsonb array: titles starting with `normalized`, in
--          alphabetical order of the normalised title, leaving out suggestions in `taken`.
create or replace function private.suggest_title_prefix_list(snapshot uuid, normalized text, wanted integer, taken jsonb)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('text', p.text, 'type', p.type)
                    order by p.norm collate "C", p.text, p.type), '[]'::jsonb)
  from (
    select x.* from private.suggest_title_prefixes(
      suggest_title_prefix_list.snapshot,
      pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(suggest_title_prefix_list.normalized, '\', '\\'), '%', '\%'), '_', '\_'),
      suggest_title_prefix_list.wanted + pg_catalog.jsonb_array_length(suggest_title_prefix_list.taken)) x
    where not (suggest_title_prefix_list.taken @> pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('text', x.text, 'type', x.type)))
    order by x.norm collate "C", x.text, x.type
    limit suggest_title_prefix_list.wanted
  ) p
$$;
comment on function private.suggest_title_prefix_list(uuid, text, integer, jsonb) is
  'Autocomplete tier 0 as a jsonb array of {text,type}: titles starting with the normalised text, alphabetical, leaving out suggestions already taken.';
grant execute on function private.suggest_title_prefix_list(uuid, text, integer, jsonb) to anon, authenticated;

-- api.list_search_suggestions
-- Purpose: autocomplete: titles (domain names) matching what the user has typed so far.
-- Params:  q (2..100 characters after trimming), limit_count (1..20, default 5), snapshot_id.
-- Returns: {suggestions: [{text, type}][, meta: {corrected_query}]}, best first, each
--          {text, type} once:
--          tier 0, titles starting with q (in alphabetical order of the normalised title);
--          tier 1, titles with a later word starting with q (similarity, shorter text, text,
--          type); then, when a word of q matches nothing in the snapshot, tiers 0 and 1 for the
--          typo-corrected text (private.search_correct: "tesitng" -> "testing", the last word
--          also as a typed prefix, "tesit" -> "testing"), and meta.corrected_query names it;
--          last, for q of 4+ characters, trigram matches (word similarity >= 0.5). Each tier is
--          computed only when the earlier ones leave room, so a common prefix costs an index walk
--          of `limit` rows.
-- Errors:  22023 q shorter than 2 characters or limit_count out of range; P0002 unknown snapshot_id.
create or replace function api.list_search_suggestions(q text, limit_count integer default 5, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  normalized text := pg_catalog.btrim(private.search_normalize(list_search_suggestions.q));
  snapshot uuid;
  corrected text;
  suggestions jsonb;
  from_correction jsonb := '[]'::jsonb;
begin
  if list_search_suggestions.q is null or pg_catalog.char_length(normalized) not between 2 and 100 then
    raise exception using errcode = '22023', message = 'q must be 2 to 100 characters',
      detail = pg_catalog.jsonb_build_object('field', 'q')::text;
  end if;
  if list_search_suggestions.limit_count is null or list_search_suggestions.limit_count not between 1 and 20 then
    raise exception using errcode = '22023', message = 'limit must be between 1 and 20',
      detail = pg_catalog.jsonb_build_object('field', 'limit')::text;
  end if;
  snapshot := private.resolve_snapshot_id(list_search_suggestions.snapshot_id);

  -- Exact tiers: title prefixes, then word prefixes.
  suggestions := private.suggest_title_prefix_list(snapshot, normalized, list_search_suggestions.limit_count, '[]'::jsonb);
  if pg_catalog.jsonb_array_length(suggestions) < list_search_suggestions.limit_count then
    suggestions := suggestions || private.suggest_title_words(snapshot, normalized,
      list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions), suggestions, false);
  end if;
  -- Typo tiers: the same two for the corrected text.
  if pg_catalog.jsonb_array_length(suggestions) < list_search_suggestions.limit_count then
    corrected := private.search_correct(snapshot, normalized);
    if corrected is not null then
      from_correction := private.suggest_title_prefix_list(snapshot, corrected,
        list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions), suggestions);
      if pg_catalog.jsonb_array_length(suggestions) + pg_catalog.jsonb_array_length(from_correction) < list_search_suggestions.limit_count then
        from_correction := from_correction || private.suggest_title_words(snapshot, corrected,
          list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions) - pg_catalog.jsonb_array_length(from_correction),
          suggestions || from_correction, false);
      end if;
      suggestions := suggestions || from_correction;
    end if;
  end if;
  -- Last resort: trigram similarity of the text as typed.
  if pg_catalog.jsonb_array_length(suggestions) < list_search_suggestions.limit_count then
    suggestions := suggestions || private.suggest_title_words(snapshot, normalized,
      list_search_suggestions.limit_count - pg_catalog.jsonb_array_length(suggestions), suggestions, true);
  end if;

  return pg_catalog.jsonb_build_object('suggestions', suggestions)
    || case when pg_catalog.jsonb_array_length(from_correction) > 0
            then pg_catalog.jsonb_build_object('meta', pg_catalog.jsonb_build_object('corrected_query', corrected))
            else '{}'::jsonb end;
end
$$;
comment on function api.list_search_suggestions(text, integer, uuid) is
  'Autocomplete. Params: q (min 2 chars), limit_count (1..20, default 5), snapshot_id. Returns {suggestions:[{text,type}], meta:{corrected_query} when typo-corrected suggestions are included}: title prefixes (index walk), word prefixes, the same for the typo-corrected text, then trigram matches (q of 4+ chars); de-duplicated. Errors: 22023 invalid q/limit, P0002 unknown snapshot.';
grant execute on function api.list_search_suggestions(text, integer, uuid) to anon, authenticated;

create table app.search_lexeme_counts (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  lexeme text collate "C" not null,
  type text not null,
  difficulty text,
  docs integer not null,
  title_docs integer not null,
  constraint search_lexeme_counts_key unique nulls not distinct (snapshot_id, lexeme, type, difficulty)
);
comment on table app.search_lexeme_counts is
  'Search statistics: rows of one snapshot, type and difficulty whose search_vector holds a lexeme (docs), and of those with the lexeme in the title (title_docs). Maintained by triggers.';
alter table app.search_lexeme_counts enable row level security;
create policy "anyone reads search lexeme counts" on app.search_lexeme_counts
  for select to anon, authenticated
  using (true);
grant select on app.search_lexeme_counts to anon, authenticated;

create table app.search_title_postings (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  lexeme text collate "C" not null,
  type text not null,
  id uuid not null,
  difficulty text,
  sort_title text not null,
  search_title text not null,
  rank_vector tsvector not null,
  constraint search_title_postings_pkey primary key (snapshot_id, lexeme, type, id)
);
comment on table app.search_title_postings is
  'Search postings: one row per (content row, lexeme of its title), in candidate order (type, id) per lexeme, with what ranking needs (lower(title), search_title, rank_vector). Maintained by triggers.';
alter table app.search_title_postings enable row level security;
create policy "anyone reads search title postings" on app.search_title_postings
  for select to anon, authenticated
  using (true);
grant select on app.search_title_postings to anon, authenticated;

-- private.search_rank_vector
-- Purpose: a stand-in for a row's search document when ranking it for a query that matches
--          only `lexeme` in it: the lexeme's entry (same positions and weights) plus filler
--          entries (lexemes of spaces, which no query lexeme equals or prefixes) holding as many
--          positions as the rest of the document. ts_rank(·, query, 1) reads only the entries the
--          query matches and the document's position count, so for such a query it returns
--          exactly what it returns for the whole document.
-- Params:  doc (the row's search_vector), lexeme.
-- Returns: tsvector.
create or replace function private.search_rank_vector(doc tsvector, lexeme text)
returns tsvector
language sql
immutable parallel safe
set search_path = ''
as $$
  with entry as (
    select e.positions, e.weights from pg_catalog.unnest(search_rank_vector.doc) e
    where e.lexeme = search_rank_vector.lexeme
  ),
  total as (
    select pg_catalog.sum(coalesce(pg_catalog.array_length(e.positions, 1), 1))::integer as n
    from pg_catalog.unnest(search_rank_vector.doc) e
  )
  select (
    '''' || pg_catalog.replace(pg_catalog.replace(search_rank_vector.lexeme, '\', '\\'), '''', '''''') || ''''
    || coalesce((select ':' || pg_catalog.string_agg(p.pos::text || p.w, ',' order by p.ord)
                 from entry cross join lateral rows from (pg_catalog.unnest(entry.positions), pg_catalog.unnest(entry.weights))
                      with ordinality p(pos, w, ord)), '')
    || coalesce((select ' ' || pg_catalog.string_agg('''' || pg_catalog.repeat(' ', f.chunk) || ''':' || f.positions, ' ')
                 from (select g.n / 256 + 1 as chunk, pg_catalog.string_agg((g.n % 256 + 1)::text, ',') as positions
                       from total cross join entry
                       cross join lateral pg_catalog.generate_series(0, total.n - coalesce(pg_catalog.array_length(entry.positions, 1), 1) - 1) g(n)
                       group by g.n / 256) f), '')
  )::tsvector
$$;
comment on function private.search_rank_vector(tsvector,text) is
  'Stand-in document for ranking a row against a query matching only `lexeme` in it: that entry plus filler positions; ts_rank(.., 1) gives the same value as on the whole document.';
grant execute on function private.search_rank_vector(tsvector,text) to anon, authenticated;

-- private.search_index_sql
-- Purpose: the statements that add (sign 1) or remove (sign -1) the search figures of the rows
--          of `source` (a content table or a trigger transition table) of one content type.
-- Params:  kind (spark|concept|trail|domain), level_column (difficulty column or ''),
--          title_column, source, sign (1 or -1).
-- Returns: the SQL text (several statements; each reads `source` again).
create or replace function private.search_index_sql(kind text, level_column text, title_column text, source text, sign integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.replace(
    case when search_index_sql.sign > 0 then $add$
      insert into app.search_lexeme_counts as c (snapshot_id, lexeme, type, difficulty, docs, title_docs)
        select d.snapshot_id, d.lexeme, d.type, d.difficulty, pg_catalog.count(*), pg_catalog.count(*) filter (where d.in_title)
        from (DELTA) d
        group by d.snapshot_id, d.lexeme, d.type, d.difficulty
        order by d.snapshot_id, d.lexeme, d.type, d.difficulty
      on conflict on constraint search_lexeme_counts_key
        do update set docs = c.docs + excluded.docs, title_docs = c.title_docs + excluded.title_docs;
      insert into app.search_title_postings (snapshot_id, lexeme, type, id, difficulty, sort_title, search_title, rank_vector)
        select d.snapshot_id, d.lexeme, d.type, d.id, d.difficulty, pg_catalog.lower(d.title), d.search_title,
               private.search_rank_vector(d.document, d.lexeme)
        from (DELTA) d where d.in_title
        order by d.snapshot_id, d.lexeme, d.type, d.id; -- key order: the btree grows at its end
    $add$ else $remove$
      update app.search_lexeme_counts c
         set docs = c.docs - g.docs, title_docs = c.title_docs - g.title_docs
        from (select d.snapshot_id, d.lexeme, d.type, d.difficulty, pg_catalog.count(*) as docs,
                     pg_catalog.count(*) filter (where d.in_title) as title_docs
                from (DELTA) d group by d.snapshot_id, d.lexeme, d.type, d.difficulty) g
       where c.snapshot_id = g.snapshot_id and c.lexeme = g.lexeme and c.type = g.type
         and c.difficulty is not distinct from g.difficulty;
      delete from app.search_lexeme_counts c
       using (select distinct d.snapshot_id, d.lexeme, d.type from (DELTA) d) g
       where c.snapshot_id = g.snapshot_id and c.lexeme = g.lexeme and c.type = g.type and c.docs <= 0;
      delete from app.search_title_postings p
       using (DELTA) d
       where d.in_title and p.snapshot_id = d.snapshot_id and p.lexeme = d.lexeme and p.type = d.type and p.id = d.id;
    $remove$ end,
    'DELTA',
    pg_catalog.format(
      $delta$select r.snapshot_id, l.lexeme collate "C" as lexeme, %1$L::text as type, r.id, %2$s as difficulty,
                    'A' = any(l.weights) as in_title, r.%4$I as title, r.search_title, r.search_vector as document
               from %3$s r cross join lateral pg_catalog.unnest(r.search_vector) l$delta$,
      search_index_sql.kind,
      case when search_index_sql.level_column = '' then 'null::text'
           else 'r.' || pg_catalog.quote_ident(search_index_sql.level_column) end,
      search_index_sql.source,
      search_index_sql.title_column))
$$;
comment on function private.search_index_sql(text,text,text,text,integer) is
  'SQL adding (sign 1) or removing (sign -1) the search figures (lexeme counts, title postings) of the rows of a source relation.';

-- private.maintain_search_index
-- Purpose: statement trigger of sparks, concepts, trails and domains: keeps
--          app.search_lexeme_counts and app.search_title_postings equal to the content rows.
--          tg_argv: content type, difficulty column ('' when none), title column. Transition tables:
--          old_rows, new_rows. Security definer: writers need no rights on the figures.
create or replace function private.maintain_search_index()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    execute private.search_index_sql(tg_argv[0], tg_argv[1], tg_argv[2], 'old_rows', -1);
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    execute private.search_index_sql(tg_argv[0], tg_argv[1], tg_argv[2], 'new_rows', 1);
  end if;
  return null;
end
$$;
comment on function private.maintain_search_index() is
  'Trigger: applies the inserted/updated/deleted content rows to the search figures (app.search_lexeme_counts, app.search_title_postings).';

create trigger sparks_search_index_insert
  after insert on app.sparks referencing new table as new_rows
  for each statement execute function private.maintain_search_index('spark', 'difficulty', 'title');
alter table app.sparks enable always trigger sparks_search_index_insert;

create trigger sparks_search_index_update
  after update on app.sparks referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('spark', 'difficulty', 'title');
alter table app.sparks enable always trigger sparks_search_index_update;

create trigger sparks_search_index_delete
  after delete on app.sparks referencing old table as old_rows
  for each statement execute function private.maintain_search_index('spark', 'difficulty', 'title');
alter table app.sparks enable always trigger sparks_search_index_delete;

create trigger concepts_search_index_insert
  after insert on app.concepts referencing new table as new_rows
  for each statement execute function private.maintain_search_index('concept', '', 'title');
alter table app.concepts enable always trigger concepts_search_index_insert;

create trigger concepts_search_index_update
  after update on app.concepts referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('concept', '', 'title');
alter table app.concepts enable always trigger concepts_search_index_update;

create trigger concepts_search_index_delete
  after delete on app.concepts referencing old table as old_rows
  for each statement execute function private.maintain_search_index('concept', '', 'title');
alter table app.concepts enable always trigger concepts_search_index_delete;

create trigger trails_search_index_insert
  after insert on app.trails referencing new table as new_rows
  for each statement execute function private.maintain_search_index('trail', 'difficulty_level', 'title');
alter table app.trails enable always trigger trails_search_index_insert;

create trigger trails_search_index_update
  after update on app.trails referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('trail', 'difficulty_level', 'title');
alter table app.trails enable always trigger trails_search_index_update;

create trigger trails_search_index_delete
  after delete on app.trails referencing old table as old_rows
  for each statement execute function private.maintain_search_index('trail', 'difficulty_level', 'title');
alter table app.trails enable always trigger trails_search_index_delete;

create trigger domains_search_index_insert
  after insert on app.domains referencing new table as new_rows
  for each statement execute function private.maintain_search_index('domain', '', 'name');
alter table app.domains enable always trigger domains_search_index_insert;

create trigger domains_search_index_update
  after update on app.domains referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_index('domain', '', 'name');
alter table app.domains enable always trigger domains_search_index_update;

create trigger domains_search_index_delete
  after delete on app.domains referencing old table as old_rows
  for each statement execute function private.maintain_search_index('domain', '', 'name');
alter table app.domains enable always trigger domains_search_index_delete;

-- Typo tolerance (docs/search-graph.md, "Typo tolerance"): app.search_lexicon holds the
-- normalised words (unaccented, lower-case, letters and digits) of every title, summary and
-- description, per snapshot, with the number of rows holding each. Statement triggers on the four
-- content tables keep it (ENABLE ALWAYS: the content import writes with
-- session_replication_role = replica), so it is written when content is imported, never by a
-- request; promote and rollback change no content. A snapshot's words go with it (on delete
-- cascade). A query word that matches nothing in the snapshot is replaced by the closest lexicon
-- word within its typo budget (private.search_correct); candidates come from the lexicon's
-- trigram index plus direct lookups of the typed word's transpositions and deletions, and are
-- confirmed by private.osa_distance (fuzzystrmatch has only levenshtein, which counts a
-- transposition as two edits).

-- private.osa_distance
-- Purpose: optimal string alignment distance (restricted Damerau-Levenshtein): the fewest
--          insertions, deletions, substitutions and transpositions of two adjacent characters
--          turning `source` into `target`, no substring edited twice. With `prefix`, the fewest
--          edits turning `source` into some prefix of `target` (what the user typed so far).
-- Params:  source, target (compared character by character, case-sensitive), prefix.
-- Returns: integer (null when an argument is null).
create or replace function private.osa_distance(source text, target text, prefix boolean default false)
returns integer
language plpgsql
immutable
strict
parallel safe
set search_path = ''
as $$
declare
  a text[] := pg_catalog.string_to_array(osa_distance.source, null);
  b text[] := pg_catalog.string_to_array(osa_distance.target, null);
  m integer := coalesce(pg_catalog.cardinality(a), 0);
  n integer := coalesce(pg_catalog.cardinality(b), 0);
  width integer := n + 1;
  -- d[i * width + j + 1] = distance between the first i characters of source and first j of target
  d integer[] := pg_catalog.array_fill(0, array[(m + 1) * (n + 1)]);
  best integer;
  cost integer;
  i integer;
  j integer;
begin
  for j in 0 .. n loop
    d[j + 1] := j;
  end loop;
  for i in 1 .. m loop
    d[i * width + 1] := i;
    for j in 1 .. n loop
      cost := case when a[i] = b[j] then 0 else 1 end;
      best := least(d[(i - 1) * width + j + 1] + 1,  -- delete a[i]
                    d[i * width + j] + 1,            -- insert b[j]
                    d[(i - 1) * width + j] + cost);  -- substitute
      if i > 1 and j > 1 and a[i] = b[j - 1] and a[i - 1] = b[j] then
        best := least(best, d[(i - 2) * width + j - 1] + 1); -- transpose
      end if;
      d[i * width + j + 1] := best;
    end loop;
  end loop;
  if osa_distance.prefix then
    select pg_catalog.min(v) into best from pg_catalog.unnest(d[m * width + 1 : m * width + width]) v;
    return best;
  end if;
  return d[(m + 1) * width];
end
$$;
comment on function private.osa_distance(text, text, boolean) is
  'Optimal string alignment distance (Damerau-Levenshtein, a transposition of adjacent characters is one edit); with prefix, the distance to the closest prefix of target.';
grant execute on function private.osa_distance(text, text, boolean) to anon, authenticated;

-- private.search_typo_budget
-- Purpose: how many edits a typed word of this length may be away from the word meant
--          (Typesense/Meilisearch defaults): none below 4 characters, 1 for 4-7, 2 for 8 or more.
create or replace function private.search_typo_budget(word text)
returns integer
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select case when pg_catalog.char_length(search_typo_budget.word) >= 8 then 2
              when pg_catalog.char_length(search_typo_budget.word) >= 4 then 1
              else 0 end
$$;
comment on function private.search_typo_budget(text) is
  'Edits a typed word may have: 0 below 4 characters, 1 for 4-7, 2 for 8 or more.';
grant execute on function private.search_typo_budget(text) to anon, authenticated;

-- private.search_words
-- Purpose: the distinct lexicon words of a text: normalised (private.search_normalize), split on
--          everything but letters and digits, 2-40 characters, not only digits.
create or replace function private.search_words(value text)
returns setof text
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select distinct w
  from pg_catalog.regexp_split_to_table(private.search_normalize(search_words.value), '[^[:alnum:]]+') w
  where pg_catalog.char_length(w) between 2 and 40 and w !~ '^[0-9]+$'
$$;
comment on function private.search_words(text) is
  'Distinct normalised words (2-40 characters, not only digits) of a text: what the search lexicon holds.';
grant execute on function private.search_words(text) to anon, authenticated;

create table app.search_lexicon (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  word text collate "C" not null,
  docs integer not null,
  -- (snapshot_id, word) also serves "is this the prefix of a word of the snapshot" (range scan)
  constraint search_lexicon_pkey primary key (snapshot_id, word)
);
comment on table app.search_lexicon is
  'Typo tolerance: the normalised words of the titles, summaries and descriptions of a snapshot, with the number of content rows holding each. Maintained by triggers at content import.';
alter table app.search_lexicon enable row level security;
create policy "anyone reads the search lexicon" on app.search_lexicon
  for select to anon, authenticated
  using (true);
grant select on app.search_lexicon to anon, authenticated;

-- Typo candidates: trigram neighbours of a typed word (private.search_correct).
create index search_lexicon_word_trgm on app.search_lexicon using gin (word extensions.gin_trgm_ops);

-- private.search_lexicon_sql
-- Purpose: the statements that add (sign 1) or remove (sign -1) the words of the rows of
--          `source` (a content table or a trigger transition table) to or from the lexicon.
-- Params:  title_column, body_column, source, sign.
-- Returns: the SQL text.
create or replace function private.search_lexicon_sql(title_column text, body_column text, source text, sign integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.replace(
    case when search_lexicon_sql.sign > 0 then $add$
      insert into app.search_lexicon as l (snapshot_id, word, docs)
        select d.snapshot_id, d.word, pg_catalog.count(*) from (DELTA) d
        group by d.snapshot_id, d.word
        order by d.snapshot_id, d.word
      on conflict (snapshot_id, word) do update set docs = l.docs + excluded.docs;
    $add$ else $remove$
      update app.search_lexicon l set docs = l.docs - g.docs
        from (select d.snapshot_id, d.word, pg_catalog.count(*) as docs from (DELTA) d group by d.snapshot_id, d.word) g
       where l.snapshot_id = g.snapshot_id and l.word = g.word;
      delete from app.search_lexicon l
       using (select distinct d.snapshot_id, d.word from (DELTA) d) g
       where l.snapshot_id = g.snapshot_id and l.word = g.word and l.docs <= 0;
    $remove$ end,
    'DELTA',
    pg_catalog.format(
      $delta$select r.snapshot_id, w.word collate "C" as word
               from %3$s r
               cross join lateral private.search_words(r.%1$I || ' ' || coalesce(r.%2$I, '')) w(word)$delta$,
      search_lexicon_sql.title_column, search_lexicon_sql.body_column, search_lexicon_sql.source))
$$;
comment on function private.search_lexicon_sql(text, text, text, integer) is
  'SQL adding (sign 1) or removing (sign -1) the words of the rows of a source relation to or from app.search_lexicon.';

-- private.maintain_search_lexicon
-- Purpose: statement trigger of sparks, concepts, trails and domains: keeps app.search_lexicon
--          equal to the words of the content rows. tg_argv: title column, body column.
--          Security definer: writers need no rights on the lexicon.
create or replace function private.maintain_search_lexicon()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    execute private.search_lexicon_sql(tg_argv[0], tg_argv[1], 'old_rows', -1);
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    execute private.search_lexicon_sql(tg_argv[0], tg_argv[1], 'new_rows', 1);
  end if;
  return null;
end
$$;
comment on function private.maintain_search_lexicon() is
  'Trigger: applies the inserted/updated/deleted content rows to app.search_lexicon.';

create trigger sparks_search_lexicon_insert
  after insert on app.sparks referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'summary');
alter table app.sparks enable always trigger sparks_search_lexicon_insert;

create trigger sparks_search_lexicon_update
  after update on app.sparks referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'summary');
alter table app.sparks enable always trigger sparks_search_lexicon_update;

create trigger sparks_search_lexicon_delete
  after delete on app.sparks referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('title', 'summary');
alter table app.sparks enable always trigger sparks_search_lexicon_delete;

create trigger concepts_search_lexicon_insert
  after insert on app.concepts referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.concepts enable always trigger concepts_search_lexicon_insert;

create trigger concepts_search_lexicon_update
  after update on app.concepts referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.concepts enable always trigger concepts_search_lexicon_update;

create trigger concepts_search_lexicon_delete
  after delete on app.concepts referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.concepts enable always trigger concepts_search_lexicon_delete;

create trigger trails_search_lexicon_insert
  after insert on app.trails referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.trails enable always trigger trails_search_lexicon_insert;

create trigger trails_search_lexicon_update
  after update on app.trails referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.trails enable always trigger trails_search_lexicon_update;

create trigger trails_search_lexicon_delete
  after delete on app.trails referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('title', 'description');
alter table app.trails enable always trigger trails_search_lexicon_delete;

create trigger domains_search_lexicon_insert
  after insert on app.domains referencing new table as new_rows
  for each statement execute function private.maintain_search_lexicon('name', 'description');
alter table app.domains enable always trigger domains_search_lexicon_insert;

create trigger domains_search_lexicon_update
  after update on app.domains referencing old table as old_rows new table as new_rows
  for each statement execute function private.maintain_search_lexicon('name', 'description');
alter table app.domains enable always trigger domains_search_lexicon_update;

create trigger domains_search_lexicon_delete
  after delete on app.domains referencing old table as old_rows
  for each statement execute function private.maintain_search_lexicon('name', 'description');
alter table app.domains enable always trigger domains_search_lexicon_delete;

-- private.search_near_misses
-- Purpose: the strings one adjacent transposition or one deletion away from a word: exact
--          lookups that find the typos trigram similarity misses in short words ("jion" ->
--          "join", "ojin" -> "join"; at most 2n - 1 strings for a word of n characters).
create or replace function private.search_near_misses(word text)
returns text[]
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select pg_catalog.array_agg(distinct v)
  from (
    select pg_catalog.substr(search_near_misses.word, 1, i - 1) || pg_catalog.substr(search_near_misses.word, i + 1, 1)
           || pg_catalog.substr(search_near_misses.word, i, 1) || pg_catalog.substr(search_near_misses.word, i + 2) as v
      from pg_catalog.generate_series(1, pg_catalog.char_length(search_near_misses.word) - 1) i
    union all
    select pg_catalog.substr(search_near_misses.word, 1, i - 1) || pg_catalog.substr(search_near_misses.word, i + 1)
      from pg_catalog.generate_series(1, pg_catalog.char_length(search_near_misses.word)) i
  ) n
  where v <> search_near_misses.word
$$;
comment on function private.search_near_misses(text) is
  'The strings one adjacent transposition or one deletion away from a word (typo candidates trigram similarity misses in short words).';
grant execute on function private.search_near_misses(text) to anon, authenticated;

-- private.search_correct
-- Purpose: the typo-corrected form of a normalised query, or null when no word needed (or got)
--          a correction. Only plain words (letters, digits, spaces) are corrected: websearch
--          syntax is the caller's own. A word is kept when it is shorter than 4 characters, a
--          word of the snapshot, a stop word, a word whose english stems are all lexemes of the
--          snapshot, or (the last word) the prefix of a word of the snapshot. Otherwise it is
--          replaced by the best word of the snapshot's lexicon within its typo budget (see
--          private.search_typo_budget): fewest edits (private.osa_distance), then the most
--          frequent, the shorter, alphabetical; when no whole word is within the budget, the last
--          word is read as a typed prefix ("tesit" -> "testing") and the best completion taken.
--          A word with no candidate is kept.
-- Params:  snapshot (null: no correction), normalized (private.search_normalize'd, trimmed).
--          Candidates: pg_trgm similarity >= 0.2 and a length within the budget, plus the typed
--          word's transpositions and deletions (private.search_near_misses); for the last word,
--          when no whole word is close enough, words it begins like (word similarity >= 0.3).
-- Returns: text or null.
create or replace function private.search_correct(snapshot uuid, normalized text)
returns text
language plpgsql
stable
set search_path = ''
set "pg_trgm.similarity_threshold" to '0.2'
set "pg_trgm.word_similarity_threshold" to '0.3'
as $$
declare
  words text[];
  word_count integer;
  typed text;
  budget integer;
  best text;
  changed boolean := false;
begin
  if search_correct.snapshot is null or search_correct.normalized !~ '^[[:alnum:][:space:]]+$' then
    return null;
  end if;
  words := pg_catalog.regexp_split_to_array(pg_catalog.btrim(search_correct.normalized), '\s+');
  word_count := pg_catalog.cardinality(words);
  for word_index in 1 .. word_count loop
    typed := words[word_index];
    budget := private.search_typo_budget(typed);
    continue when budget = 0;
    continue when exists (select from app.search_lexicon l
                           where l.snapshot_id = search_correct.snapshot and l.word = typed collate "C");
    -- stop words (no lexeme) and words whose stems the snapshot holds already match as typed
    continue when not exists (
      select from pg_catalog.unnest(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, typed)) v
       where not exists (select from app.search_lexeme_counts c
                          where c.snapshot_id = search_correct.snapshot and c.lexeme = v.lexeme collate "C"));
    continue when word_index = word_count and exists (
      select from app.search_lexicon l
       where l.snapshot_id = search_correct.snapshot
         and l.word >= typed collate "C" and l.word < (typed || pg_catalog.chr(1114111)) collate "C");

    -- Whole words: trigram neighbours within the length budget, and the typed word's
    -- transpositions and deletions looked up directly (short words share few trigrams with
    -- them: "jion" and "join" share 1 of 9).
    select c.word into best
    from (
      select l.word, l.docs from app.search_lexicon l
       where l.snapshot_id = search_correct.snapshot
         -- the length test first: equal-cost quals run in the order written, and it is far
         -- cheaper than a similarity (two trigram sets) when the index is not used
         and pg_catalog.char_length(l.word) between pg_catalog.char_length(typed) - budget
                                                and pg_catalog.char_length(typed) + budget
         and l.word operator(extensions.%) typed
      union
      select l.word, l.docs from app.search_lexicon l
       where l.snapshot_id = search_correct.snapshot
         and l.word = any (private.search_near_misses(typed))
    ) c
    cross join lateral (select private.osa_distance(typed, c.word) as edits) d
    where d.edits <= budget
    order by d.edits, c.docs desc, pg_catalog.char_length(c.word), c.word
    limit 1;
    -- The last word may be unfinished: the beginnings of longer words ("tesit" -> "testing").
    if best is null and word_index = word_count then
      select l.word into best
      from app.search_lexicon l
      cross join lateral (select private.osa_distance(typed, l.word, true) as edits) d
      where l.snapshot_id = search_correct.snapshot
        and pg_catalog.char_length(l.word) > pg_catalog.char_length(typed)
        and typed operator(extensions.<%) l.word
        and d.edits <= budget
      order by d.edits, l.docs desc, pg_catalog.char_length(l.word), l.word
      limit 1;
    end if;

    if best is not null then
      words[word_index] := best;
      changed := true;
      best := null;
    end if;
  end loop;
  return case when changed then pg_catalog.array_to_string(words, ' ') end;
end
$$;
comment on function private.search_correct(uuid, text) is
  'Typo correction of a normalised plain-words query against the snapshot''s lexicon (trigram candidates, optimal string alignment distance within 1 edit for 4-7 characters, 2 for 8+; the last word also as a prefix); null when nothing was corrected.';
grant execute on function private.search_correct(uuid, text) to anon, authenticated;

-- private.search_has_match
-- Purpose: whether a full-text query matches any content row of the snapshot (null: any
--          snapshot), through the GIN indexes.
create or replace function private.search_has_match(snapshot uuid, query tsquery)
returns boolean
language sql
stable
set search_path = ''
as $$
  select pg_catalog.numnode(search_has_match.query) > 0 and (
       exists (select from app.sparks s where (search_has_match.snapshot is null or s.snapshot_id = search_has_match.snapshot) and s.search_vector @@ search_has_match.query)
    or exists (select from app.concepts c where (search_has_match.snapshot is null or c.snapshot_id = search_has_match.snapshot) and c.search_vector @@ search_has_match.query)
    or exists (select from app.trails t where (search_has_match.snapshot is null or t.snapshot_id = search_has_match.snapshot) and t.search_vector @@ search_has_match.query)
    or exists (select from app.domains d where (search_has_match.snapshot is null or d.snapshot_id = search_has_match.snapshot) and d.search_vector @@ search_has_match.query))
$$;
comment on function private.search_has_match(uuid, tsquery) is
  'Whether a full-text search query matches any content row of a snapshot (null: of any snapshot).';
grant execute on function private.search_has_match(uuid, tsquery) to anon, authenticated;

-- private.search_single_lexeme
-- Purpose: the one lexeme of the snapshot's vocabulary a search matches exactly, when there is
--          one: the query must be a disjunction of lexeme atoms ('build' | 'building':*, no AND,
--          NOT, phrase or weight) whose atoms resolve, in app.search_lexeme_counts, to a single
--          lexeme. Then the rows matching the query are exactly the rows holding that lexeme.
-- Params:  snapshot, query.
-- Returns: {lexeme, match_count}: 0 = no vocabulary lexeme matches (no row
--          matches), 1 = exactly `lexeme`, 2 = several (or not a disjunction): general path.
create or replace function private.search_single_lexeme(snapshot uuid, query tsquery, out lexeme text, out match_count integer)
returns record
language plpgsql
stable
set search_path = ''
as $$
declare
  query_text text := search_single_lexeme.query::text;
  lexemes text[] := '{}';
  atom text collate "C";
  is_prefix boolean;
begin
  search_single_lexeme.match_count := 2;
  -- Outside the quoted lexemes only '|', ':*', parentheses and spaces may appear.
  if search_single_lexeme.snapshot is null
     or pg_catalog.regexp_replace(query_text, '''(?:[^'']|'''')*''', '', 'g') !~ '^[|:*() ]*$' then
    return;
  end if;
  for atom, is_prefix in
    select pg_catalog.regexp_replace(m.parts[1], '([''\\])\1', '\1', 'g'), m.parts[2] is not null
    from pg_catalog.regexp_matches(query_text, '''((?:[^'']|'''')*)''(:\*)?', 'g') m(parts)
  loop
    -- one btree range per atom: the lexeme itself, or the lexemes it is a prefix of
    select lexemes || coalesce(pg_catalog.array_agg(x.lexeme), '{}') into lexemes
    from (
      select c.lexeme from app.search_lexeme_counts c
       where c.snapshot_id = search_single_lexeme.snapshot
         and c.lexeme >= atom
         and c.lexeme <= case when is_prefix then atom || pg_catalog.chr(1114111) else atom end
         and pg_catalog.starts_with(c.lexeme, atom)
         and c.lexeme <> all (lexemes)
       group by c.lexeme
       limit 2
    ) x;
    exit when pg_catalog.cardinality(lexemes) > 1;
  end loop;
  search_single_lexeme.match_count := least(pg_catalog.cardinality(lexemes), 2);
  if search_single_lexeme.match_count = 1 then
    search_single_lexeme.lexeme := lexemes[1];
  end if;
end
$$;
comment on function private.search_single_lexeme(uuid,tsquery) is
  'The single vocabulary lexeme a disjunctive search query matches in a snapshot (match_count 1), none (0) or several/not disjunctive (2).';
grant execute on function private.search_single_lexeme(uuid,tsquery) to anon, authenticated;

-- private.search_page_rows
-- Purpose: ranks the candidate rows of a search and returns one page of results.
-- Params:  types, snapshot_ids, ids (the candidates, same length), query, normalized, fuzzy,
--          page, per_page.
-- Returns: jsonb array of {type,id,slug,title,summary,score}, ordered by score desc,
--          lower(title), type, id.
create or replace function private.search_page_rows(types text[], snapshot_ids uuid[], ids uuid[], query tsquery, normalized text, fuzzy boolean, page integer, per_page integer)
returns jsonb
language sql
stable
set search_path = ''
as $$
  with candidates as (
    select c.type, c.snapshot_id, c.id
    from rows from (pg_catalog.unnest(search_page_rows.types), pg_catalog.unnest(search_page_rows.snapshot_ids),
                   pg_catalog.unnest(search_page_rows.ids)) c(type, snapshot_id, id)
  ),
  ranked as (
    select c.type, c.id, x.slug, x.title, x.summary,
           pg_catalog.round((case when search_page_rows.fuzzy
             then extensions.word_similarity(search_page_rows.normalized, x.normalized_title)
             else pg_catalog.ts_rank(x.document, search_page_rows.query, 1)
                  + case when x.normalized_title = search_page_rows.normalized then 1.0
                         when x.normalized_title like
                              pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(search_page_rows.normalized, '\', '\\'), '%', '\%'), '_', '\_') || '%'
                           then 0.5
                         else 0 end
             end)::numeric, 6)::double precision as score
    from candidates c
    cross join lateral (
      select s.slug, s.title, s.summary, s.search_vector as document, s.search_title as normalized_title
        from app.sparks s where c.type = 'spark' and s.snapshot_id = c.snapshot_id and s.id = c.id
      union all
      select k.slug, k.title, k.description, k.search_vector, k.search_title
        from app.concepts k where c.type = 'concept' and k.snapshot_id = c.snapshot_id and k.id = c.id
      union all
      select t.slug, t.title, t.description, t.search_vector, t.search_title
        from app.trails t where c.type = 'trail' and t.snapshot_id = c.snapshot_id and t.id = c.id
      union all
      select d.slug, d.name, d.description, d.search_vector, d.search_title
        from app.domains d where c.type = 'domain' and d.snapshot_id = c.snapshot_id and d.id = c.id
    ) x
  ),
  page_rows as (
    select r.* from ranked r
    order by r.score desc, pg_catalog.lower(r.title) collate app.alphabetical, r.type, r.id
    offset (search_page_rows.page - 1) * search_page_rows.per_page
    limit search_page_rows.per_page
  )
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
           'type', p.type, 'id', p.id, 'slug', p.slug, 'title', p.title,
           'summary', p.summary, 'score', p.score)
         order by p.score desc, pg_catalog.lower(p.title) collate app.alphabetical, p.type, p.id), '[]'::jsonb)
  from page_rows p
$$;
comment on function private.search_page_rows(text[],uuid[],uuid[],tsquery,text,boolean,integer,integer) is
  'Ranks search candidates (score = ts_rank + exact/prefix title boost, or trigram similarity when fuzzy) and returns one page as a jsonb array.';
grant execute on function private.search_page_rows(text[],uuid[],uuid[],tsquery,text,boolean,integer,integer) to anon, authenticated;

-- api.search_content
-- A query matching exactly one lexeme of the snapshot's vocabulary reads its totals, facets and
-- candidates from the search figures above instead of from every match.
-- A query whose words match nothing in the snapshot is typo-corrected against its lexicon
-- (private.search_correct); when the corrected text matches, it is searched instead and
-- meta.corrected_query names it.
-- Purpose: full-text search across sparks, concepts, trails and domains of the selected snapshot.
-- Params:  q (1..200 characters after trimming), type (spark|concept|trail|domain, optional),
--          difficulty (beginner|intermediate|advanced|expert, optional: sparks by difficulty,
--          trails by difficulty_level; concepts and domains have none and drop out),
--          page (1..100000, default 1), per_page (1..50, default 20), snapshot_id (optional).
-- Returns: {data: [{type,id,slug,title,summary,score}], meta: {total,page,per_page,total_pages,
--          has_next,has_prev[,corrected_query]}, facets: {types: {spark,concept,trail,domain},
--          difficulties: {beginner,intermediate,advanced,expert}}}. Ordered by score desc, then
--          lower(title), type, id. At most 1000 matches are ranked (title matches first, then
--          type and id); pages beyond them are empty; meta.total and the facets count every
--          match. facets.types ignores the type filter and facets.difficulties ignores the
--          difficulty filter. meta.corrected_query (normalised text) is present when typo
--          correction replaced words of q. When neither q nor its correction matches, titles
--          are matched by trigram word similarity instead and score is that similarity.
-- Errors:  22023 invalid q, type, difficulty, page or per_page; P0002 unknown snapshot_id.
create or replace function api.search_content(q text, type text default null::text, difficulty text default null::text, page integer default 1, per_page integer default 20, snapshot_id uuid default null::uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  rank_cap constant integer := 1000;
  normalized text := pg_catalog.btrim(private.search_normalize(search_content.q));
  snapshot uuid;
  query tsquery;
  fuzzy boolean := false;
  corrected text;
  single_lexeme text;
  lexeme_matches integer := 2;
  total integer := 0;
  title_total integer := 0;
  type_counts jsonb;
  level_counts jsonb;
  candidate_types text[] := '{}';
  candidate_snapshots uuid[] := '{}';
  candidate_ids uuid[] := '{}';
  data jsonb;
  -- titles starting with the (corrected) query, LIKE-escaped: computed once rather than per candidate
  title_prefix text;
begin
  if search_content.q is null or pg_catalog.char_length(pg_catalog.btrim(search_content.q)) not between 1 and 200 then
    raise exception using errcode = '22023', message = 'q must be 1 to 200 characters',
      detail = pg_catalog.jsonb_build_object('field', 'q')::text;
  end if;
  if search_content.type is not null and search_content.type not in ('spark', 'concept', 'trail', 'domain') then
    raise exception using errcode = '22023', message = 'type must be one of spark, concept, trail, domain',
      detail = pg_catalog.jsonb_build_object('field', 'type', 'value', search_content.type)::text;
  end if;
  perform private.require_difficulty('difficulty', search_content.difficulty);
  perform private.require_range('page', search_content.page, 1, 100000);
  perform private.require_range('per_page', search_content.per_page, 1, 50);

  snapshot := private.resolve_snapshot_id(search_content.snapshot_id);
  -- Typo tolerance: words matching nothing in the snapshot are corrected against its lexicon;
  -- the correction is used when it finds something.
  corrected := private.search_correct(snapshot, normalized);
  if corrected is not null and private.search_has_match(snapshot, private.search_query(corrected)) then
    normalized := corrected;
  else
    corrected := null;
  end if;
  title_prefix := pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(normalized, '\', '\\'), '%', '\%'), '_', '\_') || '%';
  query := private.search_query(normalized);

  if pg_catalog.numnode(query) > 0 then
    select l.lexeme, l.match_count into single_lexeme, lexeme_matches from private.search_single_lexeme(snapshot, query) l;
    -- Typo fallback: only when the words mean something (not only stop words) and find nothing.
    if pg_catalog.char_length(normalized) >= 3 and (lexeme_matches = 0 or (lexeme_matches = 2 and not (
         exists (select from app.sparks s where (snapshot is null or s.snapshot_id = snapshot) and s.search_vector @@ query)
         or exists (select from app.concepts c where (snapshot is null or c.snapshot_id = snapshot) and c.search_vector @@ query)
         or exists (select from app.trails t where (snapshot is null or t.snapshot_id = snapshot) and t.search_vector @@ query)
         or exists (select from app.domains d where (snapshot is null or d.snapshot_id = snapshot) and d.search_vector @@ query)))) then
      fuzzy := true;
    end if;
  end if;

  if pg_catalog.numnode(query) = 0 then
    null; -- only stop words: nothing matches
  elsif lexeme_matches = 0 and not fuzzy then
    null; -- no lexeme of the snapshot matches (and q too short for the typo fallback)
  elsif lexeme_matches = 1 and not fuzzy then
    -- One lexeme: counts from the lexeme figures, candidates from the title postings.
    select coalesce(pg_catalog.sum(c.docs), 0), coalesce(pg_catalog.sum(c.title_docs), 0)
      into total, title_total
      from app.search_lexeme_counts c
     where c.snapshot_id = snapshot and c.lexeme = single_lexeme
       and (search_content.type is null or c.type = search_content.type)
       and (search_content.difficulty is null or c.difficulty = search_content.difficulty);
    select pg_catalog.jsonb_object_agg(kinds.kind, coalesce(counts.n, 0) order by kinds.position)
      into type_counts
      from unnest(array['spark', 'concept', 'trail', 'domain']) with ordinality as kinds(kind, position)
      left join (
        select c.type, pg_catalog.sum(c.docs)::integer as n from app.search_lexeme_counts c
         where c.snapshot_id = snapshot and c.lexeme = single_lexeme
           and (search_content.difficulty is null or c.difficulty = search_content.difficulty)
         group by c.type
      ) counts on counts.type = kinds.kind;
    select pg_catalog.jsonb_object_agg(levels.value, coalesce(counts.n, 0) order by levels.sort_order)
      into level_counts
      from app.difficulty_levels levels
      left join (
        select c.difficulty, pg_catalog.sum(c.docs)::integer as n from app.search_lexeme_counts c
         where c.snapshot_id = snapshot and c.lexeme = single_lexeme
           and (search_content.type is null or c.type = search_content.type) and c.difficulty is not null
         group by c.difficulty
      ) counts on counts.difficulty = levels.value;
    if title_total >= rank_cap then
      -- Candidates: the first rank_cap title matches in (type, id) order, ranked from one range
      -- of the postings index (rank_vector stands in for the document: see
      -- private.search_rank_vector); only the page's rows are read from the content tables.
      with candidates as (
        select p.type, p.snapshot_id, p.id, p.sort_title,
               -- = round((rank + boost)::numeric, 6)::double precision, as the general path computes
               -- it, without two numeric conversions per candidate: rank + boost is a float4 plus
               -- 0, 0.5 or 1 (exact in float8), never within float8 error of a half-way point
               -- unless exactly on it, where both round half away from zero.
               pg_catalog.trunc((pg_catalog.ts_rank(p.rank_vector, query, 1)
                 + case when p.search_title = normalized then 1.0::double precision
                        when p.search_title like title_prefix then 0.5::double precision
                        else 0::double precision end) * 1000000::double precision + 0.5::double precision)
                 / 1000000::double precision as score
          from app.search_title_postings p
         where p.snapshot_id = snapshot and p.lexeme = single_lexeme
           and (search_content.type is null or p.type = search_content.type)
           and (search_content.difficulty is null or p.difficulty = search_content.difficulty)
         order by p.type, p.id
         limit rank_cap
      ),
      page_rows as (
        select c.* from candidates c
        -- score ties in the reader's alphabet, like every title order (app.alphabetical)
        order by c.score desc, c.sort_title collate app.alphabetical, c.type, c.id
        offset (search_content.page - 1) * search_content.per_page
        limit search_content.per_page
      )
      select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'type', p.type, 'id', p.id, 'slug', x.slug, 'title', x.title,
               'summary', x.summary, 'score', p.score)
             order by p.score desc, p.sort_title collate app.alphabetical, p.type, p.id), '[]'::jsonb)
        into data
        from page_rows p
        cross join lateral (
          select s.slug, s.title, s.summary from app.sparks s
           where p.type = 'spark' and s.snapshot_id = p.snapshot_id and s.id = p.id
          union all
          select k.slug, k.title, k.description from app.concepts k
           where p.type = 'concept' and k.snapshot_id = p.snapshot_id and k.id = p.id
          union all
          select t.slug, t.title, t.description from app.trails t
           where p.type = 'trail' and t.snapshot_id = p.snapshot_id and t.id = p.id
          union all
          select d.slug, d.name, d.description from app.domains d
           where p.type = 'domain' and d.snapshot_id = p.snapshot_id and d.id = p.id
        ) x;
    else
    -- Candidates: title matches in (type, id) order, read from the postings index, then (when
    -- they leave room) the other matches in the same order.
    select coalesce(pg_catalog.array_agg(p.type order by p.type, p.id), '{}'),
           coalesce(pg_catalog.array_agg(p.snapshot_id order by p.type, p.id), '{}'),
           coalesce(pg_catalog.array_agg(p.id order by p.type, p.id), '{}')
      into candidate_types, candidate_snapshots, candidate_ids
      from (
        select p.type, p.snapshot_id, p.id from app.search_title_postings p
         where p.snapshot_id = snapshot and p.lexeme = single_lexeme
           and (search_content.type is null or p.type = search_content.type)
           and (search_content.difficulty is null or p.difficulty = search_content.difficulty)
         order by p.type, p.id
         limit rank_cap
      ) p;
    if title_total < rank_cap and total > title_total then
      select candidate_types || coalesce(pg_catalog.array_agg(m.type order by m.type, m.id), '{}'),
             candidate_snapshots || coalesce(pg_catalog.array_agg(m.snapshot_id order by m.type, m.id), '{}'),
             candidate_ids || coalesce(pg_catalog.array_agg(m.id order by m.type, m.id), '{}')
        into candidate_types, candidate_snapshots, candidate_ids
        from (
          select m.type, m.snapshot_id, m.id
            from private.search_matches(snapshot, query, normalized, false) m
           where not m.title_hit
             and (search_content.type is null or m.type = search_content.type)
             and (search_content.difficulty is null or m.difficulty = search_content.difficulty)
           order by m.type, m.id
           limit rank_cap - title_total
        ) m;
    end if;
    end if;
  else
    -- General path: every match is listed, counted and ordered (rank_cap bounds the ranking).
    with matched as materialized (
      select m.type, m.snapshot_id, m.id, m.difficulty, m.title_hit
      from private.search_matches(snapshot, query, normalized, fuzzy) m
    ),
    filtered as (
      select m.* from matched m
      where (search_content.type is null or m.type = search_content.type)
        and (search_content.difficulty is null or m.difficulty = search_content.difficulty)
    ),
    candidates as (
      select f.* from filtered f order by f.title_hit desc, f.type, f.id limit rank_cap
    )
    select (select pg_catalog.count(*)::integer from filtered),
           (select pg_catalog.jsonb_object_agg(kinds.kind, coalesce(counts.n, 0) order by kinds.position)
              from unnest(array['spark', 'concept', 'trail', 'domain']) with ordinality as kinds(kind, position)
              left join (
                select m.type, pg_catalog.count(*)::integer as n from matched m
                where search_content.difficulty is null or m.difficulty = search_content.difficulty
                group by m.type
              ) counts on counts.type = kinds.kind),
           (select pg_catalog.jsonb_object_agg(levels.value, coalesce(counts.n, 0) order by levels.sort_order)
              from app.difficulty_levels levels
              left join (
                select m.difficulty, pg_catalog.count(*)::integer as n from matched m
                where (search_content.type is null or m.type = search_content.type) and m.difficulty is not null
                group by m.difficulty
              ) counts on counts.difficulty = levels.value),
           (select coalesce(pg_catalog.array_agg(c.type), '{}') from candidates c),
           (select coalesce(pg_catalog.array_agg(c.snapshot_id), '{}') from candidates c),
           (select coalesce(pg_catalog.array_agg(c.id), '{}') from candidates c)
      into total, type_counts, level_counts, candidate_types, candidate_snapshots, candidate_ids;
  end if;

  if type_counts is null then
    select pg_catalog.jsonb_object_agg(kinds.kind, 0 order by kinds.position) into type_counts
      from unnest(array['spark', 'concept', 'trail', 'domain']) with ordinality as kinds(kind, position);
    select pg_catalog.jsonb_object_agg(levels.value, 0 order by levels.sort_order) into level_counts
      from app.difficulty_levels levels;
  end if;

  return pg_catalog.jsonb_build_object(
    'data', coalesce(data, private.search_page_rows(candidate_types, candidate_snapshots, candidate_ids, query,
                                                    normalized, fuzzy, search_content.page, search_content.per_page)),
    -- Pages stop at the rank cap; the total counts every match.
    'meta', private.page_meta(least(total, rank_cap), search_content.page, search_content.per_page)
            || pg_catalog.jsonb_build_object('total', total)
            || case when corrected is not null then pg_catalog.jsonb_build_object('corrected_query', corrected) else '{}'::jsonb end,
    'facets', pg_catalog.jsonb_build_object('types', type_counts, 'difficulties', level_counts));
end
$$;
comment on function api.search_content(text, text, text, integer, integer, uuid) is
  'Full-text search (english, accent-insensitive, typo-tolerant, title A > summary/description B) over sparks, concepts, trails, domains of a snapshot. Params: q, type, difficulty, page, per_page (max 50), snapshot_id. Returns {data:[{type,id,slug,title,summary,score}], meta (corrected_query when q was corrected), facets:{types,difficulties}}. Errors: 22023 invalid parameter, P0002 unknown snapshot.';
grant execute on function api.search_content(text, text, text, integer, integer, uuid) to anon, authenticated;

-- ==== supabase/schemas/07-graph.sql ====

-- Graph: spark links, prerequisite traversal and learning paths, over node rows and rounds kept
-- per snapshot by triggers.

-- private.find_spark
-- Purpose: the spark a slug names in the selected snapshot. With no snapshot selected (nothing
--          published yet) the slug is looked up in the most recently created snapshot holding it.
create or replace function private.find_spark(slug text, snapshot uuid)
returns table(snapshot_id uuid, id uuid, title text)
language sql
stable
set search_path = ''
as $$
  select s.snapshot_id, s.id, s.title
  from app.sparks s
  join app.snapshots n on n.id = s.snapshot_id
  where s.slug = find_spark.slug
    and (find_spark.snapshot is null or s.snapshot_id = find_spark.snapshot)
  order by n.created_at desc, n.id
  limit 1
$$;
comment on function private.find_spark(text,uuid) is
  'The spark (snapshot_id, id, title) a slug names in a snapshot; with no snapshot, in the newest snapshot holding the slug.';
grant execute on function private.find_spark(text,uuid) to anon, authenticated;

-- api.list_spark_links
-- Purpose: a paginated list of spark relationships (all link types).
-- Params:  spark (slug, optional): only links touching it; direction (needs spark):
--          outgoing (spark is the source: what it leads to), incoming (spark is the target: what
--          leads to it), both (default); type (prerequisite|related|extends, optional);
--          page (1..100000, default 1); per_page (1..100, default 20); snapshot_id (optional).
-- Returns: {data: [{source: {id,slug,title}, target: {id,slug,title}, type, weight}],
--          meta: {total,page,per_page,total_pages,has_next,has_prev}}, ordered by source title,
--          target title, type, then ids.
-- Errors:  22023 invalid type, direction (or direction without spark), page or per_page;
--          P0002 unknown spark or snapshot_id.
create or replace function api.list_spark_links(spark text default null::text, type text default null::text, direction text default null::text, page integer default 1, per_page integer default 20, snapshot_id uuid default null::uuid)
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
  perform private.require_range('page', list_spark_links.page, 1, 100000);
  perform private.require_range('per_page', list_spark_links.per_page, 1, 100);

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
    'meta', private.page_meta(t.n, list_spark_links.page, list_spark_links.per_page)
  ) into result
  from total t;
  return result;
end
$$;
comment on function api.list_spark_links(text,text,text,integer,integer,uuid) is
  'Paginated spark relationships. Params: spark (slug), type (prerequisite|related|extends), direction (outgoing|incoming|both, needs spark), page, per_page (max 100), snapshot_id. Returns {data:[{source:{id,slug,title},target:{id,slug,title},type,weight}], meta}. Errors: 22023 invalid parameter, P0002 unknown spark/snapshot.';
grant execute on function api.list_spark_links(text,text,text,integer,integer,uuid) to anon, authenticated;

create table app.spark_rounds (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  spark_id uuid not null,
  round integer not null check (round >= 0),
  constraint spark_rounds_pkey primary key (snapshot_id, spark_id)
);
comment on table app.spark_rounds is
  'Kahn round of every spark of an acyclic snapshot (longest prerequisite chain above it); all or none of a snapshot''s sparks. Written by private.refresh_spark_rounds.';
alter table app.spark_rounds enable row level security;
create policy "anyone reads spark rounds" on app.spark_rounds
  for select to anon, authenticated
  using (true);
grant select on app.spark_rounds to anon, authenticated;

-- private.refresh_spark_rounds
-- Purpose: (re)computes the Kahn round of every spark of one snapshot, set-based: round 0 is
--          the sparks without prerequisites; each pass frees the sparks whose last waiting
--          prerequisite was freed by the previous pass (one pass per round, each link read once).
--          A snapshot with a prerequisite cycle gets no rows (its sparks never all become free).
-- Params:  snapshot_id.
-- Returns: the number of rows written (0 for a cyclic snapshot).
create or replace function private.refresh_spark_rounds(snapshot_id uuid)
returns integer
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
declare
  sid constant uuid := refresh_spark_rounds.snapshot_id;
  frontier uuid[];
  current_round integer := 0;
  written integer;
  spark_total integer;
begin
  delete from app.spark_rounds r where r.snapshot_id = sid;

  -- How many prerequisites each spark still waits for.
  create temporary table round_waiting on commit drop as
  select l.target_id as id, pg_catalog.count(*)::integer as waiting
  from app.spark_links l
  where l.snapshot_id = sid and l.type = 'prerequisite'
  group by l.target_id;
  alter table round_waiting add primary key (id);

  insert into app.spark_rounds (snapshot_id, spark_id, round)
  select sid, s.id, 0
  from app.sparks s
  where s.snapshot_id = sid and not exists (select from round_waiting w where w.id = s.id);
  select pg_catalog.array_agg(r.spark_id) into frontier
  from app.spark_rounds r where r.snapshot_id = sid;

  while frontier is not null loop
    current_round := current_round + 1;
    with freed_links as (
      select l.target_id, pg_catalog.count(*)::integer as n
      from pg_catalog.unnest(frontier) f(id)
      join app.spark_links l on l.snapshot_id = sid and l.source_id = f.id and l.type = 'prerequisite'
      group by l.target_id
    ),
    counted as (
      update round_waiting w set waiting = w.waiting - fl.n
      from freed_links fl
      where w.id = fl.target_id
      returning w.id, w.waiting
    )
    select pg_catalog.array_agg(c.id) into frontier from counted c where c.waiting = 0;
    insert into app.spark_rounds (snapshot_id, spark_id, round)
    select sid, f.id, current_round from pg_catalog.unnest(frontier) f(id);
  end loop;

  drop table round_waiting;
  select pg_catalog.count(*)::integer into written from app.spark_rounds r where r.snapshot_id = sid;
  select pg_catalog.count(*)::integer into spark_total from app.sparks s where s.snapshot_id = sid;
  if written < spark_total then
    -- A cycle: its members (and what lies behind them) never became free. All or none.
    delete from app.spark_rounds r where r.snapshot_id = sid;
    written := 0;
  end if;
  return written;
end
$$;
comment on function private.refresh_spark_rounds(uuid) is
  'Computes app.spark_rounds for one snapshot (Kahn rounds, set-based); writes nothing for a cyclic snapshot. Returns the rows written.';

-- The import writes a snapshot's rollups (private.refresh_content_rollups) once its content is
-- in place: compute the rounds then too.
create or replace function private.fill_spark_rounds()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform private.refresh_spark_rounds(new.snapshot_id);
  return null;
end
$$;
comment on function private.fill_spark_rounds() is
  'Trigger: computes a snapshot''s spark rounds whenever its rollup row is written (at the end of an import).';

create trigger snapshot_rollups_spark_rounds
  after insert on app.snapshot_rollups
  for each row execute function private.fill_spark_rounds();

-- Any later write to prerequisite links makes a snapshot's rounds unknown again.
create or replace function private.forget_spark_rounds()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'TRUNCATE' then
    delete from app.spark_rounds;
  elsif tg_op = 'INSERT' then
    delete from app.spark_rounds r where r.snapshot_id in (select n.snapshot_id from new_links n);
  elsif tg_op = 'DELETE' then
    delete from app.spark_rounds r where r.snapshot_id in (select o.snapshot_id from old_links o);
  else
    delete from app.spark_rounds r
    where r.snapshot_id in (select n.snapshot_id from new_links n union select o.snapshot_id from old_links o);
  end if;
  return null;
end
$$;
comment on function private.forget_spark_rounds() is
  'Trigger: a write to spark_links deletes the stored spark rounds of the snapshots it touches.';

create trigger spark_links_forget_rounds_insert
  after insert on app.spark_links referencing new table as new_links
  for each statement execute function private.forget_spark_rounds();

create trigger spark_links_forget_rounds_update
  after update on app.spark_links referencing old table as old_links new table as new_links
  for each statement execute function private.forget_spark_rounds();

create trigger spark_links_forget_rounds_delete
  after delete on app.spark_links referencing old table as old_links
  for each statement execute function private.forget_spark_rounds();

create trigger spark_links_forget_rounds_truncate
  after truncate on app.spark_links
  for each statement execute function private.forget_spark_rounds();

create table app.spark_graph_nodes (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  spark_id uuid not null,
  parents uuid[] not null,
  parent_weights double precision[] not null,
  children uuid[] not null,
  slug text not null,
  title text not null,
  estimated_mins integer not null,
  round integer,
  constraint spark_graph_nodes_pkey primary key (snapshot_id, spark_id)
);
comment on table app.spark_graph_nodes is
  'One row per spark: its prerequisite parents (with the links'' weights, same order) and children, the spark fields the graph and path bodies show, and its stored round. Maintained by triggers on app.sparks, app.spark_links and app.spark_rounds (private.refresh_spark_graph_nodes).';
alter table app.spark_graph_nodes enable row level security;
create policy "anyone reads spark graph nodes" on app.spark_graph_nodes
  for select to anon, authenticated
  using (true);
grant select on app.spark_graph_nodes to anon, authenticated;

-- private.refresh_spark_graph_nodes
-- Purpose: rewrites the app.spark_graph_nodes rows of the given sparks from app.sparks,
--          app.spark_links and app.spark_rounds (a spark that no longer exists loses its row).
-- Params:  snapshot_ids, spark_ids: parallel arrays of keys (duplicates allowed).
-- Returns: the number of rows written.
create or replace function private.refresh_spark_graph_nodes(snapshot_ids uuid[], spark_ids uuid[])
returns integer
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
declare
  written integer;
begin
  create temporary table graph_node_keys on commit drop as
  select distinct k.snapshot_id, k.spark_id
  from rows from (pg_catalog.unnest(refresh_spark_graph_nodes.snapshot_ids), pg_catalog.unnest(refresh_spark_graph_nodes.spark_ids)) k(snapshot_id, spark_id);
  analyze graph_node_keys;

  delete from app.spark_graph_nodes g
  using graph_node_keys k
  where g.snapshot_id = k.snapshot_id and g.spark_id = k.spark_id;

  insert into app.spark_graph_nodes (snapshot_id, spark_id, parents, parent_weights, children,
                                     slug, title, estimated_mins, round)
  select s.snapshot_id, s.id, coalesce(p.parents, '{}'), coalesce(p.parent_weights, '{}'), coalesce(c.children, '{}'),
    s.slug, s.title, s.estimated_mins, r.round
  from graph_node_keys k
  join app.sparks s on s.snapshot_id = k.snapshot_id and s.id = k.spark_id
  left join app.spark_rounds r on r.snapshot_id = s.snapshot_id and r.spark_id = s.id
  left join (
    select l.snapshot_id, l.target_id,
      pg_catalog.array_agg(l.source_id order by l.source_id) as parents,
      pg_catalog.array_agg(l.weight::double precision order by l.source_id) as parent_weights
    from graph_node_keys k
    join app.spark_links l on l.snapshot_id = k.snapshot_id and l.target_id = k.spark_id and l.type = 'prerequisite'
    group by l.snapshot_id, l.target_id
  ) p on p.snapshot_id = s.snapshot_id and p.target_id = s.id
  left join (
    select l.snapshot_id, l.source_id, pg_catalog.array_agg(l.target_id order by l.target_id) as children
    from graph_node_keys k
    join app.spark_links l on l.snapshot_id = k.snapshot_id and l.source_id = k.spark_id and l.type = 'prerequisite'
    group by l.snapshot_id, l.source_id
  ) c on c.snapshot_id = s.snapshot_id and c.source_id = s.id;
  get diagnostics written = row_count;

  drop table graph_node_keys;
  return written;
end
$$;
comment on function private.refresh_spark_graph_nodes(uuid[],uuid[]) is
  'Rewrites the app.spark_graph_nodes rows of the given (snapshot_id, spark_id) keys from app.sparks, app.spark_links and app.spark_rounds. Returns the rows written.';

-- Triggers: the keys a statement touched, old and new rows alike.
create or replace function private.sync_spark_graph_nodes_from_sparks()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  snaps uuid[];
  ids uuid[];
begin
  if tg_op = 'TRUNCATE' then
    delete from app.spark_graph_nodes;
    return null;
  elsif tg_op = 'INSERT' then
    select pg_catalog.array_agg(n.snapshot_id), pg_catalog.array_agg(n.id) into snaps, ids from new_sparks n;
  elsif tg_op = 'DELETE' then
    select pg_catalog.array_agg(o.snapshot_id), pg_catalog.array_agg(o.id) into snaps, ids from old_sparks o;
  else
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select n.snapshot_id, n.id from new_sparks n union select o.snapshot_id, o.id from old_sparks o) k;
  end if;
  if ids is not null then
    perform private.refresh_spark_graph_nodes(snaps, ids);
  end if;
  return null;
end
$$;
comment on function private.sync_spark_graph_nodes_from_sparks() is
  'Trigger: rewrites the app.spark_graph_nodes rows of the sparks a statement wrote.';

create trigger sparks_graph_nodes_insert
  after insert on app.sparks referencing new table as new_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_insert;

create trigger sparks_graph_nodes_update
  after update on app.sparks referencing old table as old_sparks new table as new_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_update;

create trigger sparks_graph_nodes_delete
  after delete on app.sparks referencing old table as old_sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_delete;

create trigger sparks_graph_nodes_truncate
  after truncate on app.sparks
  for each statement execute function private.sync_spark_graph_nodes_from_sparks();
alter table app.sparks enable always trigger sparks_graph_nodes_truncate;

create or replace function private.sync_spark_graph_nodes_from_links()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  snaps uuid[];
  ids uuid[];
begin
  if tg_op = 'TRUNCATE' then
    select pg_catalog.array_agg(g.snapshot_id), pg_catalog.array_agg(g.spark_id) into snaps, ids
    from app.spark_graph_nodes g
    where pg_catalog.cardinality(g.parents) > 0 or pg_catalog.cardinality(g.children) > 0;
  elsif tg_op = 'INSERT' then
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select n.snapshot_id, n.source_id as id from new_links n
          union select n.snapshot_id, n.target_id from new_links n) k;
  elsif tg_op = 'DELETE' then
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select o.snapshot_id, o.source_id as id from old_links o
          union select o.snapshot_id, o.target_id from old_links o) k;
  else
    select pg_catalog.array_agg(k.snapshot_id), pg_catalog.array_agg(k.id) into snaps, ids
    from (select n.snapshot_id, n.source_id as id from new_links n
          union select n.snapshot_id, n.target_id from new_links n
          union select o.snapshot_id, o.source_id from old_links o
          union select o.snapshot_id, o.target_id from old_links o) k;
  end if;
  if ids is not null then
    perform private.refresh_spark_graph_nodes(snaps, ids);
  end if;
  return null;
end
$$;
comment on function private.sync_spark_graph_nodes_from_links() is
  'Trigger: rewrites the app.spark_graph_nodes rows of both ends of every spark link a statement wrote.';

create trigger spark_links_graph_nodes_insert
  after insert on app.spark_links referencing new table as new_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_insert;

create trigger spark_links_graph_nodes_update
  after update on app.spark_links referencing old table as old_links new table as new_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_update;

create trigger spark_links_graph_nodes_delete
  after delete on app.spark_links referencing old table as old_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_delete;

create trigger spark_links_graph_nodes_truncate
  after truncate on app.spark_links
  for each statement execute function private.sync_spark_graph_nodes_from_links();
alter table app.spark_links enable always trigger spark_links_graph_nodes_truncate;

-- The round column mirrors app.spark_rounds (computed at import, deleted on link writes).
create or replace function private.sync_spark_graph_node_rounds()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'TRUNCATE' then
    update app.spark_graph_nodes g set round = null where g.round is not null;
  elsif tg_op = 'DELETE' then
    update app.spark_graph_nodes g set round = null
    from old_rounds o
    where g.snapshot_id = o.snapshot_id and g.spark_id = o.spark_id;
  else
    if tg_op = 'UPDATE' then
      update app.spark_graph_nodes g set round = null
      from old_rounds o
      where g.snapshot_id = o.snapshot_id and g.spark_id = o.spark_id;
    end if;
    update app.spark_graph_nodes g set round = n.round
    from new_rounds n
    where g.snapshot_id = n.snapshot_id and g.spark_id = n.spark_id;
  end if;
  return null;
end
$$;
comment on function private.sync_spark_graph_node_rounds() is
  'Trigger: copies the rounds a statement wrote to app.spark_rounds into app.spark_graph_nodes.round (null when deleted).';

create trigger spark_rounds_graph_nodes_insert
  after insert on app.spark_rounds referencing new table as new_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_insert;

create trigger spark_rounds_graph_nodes_update
  after update on app.spark_rounds referencing old table as old_rounds new table as new_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_update;

create trigger spark_rounds_graph_nodes_delete
  after delete on app.spark_rounds referencing old table as old_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_delete;

create trigger spark_rounds_graph_nodes_truncate
  after truncate on app.spark_rounds
  for each statement execute function private.sync_spark_graph_node_rounds();
alter table app.spark_rounds enable always trigger spark_rounds_graph_nodes_truncate;

-- private.walk_spark_graph
-- Purpose: the sparks reached from a root along prerequisite links, breadth first, each once at
--          its shortest depth, with its node row. Ancestors follow `parents`, descendants
--          `children`; both walks start at the root and a spark reached by both keeps the smaller
--          depth. A spark a walk has seen is never walked again, so the walk ends on any data,
--          cycles included.
-- Params:  snapshot_id; root (spark id); ancestors, descendants (which walks);
--          max_depth (null: no limit).
-- Returns: one row per reached spark: depth and its app.spark_graph_nodes columns.
-- Cost:    one index scan of app.spark_graph_nodes per level to walk, one per depth to read the
--          reached rows; proportional to the visited subgraph, not to the graph.
create or replace function private.walk_spark_graph(snapshot_id uuid, root uuid, ancestors boolean, descendants boolean, max_depth integer)
returns table (depth integer, spark_id uuid, parents uuid[], parent_weights double precision[], children uuid[],
               slug text, title text, estimated_mins integer, round integer)
language sql
stable
set search_path = ''
as $$
  with recursive
  -- One row per walk and level: the sparks first reached at that depth, and all seen so far.
  walk (upward, depth, frontier, seen) as (
    select w.upward, 0, array[walk_spark_graph.root], array[walk_spark_graph.root]
    from (values (true), (false)) w(upward)
    where case when w.upward then walk_spark_graph.ancestors else walk_spark_graph.descendants end
    union all
    select w.upward, w.depth + 1, nxt.ids, w.seen || nxt.ids
    from walk w
    cross join lateral (
      select coalesce(pg_catalog.array_agg(x.id), '{}')
      from (
        select pg_catalog.unnest(case when w.upward then g.parents else g.children end)
        from app.spark_graph_nodes g
        where g.snapshot_id = walk_spark_graph.snapshot_id and g.spark_id = any (w.frontier)
        except
        select pg_catalog.unnest(w.seen)
      ) x(id)
    ) nxt(ids)
    where (walk_spark_graph.max_depth is null or w.depth < walk_spark_graph.max_depth)
      and pg_catalog.cardinality(w.frontier) > 0
  ),
  reached (id, depth) as materialized (
    select n.id, pg_catalog.min(w.depth)
    from walk w cross join pg_catalog.unnest(w.frontier) n(id)
    group by n.id
  )
  -- One index scan per depth (spark_id = any of that depth's ids); the lateral keeps the plan a
  -- nested loop over the few depth groups whatever the row estimates.
  select b.depth, g.spark_id, g.parents, g.parent_weights, g.children, g.slug, g.title, g.estimated_mins, g.round
  from (select r.depth, pg_catalog.array_agg(r.id) as ids from reached r group by r.depth) b
  cross join lateral (
    select g.* from app.spark_graph_nodes g
    where g.snapshot_id = walk_spark_graph.snapshot_id and g.spark_id = any (b.ids)
  ) g
$$;
comment on function private.walk_spark_graph(uuid,uuid,boolean,boolean,integer) is
  'Breadth-first prerequisite walk from a root (ancestors, descendants or both, max_depth or unlimited): each reached spark once at its shortest depth, with its app.spark_graph_nodes row. Ends on cyclic data.';
grant execute on function private.walk_spark_graph(uuid,uuid,boolean,boolean,integer) to anon, authenticated;

-- private.compute_spark_rounds
-- Purpose: the Kahn round of each spark of a prerequisite closure, for snapshots without stored
--          rounds (content written directly, a cyclic snapshot, links written after the import).
--          The round of a spark is the length of the longest prerequisite chain above it inside
--          the closure (0 without prerequisites), which is the round in which Kahn's algorithm
--          frees it. Every parent of a member is a member. Cost: closure links x longest chain.
--          Cycle guard: rounds stop growing at the closure size, and sparks never freed (members
--          of a cycle) take that size, i.e. go last.
-- Params:  snapshot_id; ids: the closure's spark ids.
-- Returns: the rounds, in the order of ids.
create or replace function private.compute_spark_rounds(snapshot_id uuid, ids uuid[])
returns integer[]
language sql
stable
set search_path = ''
as $$
  with recursive
  closure_links (source_id, target_id) as materialized (
    select pg_catalog.unnest(g.parents), g.spark_id
    from app.spark_graph_nodes g
    where g.snapshot_id = compute_spark_rounds.snapshot_id and g.spark_id = any (compute_spark_rounds.ids)
  ),
  computed (id, round) as (
    select c.id, 0
    from pg_catalog.unnest(compute_spark_rounds.ids) c(id)
    where not exists (select from closure_links k where k.target_id = c.id)
    union
    select k.target_id, r.round + 1
    from computed r
    join closure_links k on k.source_id = r.id
    where r.round < pg_catalog.cardinality(compute_spark_rounds.ids)
  ),
  latest (id, round) as (
    select r.id, pg_catalog.max(r.round) from computed r group by r.id
  )
  -- in the order of ids: a left join by position, no per-id search
  select pg_catalog.array_agg(coalesce(l.round, pg_catalog.cardinality(compute_spark_rounds.ids)) order by c.ord)
  from pg_catalog.unnest(compute_spark_rounds.ids) with ordinality c(id, ord)
  left join latest l on l.id = c.id
$$;
comment on function private.compute_spark_rounds(uuid,uuid[]) is
  'Kahn rounds of the sparks of a prerequisite closure (longest prerequisite chain above each inside it; cycle members get the closure size), in the order of ids.';
grant execute on function private.compute_spark_rounds(uuid,uuid[]) to anon, authenticated;

-- api.get_spark_graph
-- Purpose: the prerequisite neighbourhood of one spark.
-- Params:  slug; direction ancestors (what must be known first, default) | descendants (what it
--          unlocks) | both; max_depth 0..10 (default 3); snapshot_id (optional).
-- Returns: {root_id, direction, max_depth, nodes: [{id,slug,title,depth}], edges:
--          [{source,target,weight,type}]}. depth is the shortest number of prerequisite links
--          from the root (root 0); each node appears once; nodes ordered by depth, title, id.
--          edges are every prerequisite link whose two ends are both returned nodes, ordered by
--          source, target. Safe on cyclic data (private.walk_spark_graph).
-- Errors:  22023 invalid direction or max_depth; P0002 unknown slug or snapshot_id.
create or replace function api.get_spark_graph(slug text, direction text default 'ancestors'::text, max_depth integer default 3, snapshot_id uuid default null::uuid)
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

  with nodes as materialized (
    select * from private.walk_spark_graph(root.snapshot_id, root.id,
      get_spark_graph.direction in ('ancestors', 'both'), get_spark_graph.direction in ('descendants', 'both'),
      get_spark_graph.max_depth)
  )
  select pg_catalog.json_build_object(
    'root_id', root.id,
    'direction', get_spark_graph.direction,
    'max_depth', get_spark_graph.max_depth,
    'nodes', (select pg_catalog.json_agg(
                       pg_catalog.json_build_object('id', n.spark_id, 'slug', n.slug, 'title', n.title, 'depth', n.depth)
                       order by n.depth, pg_catalog.lower(n.title) collate app.alphabetical, n.spark_id)
              from nodes n),
    -- The links into every returned node from a returned node: for all three directions, every
    -- prerequisite link with both ends returned. "(... in (...)) is true" keeps the membership
    -- test a hashed subplan built once.
    'edges', coalesce((
      select pg_catalog.json_agg(
               pg_catalog.json_build_object('source', e.source_id, 'target', e.target_id, 'weight', e.weight, 'type', 'prerequisite')
               order by e.source_id, e.target_id)
      from (
        select pg_catalog.unnest(n.parents) as source_id, n.spark_id as target_id, pg_catalog.unnest(n.parent_weights) as weight
        from nodes n
      ) e
      where (e.source_id in (select r.spark_id from nodes r)) is true), '[]'::json)
  ) into result;
  return result;
end
$$;
comment on function api.get_spark_graph(text,text,integer,uuid) is
  'Prerequisite subgraph around a spark. Params: slug, direction (ancestors|descendants|both, default ancestors), max_depth (0..10, default 3), snapshot_id. Returns {root_id, direction, max_depth, nodes:[{id,slug,title,depth}], edges:[{source,target,weight,type}]}. Errors: 22023 invalid direction/max_depth, P0002 unknown slug/snapshot.';
grant execute on function api.get_spark_graph(text,text,integer,uuid) to anon, authenticated;

-- api.get_learning_path
-- Purpose: what to study, in order, to reach a target spark.
-- Params:  target (spark slug); skip_mastered (default true): leave out sparks the caller has a
--          `mastered` learning event for (anonymous callers have none); snapshot_id (optional).
-- Returns: {target_id, path: [{slug,title,estimated_mins}], total_mins, skipped_count}.
--          path holds every prerequisite ancestor of the target (transitively) and the target.
--          Order: Kahn's algorithm in rounds. Round 0 holds the sparks with no prerequisite in
--          the set; round k those whose prerequisites all sit in earlier rounds; inside a round,
--          lower(title) then id. So every spark comes after all of its prerequisites. If the data
--          had a cycle (imports reject them) the call still ends; its members go last.
--          total_mins sums the returned steps; skipped_count counts the sparks left out.
--          Rounds come from app.spark_rounds when the import stored them, else are computed.
-- Errors:  P0002 unknown target or snapshot_id.
create or replace function api.get_learning_path(target text, skip_mastered boolean default true, snapshot_id uuid default null::uuid)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  root record;
  ids uuid[];
  rounds integer[];
  steps json[];
  titles text[];
  minutes integer[];
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

  -- The closure: the target and all its ancestors, each with its step, order keys and round.
  select pg_catalog.array_agg(w.spark_id), pg_catalog.array_agg(w.round),
    pg_catalog.array_agg(pg_catalog.json_build_object('slug', w.slug, 'title', w.title, 'estimated_mins', w.estimated_mins)),
    pg_catalog.array_agg(pg_catalog.lower(w.title)), pg_catalog.array_agg(w.estimated_mins)
  into ids, rounds, steps, titles, minutes
  from private.walk_spark_graph(root.snapshot_id, root.id, true, false, null) w;

  -- Rounds stored at import (app.spark_rounds, copied into the rows) hold all or none of a
  -- snapshot's sparks: the target's tells which.
  if rounds[pg_catalog.array_position(ids, root.id)] is null then
    rounds := private.compute_spark_rounds(root.snapshot_id, ids);
  end if;

  -- learning_events is readable only by signed-in users (RLS: their own rows); anon has no
  -- grant at all, so look only when this role may.
  if get_learning_path.skip_mastered and caller is not null
     and pg_catalog.has_table_privilege('app.learning_events', 'select') then
    select coalesce(pg_catalog.array_agg(distinct e.spark_id), '{}') into mastered
    from app.learning_events e
    where e.user_id = caller and e.verb = 'mastered' and e.spark_id = any (ids);
  end if;

  select pg_catalog.json_build_object(
    'target_id', root.id,
    'path', coalesce(pg_catalog.json_agg(c.step order by c.round, c.title collate app.alphabetical, c.id)
                       filter (where not (c.id = any (mastered))), '[]'::json),
    'total_mins', coalesce(pg_catalog.sum(c.minutes) filter (where not (c.id = any (mastered))), 0),
    'skipped_count', pg_catalog.count(*) filter (where c.id = any (mastered))
  ) into result
  from rows from (pg_catalog.unnest(ids), pg_catalog.unnest(steps), pg_catalog.unnest(titles),
                  pg_catalog.unnest(minutes), pg_catalog.unnest(rounds)) c(id, step, title, minutes, round);
  return result;
end
$$;
comment on function api.get_learning_path(text,boolean,uuid) is
  'Learning path to a target spark: all prerequisite ancestors plus the target, prerequisites first (Kahn rounds, then lower(title), then id). Params: target, skip_mastered (default true), snapshot_id. Returns {target_id, path:[{slug,title,estimated_mins}], total_mins, skipped_count}. Errors: P0002 unknown target/snapshot.';
grant execute on function api.get_learning_path(text,boolean,uuid) to anon, authenticated;

-- ==== supabase/schemas/08-journeys.sql ====

-- Journeys: enrollments and learning events, and the progress derived from them on every read.

create table app.enrollments (
  id uuid default extensions.gen_random_uuid() primary key,
  user_id uuid default auth.uid() not null,
  trail_id uuid not null,
  started_at timestamp with time zone default now() not null,
  constraint enrollments_user_id_trail_id_key unique (user_id, trail_id)
);
alter table app.enrollments enable row level security;
create policy "learners enroll themselves" on app.enrollments
  for insert to authenticated
  with check (user_id = (select auth.uid()));
create policy "learners read their own enrollments" on app.enrollments
  for select to authenticated
  using (user_id = (select auth.uid()));
grant insert, select on app.enrollments to authenticated;

create table app.learning_events (
  id uuid default extensions.gen_random_uuid() primary key,
  user_id uuid default auth.uid() not null,
  spark_id uuid not null,
  verb text not null references app.learning_verbs (value),
  occurred_at timestamp with time zone default now() not null,
  recorded_at timestamp with time zone default now() not null,
  idempotency_key text check ((length(idempotency_key) >= 1) and (length(idempotency_key) <= 200)),
  constraint learning_events_natural_key unique (user_id, spark_id, verb, occurred_at),
  constraint learning_events_user_id_idempotency_key_key unique (user_id, idempotency_key)
);
alter table app.learning_events enable row level security;
create policy "learners read their own events" on app.learning_events
  for select to authenticated
  using (user_id = (select auth.uid()));
create policy "learners record their own events" on app.learning_events
  for insert to authenticated
  with check (user_id = (select auth.uid()));
grant insert, select on app.learning_events to authenticated;

create index learning_events_user_time on app.learning_events (user_id, occurred_at desc);

create index learning_events_verb on app.learning_events (verb);

-- Journeys look a trail up by its entity id across snapshots (the fallback for trails that left
-- the current snapshot); the primary key leads with snapshot_id.
create index trails_entity_id on app.trails (id, snapshot_id);

-- The rules every journey read shares, each stated once.

-- private.journey_trail
-- Purpose: which snapshot's copy of a trail answers a journey: the current (published) snapshot
--          when the trail is in it; otherwise the most recently published snapshot that still had
--          the trail (the trail was removed; the learner keeps seeing it as it last was). Drafts
--          never count; no row when no published or archived snapshot has the trail.
-- Returns: (snapshot_id, slug, title, difficulty_level).
create or replace function private.journey_trail(trail_id uuid)
returns table(snapshot_id uuid, slug text, title text, difficulty_level text)
language sql
stable
rows 1
set search_path = ''
as $$
  select tr.snapshot_id, tr.slug, tr.title, tr.difficulty_level
  from app.trails tr
  join app.snapshots s on s.id = tr.snapshot_id
  where tr.id = journey_trail.trail_id
    and s.status in ('published', 'archived')
  order by (s.status = 'published') desc, s.published_at desc nulls last, s.created_at desc, s.id
  limit 1
$$;
comment on function private.journey_trail(uuid) is
  'The snapshot copy of a trail that answers a journey: current if the trail is there, else the latest published/archived one that had it.';
grant execute on function private.journey_trail(uuid) to anon, authenticated;

-- private.spark_status
-- Purpose: a learner's status on one spark: completed by a completed or mastered event, in
--          progress after a started one, else not started (a bookmark alone changes nothing).
create or replace function private.spark_status(completed_at timestamp with time zone, started boolean)
returns text
language sql
immutable
set search_path = ''
as $$
  select case
    when spark_status.completed_at is not null then 'completed'
    when spark_status.started then 'in_progress'
    else 'not_started'
  end
$$;
comment on function private.spark_status(timestamp with time zone, boolean) is
  'completed | in_progress | not_started from a spark''s first completion time and whether it was started.';
grant execute on function private.spark_status(timestamp with time zone, boolean) to anon, authenticated;

-- private.journey_status
-- Purpose: an enrollment's status from its spark counts: completed when the trail has sparks and
--          all are completed; in progress when any is started or completed; else not started (a
--          trail with no sparks stays not started).
create or replace function private.journey_status(total_sparks integer, completed_sparks integer, touched_sparks integer)
returns text
language sql
immutable
set search_path = ''
as $$
  select case
    when journey_status.total_sparks > 0 and journey_status.completed_sparks = journey_status.total_sparks then 'completed'
    when journey_status.touched_sparks > 0 then 'in_progress'
    else 'not_started'
  end
$$;
comment on function private.journey_status(integer, integer, integer) is
  'completed | in_progress | not_started from an enrollment''s total, completed and touched (started or completed) spark counts.';
grant execute on function private.journey_status(integer, integer, integer) to anon, authenticated;

-- private.caller_spark_states
-- Purpose: the caller's progress on each spark they have events on, whichever trail the events
--          were recorded from (progress belongs to the spark).
-- Returns: (spark_id, completed_at: the first completed or mastered event, started: a started
--          event exists, last_event_at: the latest event of any verb).
create or replace function private.caller_spark_states()
returns table(spark_id uuid, completed_at timestamp with time zone, started boolean, last_event_at timestamp with time zone)
language sql
stable
set search_path = ''
as $$
  select
    le.spark_id,
    pg_catalog.min(le.occurred_at) filter (where le.verb in ('completed', 'mastered')),
    pg_catalog.bool_or(le.verb = 'started'),
    pg_catalog.max(le.occurred_at)
  from app.learning_events le
  where le.user_id = (select auth.uid())
  group by le.spark_id
$$;
comment on function private.caller_spark_states() is
  'Per spark the caller has learning events on: first completion (completed or mastered), whether started, last event time.';
grant execute on function private.caller_spark_states() to anon, authenticated;

-- private.spark_progress_json
-- Purpose: one spark_progress element of a journey: {spark_id, title, status, completed_at}.
create or replace function private.spark_progress_json(title text, spark_id uuid, status text, completed_at timestamp with time zone)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'spark_id', spark_progress_json.spark_id,
    'title', spark_progress_json.title,
    'status', spark_progress_json.status,
    'completed_at', spark_progress_json.completed_at)
$$;
comment on function private.spark_progress_json(text,uuid,text,timestamp with time zone) is
  'One spark_progress element {spark_id, title, status, completed_at} of a journey.';
grant execute on function private.spark_progress_json(text,uuid,text,timestamp with time zone) to anon, authenticated;

-- The content snapshot an enrollment is measured against: the current (published) snapshot when
-- the trail is in it; otherwise the most recently published snapshot that still had the trail
-- (the trail was removed; the learner keeps seeing the trail as it last was). Drafts never count.
-- An enrollment whose trail exists in no published or archived snapshot is not shown.
create view app.journey_trails with (security_invoker = true) as
select
  e.id as enrollment_id,
  e.user_id,
  e.trail_id,
  e.started_at,
  t.snapshot_id,
  t.slug as trail_slug,
  t.title as trail_title,
  t.difficulty_level as trail_difficulty_level
from app.enrollments e
cross join lateral private.journey_trail(e.trail_id) t;
comment on view app.journey_trails is
  'Each visible enrollment with the snapshot its trail is read from: current if the trail is there, else the latest published/archived one that had it.';
grant select on app.journey_trails to authenticated;

-- One row per distinct spark of the enrollment's trail, in trail order. A spark placed in
-- several concepts of the same trail counts once, at its first place (concept order_index, then
-- concept slug, then its order_index inside the concept).
create view app.journey_sparks with (security_invoker = true) as
select distinct on (jt.enrollment_id, cs.spark_id)
  jt.enrollment_id,
  jt.user_id,
  c.id as concept_id,
  c.slug as concept_slug,
  c.title as concept_title,
  c.order_index as concept_order,
  cs.order_index as spark_order,
  s.id as spark_id,
  s.slug as spark_slug,
  s.title as spark_title
from app.journey_trails jt
join app.concepts c on c.snapshot_id = jt.snapshot_id and c.trail_id = jt.trail_id
join app.concept_sparks cs on cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id
join app.sparks s on s.snapshot_id = cs.snapshot_id and s.id = cs.spark_id
order by jt.enrollment_id, cs.spark_id, c.order_index, c.slug, cs.order_index;
comment on view app.journey_sparks is
  'Distinct sparks of each visible enrollment''s trail, each at its first position in trail order.';
grant select on app.journey_sparks to authenticated;

-- Per-spark progress of the enrollment's owner, from their learning events on that spark
-- (whenever and from whichever trail they were recorded: progress belongs to the spark).
--   completed    a completed or mastered event exists; completed_at is the earliest of them
--   in_progress  otherwise, a started event exists
--   not_started  otherwise (bookmarked alone does not change progress)
create view app.journey_spark_progress with (security_invoker = true) as
select
  js.enrollment_id,
  js.user_id,
  js.concept_id,
  js.concept_slug,
  js.concept_title,
  js.concept_order,
  js.spark_order,
  js.spark_id,
  js.spark_slug,
  js.spark_title,
  private.spark_status(p.completed_at, p.started) as status,
  p.completed_at,
  p.last_event_at
from app.journey_sparks js
cross join lateral (
  select
    pg_catalog.min(le.occurred_at) filter (where le.verb in ('completed', 'mastered')) as completed_at,
    coalesce(pg_catalog.bool_or(le.verb = 'started'), false) as started,
    pg_catalog.max(le.occurred_at) as last_event_at
  from app.learning_events le
  where le.user_id = js.user_id and le.spark_id = js.spark_id
) p;
comment on view app.journey_spark_progress is
  'Per spark of each visible enrollment: not_started | in_progress (started) | completed (completed or mastered), with completed_at and the last event time.';
grant select on app.journey_spark_progress to authenticated;

-- Per-enrollment progress.
--   total_sparks      distinct sparks of the trail (journey_sparks)
--   completed_sparks  of those, the completed ones
--   progress_percent  floor(100 * completed / total), an integer; 0 when the trail has no
--                     sparks. Floor, so 100 means every spark is completed.
--   status            completed when total > 0 and every spark is completed; in_progress when
--                     at least one spark is in_progress or completed; else not_started. A trail
--                     with no sparks stays not_started.
--   completed_at      when status is completed: the time the last spark was completed (the max
--                     over sparks of each spark's first completion); else null
--   last_activity_at  the latest learning event (any verb) on the trail's sparks; started_at
--                     when there is none
--   current_concept   the concept of the first incomplete spark in trail order, which is the
--                     first concept by order_index holding an incomplete spark; null when none
create view app.journey_progress with (security_invoker = true) as
select
  jt.enrollment_id as id,
  jt.user_id,
  jt.trail_id,
  jt.started_at,
  jt.snapshot_id,
  jt.trail_slug,
  jt.trail_title,
  jt.trail_difficulty_level,
  a.total_sparks,
  a.completed_sparks,
  case when a.total_sparks > 0 then (100 * a.completed_sparks) / a.total_sparks else 0 end as progress_percent,
  private.journey_status(a.total_sparks, a.completed_sparks, a.touched_sparks) as status,
  case when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then a.last_completed_at end as completed_at,
  coalesce(a.last_event_at, jt.started_at) as last_activity_at,
  cc.concept_id as current_concept_id,
  cc.concept_slug as current_concept_slug,
  cc.concept_title as current_concept_title
from app.journey_trails jt
cross join lateral (
  select
    pg_catalog.count(*)::integer as total_sparks,
    (pg_catalog.count(*) filter (where jsp.status = 'completed'))::integer as completed_sparks,
    (pg_catalog.count(*) filter (where jsp.status <> 'not_started'))::integer as touched_sparks,
    pg_catalog.max(jsp.completed_at) as last_completed_at,
    pg_catalog.max(jsp.last_event_at) as last_event_at
  from app.journey_spark_progress jsp
  where jsp.enrollment_id = jt.enrollment_id
) a
left join lateral (
  select jsp.concept_id, jsp.concept_slug, jsp.concept_title
  from app.journey_spark_progress jsp
  where jsp.enrollment_id = jt.enrollment_id and jsp.status <> 'completed'
  order by jsp.concept_order, jsp.concept_slug, jsp.spark_order, jsp.spark_slug
  limit 1
) cc on true;
comment on view app.journey_progress is
  'Per visible enrollment: total/completed sparks, progress_percent (floored integer), status, completed_at, last_activity_at, current concept. Derived, never stored.';
grant select on app.journey_progress to authenticated;

-- private.journey_list_item: the UserJourneyListItem document of one journey_progress row; the
-- journey reads build theirs with it too.
create or replace function private.journey_list_item(journey app.journey_progress)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'id', (journey).id,
    'user_id', (journey).user_id,
    'trail_id', (journey).trail_id,
    'status', (journey).status,
    'progress_percent', (journey).progress_percent,
    'started_at', (journey).started_at,
    'completed_at', (journey).completed_at,
    'last_activity_at', (journey).last_activity_at,
    'completed_sparks', (journey).completed_sparks,
    'total_sparks', (journey).total_sparks,
    'trail', pg_catalog.jsonb_build_object(
      'id', (journey).trail_id,
      'title', (journey).trail_title,
      'slug', (journey).trail_slug,
      'difficulty_level', (journey).trail_difficulty_level))
$$;
comment on function private.journey_list_item(app.journey_progress) is 'UserJourneyListItem JSON for one app.journey_progress row.';
grant execute on function private.journey_list_item(app.journey_progress) to anon, authenticated;

-- private.learning_event_json: the LearningEvent document of one event row.
create or replace function private.learning_event_json(event app.learning_events, created boolean)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'id', (event).id,
    'user_id', (event).user_id,
    'spark_id', (event).spark_id,
    'verb', (event).verb,
    'occurred_at', (event).occurred_at,
    'recorded_at', (event).recorded_at,
    'idempotency_key', (event).idempotency_key,
    'created', learning_event_json.created)
$$;
comment on function private.learning_event_json(app.learning_events,boolean) is
  'LearningEvent JSON for one app.learning_events row, with created = whether this request inserted it.';
grant execute on function private.learning_event_json(app.learning_events,boolean) to anon, authenticated;

-- private.require_user: the caller's user id, or 28000 when the request carries no user.
create or replace function private.require_user()
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  caller uuid := (select auth.uid());
begin
  if caller is null then
    raise exception using
      errcode = '28000',
      message = 'a signed-in user is required',
      detail = '{}';
  end if;
  return caller;
end
$$;
comment on function private.require_user() is
  'auth.uid() of the caller; raises 28000 (UNAUTHORIZED) when the request carries no user.';
grant execute on function private.require_user() to anon, authenticated;

-- api.record_learning_event
-- Purpose: record that the caller started, completed, mastered or bookmarked a spark.
-- Params:  spark_id         a spark entity id present in the current snapshot
--          verb             a value of app.learning_verbs
--          occurred_at      when it happened; null means now. At most 5 minutes ahead of the
--                           server clock (client clock skew); not before 2000-01-01T00:00:00Z.
--          idempotency_key  optional, 1-200 characters, unique per user.
-- Returns: LearningEvent {id,user_id,spark_id,verb,occurred_at,recorded_at,idempotency_key,
--          created}. created = false when an earlier event is returned instead of a new one:
--          the same idempotency_key (a retry), or the same natural key
--          (spark_id, verb, occurred_at) when occurred_at was given.
-- Errors:  28000 without a user; 22023 for a missing spark_id/verb, unknown verb, bad key length
--          or an occurred_at in the future or before 2000-01-01; P0002 for a spark not in the
--          current snapshot; 23505 when the idempotency_key was already used for a different spark, verb or occurred_at.
create or replace function api.record_learning_event(spark_id uuid, verb text, occurred_at timestamp with time zone default null::timestamp with time zone, idempotency_key text default null::text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  caller uuid := private.require_user();
  current_snapshot uuid;
  event_time timestamptz;
  event app.learning_events;
begin
  if record_learning_event.spark_id is null then
    raise exception using
      errcode = '22023', message = 'spark_id is required',
      detail = pg_catalog.jsonb_build_object('field', 'spark_id')::text;
  end if;
  if record_learning_event.verb is null or not exists (
    select 1 from app.learning_verbs v where v.value = record_learning_event.verb
  ) then
    raise exception using
      errcode = '22023',
      message = 'verb must be one of the learning verbs',
      detail = pg_catalog.jsonb_build_object('field', 'verb', 'value', record_learning_event.verb,
        'allowed', (select pg_catalog.jsonb_agg(v.value order by v.sort_order) from app.learning_verbs v))::text;
  end if;
  if record_learning_event.idempotency_key is not null
     and pg_catalog.length(record_learning_event.idempotency_key) not between 1 and 200 then
    raise exception using
      errcode = '22023', message = 'idempotency_key must be 1 to 200 characters',
      detail = pg_catalog.jsonb_build_object('field', 'idempotency_key')::text;
  end if;

  -- A retry with the same key returns the original event, before any check that could have
  -- changed since (the spark may have left the current snapshot meanwhile).
  if record_learning_event.idempotency_key is not null then
    select le.* into event
    from app.learning_events le
    where le.user_id = caller and le.idempotency_key = record_learning_event.idempotency_key;
    if found then
      if event.spark_id <> record_learning_event.spark_id
         or event.verb <> record_learning_event.verb
         or (record_learning_event.occurred_at is not null and event.occurred_at <> record_learning_event.occurred_at) then
        raise exception using
          errcode = '23505',
          message = 'idempotency key already used for a different event',
          detail = pg_catalog.jsonb_build_object('idempotency_key', record_learning_event.idempotency_key,
            'event_id', event.id)::text;
      end if;
      return private.learning_event_json(event, false);
    end if;
  end if;

  event_time := coalesce(record_learning_event.occurred_at, pg_catalog.now());
  if event_time > pg_catalog.now() + interval '5 minutes' then
    raise exception using
      errcode = '22023',
      message = 'occurred_at must not be in the future (5 minutes of clock skew allowed)',
      detail = pg_catalog.jsonb_build_object('field', 'occurred_at', 'value', event_time,
        'max', pg_catalog.now() + interval '5 minutes')::text;
  end if;
  if event_time < timestamptz '2000-01-01 00:00:00+00' then
    raise exception using
      errcode = '22023',
      message = 'occurred_at must not be before 2000-01-01T00:00:00Z',
      detail = pg_catalog.jsonb_build_object('field', 'occurred_at', 'value', event_time,
        'min', timestamptz '2000-01-01 00:00:00+00')::text;
  end if;

  current_snapshot := private.resolve_snapshot_id(null);
  if current_snapshot is null or not exists (
    select 1 from app.sparks s
    where s.snapshot_id = current_snapshot and s.id = record_learning_event.spark_id
  ) then
    raise exception using
      errcode = 'P0002',
      message = 'spark not found',
      detail = pg_catalog.jsonb_build_object('spark_id', record_learning_event.spark_id)::text;
  end if;

  -- user_id defaults to auth.uid(); the insert policy checks it. Conflicts on either unique key
  -- (idempotency key, natural key) mean "already recorded": fall through to the existing row.
  insert into app.learning_events (spark_id, verb, occurred_at, idempotency_key)
  values (record_learning_event.spark_id, record_learning_event.verb, event_time,
          record_learning_event.idempotency_key)
  on conflict do nothing
  returning * into event;
  if event.id is not null then
    return private.learning_event_json(event, true);
  end if;

  select le.* into event
  from app.learning_events le
  where le.user_id = caller
    and (le.idempotency_key = record_learning_event.idempotency_key
         or (le.spark_id = record_learning_event.spark_id and le.verb = record_learning_event.verb
             and le.occurred_at = event_time))
  order by (le.idempotency_key is not distinct from record_learning_event.idempotency_key) desc
  limit 1;
  return private.learning_event_json(event, false);
end
$$;
comment on function api.record_learning_event(uuid,text,timestamp with time zone,text) is
  'Records a learning event for the caller. Params: spark_id, verb, occurred_at (null = now, 2000-01-01 <= t <= now + 5 min), idempotency_key. Returns LearningEvent + created. Errors: 28000 no user, 22023 invalid input/time out of range, P0002 unknown spark, 23505 key reused for another event.';
grant execute on function api.record_learning_event(uuid,text,timestamp with time zone,text) to anon, authenticated;

-- A snapshot's content never changes after its import, so this is computed once, like the other
-- rollups: a trigger on app.snapshot_rollups, whose row
-- private.refresh_content_rollups writes last, fills it in the same transaction.
create table app.trail_spark_positions (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  ordinal integer not null,
  spark_id uuid not null,
  concept_id uuid not null,
  spark_title text not null,
  progress_json text not null,
  constraint trail_spark_positions_pkey primary key (snapshot_id, trail_id, ordinal)
);
comment on table app.trail_spark_positions is
  'Per snapshot and trail: each distinct spark at its first placement, numbered in trail order (1-based), with its concept and title. Filled from app.snapshot_rollups.';
comment on column app.trail_spark_positions.progress_json is
  'The spark_progress element of this spark for a learner who has not started it (private.spark_progress_json), as JSON text.';
alter table app.trail_spark_positions enable row level security;
create policy "anyone reads trail spark positions" on app.trail_spark_positions
  for select to anon, authenticated
  using (true);
grant select on app.trail_spark_positions to anon, authenticated;

-- private.derive_trail_spark_positions
-- Purpose: the trail-order spark list, computed from the content tables.
-- Params:  snapshot_id; trail_id, or null for every trail of the snapshot.
-- Returns: (trail_id, ordinal, spark_id, concept_id, spark_title), ordinal 1-based per trail:
--          distinct sparks at their first placement (concept order_index, concept slug,
--          placement order_index), ranked by it and then by spark slug.
create or replace function private.derive_trail_spark_positions(snapshot_id uuid, trail_id uuid)
returns table(trail_id uuid, ordinal integer, spark_id uuid, concept_id uuid, spark_title text)
language sql
stable
set search_path = ''
as $$
  select
    f.trail_id,
    (pg_catalog.row_number() over (
      partition by f.trail_id
      order by f.concept_order, f.concept_slug, f.spark_order, s.slug))::integer,
    f.spark_id,
    f.concept_id,
    s.title
  from (
    select distinct on (c.trail_id, cs.spark_id)
      c.trail_id, c.id as concept_id, c.order_index as concept_order, c.slug as concept_slug,
      cs.order_index as spark_order, cs.spark_id
    from app.concepts c
    join app.concept_sparks cs on cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id
    where c.snapshot_id = derive_trail_spark_positions.snapshot_id
      and (derive_trail_spark_positions.trail_id is null or c.trail_id = derive_trail_spark_positions.trail_id)
    order by c.trail_id, cs.spark_id, c.order_index, c.slug, cs.order_index
  ) f
  join app.sparks s on s.snapshot_id = derive_trail_spark_positions.snapshot_id and s.id = f.spark_id
$$;
comment on function private.derive_trail_spark_positions(uuid,uuid) is
  'Distinct sparks of one trail (or every trail) of a snapshot in trail order, computed from concepts, placements and sparks.';
grant execute on function private.derive_trail_spark_positions(uuid,uuid) to anon, authenticated;

-- The list counts a trail's sparks against the caller's: an index-only range of spark ids.
create unique index trail_spark_positions_trail_spark on app.trail_spark_positions (snapshot_id, trail_id, spark_id);

-- Fills a snapshot's trail positions, each with its not-started spark_progress element.
create or replace function private.fill_trail_spark_positions()
returns trigger
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
begin
  delete from app.trail_spark_positions p where p.snapshot_id = new.snapshot_id;
  insert into app.trail_spark_positions (snapshot_id, trail_id, ordinal, spark_id, concept_id, spark_title, progress_json)
  select new.snapshot_id, d.trail_id, d.ordinal, d.spark_id, d.concept_id, d.spark_title,
    private.spark_progress_json(d.spark_title, d.spark_id, 'not_started', null)::text
  from private.derive_trail_spark_positions(new.snapshot_id, null) d
  order by d.trail_id, d.ordinal;
  return null;
end
$$;
comment on function private.fill_trail_spark_positions() is
  'Trigger: (re)computes a snapshot''s app.trail_spark_positions (with each not-started spark_progress element) whenever its app.snapshot_rollups row is written.';

create trigger snapshot_rollups_trail_spark_positions
  after insert or update on app.snapshot_rollups
  for each row execute function private.fill_trail_spark_positions();

-- private.journey_positions
-- Purpose: a trail's sparks in trail order as a journey reads them: the stored positions once the
--          snapshot is rolled up, else derived from the content tables.
-- Returns: (ordinal, spark_id, concept_id, spark_title, progress_json: the not-started element).
create or replace function private.journey_positions(snapshot_id uuid, trail_id uuid)
returns table(ordinal integer, spark_id uuid, concept_id uuid, spark_title text, progress_json text)
language plpgsql
stable
set search_path = ''
as $$
begin
  if exists (select from app.snapshot_rollups r where r.snapshot_id = journey_positions.snapshot_id) then
    return query
      select p.ordinal, p.spark_id, p.concept_id, p.spark_title, p.progress_json
      from app.trail_spark_positions p
      where p.snapshot_id = journey_positions.snapshot_id and p.trail_id = journey_positions.trail_id;
  else
    return query
      select d.ordinal, d.spark_id, d.concept_id, d.spark_title,
        private.spark_progress_json(d.spark_title, d.spark_id, 'not_started', null)::text
      from private.derive_trail_spark_positions(journey_positions.snapshot_id, journey_positions.trail_id) d;
  end if;
end
$$;
comment on function private.journey_positions(uuid,uuid) is
  'A trail''s sparks in trail order with their not-started elements: stored once the snapshot is rolled up, else derived.';
grant execute on function private.journey_positions(uuid,uuid) to anon, authenticated;

-- private.caller_journeys
-- Purpose: the caller's enrollments with their derived figures, in one pass over each trail's
--          spark positions: the rule both journey bodies read (docs/journeys.md "How progress is
--          derived"; the reference views app.journey_*).
-- Params:  enrollment  one enrollment id, or null for all of the caller's;
--          with_sparks also the current concept and the spark_progress elements (the detail).
-- Returns: one row per visible enrollment: the app.journey_progress columns but the current
--          concept's slug and title, plus spark_progress (jsonb array in trail order; null
--          without with_sparks).
create or replace function private.caller_journeys(enrollment uuid, with_sparks boolean)
returns table(id uuid, user_id uuid, trail_id uuid, started_at timestamp with time zone, snapshot_id uuid,
              trail_slug text, trail_title text, trail_difficulty_level text, total_sparks integer,
              completed_sparks integer, progress_percent integer, status text,
              completed_at timestamp with time zone, last_activity_at timestamp with time zone,
              current_concept_id uuid, spark_progress jsonb)
language sql
stable
set search_path = ''
as $$
  with states as materialized (
    select * from private.caller_spark_states()
  )
  select
    e.id, e.user_id, e.trail_id, e.started_at,
    t.snapshot_id, t.slug, t.title, t.difficulty_level,
    a.total_sparks, a.completed_sparks,
    case when a.total_sparks > 0 then (100 * a.completed_sparks) / a.total_sparks else 0 end,
    private.journey_status(a.total_sparks, a.completed_sparks, a.touched_sparks),
    case when a.total_sparks > 0 and a.completed_sparks = a.total_sparks then a.last_completed_at end,
    coalesce(a.last_event_at, e.started_at),
    a.current_concept_id, a.spark_progress
  from app.enrollments e
  cross join lateral private.journey_trail(e.trail_id) t
  cross join lateral (
    select
      pg_catalog.count(*)::integer as total_sparks,
      (pg_catalog.count(*) filter (where st.completed_at is not null))::integer as completed_sparks,
      (pg_catalog.count(*) filter (where st.completed_at is not null or st.started))::integer as touched_sparks,
      pg_catalog.max(st.completed_at) as last_completed_at,
      pg_catalog.max(st.last_event_at) as last_event_at,
      (pg_catalog.array_agg(p.concept_id order by p.ordinal)
         filter (where caller_journeys.with_sparks and st.completed_at is null))[1] as current_concept_id,
      -- The stored not-started element where the caller has no events on the spark.
      pg_catalog.jsonb_agg(
        case when st.spark_id is null then p.progress_json::jsonb
          else private.spark_progress_json(p.spark_title, p.spark_id,
                 private.spark_status(st.completed_at, st.started), st.completed_at)
        end
        order by p.ordinal) filter (where caller_journeys.with_sparks) as spark_progress
    from private.journey_positions(t.snapshot_id, e.trail_id) p
    left join states st on st.spark_id = p.spark_id
  ) a
  where e.user_id = (select auth.uid())
    and (caller_journeys.enrollment is null or e.id = caller_journeys.enrollment)
$$;
comment on function private.caller_journeys(uuid,boolean) is
  'The caller''s enrollments (one, or all) with derived figures, status and last activity; with_sparks adds the current concept id and the spark_progress elements.';
grant execute on function private.caller_journeys(uuid,boolean) to anon, authenticated;
-- Without with_sparks the two ordered aggregates see no rows; presorting every trail's positions
-- for them (PostgreSQL 16 and later) would cost the journey list ~15 % for nothing. PostgreSQL 15
-- neither presorts nor knows the setting, which a SET clause in the definition would refuse.
do $$
begin
  if exists (select from pg_catalog.pg_settings where name = 'enable_presorted_aggregate') then
    alter function private.caller_journeys(uuid, boolean) set enable_presorted_aggregate to 'off';
  end if;
end
$$;

-- private.journey_list_json
-- Purpose: the {data: UserJourneyListItem[]} body of the caller's journeys.
-- Params:  status  null (all) | not_started | in_progress | completed (validated by the caller)
--          sort    recent | progress | started (validated by the caller)
-- Returns: json (built as jsonb).
create or replace function private.journey_list_json(status text, sort text)
returns json
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object('data', coalesce(pg_catalog.jsonb_agg(
      private.journey_list_item(row(
        j.id, j.user_id, j.trail_id, j.started_at, j.snapshot_id, j.trail_slug, j.trail_title, j.trail_difficulty_level,
        j.total_sparks, j.completed_sparks, j.progress_percent, j.status, j.completed_at, j.last_activity_at,
        null, null, null)::app.journey_progress)
      order by
        case when journey_list_json.sort = 'recent' then j.last_activity_at end desc nulls last,
        case when journey_list_json.sort = 'progress'
          then j.completed_sparks::numeric / nullif(j.total_sparks, 0) end desc nulls last,
        case when journey_list_json.sort = 'started' then j.started_at end desc nulls last,
        j.last_activity_at desc, j.started_at desc, j.id), '[]'::jsonb))::json
  from private.caller_journeys(null, false) j
  where journey_list_json.status is null or j.status = journey_list_json.status
$$;
comment on function private.journey_list_json(text,text) is
  'The caller''s journeys as {data: UserJourneyListItem[]} JSON text (status filter, sort), in one statement.';
grant execute on function private.journey_list_json(text,text) to anon, authenticated;

-- private.journey_detail_json
-- Purpose: the UserJourneyDetail body of one of the caller's enrollments.
-- Params:  enrollment  an enrollment id.
-- Returns: json (built as jsonb); null when the caller has no visible enrollment with this id.
create or replace function private.journey_detail_json(enrollment uuid)
returns json
language sql
stable
set search_path = ''
as $$
  -- The list item of this journey, plus its current concept and spark_progress.
  select (private.journey_list_item(row(
      j.id, j.user_id, j.trail_id, j.started_at, j.snapshot_id, j.trail_slug, j.trail_title, j.trail_difficulty_level,
      j.total_sparks, j.completed_sparks, j.progress_percent, j.status, j.completed_at, j.last_activity_at,
      c.id, c.slug, c.title)::app.journey_progress)
    || pg_catalog.jsonb_build_object(
      'current_concept', case when c.id is not null
        then pg_catalog.jsonb_build_object('id', c.id, 'title', c.title, 'slug', c.slug) end,
      'spark_progress', coalesce(j.spark_progress, '[]'::jsonb)))::json
  from private.caller_journeys(journey_detail_json.enrollment, true) j
  left join app.concepts c on c.snapshot_id = j.snapshot_id and c.id = j.current_concept_id
$$;
comment on function private.journey_detail_json(uuid) is
  'UserJourneyDetail JSON text of one of the caller''s enrollments (null when not visible), in one statement and one pass over the trail''s sparks.';
grant execute on function private.journey_detail_json(uuid) to anon, authenticated;

-- api.list_user_journeys
-- Purpose: the caller's enrollments with derived progress (only the caller's rows).
-- Params:  status  null (all) | not_started | in_progress | completed
--          sort    recent (last_activity_at desc, default) | progress (completion ratio desc)
--                  | started (started_at desc); ties: last_activity_at desc, started_at desc, id
-- Returns: {data: UserJourneyListItem[]}, as json (the body text as built).
-- Errors:  28000 without a user; 22023 for an unknown status or sort.
create or replace function api.list_user_journeys(status text default null::text, sort text default 'recent'::text)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  chosen_sort text := coalesce(list_user_journeys.sort, 'recent');
begin
  perform private.require_user();
  if list_user_journeys.status is not null
     and list_user_journeys.status not in ('not_started', 'in_progress', 'completed') then
    raise exception using
      errcode = '22023',
      message = 'status must be one of not_started, in_progress, completed',
      detail = pg_catalog.jsonb_build_object('field', 'status', 'value', list_user_journeys.status,
        'allowed', pg_catalog.jsonb_build_array('not_started', 'in_progress', 'completed'))::text;
  end if;
  if chosen_sort not in ('recent', 'progress', 'started') then
    raise exception using
      errcode = '22023',
      message = 'sort must be one of recent, progress, started',
      detail = pg_catalog.jsonb_build_object('field', 'sort', 'value', chosen_sort,
        'allowed', pg_catalog.jsonb_build_array('recent', 'progress', 'started'))::text;
  end if;
  return private.journey_list_json(list_user_journeys.status, chosen_sort);
end
$$;
comment on function api.list_user_journeys(text,text) is
  'The caller''s journeys with derived progress. Params: status (not_started|in_progress|completed|null), sort (recent|progress|started). Returns {data: UserJourneyListItem[]} (json). Errors: 28000 no user, 22023 bad status/sort.';
grant execute on function api.list_user_journeys(text,text) to anon, authenticated;

-- api.get_user_journey
-- Purpose: one of the caller's enrollments with per-spark progress.
-- Params:  id  the enrollment id.
-- Returns: UserJourneyDetail (list item + current_concept {id,title,slug}|null + spark_progress
--          [{spark_id,title,status,completed_at}] in trail order), as json.
-- Errors:  28000 without a user; P0002 when the caller has no enrollment with this id (another
--          user's enrollment is "not found" too).
create or replace function api.get_user_journey(id uuid)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  result json;
begin
  perform private.require_user();
  result := private.journey_detail_json(get_user_journey.id);
  if result is null then
    raise exception using
      errcode = 'P0002',
      message = 'journey not found',
      detail = pg_catalog.jsonb_build_object('id', get_user_journey.id)::text;
  end if;
  return result;
end
$$;
comment on function api.get_user_journey(uuid) is
  'One of the caller''s journeys in detail. Params: id (enrollment id). Returns UserJourneyDetail (json). Errors: 28000 no user, P0002 unknown or not the caller''s.';
grant execute on function api.get_user_journey(uuid) to anon, authenticated;

-- api.enroll_in_trail
-- Purpose: enroll the caller in a trail of the current snapshot; idempotent.
-- Params:  trail_id  a trail entity id present in the current snapshot.
-- Returns: UserJourneyDetail plus created (true when this call inserted the enrollment, false
--          when the caller was already enrolled and the existing enrollment is returned).
-- Errors:  28000 without a user; 22023 for a null trail_id; P0002 when the trail is not in the
--          current snapshot (or nothing is published).
-- Unchanged but for its document, now from private.journey_detail_json (a write: the jsonb
-- round trip to add "created" costs nothing that matters here).
create or replace function api.enroll_in_trail(trail_id uuid)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  caller uuid := private.require_user();
  current_snapshot uuid := private.resolve_snapshot_id(null);
  enrollment uuid;
  created boolean;
  result jsonb;
begin
  if enroll_in_trail.trail_id is null then
    raise exception using
      errcode = '22023',
      message = 'trail_id is required',
      detail = pg_catalog.jsonb_build_object('field', 'trail_id')::text;
  end if;
  if current_snapshot is null or not exists (
    select 1 from app.trails t
    where t.snapshot_id = current_snapshot and t.id = enroll_in_trail.trail_id
  ) then
    raise exception using
      errcode = 'P0002',
      message = 'trail not found',
      detail = pg_catalog.jsonb_build_object('trail_id', enroll_in_trail.trail_id)::text;
  end if;

  -- user_id defaults to auth.uid(); the insert policy checks it. A concurrent or repeated
  -- enrollment hits unique (user_id, trail_id) and returns the existing row instead.
  insert into app.enrollments (trail_id)
  values (enroll_in_trail.trail_id)
  on conflict on constraint enrollments_user_id_trail_id_key do nothing
  returning app.enrollments.id into enrollment;
  created := enrollment is not null;
  if not created then
    select e.id into enrollment
    from app.enrollments e
    where e.user_id = caller and e.trail_id = enroll_in_trail.trail_id;
  end if;

  result := private.journey_detail_json(enrollment)::jsonb;
  return result || pg_catalog.jsonb_build_object('created', created);
end
$$;
comment on function api.enroll_in_trail(uuid) is
  'Enrolls the caller in a current-snapshot trail; idempotent. Params: trail_id. Returns UserJourneyDetail + created. Errors: 28000 no user, 22023 null trail_id, P0002 trail not in the current snapshot.';
grant execute on function api.enroll_in_trail(uuid) to anon, authenticated;

-- ==== supabase/schemas/09-auth.sql ====

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

-- The digest that names a token: SHA-256 (hex) of its claims as canonical jsonb text, so the
-- API's claims text and PostgREST's give the same digest for the same token.
create or replace function private.access_token_digest(claims jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(access_token_digest.claims::text, 'UTF8')), 'hex')
$$;
comment on function private.access_token_digest(jsonb) is
  'SHA-256 (hex) of a token''s claims as canonical jsonb text: how a signed-out token without a session is recorded.';
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
-- Errors:  28000 when the session is not the caller's or already ended, or the token was
--          already signed out; 22023 for claims without a uuid sub or a numeric exp.
create or replace function private.sign_out(claims jsonb)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  claimed_user uuid;
  named_session uuid;
  outer_claims text;
begin
  if not coalesce(sign_out.claims ->> 'sub' ~ uuid_pattern, false)
     or pg_catalog.jsonb_typeof(sign_out.claims -> 'exp') is distinct from 'number' then
    raise exception using errcode = '22023', message = 'The token names no user or has no expiry';
  end if;
  -- The session check of every request, on these claims (set as the dispatcher sets them, then
  -- put back): a token it refuses (ended, unknown to our issuer, signed out) has nothing left to
  -- sign out (28000).
  outer_claims := pg_catalog.current_setting('request.jwt.claims', true);
  perform pg_catalog.set_config('request.jwt.claims', sign_out.claims::text, true);
  perform private.check_request();
  perform pg_catalog.set_config('request.jwt.claims', coalesce(outer_claims, ''), true);
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
--           has no token, so its expires_at and created_at are null. The dispatcher has already
--           refused a token whose session is not live or that was signed out (28000).
-- Errors:  none of its own. (plpgsql, so an anonymous caller returns before any table it may
--          not read is planned.)
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

-- ==== supabase/schemas/10-dispatch.sql ====

-- The request path: the session check and the dispatcher.

-- One session check for every request, whichever way it reaches the database: private.dispatch
-- calls it, and it is PostgREST's `db-pre-request` hook on a hosted Supabase project.
--
-- A token whose `session_id` names a session in app.sessions (sessions are never deleted) must
-- belong to `sub` and be live; a token of this API's own issuer (the connection setting
-- `sparkpath.token_issuer`, default `sparkpath`) must name such a session. Another issuer's token
-- sharing the JWT secret (Supabase Auth carries its own `session_id`) is not ours to judge, and
-- a token that names no session binds nothing, unless such a token was signed out here
-- (POST /auth/logout records it in app.revoked_access_tokens until it expires).
-- Errors: 28000 when the token names a session that is ended, expired, idle or another user's,
--         or, for this API's own tokens, a session that does not exist; or when a token
--         without a session of ours was signed out.
create or replace function private.check_request()
returns void
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  claims jsonb := nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb;
  own_issuer text := coalesce(nullif(pg_catalog.current_setting('sparkpath.token_issuer', true), ''), 'sparkpath');
  uuid_pattern constant text := '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
  named_session app.sessions%rowtype;
begin
  if claims is null then
    return;
  end if;
  -- A token that names no session (a plain HS256 token, the identity service's) binds nothing,
  -- unless it was signed out.
  if not (claims ? 'session_id') then
    if not private.access_token_signed_out(claims) then
      return;
    end if;
    raise exception using errcode = '28000', message = 'Session is no longer active; sign in again';
  end if;
  -- Checked by pattern rather than by a failing cast: an exception block would cost a
  -- subtransaction on every request. A malformed (or null) session id or subject is nobody's.
  if coalesce(claims ->> 'session_id' ~ uuid_pattern and claims ->> 'sub' ~ uuid_pattern, false) then
    select s.* into named_session from app.sessions s where s.id = (claims ->> 'session_id')::uuid;
    if not found then
      -- Another issuer's session (e.g. Supabase Auth) is not ours to judge unless its token was
      -- signed out here; our own issuer's tokens must name a session of ours.
      if claims ->> 'iss' is distinct from own_issuer and not private.access_token_signed_out(claims) then
        return;
      end if;
    elsif named_session.active
      and named_session.user_id = (claims ->> 'sub')::uuid
      and private.session_end_reason(named_session) is null then
      return;
    end if;
  end if;
  raise exception using errcode = '28000', message = 'Session is no longer active; sign in again';
end
$$;
comment on function private.check_request() is
  'Refuses (28000) a request whose token names a session that is ended, expired, idle or another user''s, or (for this API''s own issuer) no session of ours, or a session-less token that was signed out. Called by private.dispatch; PostgREST''s db-pre-request hook.';
grant execute on function private.check_request() to anon, authenticated;

-- The dispatchers: PostgREST's per-request contract in one statement.
--
-- PostgREST runs BEGIN; set_config('role'); set_config('request.jwt.claims'); call; COMMIT.
-- The dispatchers do the same in a single round trip: they set both transaction-locally, check
-- the session, then run the api call as the request role (security invoker, so RLS applies).
--
-- Safety: `call` is SQL text, so nothing but the API's login role (the owner that runs the
-- migrations) may execute them, and they live in `private`, which no API exposes. The caller
-- builds `call` from introspected api function names and parameter names only; request values
-- arrive in `args` and are read with `$1->>'name'`.

-- private.begin_request
-- Purpose: the request contract both dispatchers share: transaction-local request.jwt.claims,
--          the session check (private.check_request), then the request role.
-- Params:  request_role ('anon' | 'authenticated'), claims (JWT payload text or null), call
--          (the api function call text the dispatcher will run).
-- Errors:  42501 for another role or a call that is not an api function; 28000 from the
--          session check.
-- One request per transaction, as with PostgREST: the role it sets lasts until the transaction
-- ends, and request roles may not run the dispatchers, so a second dispatch in the same
-- transaction is refused (42501) unless the role is reset first.
create or replace function private.begin_request(request_role text, claims text, call text)
returns void
language plpgsql
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
comment on function private.begin_request(text,text,text) is
  'The PostgREST request contract shared by the dispatchers: transaction-local claims, private.check_request, then the request role. Executable only by the API login role.';

-- private.dispatch: one api call as the request role; returns its JSON text.
create or replace function private.dispatch(request_role text, claims text, call text, args jsonb)
returns text
language plpgsql
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
comment on function private.dispatch(text,text,text,jsonb) is
  'Runs one api function as the request role with transaction-local JWT claims (the PostgREST contract, private.begin_request) in one statement. Executable only by the API login role.';

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
create or replace function private.dispatch_snapshot_read(
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
comment on function private.dispatch_snapshot_read(text,text,text,jsonb,text[]) is
  'One snapshot read in one statement: request contract, snapshot resolution as the request role, and the api call pinned to that snapshot unless its version is in held_versions (then body is null). Executable only by the API login role.';


-- PostgREST runs the same check before every request it serves (hosted Supabase). Where there is
-- no PostgREST (the embedded database) there is no authenticator role and nothing to do.
do $$
begin
  if exists (select from pg_catalog.pg_roles where rolname = 'authenticator') then
    begin
      execute 'alter role authenticator set pgrst.db_pre_request = ''private.check_request''';
      perform pg_catalog.pg_notify('pgrst', 'reload config');
    exception when insufficient_privilege then
      raise warning 'could not set pgrst.db_pre_request on authenticator; set it by hand: alter role authenticator set pgrst.db_pre_request = ''private.check_request''';
    end;
  end if;
end
$$;
