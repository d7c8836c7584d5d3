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
comment on function private.require_range(text,integer,integer,integer) is
  'Raises 22023 naming the field, with {field, value, min, max} as detail, unless an integer parameter is within [low, high] (null is not).';
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
comment on function private.require_difficulty(text,text) is
  'Raises 22023 naming the field unless a difficulty is null or one of the metadata levels (app.difficulty_levels).';
grant execute on function private.require_difficulty(text,text) to anon, authenticated;

-- A text argument that names an entity by slug or by id, as a uuid when it has a uuid's shape
-- (any case), else null. Cast in a CASE, never beside the check in a query's WHERE: SQL does
-- not evaluate `and` in order, so a plan may cast a slug there and fail.
create or replace function private.uuid_or_null(value text)
returns uuid
language sql
immutable
set search_path = ''
as $$
  select case when uuid_or_null.value ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
              then uuid_or_null.value::uuid end
$$;
comment on function private.uuid_or_null(text) is
  'The text as a uuid when it has a uuid''s shape (any case), else null.';
grant execute on function private.uuid_or_null(text) to anon, authenticated;

-- The six pagination fields.
-- plpgsql, not sql: as private.search_normalize below; every page of every list calls it.
create or replace function private.page_meta(total bigint, page integer, per_page integer)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  return pg_catalog.jsonb_build_object(
    'total', page_meta.total,
    'page', page_meta.page,
    'per_page', page_meta.per_page,
    'total_pages', (page_meta.total + page_meta.per_page - 1) / page_meta.per_page,
    'has_next', page_meta.page < (page_meta.total + page_meta.per_page - 1) / page_meta.per_page,
    'has_prev', page_meta.page > 1);
end
$$;
comment on function private.page_meta(bigint,integer,integer) is
  'The spec''s six pagination fields (total, page, per_page, total_pages, has_next, has_prev) of one page.';
grant execute on function private.page_meta(bigint,integer,integer) to anon, authenticated;

-- private.search_normalize
-- Purpose: the one text normalisation of search: unaccent (pinned dictionary) and lower-case.
-- plpgsql, not sql: called once per row, and a SQL function with a SET clause is never inlined,
-- so each call starts an executor (about three times the cost of a plpgsql expression).
create or replace function private.search_normalize(value text)
returns text
language plpgsql
immutable parallel safe
set search_path = ''
as $$
begin
  return pg_catalog.lower(extensions.unaccent('extensions.unaccent'::regdictionary, coalesce(search_normalize.value, '')));
end
$$;
comment on function private.search_normalize(text) is
  'Search normalisation: unaccent with a pinned dictionary, then lower-case. Immutable so indexes can use it.';
grant execute on function private.search_normalize(text) to anon, authenticated;

-- private.like_escape
-- Purpose: a text as a LIKE pattern matching exactly that text (backslash, % and _ escaped with
--          the default escape character), to put between or beside wildcards.
create or replace function private.like_escape(value text)
returns text
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(like_escape.value, '\', '\\'), '%', '\%'), '_', '\_')
$$;
comment on function private.like_escape(text) is
  'A text as a LIKE pattern that matches exactly it: backslash, % and _ escaped.';
grant execute on function private.like_escape(text) to anon, authenticated;

-- private.search_document
-- Purpose: the weighted search document of one content row: title A, body B.
-- plpgsql, not sql: as private.search_normalize.
create or replace function private.search_document(title text, body text)
returns tsvector
language plpgsql
immutable parallel safe
set search_path = ''
as $$
begin
  return pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, private.search_normalize(search_document.title)), 'A')
      || pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.english'::regconfig, private.search_normalize(search_document.body)), 'B');
end
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
comment on table app.snapshots is
  'Versions of the content: draft, published (at most one: the current snapshot) or archived. Content rows belong to one snapshot; by convention a published snapshot''s content is not written again (the rollups are computed once, at import).';
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
comment on table app.categories is
  'Domain categories of a snapshot: which domains are related (GET /discovery/domains/{slug}/related).';
alter table app.categories enable row level security;
create policy "anyone reads categories" on app.categories
  for select to anon, authenticated
  using (true);
grant select on app.categories to anon, authenticated;

