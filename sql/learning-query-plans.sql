-- EXPLAIN (ANALYZE, BUFFERS) of every statement the learner endpoints beyond the spec run
-- (docs/learning.md), nested statements included, acting as one learner.
-- Run as a superuser on a database with a large catalog and many learners (the benchmark
-- dataset: `npm run content -- generate --sparks 50000` imported twice, with changes, and
-- bench/sql/journeys.sql), e.g.:
--   psql -d <db> -v user=<learner uuid> -v since=<older snapshot id> -v trail=<trail slug> \
--        -f sql/learning-query-plans.sql 2>&1 | less
-- auto_explain prints each plan as a NOTICE. The writes (a review, a voiding) run inside a
-- transaction that is rolled back, so the database is left as it was.
load 'auto_explain';
set auto_explain.log_min_duration = 0;
set auto_explain.log_nested_statements = on;
set auto_explain.log_analyze = on;
set auto_explain.log_buffers = on;
set auto_explain.log_timing = on;
set auto_explain.log_level = notice;
set client_min_messages = notice;

begin;
select set_config('request.jwt.claims', pg_catalog.json_build_object('sub', :'user', 'role', 'authenticated')::text, true);
set local role authenticated;

\echo '### GET /user/me/next (every enrolled trail)'
select pg_catalog.length(api.list_next_sparks()::text);
\echo '### GET /user/me/next?trail=:trail'
select pg_catalog.length(api.list_next_sparks(:'trail')::text);
\echo '### GET /user/me/reviews?due_before=<in a year>'
select pg_catalog.length(api.list_due_reviews(pg_catalog.now() + interval '1 year')::text);
\echo '### GET /user/me/statements (first page of 100)'
select pg_catalog.length(api.list_statements()::text);
\echo '### GET /user/me/journeys (with content_changed_since_enrollment)'
select pg_catalog.length(api.list_user_journeys()::text);
\echo '### POST /user/me/reviews (a card with its history replayed)'
select pg_catalog.length(api.record_review(
  (select c.spark_id from app.review_cards c where c.user_id = :'user' order by c.due_at limit 1), 'good')::text);
\echo '### POST /user/me/events/{id}/void (a completion: its card is replayed too)'
select pg_catalog.length(api.void_learning_event(
  (select le.id from app.learning_events le where le.user_id = :'user' and le.verb = 'completed' and le.voided_at is null
   order by le.occurred_at desc limit 1))::text);

reset role;
set local role anon;
\echo '### GET /snapshots/{current}/changes?since=:since (whole snapshots, first page)'
select pg_catalog.length(api.list_snapshot_changes(private.resolve_snapshot_id(null), :'since')::text);
\echo '### GET /snapshots/{current}/changes?since=:since&trail=:trail'
select pg_catalog.length(api.list_snapshot_changes(private.resolve_snapshot_id(null), :'since', :'trail')::text);
rollback;
