-- The content model: snapshots and the rows that belong to them, plus the journey tables.
--
-- Every content row belongs to exactly one snapshot. An entity keeps its id across snapshots,
-- so the key is (snapshot_id, id) and slugs are unique per snapshot. Journey rows reference
-- entity ids (not snapshot rows), which is why enrollments and events survive promote and
-- rollback.
--
-- Content is written only by the migration owner (import/promote/rollback run as the owner in
-- one transaction each); request roles only read, through RLS.

create table app.snapshots (
  id uuid primary key default extensions.gen_random_uuid(),
  name text not null check (pg_catalog.length(name) between 1 and 200),
  version_label text not null check (pg_catalog.length(version_label) between 1 and 100),
  description text not null default '',
  status text not null check (status in ('draft', 'published', 'archived')),
  created_at timestamptz not null default pg_catalog.now(),
  published_at timestamptz,
  parent_snapshot_id uuid references app.snapshots (id),
  check ((status = 'draft') = (published_at is null))
);
-- The published snapshot is the current one; at most one at any moment, also under concurrent
-- promotes (the second promote waits on this index and then fails or re-checks).
create unique index snapshots_one_current on app.snapshots ((true)) where status = 'published';
create index snapshots_status_created on app.snapshots (status, created_at desc);
create index snapshots_parent on app.snapshots (parent_snapshot_id);
alter table app.snapshots enable row level security;
create policy "anyone reads snapshots" on app.snapshots
  for select to anon, authenticated using (true);
grant select on app.snapshots to anon, authenticated;

create table app.categories (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  slug text not null,
  name text not null,
  primary key (snapshot_id, id),
  unique (snapshot_id, slug)
);

create table app.domains (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  slug text not null,
  name text not null,
  description text not null default '',
  icon text not null default '',
  color text not null default '#6B7280' check (color ~ '^#[0-9A-Fa-f]{6}$'),
  is_published boolean not null default true,
  category_id uuid,
  learning_outcomes text[] not null default '{}',
  primary key (snapshot_id, id),
  unique (snapshot_id, slug),
  foreign key (snapshot_id, category_id) references app.categories (snapshot_id, id)
);
create index domains_category on app.domains (snapshot_id, category_id);
create index domains_name on app.domains (snapshot_id, name, id);

create table app.trails (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  domain_id uuid not null,
  slug text not null,
  title text not null,
  description text not null default '',
  difficulty_level text references app.difficulty_levels (value),
  order_index integer not null default 0,
  primary key (snapshot_id, id),
  unique (snapshot_id, slug),
  foreign key (snapshot_id, domain_id) references app.domains (snapshot_id, id)
);
create index trails_domain on app.trails (snapshot_id, domain_id, order_index);
create index trails_title on app.trails (snapshot_id, title, id);

create table app.concepts (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  trail_id uuid not null,
  slug text not null,
  title text not null,
  description text not null default '',
  order_index integer not null default 0,
  primary key (snapshot_id, id),
  unique (snapshot_id, slug),
  foreign key (snapshot_id, trail_id) references app.trails (snapshot_id, id)
);
create index concepts_trail on app.concepts (snapshot_id, trail_id, order_index);
create index concepts_title on app.concepts (snapshot_id, title, id);

create table app.sparks (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  id uuid not null,
  slug text not null,
  title text not null,
  summary text not null default '',
  difficulty text not null references app.difficulty_levels (value),
  estimated_mins integer not null check (estimated_mins between 1 and 600),
  primary key (snapshot_id, id),
  unique (snapshot_id, slug)
);
create index sparks_title on app.sparks (snapshot_id, title, id);

-- A spark may appear in several concepts; its position inside a concept is order_index.
create table app.concept_sparks (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  concept_id uuid not null,
  spark_id uuid not null,
  order_index integer not null default 0,
  primary key (snapshot_id, concept_id, spark_id),
  foreign key (snapshot_id, concept_id) references app.concepts (snapshot_id, id),
  foreign key (snapshot_id, spark_id) references app.sparks (snapshot_id, id)
);
create index concept_sparks_spark on app.concept_sparks (snapshot_id, spark_id);

-- Edge source -> target reads "source comes before target": for type `prerequisite`, the
-- source must be known first. Indexed in both directions so traversal cost follows the
-- visited subgraph.
create table app.spark_links (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  source_id uuid not null,
  target_id uuid not null,
  type text not null check (type in ('prerequisite', 'related', 'extends')),
  weight numeric(6, 3) not null default 1 check (weight > 0),
  primary key (snapshot_id, source_id, target_id, type),
  check (source_id <> target_id),
  foreign key (snapshot_id, source_id) references app.sparks (snapshot_id, id),
  foreign key (snapshot_id, target_id) references app.sparks (snapshot_id, id)
);
create index spark_links_target on app.spark_links (snapshot_id, target_id, source_id);

