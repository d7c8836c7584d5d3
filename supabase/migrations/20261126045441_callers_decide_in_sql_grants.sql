-- callers_decide_in_sql_grants: written by hand after the generated callers_decide_in_sql,
-- because migra carries neither function nor column privileges. The grants of
-- supabase/schemas: service_role may call every api function (private.authorize refuses it) and
-- PostgREST's pre-request hook; the API's login role runs the dispatchers and the sign-in,
-- rate-limit and cleanup functions; a learner inserts only the columns a learner chooses.

grant execute on function api.browse_catalog(integer,integer,text,text,integer,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.enroll_in_trail(uuid) to anon, authenticated, service_role;
grant execute on function api.get_current_snapshot() to anon, authenticated, service_role;
grant execute on function api.get_discovery_facets(text,text,text,uuid) to anon, authenticated, service_role;
grant execute on function api.get_domain(text,uuid) to anon, authenticated, service_role;
grant execute on function api.get_domain_trails(text,integer,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.get_learning_path(text,boolean,uuid) to anon, authenticated, service_role;
grant execute on function api.get_metadata() to anon, authenticated, service_role;
grant execute on function api.get_session() to anon, authenticated, service_role;
grant execute on function api.get_snapshot(uuid) to anon, authenticated, service_role;
grant execute on function api.get_spark_graph(text,text,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.get_user_journey(uuid) to anon, authenticated, service_role;
grant execute on function api.list_difficulty_levels() to anon, authenticated, service_role;
grant execute on function api.list_discovery_concepts(integer,integer,text,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_discovery_domains(integer,integer,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_discovery_items(integer,integer,text,text,text,text,text,boolean,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_discovery_sparks(integer,integer,text,text,uuid) to anon, authenticated, service_role;
grant execute on function api.list_discovery_trails(integer,integer,text,text,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_domains(integer,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_related_domains(text,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_search_suggestions(text,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_snapshots(integer,integer,text) to anon, authenticated, service_role;
grant execute on function api.list_spark_links(text,text,text,integer,integer,uuid) to anon, authenticated, service_role;
grant execute on function api.list_user_journeys(text,text) to anon, authenticated, service_role;
grant execute on function api.record_learning_event(uuid,text,timestamp with time zone,text) to anon, authenticated, service_role;
grant execute on function api.resolve_snapshot(uuid) to anon, authenticated, service_role;
grant execute on function api.search_content(text,text,text,integer,integer,uuid) to anon, authenticated, service_role;
grant execute on function private.api_access_rule(text) to anon, authenticated, service_role;
grant execute on function private.authorize(text) to anon, authenticated, service_role;
grant execute on function private.begin_request(text,text,jsonb,text) to sparkpath_api;
grant execute on function private.check_request() to anon, authenticated, service_role, sparkpath_api;
grant execute on function private.cleanup_sessions() to sparkpath_api;
grant execute on function private.consume_oauth_attempt(text,text) to sparkpath_api;
grant execute on function private.dispatch(text,text,text,jsonb,jsonb) to sparkpath_api;
grant execute on function private.dispatch_snapshot_read(text,text,text,jsonb,text[],jsonb) to sparkpath_api;
grant execute on function private.hit_rate_limit(text,integer) to sparkpath_api;
grant execute on function private.peek_rate_limit(text,integer) to sparkpath_api;
grant execute on function private.purge_rate_limits() to sparkpath_api;
grant execute on function private.record_access_token(uuid,text) to sparkpath_api;
grant execute on function private.refresh_session(text,text,integer,integer) to sparkpath_api;
grant execute on function private.request_caller() to anon, authenticated, service_role;
grant execute on function private.request_session_refused() to anon, authenticated, service_role;
grant execute on function private.resolve_snapshot_version(uuid) to anon, authenticated;
grant execute on function private.role_permissions(text) to anon, authenticated, service_role;
grant execute on function private.seal_refresh_successor(text,text) to sparkpath_api;
grant execute on function private.sign_in(text,text,text,text,text,text,text,text,integer,integer,integer) to sparkpath_api;
grant execute on function private.sign_out(jsonb) to sparkpath_api;
grant execute on function private.start_oauth_attempt(text,text,text,text,text,text,integer) to sparkpath_api;

grant insert (trail_id) on app.enrollments to authenticated;
grant insert (spark_id, verb, occurred_at, idempotency_key) on app.learning_events to authenticated;
