-- Content lifecycle: validating and importing bundles (staged, all or nothing), promote and
-- rollback. Called by the content CLI as the owner; nothing here is exposed.

-- private.content_entity_id
-- Purpose: the id an entity gets when the bundle omits it: an RFC 4122 version-3 UUID (md5) of
--          "<kind>:<slug>" in the Sparkpath namespace. Re-importing the same slug yields the
--          same id, so journeys and links keep pointing at it across snapshots.
-- Params:  kind (category, domain, trail, concept, spark, beacon), slug.
-- Returns: uuid.
-- plpgsql, not sql: as private.search_normalize (04-content.sql).
create or replace function private.content_entity_id(kind text, slug text)
returns uuid
language plpgsql
immutable parallel safe
set search_path = ''
as $$
declare
  h constant text := pg_catalog.md5(pg_catalog.decode('5b0a2f3e9c7d4e1a8f6b2c4d3e5f7a91', 'hex')
    || pg_catalog.convert_to(content_entity_id.kind || ':' || content_entity_id.slug, 'UTF8'));
begin
  return (pg_catalog.substr(h, 1, 8) || '-' || pg_catalog.substr(h, 9, 4) || '-3' || pg_catalog.substr(h, 14, 3) || '-'
          || pg_catalog.substr('89ab', (pg_catalog.strpos('0123456789abcdef', pg_catalog.substr(h, 17, 1)) - 1) % 4 + 1, 1)
          || pg_catalog.substr(h, 18, 3) || '-' || pg_catalog.substr(h, 21, 12))::uuid;
end
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
comment on function private.try_jsonb(text) is
  'Text as jsonb, {"detail": text} when it is not JSON, null when empty: how an import failure''s detail is kept.';

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
comment on function private.begin_content_staging() is
  'Creates or empties the transaction''s staging table pg_temp.content_bundle_items, which the content CLI fills with COPY and private.import_content_bundle from a jsonb document.';

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
  -- (No jsonb_typeof(i.item) = 'object' here: -> gives null on anything else. The planner
  -- counts each such expression as 0.5 % of the rows, and with two it probed the slugs by a
  -- nested loop, 290,698 index lookups at 50,000 sparks: 690 ms against 190 ms hashed.)
  where i.position >= 0
    and pg_catalog.jsonb_typeof(i.item -> r.field) = 'string'
    and not exists (select 1 from pg_temp.content_bundle_refs x
                    where x.kind = r.target_kind and x.slug = i.item ->> r.field);

  -- A concept's sparks: unknown, or listed twice (after its first place in the list).
  insert into pg_temp.content_bundle_problems
  select e.kind, e.position, '$.' || e.kind || '[' || e.position || '].sparks[' || (e.n - 1) || ']',
         case when x.slug is null then pg_catalog.format('unknown spark %L', e.slug)
              else pg_catalog.format('spark %L is listed twice in this concept', e.slug) end, null
  from (select i.kind, i.position, e.value #>> '{}' as slug, e.n,
               pg_catalog.min(e.n) over (partition by i.position, e.value #>> '{}') as first_n
          from pg_temp.content_bundle_items i
          cross join lateral pg_catalog.jsonb_array_elements(
            case when pg_catalog.jsonb_typeof(i.item -> 'sparks') = 'array' then i.item -> 'sparks' else '[]'::jsonb end
          ) with ordinality e(value, n)
         where i.kind = 'concepts' and i.position >= 0 and pg_catalog.jsonb_typeof(e.value) = 'string') e
  left join pg_temp.content_bundle_refs x on x.kind = 'sparks' and x.slug = e.slug
  where x.slug is null or e.n > e.first_n;

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
comment on function private.validate_staged_content(text,text) is
  'Checks the staged bundle set-based (fields, slugs, references, ranges, link types, prerequisite cycles); returns every problem as {path, message[, cycle]}, empty when valid.';

-- private.skip_row_checks_where_superuser
-- Purpose: lets one function that writes derived or just-checked rows skip their foreign-key
--          triggers (session_replication_role = replica while it runs), where the role running
--          the migrations is a superuser (the embedded database). Such a function writes only
--          rows whose references it has just written or checked, so the checks would find
--          nothing, and they cost a quarter to a half of those steps' time. Elsewhere (Supabase's
--          postgres is no superuser) it does nothing and the checks run: slower, same rows. A
--          SET clause in a definition would refuse to create the function there, hence this
--          call after each definition, the one place the rule is written.
-- Params:  fn, a function whose tables have no other trigger that replica would skip.
create or replace procedure private.skip_row_checks_where_superuser(fn regprocedure)
language plpgsql
set search_path = ''
as $$
begin
  if (select r.rolsuper from pg_catalog.pg_roles r where r.rolname = current_user) then
    execute pg_catalog.format('alter function %s set session_replication_role to %L', fn, 'replica');
  end if;
