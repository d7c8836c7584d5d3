-- The /snapshots read API. Counts are computed here from the content tables, never stored.

-- private.snapshot_json
-- Purpose: one snapshot as the API shows it.
-- Params:  snapshot_id; detailed: true for the current and by-id shapes (parent_snapshot_id and,
--          with all_counts, beacons and the three link counts).
-- Returns: {id, name, version_label, description, status, entity_counts, created_at,
--           published_at[, parent_snapshot_id]}, or null for an unknown id.
create function private.snapshot_json(snapshot_id uuid, with_parent boolean, all_counts boolean)
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
      'entity_counts', pg_catalog.jsonb_build_object(
        'domains', (select pg_catalog.count(*) from app.domains x where x.snapshot_id = s.id),
        'trails', (select pg_catalog.count(*) from app.trails x where x.snapshot_id = s.id),
        'concepts', (select pg_catalog.count(*) from app.concepts x where x.snapshot_id = s.id),
        'sparks', (select pg_catalog.count(*) from app.sparks x where x.snapshot_id = s.id))
        || case when snapshot_json.all_counts then pg_catalog.jsonb_build_object(
          'beacons', (select pg_catalog.count(*) from app.beacons x where x.snapshot_id = s.id),
          'concept_sparks', (select pg_catalog.count(*) from app.concept_sparks x where x.snapshot_id = s.id),
          'spark_links', (select pg_catalog.count(*) from app.spark_links x where x.snapshot_id = s.id),
          'concept_links', (select pg_catalog.count(*) from app.concept_links x where x.snapshot_id = s.id))
        else '{}'::jsonb end,
      'created_at', s.created_at,
      'published_at', s.published_at)
    || case when snapshot_json.with_parent
         then pg_catalog.jsonb_build_object('parent_snapshot_id', s.parent_snapshot_id) else '{}'::jsonb end
  from app.snapshots s
  where s.id = snapshot_json.snapshot_id
$$;
comment on function private.snapshot_json(uuid, boolean, boolean) is
  'One snapshot as the API shows it, with entity counts computed from the content tables.';
grant execute on function private.snapshot_json(uuid, boolean, boolean) to anon, authenticated;

-- api.list_snapshots
-- Purpose: the snapshots, newest first, one page at a time, optionally filtered by status.
-- Params:  page (>= 1, default 1), per_page (1..100, default 20), status (draft, published,
--          archived; null for all).
-- Returns: {data: [{id, name, version_label, description, status,
--           entity_counts: {domains, trails, concepts, sparks}, created_at, published_at}],
--           meta: {total, page, per_page, total_pages, has_next, has_prev}}.
-- Errors:  22023 when page, per_page or status is out of range.
create function api.list_snapshots(page integer default 1, per_page integer default 20, status text default null)
returns jsonb
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  wanted_page constant integer := coalesce(list_snapshots.page, 1);
  wanted_size constant integer := coalesce(list_snapshots.per_page, 20);
  total bigint;
  page_rows jsonb;
begin
  if wanted_page < 1 then
    raise exception using errcode = '22023', message = 'page must be at least 1',
      detail = pg_catalog.jsonb_build_object('field', 'page', 'value', wanted_page)::text;
  end if;
  if wanted_size not between 1 and 100 then
    raise exception using errcode = '22023', message = 'per_page must be between 1 and 100',
      detail = pg_catalog.jsonb_build_object('field', 'per_page', 'value', wanted_size)::text;
  end if;
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
    'meta', pg_catalog.jsonb_build_object(
      'total', total,
      'page', wanted_page,
      'per_page', wanted_size,
      'total_pages', (total + wanted_size - 1) / wanted_size,
      'has_next', wanted_page::bigint * wanted_size < total,
      'has_prev', wanted_page > 1));
end
$$;
comment on function api.list_snapshots(integer, integer, text) is
  'Snapshots newest first, paginated. Params: page (default 1), per_page (default 20, max 100), status (draft|published|archived). Returns {data, meta}. Errors: 22023 invalid page, per_page or status.';
grant execute on function api.list_snapshots(integer, integer, text) to anon, authenticated;

-- api.get_current_snapshot
-- Purpose: the current (published) snapshot.
-- Params:  none.
-- Returns: {id, name, version_label, description, status, entity_counts: {domains, trails,
--           concepts, sparks, beacons, concept_sparks, spark_links, concept_links},
--           created_at, published_at, parent_snapshot_id}.
-- Errors:  P0002 when no snapshot has been published.
create function api.get_current_snapshot()
returns jsonb
language plpgsql
stable
security invoker
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
create function api.get_snapshot(id uuid)
returns jsonb
language plpgsql
stable
security invoker
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
