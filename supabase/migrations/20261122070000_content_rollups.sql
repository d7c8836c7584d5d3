-- Derived catalog figures, computed once per snapshot.
--
-- A snapshot's content never changes after its import, so the figures discovery shows
-- (trail_count, concept_count, spark_count, estimated_mins of every domain, trail and concept,
-- sparks counted once per parent however often they are placed in it) are computed in SQL by
-- private.refresh_content_rollups, in the transaction that writes the snapshot's content, and
-- read back by primary key. Reads then cost the same whatever the size of the catalog.
--
-- The snapshot's unfiltered facet lists (what /discovery/facets answers with no filter) are
-- stored the same way, in app.snapshot_rollups.
--
-- Semantics (docs/discovery.md, "Derived figures"):
--   concept: spark_count = its placements, estimated_mins = their minutes.
--   trail:   concept_count; spark_count and estimated_mins over its DISTINCT sparks.
--   domain:  trail_count, concept_count; spark_count and estimated_mins over its DISTINCT sparks.
-- Every entity of the snapshot gets a row (zeros when it has nothing under it).

create table app.domain_rollups (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  domain_id uuid not null,
  trail_count integer not null,
  concept_count integer not null,
  spark_count integer not null,
  estimated_mins integer not null,
  primary key (snapshot_id, domain_id)
);

create table app.trail_rollups (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  trail_id uuid not null,
  concept_count integer not null,
  spark_count integer not null,
  estimated_mins integer not null,
  primary key (snapshot_id, trail_id)
);

create table app.concept_rollups (
  snapshot_id uuid not null references app.snapshots (id) on delete cascade,
  concept_id uuid not null,
  spark_count integer not null,
  estimated_mins integer not null,
  primary key (snapshot_id, concept_id)
);

-- Whole-snapshot figures: the unfiltered facet lists of /discovery/facets and /discovery/all
-- (private.discovery_facets with no filter), which list every trail of the snapshot.
create table app.snapshot_rollups (
  snapshot_id uuid primary key references app.snapshots (id) on delete cascade,
  facets jsonb not null
);

-- Read like the content tables: anyone reads, nobody but the owner writes.
do $$
declare
  rollup_table text;
begin
  foreach rollup_table in array array['domain_rollups', 'trail_rollups', 'concept_rollups', 'snapshot_rollups'] loop
    execute pg_catalog.format('alter table app.%I enable row level security', rollup_table);
    execute pg_catalog.format(
      'create policy %I on app.%I for select to anon, authenticated using (true)',
      'anyone reads ' || pg_catalog.replace(rollup_table, '_', ' '), rollup_table);
    execute pg_catalog.format('grant select on app.%I to anon, authenticated', rollup_table);
  end loop;
end
$$;

-- private.refresh_content_rollups
-- Purpose: (re)computes the rollup rows of one snapshot from its content rows, set-based (one
--          aggregate per level; a 500,000-spark snapshot takes seconds). Called by the import in
--          the transaction that writes the content; idempotent. Also stores the snapshot's
--          unfiltered facets (app.snapshot_rollups, computed by private.discovery_facets).
-- Params:  snapshot_id.
-- Returns: {domains, trails, concepts}: the rollup rows written.
create function private.refresh_content_rollups(snapshot_id uuid)
returns jsonb
language plpgsql
volatile
set search_path = ''
-- 500,000 placements: keep the distinct and the hash joins in memory.
set work_mem = '64MB'
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
revoke all on function private.refresh_content_rollups(uuid) from public, anon, authenticated, service_role;

-- Snapshots that exist already.
select private.refresh_content_rollups(s.id) from app.snapshots s;

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
create or replace function private.import_staged_content(
  name text default null,
  version_label text default null,
  description text default null,
  promote boolean default false
)
returns jsonb
language plpgsql
volatile
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
comment on function private.import_staged_content(text, text, text, boolean) is
  'Staged bundle -> new draft snapshot (optionally promoted), recorded in app.content_imports; failures leave only a failed import row.';
revoke all on function private.import_staged_content(text, text, text, boolean) from public, anon, authenticated, service_role;
