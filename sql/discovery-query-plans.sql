-- EXPLAIN (ANALYZE) of every statement each discovery endpoint runs, nested statements included.
-- Run as a superuser on a database with a synthetic catalog (e.g. 50,000 sparks):
--   psql -d <db> -v domain=<slug> -v trail=<slug> -v concept=<slug> -f sql/discovery-query-plans.sql 2>&1 | less
-- auto_explain prints each plan as a NOTICE; plans use the real parameter values because the
-- api functions run with plan_cache_mode = force_custom_plan.
load 'auto_explain';
set auto_explain.log_min_duration = 0;
set auto_explain.log_nested_statements = on;
set auto_explain.log_analyze = on;
set auto_explain.log_buffers = off;
set auto_explain.log_timing = off;
set auto_explain.log_level = notice;
set client_min_messages = notice;
set role anon;

\echo '### GET /discovery/domains (per_page 20, trail_limit 5)'
select pg_catalog.length(api.list_discovery_domains()::text);
\echo '### GET /discovery/trails?domain=:domain&difficulty=advanced'
select pg_catalog.length(api.list_discovery_trails(domain => :'domain', difficulty => 'advanced')::text);
\echo '### GET /discovery/trails?page=20'
select pg_catalog.length(api.list_discovery_trails(page => 20)::text);
\echo '### GET /discovery/concepts?trail=:trail'
select pg_catalog.length(api.list_discovery_concepts(trail => :'trail')::text);
\echo '### GET /discovery/concepts?page=100'
select pg_catalog.length(api.list_discovery_concepts(page => 100)::text);
\echo '### GET /discovery/sparks?concept=:concept'
select pg_catalog.length(api.list_discovery_sparks(concept => :'concept')::text);
\echo '### GET /discovery/sparks?difficulty=expert&page=100'
select pg_catalog.length(api.list_discovery_sparks(difficulty => 'expert', page => 100)::text);
\echo '### GET /discovery/all?page=50'
select pg_catalog.length(api.list_discovery_items(page => 50)::text);
\echo '### GET /discovery/all?domain=:domain&q=ab&include_facets=true'
select pg_catalog.length(api.list_discovery_items(domain => :'domain', q => 'ab', include_facets => true)::text);
\echo '### GET /discovery/facets'
select pg_catalog.length(api.get_discovery_facets()::text);
\echo '### GET /discovery/browse'
select pg_catalog.length(api.browse_catalog()::text);
\echo '### GET /discovery/domains/'
select pg_catalog.length(api.list_domains()::text);
\echo '### GET /discovery/domains/:domain'
select pg_catalog.length(api.get_domain(:'domain')::text);
\echo '### GET /discovery/domains/:domain/trails?page=3'
select pg_catalog.length(api.get_domain_trails(:'domain', page => 3)::text);
\echo '### GET /discovery/domains/:domain/related'
select pg_catalog.length(api.list_related_domains(:'domain')::text);
