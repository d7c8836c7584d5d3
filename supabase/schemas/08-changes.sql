-- What changed between two snapshots: every entity (category, domain, trail, concept, spark,
-- beacon) by its stable id, compared as one document per entity. Each document also carries the
-- link rows that belong to it (a concept's placements, the prerequisite and other links into or
-- out of a spark or concept), so every content row of a snapshot is in exactly one document.
-- A snapshot's content never changes after its import, so each document's digest, and each
-- trail's digest over the entities of the trail, is computed once (a trigger on
-- app.snapshot_rollups, like the other rollups) and a comparison reads 16-byte digests only.

-- private.content_entity_documents
-- Purpose: the comparable document of every entity of every snapshot: its own fields (no
--          snapshot id, no generated search columns) plus the link rows it owns:
--            category  {slug, name}
--            domain    {slug, name, description, icon, color, is_published, category_id, learning_outcomes}
--            trail     {slug, title, description, difficulty_level, order_index, domain_id}
--            concept   {slug, title, description, order_index, trail_id, sparks (ids in placement
--                      order), prerequisites [{id, weight}] (prerequisite links into it),
--                      links [{id, type, weight}] (its related/extends links to others)}
--            spark     {slug, title, summary, difficulty, estimated_mins, prerequisites, links}
--            beacon    {slug, title, description, trail_id, concept_id}
--          So a prerequisite link belongs to the entity that requires it, any other link to its
--          source, a placement to its concept.
-- Columns: (snapshot_id, kind, entity_id, document jsonb).
-- A view, not a function taking "these ids or all": the caller's filters (a snapshot, a kind, a
-- page's ids) reach each kind's primary key, and each link list is one index range per entity,
-- under whatever plan the caller caches. A function's `ids is null or` form was planned again on
-- every call, because no one plan serves both a page and a whole snapshot.
create view private.content_entity_documents
with (security_invoker = true)
as
  select c.snapshot_id, 'category'::text as kind, c.id as entity_id,
    pg_catalog.jsonb_build_object('slug', c.slug, 'name', c.name) as document
  from app.categories c
  union all
  select d.snapshot_id, 'domain', d.id,
    pg_catalog.jsonb_build_object('slug', d.slug, 'name', d.name, 'description', d.description, 'icon', d.icon,
      'color', d.color, 'is_published', d.is_published, 'category_id', d.category_id, 'learning_outcomes', d.learning_outcomes)
  from app.domains d
  union all
  select t.snapshot_id, 'trail', t.id,
    pg_catalog.jsonb_build_object('slug', t.slug, 'title', t.title, 'description', t.description,
      'difficulty_level', t.difficulty_level, 'order_index', t.order_index, 'domain_id', t.domain_id)
  from app.trails t
  union all
  select c.snapshot_id, 'concept', c.id,
    pg_catalog.jsonb_build_object('slug', c.slug, 'title', c.title, 'description', c.description,
      'order_index', c.order_index, 'trail_id', c.trail_id,
      'sparks', coalesce((
        select pg_catalog.jsonb_agg(cs.spark_id order by cs.order_index, cs.spark_id)
        from app.concept_sparks cs
        where cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id), '[]'::jsonb),
      'prerequisites', coalesce((
        select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('id', l.source_id, 'weight', l.weight::double precision)
                                    order by l.source_id)
        from app.concept_links l
        where l.snapshot_id = c.snapshot_id and l.target_id = c.id and l.type = 'prerequisite'), '[]'::jsonb),
      'links', coalesce((
        select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('id', l.target_id, 'type', l.type, 'weight', l.weight::double precision)
                                    order by l.target_id, l.type)
        from app.concept_links l
        where l.snapshot_id = c.snapshot_id and l.source_id = c.id and l.type <> 'prerequisite'), '[]'::jsonb))
  from app.concepts c
  union all
  select s.snapshot_id, 'spark', s.id,
    pg_catalog.jsonb_build_object('slug', s.slug, 'title', s.title, 'summary', s.summary,
      'difficulty', s.difficulty, 'estimated_mins', s.estimated_mins,
      'prerequisites', coalesce((
        select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('id', l.source_id, 'weight', l.weight::double precision)
                                    order by l.source_id)
        from app.spark_links l
        where l.snapshot_id = s.snapshot_id and l.target_id = s.id and l.type = 'prerequisite'), '[]'::jsonb),
      'links', coalesce((
        select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('id', l.target_id, 'type', l.type, 'weight', l.weight::double precision)
                                    order by l.target_id, l.type)
        from app.spark_links l
        where l.snapshot_id = s.snapshot_id and l.source_id = s.id and l.type <> 'prerequisite'), '[]'::jsonb))
  from app.sparks s
  union all
  select b.snapshot_id, 'beacon', b.id,
    pg_catalog.jsonb_build_object('slug', b.slug, 'title', b.title, 'description', b.description,
      'trail_id', b.trail_id, 'concept_id', b.concept_id)
  from app.beacons b;