end
$$;
comment on procedure private.skip_row_checks_where_superuser(regprocedure) is
  'Migration helper: where the migrating role is a superuser, sets session_replication_role = replica on a function that writes rows whose references it has just written or checked (no foreign-key checks); elsewhere does nothing.';

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
  where i.kind = 'domains' and i.position >= 0
  order by i.position; -- search document numbers (search_doc) in bundle order
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
  where i.kind = 'trails' and i.position >= 0
  order by i.position; -- search document numbers (search_doc) in bundle order
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('trails', n);

  insert into app.concepts (snapshot_id, id, trail_id, slug, title, description, order_index)
  select sid, x.id, t.id, x.slug, pg_catalog.btrim(i.item ->> 'title'), coalesce(i.item ->> 'description', ''),
         coalesce((i.item ->> 'order_index')::integer,
                  (pg_catalog.row_number() over (partition by i.item ->> 'trail' order by i.position))::integer - 1)
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  join pg_temp.content_bundle_refs t on t.kind = 'trails' and t.slug = i.item ->> 'trail'
  where i.kind = 'concepts' and i.position >= 0
  order by i.position; -- search document numbers (search_doc) in bundle order
  get diagnostics n = row_count;
  counts := counts || pg_catalog.jsonb_build_object('concepts', n);

  insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
  select sid, x.id, x.slug, pg_catalog.btrim(i.item ->> 'title'), coalesce(i.item ->> 'summary', ''),
         i.item ->> 'difficulty', (i.item ->> 'estimated_mins')::integer
  from pg_temp.content_bundle_items i
  join pg_temp.content_bundle_refs x on x.kind = i.kind and x.slug = i.item ->> 'slug'
  where i.kind = 'sparks' and i.position >= 0
  order by i.position; -- search document numbers (search_doc) in bundle order
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
comment on function private.write_staged_content(uuid) is
  'Writes the validated staged bundle into one snapshot, one INSERT ... SELECT per table; returns the row counts per table.';
-- Every reference the writes resolve was checked just before: no foreign-key check to run.
call private.skip_row_checks_where_superuser('private.write_staged_content(uuid)');

-- private.promote_snapshot
-- Purpose: makes a draft the current (published) snapshot and archives the previous current
--          one, in one transaction. Promotes are serialised on an advisory lock, so a second
--          concurrent promote waits and then sees the first one's result (the partial unique
--          index snapshots_one_current is the last line of defence).
-- Params:  snapshot_id; import_id (optional): when given, it must be the import that created
--          the snapshot.
-- Returns: {snapshot_id, status: 'published', previous_snapshot_id}.
-- Errors:  PT404 unknown snapshot or import; 22023 the import did not create that snapshot, or
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
      raise exception using errcode = 'PT404', message = 'import not found',
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
    raise exception using errcode = 'PT404', message = 'snapshot not found',
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
-- Errors:  PT404 unknown snapshot (or nothing to roll back to); 22023 not archived.
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
      raise exception using errcode = 'PT404', message = 'there is no archived snapshot to roll back to';
    end if;
  end if;

  select s.* into target from app.snapshots s where s.id = chosen for update;
  if not found then
    raise exception using errcode = 'PT404', message = 'snapshot not found',
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
comment on function private.list_content_imports(integer) is
  'The newest import attempts, newest first, for the content CLI''s list.';

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
comment on function private.list_content_snapshots() is
  'Every snapshot with all its entity counts, newest first, for the content CLI''s list.';

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
comment on function private.find_prerequisite_cycle() is
  'One prerequisite cycle among the staged edges (pg_temp.content_bundle_edges: spark or concept ids) as its ids in edge order, closed (the first id again at the end), or null when there is none. Deletes from that table every edge on no cycle.';