-- Search document numbers (app.search_postings): one sequence for the four searchable tables,
-- so a number names one row of a snapshot whatever its type, and number order is write order
-- (the import writes a bundle in its own order). Integers, because the postings are int4 sets
-- (intarray); it cycles after 2^31 numbers, and a snapshot's numbers stay unique (each table's
-- unique constraint) unless one snapshot outlives two billion writes beside it.
create sequence app.search_doc_numbers as integer cycle;
comment on sequence app.search_doc_numbers is
  'Search document numbers of domains, trails, concepts and sparks (app.search_postings), in write order.';

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
  search_doc integer default nextval('app.search_doc_numbers'::regclass) not null,
  constraint domains_pkey primary key (snapshot_id, id),
  constraint domains_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint domains_snapshot_id_search_doc_key unique (snapshot_id, search_doc),
  constraint domains_snapshot_id_category_id_fkey foreign key (snapshot_id, category_id) references app.categories (snapshot_id, id)
);
comment on table app.domains is
  'Domains of a snapshot (the top of domain > trail > concept > spark), with their generated search columns.';
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
  search_doc integer default nextval('app.search_doc_numbers'::regclass) not null,
  constraint trails_pkey primary key (snapshot_id, id),
  constraint trails_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint trails_snapshot_id_search_doc_key unique (snapshot_id, search_doc),
  constraint trails_snapshot_id_domain_id_fkey foreign key (snapshot_id, domain_id) references app.domains (snapshot_id, id)
);
comment on table app.trails is
  'Trails of a snapshot: a domain''s learning tracks, in order_index order, with a difficulty level and generated search columns.';
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
  search_doc integer default nextval('app.search_doc_numbers'::regclass) not null,
  constraint concepts_pkey primary key (snapshot_id, id),
  constraint concepts_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint concepts_snapshot_id_search_doc_key unique (snapshot_id, search_doc),
  constraint concepts_snapshot_id_trail_id_fkey foreign key (snapshot_id, trail_id) references app.trails (snapshot_id, id)
);
comment on table app.concepts is
  'Concepts of a snapshot: a trail''s steps, in order_index order, with generated search columns.';
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
  search_doc integer default nextval('app.search_doc_numbers'::regclass) not null,
  constraint sparks_pkey primary key (snapshot_id, id),
  constraint sparks_snapshot_id_slug_key unique (snapshot_id, slug),
  constraint sparks_snapshot_id_search_doc_key unique (snapshot_id, search_doc)
);
comment on table app.sparks is
  'Sparks of a snapshot: the smallest unit of learning, with difficulty, estimated minutes and generated search columns.';
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
comment on table app.concept_sparks is
  'Which sparks a concept places, and where (order_index); a spark may be placed by several concepts.';
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
comment on table app.spark_links is
  'Links between sparks of a snapshot: source comes before target (prerequisite), or related, or extends, with a weight. The prerequisite graph the graph and path endpoints walk.';
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
comment on table app.concept_links is
  'Links between concepts of a snapshot (prerequisite, related, extends), with a weight.';
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
comment on table app.beacons is
  'Beacons of a snapshot: milestones a learner can aim for inside a trail, optionally pinned to the concept that unlocks them.';
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
comment on table app.content_imports is
  'One row per content import attempt, succeeded, failed or running: counts, timings and, for a failure, its error ({code, message, detail}; validation problems listed by path).';
alter table app.content_imports enable row level security;

create index content_imports_snapshot on app.content_imports (snapshot_id);

-- private.resolve_snapshot_id
-- Purpose: the snapshot selection rule shared by every content read.
-- Params:  requested, an explicit snapshot id or null.
-- Returns: the requested snapshot (draft and archived included); else the current (published)
--          one; else null, meaning "no snapshot filter" (nothing has been published yet).
-- Errors:  PT404 when an explicit id names no snapshot.
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
        errcode = 'PT404',
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
  'Snapshot selection: explicit id (any status) -> current -> null (no filter). Raises PT404 for an unknown explicit id.';
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
  caller_role constant text := private.authorize('list_snapshots');
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
grant execute on function api.list_snapshots(integer,integer,text) to anon, authenticated, service_role;

-- api.get_current_snapshot
-- Purpose: the current (published) snapshot.
-- Params:  none.
-- Returns: {id, name, version_label, description, status, entity_counts: {domains, trails,
--           concepts, sparks, beacons, concept_sparks, spark_links, concept_links},
--           created_at, published_at, parent_snapshot_id}.
-- Errors:  PT404 when no snapshot has been published.
create or replace function api.get_current_snapshot()
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('get_current_snapshot');
  current_id uuid;
begin
  select s.id into current_id from app.snapshots s where s.status = 'published';
  if current_id is null then
    raise exception using errcode = 'PT404', message = 'No snapshot has been published yet';
  end if;
  return private.snapshot_json(current_id, true, true);