comment on view private.content_entity_documents is
  'The comparable document of each entity (category|domain|trail|concept|spark|beacon) of each snapshot, with the link rows it owns.';
grant select on private.content_entity_documents to anon, authenticated;

-- private.content_entity_kinds: the entity kinds in the order change lists show them.
create or replace function private.content_entity_kinds()
returns text[]
language sql
immutable
set search_path = ''
as $$
  select array['category', 'domain', 'trail', 'concept', 'spark', 'beacon']
$$;
comment on function private.content_entity_kinds() is 'The entity kinds compared between snapshots, in change-list order.';
grant execute on function private.content_entity_kinds() to anon, authenticated;

-- private.derive_content_digests
-- Purpose: every entity's digest in a snapshot, from its document: md5 of the jsonb text (jsonb
--          prints keys in one fixed order, so equal documents give equal digests).
-- Returns: (kind, entity_id, digest).
create or replace function private.derive_content_digests(snapshot_id uuid)
returns table(kind text, entity_id uuid, digest uuid)
language sql
stable
set search_path = ''
as $$
  select d.kind, d.entity_id, pg_catalog.md5(d.document::text)::uuid
  from private.content_entity_documents d
  where d.snapshot_id = derive_content_digests.snapshot_id
$$;
comment on function private.derive_content_digests(uuid) is
  'Digest (md5 of the document text) of every entity of a snapshot, computed from the content tables.';
grant execute on function private.derive_content_digests(uuid) to anon, authenticated;

-- private.trail_scope
-- Purpose: the entities a trail is made of in one snapshot: the trail, its concepts, the sparks
--          placed in them and its beacons.
-- Params:  snapshot_id; trail_id, or null for every trail of the snapshot.
-- Returns: (trail_id, kind, entity_id), each entity once per trail.
create or replace function private.trail_scope(snapshot_id uuid, trail_id uuid)
returns table(trail_id uuid, kind text, entity_id uuid)
language sql
stable
-- One trail's entities are a few hundred: the estimate keeps digest lookups on the primary key.
rows 300
set search_path = ''
as $$
  select t.id, 'trail', t.id
  from app.trails t
  where t.snapshot_id = trail_scope.snapshot_id and (trail_scope.trail_id is null or t.id = trail_scope.trail_id)
  union all
  select c.trail_id, 'concept', c.id
  from app.concepts c
  where c.snapshot_id = trail_scope.snapshot_id and (trail_scope.trail_id is null or c.trail_id = trail_scope.trail_id)
  union all
  select distinct c.trail_id, 'spark', cs.spark_id
  from app.concepts c
  join app.concept_sparks cs on cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id
  where c.snapshot_id = trail_scope.snapshot_id and (trail_scope.trail_id is null or c.trail_id = trail_scope.trail_id)
  union all
  select b.trail_id, 'beacon', b.id
  from app.beacons b
  where b.snapshot_id = trail_scope.snapshot_id and (trail_scope.trail_id is null or b.trail_id = trail_scope.trail_id)
$$;
comment on function private.trail_scope(uuid,uuid) is
  'The entities of one trail (or of every trail) of a snapshot: the trail, its concepts, the sparks placed in them, its beacons.';
grant execute on function private.trail_scope(uuid,uuid) to anon, authenticated;

create table app.content_entity_digests (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  kind text not null,
  entity_id uuid not null,
  digest uuid not null,
  constraint content_entity_digests_pkey primary key (snapshot_id, kind, entity_id) include (digest)
);
comment on table app.content_entity_digests is
  'Per snapshot: the digest of every entity''s document (private.content_entity_documents). Filled from app.snapshot_rollups at import.';
alter table app.content_entity_digests enable row level security;
create policy "anyone reads content entity digests" on app.content_entity_digests
  for select to anon, authenticated
  using (true);
grant select on app.content_entity_digests to anon, authenticated;

create table app.trail_content_digests (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  digest uuid not null,
  constraint trail_content_digests_pkey primary key (snapshot_id, trail_id) include (digest)
);
comment on table app.trail_content_digests is
  'Per snapshot and trail: one digest over the digests of the trail''s entities (private.trail_scope); equal digests mean an empty change list for the trail. Filled from app.snapshot_rollups at import.';
