-- Data backfill for 20261126071105_learners_beyond_the_spec (hand-written; the schema
-- diff carries no data).
--
-- 1. Snapshots imported before content digests existed get theirs, as an import now writes them.
-- 2. Completions recorded before spaced review existed schedule their first review, as a
--    completion now does.
-- (Enrollments made before app.enrollments.snapshot_id existed took the snapshot current when
-- the column was added, its default: their trails count as unchanged since this upgrade.)

select private.refresh_content_digests(r.snapshot_id)
from app.snapshot_rollups r;

select private.refresh_review_cards(pg_catalog.array_agg(p.user_id), pg_catalog.array_agg(p.spark_id))
from (
  select distinct le.user_id, le.spark_id
  from app.learning_events le
  where le.verb in ('completed', 'mastered') and le.voided_at is null
) p;