create table app.concept_links (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  source_id uuid not null,
  target_id uuid not null,
  type text not null check (type in ('prerequisite', 'related', 'extends')),
  weight numeric(6, 3) not null default 1 check (weight > 0),
  primary key (snapshot_id, source_id, target_id, type),
  check (source_id <> target_id),
  foreign key (snapshot_id, source_id) references app.concepts (snapshot_id, id),
  foreign key (snapshot_id, target_id) references app.concepts (snapshot_id, id)
);
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
  description text not null default '',
  primary key (snapshot_id, id),
  unique (snapshot_id, slug),
  foreign key (snapshot_id, trail_id) references app.trails (snapshot_id, id),
  foreign key (snapshot_id, concept_id) references app.concepts (snapshot_id, id)
);
create index beacons_trail on app.beacons (snapshot_id, trail_id);
create index beacons_concept on app.beacons (snapshot_id, concept_id);

-- Content is public: anyone reads every snapshot's rows (drafts are readable by id, as the
-- spec says). Nobody but the owner writes.
do $$
declare
  content_table text;
begin
  foreach content_table in array array[
    'categories', 'domains', 'trails', 'concepts', 'sparks',
    'concept_sparks', 'spark_links', 'concept_links', 'beacons'
  ] loop
    execute pg_catalog.format('alter table app.%I enable row level security', content_table);
    execute pg_catalog.format(
      'create policy %I on app.%I for select to anon, authenticated using (true)',
      'anyone reads ' || pg_catalog.replace(content_table, '_', ' '), content_table);
    execute pg_catalog.format('grant select on app.%I to anon, authenticated', content_table);
  end loop;
end
$$;

-- Content imports: one row per import attempt, successful or not.
create table app.content_imports (
  id uuid primary key default extensions.gen_random_uuid(),
  snapshot_id uuid references app.snapshots (id) on delete set null,
  status text not null check (status in ('running', 'succeeded', 'failed')),
  counts jsonb not null default '{}',
  error jsonb,
  started_at timestamptz not null default pg_catalog.now(),
  finished_at timestamptz
);
create index content_imports_snapshot on app.content_imports (snapshot_id);
alter table app.content_imports enable row level security;
-- No policy: request roles never see import records (operators use the CLI).

-- ---------------------------------------------------------------------------------------------
-- Journeys. user_id is the JWT `sub` (auth.uid()). Rows are private to their owner.
-- ---------------------------------------------------------------------------------------------

create table app.enrollments (
  id uuid primary key default extensions.gen_random_uuid(),
  user_id uuid not null default auth.uid(),
  trail_id uuid not null,
  started_at timestamptz not null default pg_catalog.now(),
  unique (user_id, trail_id)
);
alter table app.enrollments enable row level security;
create policy "learners read their own enrollments" on app.enrollments
  for select to authenticated using (user_id = (select auth.uid()));
create policy "learners enroll themselves" on app.enrollments
  for insert to authenticated with check (user_id = (select auth.uid()));
grant select, insert on app.enrollments to authenticated;

create table app.learning_events (
  id uuid primary key default extensions.gen_random_uuid(),
  user_id uuid not null default auth.uid(),
  spark_id uuid not null,
  verb text not null references app.learning_verbs (value),
  occurred_at timestamptz not null default pg_catalog.now(),
  recorded_at timestamptz not null default pg_catalog.now(),
  idempotency_key text check (pg_catalog.length(idempotency_key) between 1 and 200),
  unique (user_id, idempotency_key)
);
create index learning_events_user_spark on app.learning_events (user_id, spark_id, verb, occurred_at);
create index learning_events_user_time on app.learning_events (user_id, occurred_at desc);
create index learning_events_verb on app.learning_events (verb);
alter table app.learning_events enable row level security;
create policy "learners read their own events" on app.learning_events
  for select to authenticated using (user_id = (select auth.uid()));
create policy "learners record their own events" on app.learning_events
  for insert to authenticated with check (user_id = (select auth.uid()));
grant select, insert on app.learning_events to authenticated;

-- private.resolve_snapshot_id
-- Purpose: the snapshot selection rule shared by every content read.
-- Params:  requested, an explicit snapshot id or null.
-- Returns: the requested snapshot (draft and archived included); else the current (published)
--          one; else null, meaning "no snapshot filter" (nothing has been published yet).
-- Errors:  P0002 when an explicit id names no snapshot.
create function private.resolve_snapshot_id(requested uuid)
returns uuid
language plpgsql
stable
security invoker
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
