-- trail_entity_digests_backfill: hand-written data backfill for 20261126111919_trail_entity_digests_and_page_documents_in_one_call.
-- The snapshots whose digests were stored before the table existed get each trail's entity
-- digests, by the rule private.refresh_content_digests now follows (private.trail_scope joined
-- to the stored entity digests).
insert into app.trail_entity_digests (snapshot_id, trail_id, kind, entity_id, digest)
select r.snapshot_id, s.trail_id, s.kind, s.entity_id, d.digest
from app.snapshot_rollups r
cross join lateral private.trail_scope(r.snapshot_id, null) s
join app.content_entity_digests d on d.snapshot_id = r.snapshot_id and d.kind = s.kind and d.entity_id = s.entity_id
order by r.snapshot_id, s.trail_id, s.kind, s.entity_id
on conflict do nothing;
