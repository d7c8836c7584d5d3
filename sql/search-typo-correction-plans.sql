-- EXPLAIN (ANALYZE, BUFFERS) of the typo path of search and autocomplete, nested statements
-- included: the correction's lexicon lookups (candidates by deletion strings, the typed-prefix
-- completion) and the search or suggestions run on the corrected text.
-- Run as a superuser on a database with content (the demo catalog, or a benchmark dataset):
--   psql -d <db> -v typo=tesitng -v prefix=tesit -f sql/search-typo-correction-plans.sql 2>&1 | less
-- auto_explain prints each plan as a NOTICE. docs/search-graph.md ("Typo tolerance") reads one.
load 'auto_explain';
set auto_explain.log_min_duration = 0;
set auto_explain.log_nested_statements = on;
set auto_explain.log_analyze = on;
set auto_explain.log_buffers = on;
set auto_explain.log_timing = on;
set auto_explain.log_level = notice;
set client_min_messages = notice;
-- Search is for signed-in callers (private.api_access_rule): act as a learner, as PostgREST would.
begin;
select set_config('request.jwt.claims',
  '{"sub":"00000000-0000-4000-8000-000000000001","role":"authenticated","user_role":"learner","subscription_plan":"free"}', true);
set local role authenticated;

\echo '### the correction alone: private.search_correct(current snapshot, :typo)'
select private.search_correct(private.resolve_snapshot_id(null), :'typo');
\echo '### the typed-prefix completion: private.search_correct(current snapshot, :prefix)'
select private.search_correct(private.resolve_snapshot_id(null), :'prefix');
\echo '### GET /search?q=:typo'
select api.search_content(:'typo') -> 'meta';
\echo '### GET /search/autocomplete?q=:prefix'
select api.list_search_suggestions(:'prefix');
rollback;