end
$$;
comment on function api.get_current_snapshot() is
  'The current (published) snapshot with all entity counts and parent_snapshot_id. No params. Errors: PT404 when none has been published.';
grant execute on function api.get_current_snapshot() to anon, authenticated, service_role;

-- api.get_snapshot
-- Purpose: one snapshot by id, whatever its status.
-- Params:  id (uuid).
-- Returns: {id, name, version_label, description, status, entity_counts: {domains, trails,
--           concepts, sparks}, created_at, published_at, parent_snapshot_id}.
-- Errors:  PT404 unknown id.
create or replace function api.get_snapshot(id uuid)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('get_snapshot');
  body jsonb;
begin
  body := private.snapshot_json(get_snapshot.id, true, false);
  if body is null then
    raise exception using errcode = 'PT404', message = 'Snapshot not found',
      detail = pg_catalog.jsonb_build_object('id', get_snapshot.id)::text;
  end if;
  return body;
end
$$;
comment on function api.get_snapshot(uuid) is
  'One snapshot by id (draft, published or archived) with parent_snapshot_id. Params: id. Errors: PT404 unknown id.';
grant execute on function api.get_snapshot(uuid) to anon, authenticated, service_role;

create table app.domain_rollups (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  domain_id uuid not null,
  trail_count integer not null,
  concept_count integer not null,
  spark_count integer not null,
  estimated_mins integer not null,
  constraint domain_rollups_pkey primary key (snapshot_id, domain_id)
);
comment on table app.domain_rollups is
  'Per snapshot and domain: trail, concept and spark counts and estimated minutes, computed once at import (private.refresh_content_rollups).';
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
comment on table app.trail_rollups is
  'Per snapshot and trail: concept and spark counts (each spark once) and estimated minutes, computed once at import.';
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
comment on table app.concept_rollups is
  'Per snapshot and concept: spark count and estimated minutes, computed once at import.';
alter table app.concept_rollups enable row level security;
create policy "anyone reads concept rollups" on app.concept_rollups
  for select to anon, authenticated
  using (true);
grant select on app.concept_rollups to anon, authenticated;

-- Whole-snapshot figures: the entity counts. A snapshot has its row once its rollups are written.
create table app.snapshot_rollups (
  snapshot_id uuid primary key references app.snapshots (id) on delete cascade,
  entity_counts jsonb
);
comment on table app.snapshot_rollups is
  'Per snapshot: the entity counts, computed once at import; the row marks a snapshot whose rollups are written.';
alter table app.snapshot_rollups enable row level security;
create policy "anyone reads snapshot rollups" on app.snapshot_rollups
  for select to anon, authenticated
  using (true);
grant select on app.snapshot_rollups to anon, authenticated;

-- private.content_derivation_deferred
-- Purpose: true while the content import writes a snapshot (the transaction-local setting
--          sparkpath.defer_derived = 'on'). The statement triggers that keep the derived figures
--          (search index, lexicon, graph node rows) then skip inserted rows: the import derives
--          the whole snapshot once, set-based, after fresh statistics
--          (private.derive_snapshot_figures). Updates and deletes are never deferred.
create or replace function private.content_derivation_deferred()
returns boolean
language sql
stable
set search_path = ''
as $$
  select pg_catalog.current_setting('sparkpath.defer_derived', true) is not distinct from 'on'
$$;
comment on function private.content_derivation_deferred() is
  'True while the content import defers the derived figures of inserted rows (sparkpath.defer_derived = on).';

-- private.refresh_content_rollups
-- Purpose: (re)computes the rollup rows of one snapshot from its content rows, set-based (one
--          aggregate per level; a 500,000-spark snapshot takes seconds). Called by the import in
--          the transaction that writes the content; idempotent. Also stores the snapshot's
--          entity counts (app.snapshot_rollups), discovery list items
--          (private.refresh_discovery_items) and facets (private.refresh_discovery_facet_sets).
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

  insert into app.snapshot_rollups (snapshot_id) values (sid);
  -- The discovery list items and facets, built from the rollups just written.
  perform private.refresh_discovery_items(sid);
  perform private.refresh_discovery_facet_sets(sid);
  return pg_catalog.jsonb_build_object('domains', domains, 'trails', trails, 'concepts', concepts);
end
$$;
comment on function private.refresh_content_rollups(uuid) is
  'Recomputes the domain/trail/concept rollups (counts and minutes), the entity counts and the discovery list items and facets of one snapshot from its content rows.';

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
