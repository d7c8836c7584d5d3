-- Imports that fail before reaching the database (the CLI's own schema check of the bundle)
-- are recorded too, in their own statement, so app.content_imports lists every attempt.

-- private.record_failed_import
-- Purpose: records an import attempt that failed outside the database.
-- Params:  name, version_label (as far as known), error ({code, message, problems, ...}),
--          started_at (when the attempt began).
-- Returns: the import id.
create function private.record_failed_import(name text, version_label text, error jsonb, started_at timestamptz)
returns uuid
language sql
volatile
set search_path = ''
as $$
  insert into app.content_imports (status, name, version_label, error, started_at, finished_at, timings)
  values ('failed', record_failed_import.name, record_failed_import.version_label, record_failed_import.error,
          record_failed_import.started_at, pg_catalog.clock_timestamp(),
          pg_catalog.jsonb_build_object('total_ms',
            pg_catalog.round(extract(epoch from pg_catalog.clock_timestamp() - record_failed_import.started_at) * 1000)))
  returning id
$$;
comment on function private.record_failed_import(text, text, jsonb, timestamptz) is
  'Records a failed import attempt (e.g. rejected by the CLI schema check) in app.content_imports.';
revoke all on function private.record_failed_import(text, text, jsonb, timestamptz) from public, anon, authenticated, service_role;

-- private.list_content_imports
-- Purpose: the most recent import attempts, for the CLI's `list`.
-- Returns: jsonb array of {id, snapshot_id, status, name, version_label, counts, error message,
--          timings, started_at, finished_at}, newest first.
create function private.list_content_imports(max_rows integer default 10)
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
revoke all on function private.list_content_imports(integer) from public, anon, authenticated, service_role;

-- private.list_content_snapshots
-- Purpose: every snapshot with all counts, newest first, for the CLI's `list`.
create function private.list_content_snapshots()
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.jsonb_agg(private.snapshot_json(s.id, true, true) order by s.created_at desc, s.id desc), '[]'::jsonb)
  from app.snapshots s
$$;
revoke all on function private.list_content_snapshots() from public, anon, authenticated, service_role;
