-- Snapshot entity counts, computed once per snapshot instead of on every /snapshots read.
--
-- A snapshot's content never changes after its import, so its counts are derived once, in SQL,
-- when its rollups are written (private.refresh_content_rollups, at the end of every import):
-- a trigger on app.snapshot_rollups fills entity_counts from the content tables. Reads fall back
-- to counting live when a snapshot has no rollup row.

-- private.snapshot_entity_counts
-- Purpose: every entity count of one snapshot, counted from the content tables.
-- Params:  snapshot_id.
-- Returns: {domains, trails, concepts, sparks, beacons, concept_sparks, spark_links, concept_links}.
-- Errors:  none.
create function private.snapshot_entity_counts(snapshot_id uuid)
returns jsonb
language sql
stable
security invoker
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
comment on function private.snapshot_entity_counts(uuid) is
  'Every entity count of one snapshot, counted from the content tables.';
grant execute on function private.snapshot_entity_counts(uuid) to anon, authenticated;

alter table app.snapshot_rollups add column entity_counts jsonb;

create function private.fill_snapshot_entity_counts()
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
revoke all on function private.fill_snapshot_entity_counts() from public, anon, authenticated, service_role;

create trigger snapshot_rollups_entity_counts
  before insert or update on app.snapshot_rollups
  for each row execute function private.fill_snapshot_entity_counts();

update app.snapshot_rollups set facets = facets; -- backfill through the trigger

-- private.snapshot_json: same output as before; counts come from the rollup row when present.
create or replace function private.snapshot_json(snapshot_id uuid, with_parent boolean, all_counts boolean)
returns jsonb
language sql
stable
security invoker
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
comment on function private.snapshot_json(uuid, boolean, boolean) is
  'One snapshot as the API shows it; entity counts from its rollup row (computed once at import), else counted live.';
grant execute on function private.snapshot_json(uuid, boolean, boolean) to anon, authenticated;
