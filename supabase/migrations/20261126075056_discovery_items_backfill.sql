-- discovery_items_backfill: hand-written data backfill for 20261126075055_discovery_items_stored_per_snapshot.
-- Snapshots imported before app.discovery_items existed get their stored discovery items, as
-- the import's derivation (private.refresh_content_rollups) writes them for new snapshots.
-- Until then their lists are built item by item (private.discovery_items_json's fallback), so
-- the answers are the same either way; this makes them fast.
select private.refresh_discovery_items(s.id) from app.snapshots s order by s.created_at;