alter table app.trail_content_digests enable row level security;
create policy "anyone reads trail content digests" on app.trail_content_digests
  for select to anon, authenticated
  using (true);
grant select on app.trail_content_digests to anon, authenticated;

create table app.trail_entity_digests (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  kind text not null,
  entity_id uuid not null,
  digest uuid not null,
  constraint trail_entity_digests_pkey primary key (snapshot_id, trail_id, kind, entity_id) include (digest)
);
comment on table app.trail_entity_digests is
  'Per snapshot and trail: the digest of each of the trail''s entities (private.trail_scope), so a trail''s change list merges two short primary-key ranges instead of looking up the trail''s scope. Filled from app.snapshot_rollups at import.';
alter table app.trail_entity_digests enable row level security;
create policy "anyone reads trail entity digests" on app.trail_entity_digests
  for select to anon, authenticated
  using (true);
grant select on app.trail_entity_digests to anon, authenticated;

create table app.release_changes (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  since uuid not null references app.snapshots (id) on delete cascade,
  kind text not null,
  entity_id uuid not null,
  change text not null,
  -- how the list shows the row (private.describe_changes), kept with it
  slug text,
  title text,
  fields text[],
  constraint release_changes_pkey primary key (snapshot_id, since, kind, entity_id) include (change)
);
comment on table app.release_changes is
  'A release''s whole change list (private.snapshot_changes) against the snapshot that was current when it was imported, each row with its slug, title and changed fields (private.describe_changes): the pair an app asks about after a release, kept so the question does not compare two whole catalogs, nor build the documents of a page, each time. Other pairs are compared when asked. Filled from app.snapshot_rollups at import (private.store_release_changes).';
alter table app.release_changes enable row level security;
create policy "anyone reads release changes" on app.release_changes
  for select to anon, authenticated
  using (true);
grant select on app.release_changes to anon, authenticated;
create index release_changes_since on app.release_changes (since);

create table app.release_trail_changes (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  since uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  kind text not null,
  entity_id uuid not null,
  change text not null,
  slug text,
  title text,
  fields text[],
  constraint release_trail_changes_pkey primary key (snapshot_id, since, trail_id, kind, entity_id) include (change)
);
comment on table app.release_trail_changes is
  'The same release''s change list for each trail of either snapshot (private.snapshot_changes with a trail: a spark leaving the trail is removed from it), each row described like app.release_changes. A trail''s list after a release is what a journey links to (content_changes_url); kept so it is one short range read, where comparing digests and building the documents of a page read about 80 scattered pages. Filled with app.release_changes.';
alter table app.release_trail_changes enable row level security;
create policy "anyone reads release trail changes" on app.release_trail_changes
  for select to anon, authenticated
  using (true);
grant select on app.release_trail_changes to anon, authenticated;
create index release_trail_changes_since on app.release_trail_changes (since);

-- private.entity_change: one row of a change list, as private.snapshot_changes gives it.
create type private.entity_change as (
  kind text,
  entity_id uuid,
  change text
);

