-- trail_positions_prerequisites_backfill: hand-written data backfill for 20261126101935_trail_positions_carry_prerequisites.
-- The positions of the snapshots rolled up before the column existed get their sparks'
-- prerequisites, by the rule new roll-ups follow (private.derive_trail_spark_positions: the
-- sources of the spark's incoming prerequisite links, in id order).
update app.trail_spark_positions p
set parents = coalesce((
  select pg_catalog.array_agg(l.source_id order by l.source_id)
  from app.spark_links l
  where l.snapshot_id = p.snapshot_id and l.target_id = p.spark_id and l.type = 'prerequisite'), '{}');

alter table app.trail_spark_positions alter column parents set not null;
