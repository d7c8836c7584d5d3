-- derived_rows_without_row_checks: written by hand (`npm run db:diff` does not compare a
-- function's SET clauses). The content digests, the spark rounds and the trail positions an
-- import derives skip their foreign-key checks where the migrating role is a superuser, as the
-- content writer and the search figures already do (supabase/schemas/08-changes.sql,
-- 09-graph.sql, 10-journeys.sql). A SET clause of session_replication_role would refuse to
-- create the functions on Supabase, hence the condition.
do $$
begin
  if (select r.rolsuper from pg_catalog.pg_roles r where r.rolname = current_user) then
    alter function private.refresh_content_digests(uuid) set session_replication_role to 'replica';
    alter function private.refresh_spark_rounds(uuid) set session_replication_role to 'replica';
    alter function private.fill_trail_spark_positions() set session_replication_role to 'replica';
  end if;
end
$$;
