-- changes_trail_slug_not_cast: api.list_snapshot_changes casts its trail argument to uuid only
-- after checking its shape, outside the lookup statement. Inside it, a plan using the id index
-- (thousands of trails) cast every slug, and a slug failed as an invalid uuid (400).

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
  trail_as_id uuid;
  trail_entity uuid;
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
    -- The cast is guarded here, not in the query: SQL does not evaluate `and` in order, and a
    -- plan using the id index casts every slug (2,000 trails: "trail-000326" failed as a uuid).
    if list_snapshot_changes.trail ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      trail_as_id := list_snapshot_changes.trail::uuid;
    end if;
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
  -- Documents for the page's rows only: the newer side unless removed, the older unless added.
  described as (
    select p.*, n.document as newer_doc, o.document as older_doc, coalesce(n.document, o.document) as shown
    from page_rows p
    left join private.content_entity_documents n
      on p.change <> 'removed' and n.snapshot_id = newer and n.kind = p.kind and n.entity_id = p.entity_id
    left join private.content_entity_documents o
      on p.change <> 'added' and o.snapshot_id = older and o.kind = p.kind and o.entity_id = p.entity_id
  )
  select pg_catalog.json_build_object(
    'snapshot_id', newer,
    'since', older,
    'trail_id', trail_entity,
    'data', coalesce((
      select pg_catalog.json_agg(pg_catalog.json_build_object(
          'type', d.kind,
          'id', d.entity_id,
          'slug', d.shown ->> 'slug',
          'title', coalesce(d.shown ->> 'title', d.shown ->> 'name'),
          'change', d.change,
          'fields', case when d.change = 'changed' then (
            select pg_catalog.json_agg(k.key order by k.key)
            from pg_catalog.jsonb_object_keys(d.newer_doc || d.older_doc) k(key)
            where (d.newer_doc -> k.key) is distinct from (d.older_doc -> k.key)) end)
        order by d.kind_rank, d.entity_id)
      from described d), '[]'::json),
    'meta', private.page_meta((select pg_catalog.count(*) from changes), list_snapshot_changes.page, list_snapshot_changes.per_page))
  into result;
  return result;
end
$$;
