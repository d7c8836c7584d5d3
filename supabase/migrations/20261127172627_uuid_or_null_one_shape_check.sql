-- uuid_or_null_one_shape_check: private.uuid_or_null holds the check-then-cast of a slug-or-id
-- argument that private.find_domain, api.list_snapshot_changes and private.xapi_statement_id
-- each wrote out. Behaviour unchanged.

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION private.uuid_or_null(value text)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO ''
AS $function$
  select case when uuid_or_null.value ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
              then uuid_or_null.value::uuid end
$function$
;

CREATE OR REPLACE FUNCTION api.list_snapshot_changes(snapshot_id uuid, since uuid, trail text DEFAULT NULL::text, page integer DEFAULT 1, per_page integer DEFAULT 20)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
 SET search_path TO ''
AS $function$
declare
  caller_role constant text := private.authorize('list_snapshot_changes');
  newer uuid := private.resolve_snapshot_id(list_snapshot_changes.snapshot_id);
  older uuid;
  trail_as_id uuid := private.uuid_or_null(list_snapshot_changes.trail);
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
$function$
;

CREATE OR REPLACE FUNCTION private.find_domain(sid uuid, slug_or_id text)
 RETURNS app.domains
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
declare
  found app.domains;
  as_id uuid := private.uuid_or_null(find_domain.slug_or_id);
begin
  if as_id is not null then
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
      errcode = 'PT404',
      message = pg_catalog.format('domain %s not found', find_domain.slug_or_id),
      detail = pg_catalog.jsonb_build_object('slug', find_domain.slug_or_id)::text;
  end if;
  return found;
end
$function$
;

CREATE OR REPLACE FUNCTION private.xapi_statement_id(user_id uuid, idempotency_key text, event_id uuid)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO ''
AS $function$
  select case
    when xapi_statement_id.idempotency_key is null then xapi_statement_id.event_id
    else coalesce(private.uuid_or_null(xapi_statement_id.idempotency_key),
                  private.xapi_uuid(xapi_statement_id.user_id || ':' || xapi_statement_id.idempotency_key))
  end
$function$
;

revoke all on function private.uuid_or_null(value text) from public;
grant execute on function private.uuid_or_null(value text) to anon;
grant execute on function private.uuid_or_null(value text) to authenticated;

comment on function private.uuid_or_null(pg_catalog.text) is 'The text as a uuid when it has a uuid''s shape (any case), else null.';