-- private.describe_changes
-- Purpose: how a change list shows its rows: the slug and the title (a domain's or category's
--          name) from the newer side, or the older for a removed entity, and for a changed one
--          the names of the fields whose values differ, in order; built from the two documents
--          (private.content_entity_documents) of each row.
-- Params:  snapshot (the newer side), since (the older), changes (the rows to describe: a page,
--          or a whole release's lists at import). A set, not one row per call: a function with
--          its own search_path is never inlined, and a call per row planned the documents of
--          every kind each time (8 ms a row against 0.07).
-- Returns: (kind, entity_id, change, slug, title, fields: text[], null unless changed).
create or replace function private.describe_changes(snapshot uuid, since uuid, changes private.entity_change[])
returns table(kind text, entity_id uuid, change text, slug text, title text, fields text[])
language sql
stable
set search_path = ''
as $$
  select p.kind, p.entity_id, p.change,
    d.shown ->> 'slug',
    coalesce(d.shown ->> 'title', d.shown ->> 'name'),
    case when p.change = 'changed' then array(
      select k.key
      from pg_catalog.jsonb_object_keys(d.newer_doc || d.older_doc) k(key)
      where (d.newer_doc -> k.key) is distinct from (d.older_doc -> k.key)
      order by k.key) end
  from pg_catalog.unnest(describe_changes.changes) p
  cross join lateral (
    select n.document as newer_doc, o.document as older_doc, coalesce(n.document, o.document) as shown
    from (select) one
    left join private.content_entity_documents n
      on p.change <> 'removed' and n.snapshot_id = describe_changes.snapshot and n.kind = p.kind and n.entity_id = p.entity_id
    left join private.content_entity_documents o
      on p.change <> 'added' and o.snapshot_id = describe_changes.since and o.kind = p.kind and o.entity_id = p.entity_id
  ) d
$$;
comment on function private.describe_changes(uuid,uuid,private.entity_change[]) is
  'How a change list shows its rows: slug and title (newer side, older when removed) and, when changed, the names of the differing fields; built from the entity documents.';
grant execute on function private.describe_changes(uuid,uuid,private.entity_change[]) to anon, authenticated;

-- private.store_release_changes
-- Purpose: (re)writes a release's kept change lists against `since`: the whole list
--          (app.release_changes) and every trail's of either snapshot (app.release_trail_changes),
--          by the one comparison rule (private.snapshot_changes), each distinct row described
--          once (private.describe_changes). One statement: the comparisons read the tables as
--          they were before it, so none reads the lists it is writing.
create or replace function private.store_release_changes(snapshot_id uuid, since uuid)
returns void
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
declare
  sid constant uuid := store_release_changes.snapshot_id;
  older constant uuid := store_release_changes.since;
begin
  delete from app.release_changes c where c.snapshot_id = sid and c.since = older;
  delete from app.release_trail_changes c where c.snapshot_id = sid and c.since = older;
  with whole as materialized (
    select c.kind, c.entity_id, c.change from private.snapshot_changes(older, sid, null) c
  ),
  by_trail as materialized (
    select t.id as trail_id, c.kind, c.entity_id, c.change
    from (select distinct t.id from app.trails t where t.snapshot_id in (sid, older)) t
    cross join lateral private.snapshot_changes(older, sid, t.id) c
  ),
  described as materialized (
    select d.*
    from private.describe_changes(sid, older, array(
      select (r.kind, r.entity_id, r.change)::private.entity_change
      from (select w.kind, w.entity_id, w.change from whole w
            union select b.kind, b.entity_id, b.change from by_trail b) r)) d
  ),
  trail_lists as (
    insert into app.release_trail_changes (snapshot_id, since, trail_id, kind, entity_id, change, slug, title, fields)
    select sid, older, b.trail_id, b.kind, b.entity_id, b.change, d.slug, d.title, d.fields
    from by_trail b
    join described d on d.kind = b.kind and d.entity_id = b.entity_id and d.change = b.change
    order by b.trail_id, b.kind, b.entity_id
  )
  insert into app.release_changes (snapshot_id, since, kind, entity_id, change, slug, title, fields)
  select sid, older, w.kind, w.entity_id, w.change, d.slug, d.title, d.fields
  from whole w
  join described d on d.kind = w.kind and d.entity_id = w.entity_id and d.change = w.change
  order by w.kind, w.entity_id;
end
$$;
comment on function private.store_release_changes(uuid,uuid) is
  'Writes a release''s kept change lists against since: whole (app.release_changes) and per trail (app.release_trail_changes), each row described.';
-- Rows derived from the two snapshots' content: no foreign-key check to run.
call private.skip_row_checks_where_superuser('private.store_release_changes(uuid,uuid)');

-- private.refresh_content_digests
-- Purpose: (re)computes one snapshot's entity digests, each trail's entity digests and the trail
--          digests from its content rows, and its change lists against the current snapshot
--          (private.store_release_changes).
--          Called by the trigger below at the end of every import, and by the migration that
--          filled the snapshots imported before digests existed.
create or replace function private.refresh_content_digests(snapshot_id uuid)
returns void
language plpgsql
set search_path = ''
set work_mem to '64MB'
as $$
declare
  sid constant uuid := refresh_content_digests.snapshot_id;
  previous uuid;
begin
  delete from app.content_entity_digests d where d.snapshot_id = sid;
  delete from app.trail_entity_digests d where d.snapshot_id = sid;
  delete from app.trail_content_digests d where d.snapshot_id = sid;
  insert into app.content_entity_digests (snapshot_id, kind, entity_id, digest)
  select sid, d.kind, d.entity_id, d.digest
  from private.derive_content_digests(sid) d;
  insert into app.trail_entity_digests (snapshot_id, trail_id, kind, entity_id, digest)
  select sid, d.trail_id, d.kind, d.entity_id, d.digest
  from private.derive_trail_entity_digests(sid, null) d
  order by d.trail_id, d.kind, d.entity_id;
  -- Every trail's digest by the one rule, in one pass over the trail entity digests just stored
  -- (a call per trail re-read the snapshot's scope once per trail: 4.5 s for 200 trails; joining
  -- the scope to the entity digests again cost another 0.6 s at 50,000 sparks).
  insert into app.trail_content_digests (snapshot_id, trail_id, digest)
  select sid, d.trail_id, d.digest
  from private.derive_trail_digests(sid, null) d;
  -- The release's change lists against the snapshot current now (the previous release);
  -- nothing when this snapshot is the current one.
  delete from app.release_changes c where c.snapshot_id = sid;
  delete from app.release_trail_changes c where c.snapshot_id = sid;
  previous := nullif(private.resolve_snapshot_id(null), sid);
  if previous is not null then
    perform private.store_release_changes(sid, previous);
  end if;
end
$$;
comment on function private.refresh_content_digests(uuid) is
  'Recomputes one snapshot''s app.content_entity_digests, app.trail_entity_digests and app.trail_content_digests from its content rows, and its kept change lists against the current snapshot (private.store_release_changes).';
-- The digests and changes it writes (about 105,000 rows for 50,000 sparks) derive from content rows
-- of the snapshot they reference: no foreign-key check to run (the tables it writes have no
-- triggers that replica would skip).
call private.skip_row_checks_where_superuser('private.refresh_content_digests(uuid)');

-- The digests are written when a snapshot's rollup row is (the import's last step), in the
-- import's transaction.
create or replace function private.fill_content_digests()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform private.refresh_content_digests(new.snapshot_id);
  return null;