-- private.derive_search_figures
-- Purpose: the search figures (postings, title word starts) and the lexicon of one snapshot,
--          with the same SQL their triggers run (private.search_index_sql, private.search_lexicon_sql;
--          the arguments below are the triggers'). Like the content writer it skips its
--          foreign-key checks where the migrating role is a superuser (the call after it,
--          private.skip_row_checks_where_superuser): the rows reference the snapshot just
--          written, and checking that foreign key row by row cost a quarter of the figures' time
--          (measured on the title postings of that time, 205,024 rows for 50,000 sparks).
-- Params:  snapshot_id.
create or replace function private.derive_search_figures(snapshot_id uuid)
returns void
language plpgsql
set search_path = ''
set work_mem to '256MB'
as $$
declare
  kind record;
begin
  for kind in select * from (values
      ('spark', 'sparks', 'difficulty', 'title', 'summary'),
      ('concept', 'concepts', '', 'title', 'description'),
      ('trail', 'trails', 'difficulty_level', 'title', 'description'),
      ('domain', 'domains', '', 'name', 'description')) k(type, content_table, level_column, title_column, body_column) loop
    execute private.search_index_sql(kind.type, kind.level_column, kind.title_column,
      pg_catalog.format('(select * from app.%I x where x.snapshot_id = %L)', kind.content_table, derive_search_figures.snapshot_id), 1);
    execute private.search_lexicon_sql(kind.title_column, kind.body_column,
      pg_catalog.format('(select * from app.%I x where x.snapshot_id = %L)', kind.content_table, derive_search_figures.snapshot_id), 1);
  end loop;
end
$$;
comment on function private.derive_search_figures(uuid) is
  'A snapshot''s search figures and lexicon, computed once with the SQL of their triggers; run by private.derive_snapshot_figures.';
call private.skip_row_checks_where_superuser('private.derive_search_figures(uuid)');

-- private.derive_snapshot_figures
-- Purpose: computes everything derived from one snapshot's content, once, set-based: the search
--          figures and the lexicon (private.derive_search_figures), the rollups with the Kahn rounds, trail positions and entity
--          counts their triggers add (private.refresh_content_rollups), then the graph node rows,
--          which carry the rounds (private.refresh_spark_graph_nodes). The import runs it after
--          writing the content with these triggers deferred (private.content_derivation_deferred)
--          and after ANALYZE, so every join here is planned on the real row counts.
-- Params:  snapshot_id.
-- Returns: {search_postings, lexicon_words, graph_nodes, rounds}.
create or replace function private.derive_snapshot_figures(snapshot_id uuid)
returns jsonb
language plpgsql
set search_path = ''
set work_mem to '256MB'
as $$
declare
  sid constant uuid := derive_snapshot_figures.snapshot_id;
  snaps uuid[];
  ids uuid[];
begin
  perform private.derive_search_figures(sid);
  perform private.refresh_content_rollups(sid);

  select pg_catalog.array_agg(s.snapshot_id), pg_catalog.array_agg(s.id) into snaps, ids
  from app.sparks s where s.snapshot_id = sid;
  if ids is not null then
    perform private.refresh_spark_graph_nodes(snaps, ids);
  end if;

  return pg_catalog.jsonb_build_object(
    'search_postings', (select pg_catalog.count(*) from app.search_postings p where p.snapshot_id = sid),
    'lexicon_words', (select pg_catalog.count(*) from app.search_lexicon l where l.snapshot_id = sid),
    'graph_nodes', coalesce(pg_catalog.cardinality(ids), 0),
    'rounds', (select pg_catalog.max(r.round) + 1 from app.spark_rounds r where r.snapshot_id = sid));
end
$$;
comment on function private.derive_snapshot_figures(uuid) is
  'Computes a snapshot''s derived figures once, set-based (search figures, lexicon, rollups, rounds, positions, counts, graph nodes); run by the import after writing with the triggers deferred.';

-- private.report_import_phase
-- Purpose: tells the importing client where the import is, when it asked to know (the session
--          setting sparkpath.import_progress = 'on', which the content CLI sets): a NOTICE whose
--          message is 'import phase' and whose detail is the JSON
--          {phase, state: 'started' | 'finished', ...figures}. Silent otherwise (seed, tests).
-- Params:  phase (validate, write, derive, promote); figures: null when the phase starts, its
--          figures (ms, counts, ...) when it has finished.
create or replace function private.report_import_phase(phase text, figures jsonb default null::jsonb)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if pg_catalog.current_setting('sparkpath.import_progress', true) is distinct from 'on' then
    return;
  end if;
  raise notice using message = 'import phase',
    detail = (pg_catalog.jsonb_build_object('phase', report_import_phase.phase,
                'state', case when report_import_phase.figures is null then 'started' else 'finished' end)
              || coalesce(report_import_phase.figures, '{}'::jsonb))::text;
end
$$;
comment on function private.report_import_phase(text,jsonb) is
  'Import progress for a client that set sparkpath.import_progress = on: NOTICE ''import phase'' with detail {phase, state, ...figures}.';

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
  derived timestamptz;
  derived_counts jsonb;
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

    perform private.report_import_phase('validate');
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
    perform private.report_import_phase('validate', pg_catalog.jsonb_build_object(
      'ms', pg_catalog.round(extract(epoch from validated - started) * 1000),
      'items', (select pg_catalog.count(*) from pg_temp.content_bundle_items), 'problems', 0));

    perform private.report_import_phase('write');
    perform pg_catalog.set_config('sparkpath.defer_derived', 'on', true);
    insert into app.snapshots (name, version_label, description, status, created_at, published_at, parent_snapshot_id)
    values (chosen_name, chosen_label, chosen_description, 'draft', pg_catalog.clock_timestamp(), null, parent)
    returning id into new_snapshot;
    import_counts := private.write_staged_content(new_snapshot);
    perform pg_catalog.set_config('sparkpath.defer_derived', 'off', true);
    -- The planner has never seen the rows just written (same transaction, autovacuum cannot
    -- look): without fresh statistics the derived figures below join the new snapshot's links
    -- by nested loops over whole tables (the Kahn rounds of 50,000 sparks took 10 minutes).
    analyze app.domains, app.trails, app.concepts, app.sparks, app.concept_sparks, app.spark_links,
            app.concept_links;
    derived := pg_catalog.clock_timestamp();
    perform private.report_import_phase('write', pg_catalog.jsonb_build_object(
      'ms', pg_catalog.round(extract(epoch from derived - validated) * 1000), 'counts', import_counts));

    perform private.report_import_phase('derive');
    derived_counts := private.derive_snapshot_figures(new_snapshot);
    written := pg_catalog.clock_timestamp();
    perform private.report_import_phase('derive', pg_catalog.jsonb_build_object(
      'ms', pg_catalog.round(extract(epoch from written - derived) * 1000)) || derived_counts);

    import_timings := pg_catalog.jsonb_build_object(
      'validate_ms', pg_catalog.round(extract(epoch from validated - started) * 1000),
      'write_ms', pg_catalog.round(extract(epoch from derived - validated) * 1000),
      'derive_ms', pg_catalog.round(extract(epoch from written - derived) * 1000),
      'total_ms', pg_catalog.round(extract(epoch from written - started) * 1000));
    update app.content_imports ci
    set snapshot_id = new_snapshot, status = 'succeeded', counts = import_counts,
        timings = import_timings, finished_at = written
    where ci.id = new_import;

    if import_staged_content.promote then
      perform private.report_import_phase('promote');
      perform private.promote_snapshot(new_snapshot, new_import);
      perform private.report_import_phase('promote', pg_catalog.jsonb_build_object(
        'ms', pg_catalog.round(extract(epoch from pg_catalog.clock_timestamp() - written) * 1000)));
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