end
$$;
comment on function private.fill_content_digests() is
  'Trigger: (re)computes a snapshot''s content digests (private.refresh_content_digests) whenever its app.snapshot_rollups row is written.';

create trigger snapshot_rollups_content_digests
  after insert or update on app.snapshot_rollups
  for each row execute function private.fill_content_digests();

-- private.content_digests
-- Purpose: the entity digests of a snapshot (or of one trail's entities in it) as a change list
--          compares them: stored once the snapshot is rolled up, else derived.
-- Params:  snapshot_id; trail_id or null for the whole snapshot.
-- Returns: (kind, entity_id, digest).
create or replace function private.content_digests(snapshot_id uuid, trail_id uuid)
returns table(kind text, entity_id uuid, digest uuid)
language plpgsql
stable
set search_path = ''
as $$
begin
  if exists (select from app.snapshot_rollups r where r.snapshot_id = content_digests.snapshot_id) then
    if content_digests.trail_id is null then
      return query
        select d.kind, d.entity_id, d.digest
        from app.content_entity_digests d
        where d.snapshot_id = content_digests.snapshot_id;
    else
      return query
        select d.kind, d.entity_id, d.digest
        from app.trail_entity_digests d
        where d.snapshot_id = content_digests.snapshot_id and d.trail_id = content_digests.trail_id
        order by d.kind, d.entity_id;
    end if;
  else
    return query
      select d.kind, d.entity_id, d.digest
      from private.derive_content_digests(content_digests.snapshot_id) d
      where content_digests.trail_id is null
         or (d.kind, d.entity_id) in (
              select s.kind, s.entity_id from private.trail_scope(content_digests.snapshot_id, content_digests.trail_id) s);
  end if;
end
$$;
comment on function private.content_digests(uuid,uuid) is
  'Entity digests of a snapshot, or of one trail''s entities in it: stored once the snapshot is rolled up, else derived.';
grant execute on function private.content_digests(uuid,uuid) to anon, authenticated;

-- private.derive_trail_entity_digests
-- Purpose: each trail's entities (private.trail_scope) with their digests
--          (private.content_digests): what app.trail_entity_digests stores.
-- Params:  snapshot_id; trail_id, or null for every trail of the snapshot.
-- Returns: (trail_id, kind, entity_id, digest).
create or replace function private.derive_trail_entity_digests(snapshot_id uuid, trail_id uuid)
returns table(trail_id uuid, kind text, entity_id uuid, digest uuid)
language sql
stable
set search_path = ''
as $$
  select s.trail_id, s.kind, s.entity_id, d.digest
  from private.trail_scope(derive_trail_entity_digests.snapshot_id, derive_trail_entity_digests.trail_id) s
  join private.content_digests(derive_trail_entity_digests.snapshot_id, derive_trail_entity_digests.trail_id) d
    on d.kind = s.kind and d.entity_id = s.entity_id
$$;
comment on function private.derive_trail_entity_digests(uuid,uuid) is
  'The entities of one trail (or of every trail) of a snapshot with their digests, computed from the trail scope and the entity digests.';
grant execute on function private.derive_trail_entity_digests(uuid,uuid) to anon, authenticated;

-- private.derive_trail_digests
-- Purpose: the rule equal digests mean "nothing of the trail changed" rests on: a trail's digest
--          is the md5 over its entities as "kind:id:digest", in kind and id order, from the
--          trail's entity digests: the stored ones (app.trail_entity_digests) once the snapshot
--          is rolled up, else derived (private.derive_trail_entity_digests).
-- Params:  snapshot_id; trail_id, or null for every trail of the snapshot.
-- Returns: (trail_id, digest).
create or replace function private.derive_trail_digests(snapshot_id uuid, trail_id uuid)
returns table(trail_id uuid, digest uuid)
language sql
stable
set search_path = ''
as $$
  select d.trail_id,
         pg_catalog.md5(pg_catalog.string_agg(d.kind || ':' || d.entity_id || ':' || d.digest, ',' order by d.kind, d.entity_id))::uuid
  from (
    select e.trail_id, e.kind, e.entity_id, e.digest
    from app.trail_entity_digests e
    where e.snapshot_id = derive_trail_digests.snapshot_id
      and (derive_trail_digests.trail_id is null or e.trail_id = derive_trail_digests.trail_id)
      and exists (select from app.snapshot_rollups r where r.snapshot_id = derive_trail_digests.snapshot_id)
    union all
    select e.trail_id, e.kind, e.entity_id, e.digest
    from private.derive_trail_entity_digests(derive_trail_digests.snapshot_id, derive_trail_digests.trail_id) e
    where not exists (select from app.snapshot_rollups r where r.snapshot_id = derive_trail_digests.snapshot_id)
  ) d
  group by d.trail_id
$$;
comment on function private.derive_trail_digests(uuid,uuid) is
  'Digest of one trail (or of every trail) of a snapshot: md5 over its entities'' kind:id:digest in order, from the stored trail entity digests once rolled up, else derived.';
grant execute on function private.derive_trail_digests(uuid,uuid) to anon, authenticated;

-- private.trail_content_digest
-- Purpose: one trail's digest in one snapshot (private.derive_trail_digests): stored once the
--          snapshot is rolled up (the import writes every trail's at once), else computed.
create or replace function private.trail_content_digest(snapshot_id uuid, trail_id uuid)
returns uuid
language sql
stable
set search_path = ''
as $$
  select coalesce(
    (select d.digest from app.trail_content_digests d
     where d.snapshot_id = trail_content_digest.snapshot_id and d.trail_id = trail_content_digest.trail_id),
    (select d.digest from private.derive_trail_digests(trail_content_digest.snapshot_id, trail_content_digest.trail_id) d))
$$;
comment on function private.trail_content_digest(uuid,uuid) is
  'A trail''s digest in a snapshot (private.derive_trail_digests): stored when the snapshot is rolled up, else computed.';
grant execute on function private.trail_content_digest(uuid,uuid) to anon, authenticated;

-- private.journey_content_changes
-- Purpose: the two fields a journey adds about content: whether its trail changed between the
--          snapshot current at enrollment and the snapshot the journey is read from, and the
--          change list that says how (GET /snapshots/{id}/changes?since=&trail=).
-- Params:  enrolled_snapshot (null when unknown: nothing is claimed), snapshot, trail_id.
-- Returns: {content_changed_since_enrollment: boolean, content_changes_url: text|null}.
create or replace function private.journey_content_changes(enrolled_snapshot uuid, snapshot uuid, trail_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'content_changed_since_enrollment', c.changed,
    'content_changes_url', case when c.changed then pg_catalog.format('/snapshots/%s/changes?since=%s&trail=%s',
      journey_content_changes.snapshot, journey_content_changes.enrolled_snapshot, journey_content_changes.trail_id) end)
  from (
    select coalesce(journey_content_changes.enrolled_snapshot <> journey_content_changes.snapshot
      and private.trail_content_digest(journey_content_changes.enrolled_snapshot, journey_content_changes.trail_id)
          is distinct from private.trail_content_digest(journey_content_changes.snapshot, journey_content_changes.trail_id), false) as changed
  ) c
$$;
comment on function private.journey_content_changes(uuid,uuid,uuid) is
  'Journey fields content_changed_since_enrollment (trail digests differ between the enrollment snapshot and the journey''s) and content_changes_url.';
grant execute on function private.journey_content_changes(uuid,uuid,uuid) to anon, authenticated;

-- private.snapshot_changes
-- Purpose: the rule of a change list: each entity whose digest differs between two snapshots,
--          matched by (kind, id): added (only in the newer), removed (only in the older),
--          changed (in both, different documents).
-- Params:  since (the older snapshot), snapshot (the newer), trail_id (null: whole snapshots;
--          else only the trail's entities in either snapshot).
-- Returns: (kind, entity_id, change).
-- Cost:    a snapshot against itself: nothing read (a snapshot's content never changes after
--          its import, and a draft's document is compared with itself); a release against the
--          snapshot current at its import: its kept list, whole (app.release_changes) or the
--          trail's (app.release_trail_changes); two other whole rolled-up snapshots: one join
--          of their app.content_entity_digests ranges (grows with the catalog); a trail: two
--          primary-key ranges of app.trail_entity_digests; otherwise digests derived on the
--          fly (private.content_digests).
create or replace function private.snapshot_changes(since uuid, snapshot uuid, trail_id uuid)
returns table(kind text, entity_id uuid, change text)
language plpgsql
stable
set search_path = ''
as $$
begin
  if snapshot_changes.since = snapshot_changes.snapshot then
    return;
  end if;
  if exists (select from app.release_changes c where c.snapshot_id = snapshot_changes.snapshot and c.since = snapshot_changes.since) then
    if snapshot_changes.trail_id is null then
      return query
        select c.kind, c.entity_id, c.change
        from app.release_changes c
        where c.snapshot_id = snapshot_changes.snapshot and c.since = snapshot_changes.since;
    else
      return query
        select c.kind, c.entity_id, c.change
        from app.release_trail_changes c
        where c.snapshot_id = snapshot_changes.snapshot and c.since = snapshot_changes.since
          and c.trail_id = snapshot_changes.trail_id;
    end if;
  elsif snapshot_changes.trail_id is null
     and exists (select from app.snapshot_rollups r where r.snapshot_id = snapshot_changes.since)
     and exists (select from app.snapshot_rollups r where r.snapshot_id = snapshot_changes.snapshot) then
    return query
      select coalesce(n.kind, o.kind), coalesce(n.entity_id, o.entity_id),
        case when o.entity_id is null then 'added' when n.entity_id is null then 'removed' else 'changed' end
      from (select d.kind, d.entity_id, d.digest from app.content_entity_digests d where d.snapshot_id = snapshot_changes.since) o
      full join (select d.kind, d.entity_id, d.digest from app.content_entity_digests d where d.snapshot_id = snapshot_changes.snapshot) n
        on n.kind = o.kind and n.entity_id = o.entity_id
      where o.digest is distinct from n.digest;
  else
    -- The same comparison over the digests content_digests gives (one trail's, or derived).
    return query
      select coalesce(n.kind, o.kind), coalesce(n.entity_id, o.entity_id),
        case when o.entity_id is null then 'added' when n.entity_id is null then 'removed' else 'changed' end
      from private.content_digests(snapshot_changes.since, snapshot_changes.trail_id) o
      full join private.content_digests(snapshot_changes.snapshot, snapshot_changes.trail_id) n
        on n.kind = o.kind and n.entity_id = o.entity_id
      where o.digest is distinct from n.digest;
  end if;
end
$$;
comment on function private.snapshot_changes(uuid,uuid,uuid) is
  'Entities added, removed or changed (by digest) from one snapshot to another, whole or restricted to one trail''s entities.';
grant execute on function private.snapshot_changes(uuid,uuid,uuid) to anon, authenticated;

-- api.list_snapshot_changes
-- Purpose: what changed from one snapshot (since) to another (snapshot_id), entity by entity.
-- Params:  snapshot_id (required: the newer side; a draft shows what its promote would change);
--          since (required: the older side); trail (optional: a trail slug or id; only the
--          trail's entities, i.e. the trail, its concepts, the sparks placed in them and its
--          beacons, in either snapshot: a spark leaving the trail is "removed" from it);
--          page (1..100000, default 1); per_page (1..100, default 20).
-- Returns: {snapshot_id, since, trail_id, data: [{type, id, slug, title, change, fields}], meta}.
--          type: category|domain|trail|concept|spark|beacon; change: added|removed|changed;
--          fields: the names of the fields that differ (changed only, else null); slug and title
--          (a domain's or category's name) from the newer side, or the older for a removed one.
--          Ordered by type (category, domain, trail, concept, spark, beacon), then id: stable
--          across pages, and only the page's documents are built.
-- Errors:  22023 bad page/per_page or missing since; PT404 unknown snapshot, since or trail.
create or replace function api.list_snapshot_changes(snapshot_id uuid, since uuid, trail text default null::text, page integer default 1, per_page integer default 20)
returns json
language plpgsql
stable
-- Planning the page statement cost as much as running it, and the plan cache kept planning it
-- again on every call; its generic plan serves every pair, trail and page (all parameters).
set plan_cache_mode to 'force_generic_plan'
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_snapshot_changes');
  newer uuid := private.resolve_snapshot_id(list_snapshot_changes.snapshot_id);
  older uuid;
  trail_as_id uuid := private.uuid_or_null(list_snapshot_changes.trail);
  trail_entity uuid;
  -- the pair is a release and the one current at its import: its lists are kept, described
  kept boolean;
  result json;
begin
  perform private.require_range('page', list_snapshot_changes.page, 1, 100000);
  perform private.require_range('per_page', list_snapshot_changes.per_page, 1, 100);
  if list_snapshot_changes.since is null then
    raise exception using errcode = '22023', message = 'since is required',
      detail = pg_catalog.jsonb_build_object('field', 'since')::text;
  end if;
  if newer is null then
    raise exception using errcode = 'PT404', message = 'snapshot not found',
      detail = pg_catalog.jsonb_build_object('snapshot_id', list_snapshot_changes.snapshot_id)::text;
  end if;
  select s.id into older from app.snapshots s where s.id = list_snapshot_changes.since;
  if older is null then
    raise exception using errcode = 'PT404', message = 'since snapshot not found',
      detail = pg_catalog.jsonb_build_object('since', list_snapshot_changes.since)::text;
  end if;
  if list_snapshot_changes.trail is not null then
    -- A slug names the trail in the newer snapshot, else in the older; an id is the entity id.
    -- trail_as_id is cast before the query, not in it: a plan using the id index cast every
    -- slug there (2,000 trails: "trail-000326" failed as a uuid).
    select t.id into trail_entity
    from app.trails t
    where t.snapshot_id in (newer, older)
      and (t.slug = list_snapshot_changes.trail or t.id = trail_as_id)
    order by (t.snapshot_id = newer) desc
    limit 1;
    if trail_entity is null then
      raise exception using errcode = 'PT404', message = 'trail not found in either snapshot',
        detail = pg_catalog.jsonb_build_object('trail', list_snapshot_changes.trail)::text;
    end if;
  end if;

  kept := exists (select from app.release_changes c where c.snapshot_id = newer and c.since = older);
  with changes as materialized (
    select * from private.snapshot_changes(older, newer, trail_entity)
  ),
  page_rows as (
    select c.kind, c.entity_id, c.change, pg_catalog.array_position(private.content_entity_kinds(), c.kind) as kind_rank
    from changes c
    order by kind_rank, c.entity_id
    offset (list_snapshot_changes.page - 1)::bigint * list_snapshot_changes.per_page
    limit list_snapshot_changes.per_page
  ),
  -- How each of the page's rows is shown: kept with a release's lists, else built from the
  -- documents of the page's rows only.
  described as (
    select p.*, r.slug, r.title, r.fields
    from page_rows p
    join app.release_changes r
      on r.snapshot_id = newer and r.since = older and r.kind = p.kind and r.entity_id = p.entity_id
    where kept and trail_entity is null
    union all
    select p.*, r.slug, r.title, r.fields
    from page_rows p
    join app.release_trail_changes r
      on r.snapshot_id = newer and r.since = older and r.trail_id = trail_entity and r.kind = p.kind and r.entity_id = p.entity_id
    where kept
    union all
    select p.*, b.slug, b.title, b.fields
    from private.describe_changes(newer, older, array(
      select (q.kind, q.entity_id, q.change)::private.entity_change from page_rows q)) b
    join page_rows p on p.kind = b.kind and p.entity_id = b.entity_id
    where not kept
  )
  select pg_catalog.json_build_object(
    'snapshot_id', newer,
    'since', older,
    'trail_id', trail_entity,
    'data', coalesce((
      select pg_catalog.json_agg(pg_catalog.json_build_object(
          'type', d.kind,
          'id', d.entity_id,
          'slug', d.slug,
          'title', d.title,
          'change', d.change,
          'fields', pg_catalog.to_json(d.fields))
        order by d.kind_rank, d.entity_id)
      from described d), '[]'::json),
    'meta', private.page_meta((select pg_catalog.count(*) from changes), list_snapshot_changes.page, list_snapshot_changes.per_page))
  into result;
  return result;
end
$$;
comment on function api.list_snapshot_changes(uuid,uuid,text,integer,integer) is
  'Entities added, removed and changed (with the changed field names) from snapshot since to snapshot_id, optionally one trail''s. Params: snapshot_id, since, trail (slug or id), page, per_page (max 100). Returns {snapshot_id, since, trail_id, data, meta}. Errors: 22023 invalid parameter, PT404 unknown snapshot/since/trail.';
grant execute on function api.list_snapshot_changes(uuid,uuid,text,integer,integer) to anon, authenticated, service_role;
