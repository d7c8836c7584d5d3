-- api.list_snapshot_changes: entities added, removed and changed between two snapshots by their
-- stable ids, with the changed fields named; the stored digests equal a recount; a trail's
-- digest differs exactly when its change list is not empty; journeys say so.
begin;
select plan(32);

select tests.create_user('alice');

-- Fixture (as the owner). Version 1: trail "t" with concept "c1" placing s1 then s2, s2
-- requiring s1; s3 placed nowhere; beacon b1. Version 2: the trail retitled, c1 placing s2 then
-- s1, s1's summary rewritten, the link's weight halved, s3 and b1 gone, s4 new (placed nowhere).
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('a1500000-0000-4000-8000-000000000001', 'changes v1', 'v1', 'archived', now() - interval '1 day'),
  ('a1500000-0000-4000-8000-000000000002', 'changes v2', 'v2', 'published', now());
insert into app.domains (snapshot_id, id, slug, name)
select s, 'd1500000-0000-4000-8000-000000000001', 'data', 'Data'
from unnest(array['a1500000-0000-4000-8000-000000000001', 'a1500000-0000-4000-8000-000000000002']::uuid[]) s;
insert into app.trails (snapshot_id, id, domain_id, slug, title) values
  ('a1500000-0000-4000-8000-000000000001', 'b1500000-0000-4000-8000-000000000001', 'd1500000-0000-4000-8000-000000000001', 't', 'T'),
  ('a1500000-0000-4000-8000-000000000002', 'b1500000-0000-4000-8000-000000000001', 'd1500000-0000-4000-8000-000000000001', 't', 'T, revised');
insert into app.concepts (snapshot_id, id, trail_id, slug, title)
select s, 'c1500000-0000-4000-8000-000000000001', 'b1500000-0000-4000-8000-000000000001', 'c1', 'C1'
from unnest(array['a1500000-0000-4000-8000-000000000001', 'a1500000-0000-4000-8000-000000000002']::uuid[]) s;
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins) values
  ('a1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000001', 's1', 'S1', 'first', 'beginner', 5),
  ('a1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000002', 's2', 'S2', '', 'beginner', 5),
  ('a1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000003', 's3', 'S3', '', 'beginner', 5),
  ('a1500000-0000-4000-8000-000000000002', 'e1500000-0000-4000-8000-000000000001', 's1', 'S1', 'rewritten', 'beginner', 5),
  ('a1500000-0000-4000-8000-000000000002', 'e1500000-0000-4000-8000-000000000002', 's2', 'S2', '', 'beginner', 5),
  ('a1500000-0000-4000-8000-000000000002', 'e1500000-0000-4000-8000-000000000004', 's4', 'S4', '', 'beginner', 5);
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index) values
  ('a1500000-0000-4000-8000-000000000001', 'c1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000001', 0),
  ('a1500000-0000-4000-8000-000000000001', 'c1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000002', 1),
  ('a1500000-0000-4000-8000-000000000002', 'c1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000002', 0),
  ('a1500000-0000-4000-8000-000000000002', 'c1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000001', 1);
insert into app.spark_links (snapshot_id, source_id, target_id, type, weight) values
  ('a1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000002', 'prerequisite', 1),
  ('a1500000-0000-4000-8000-000000000002', 'e1500000-0000-4000-8000-000000000001', 'e1500000-0000-4000-8000-000000000002', 'prerequisite', 0.5);
insert into app.beacons (snapshot_id, id, trail_id, slug, title)
values ('a1500000-0000-4000-8000-000000000001', 'f1500000-0000-4000-8000-000000000001', 'b1500000-0000-4000-8000-000000000001', 'b1', 'B1');

-- The expected change list, in the API's order (type, then id).
create temporary table expected (type text, id uuid, slug text, title text, change text, fields jsonb);
insert into expected values
  ('trail', 'b1500000-0000-4000-8000-000000000001', 't', 'T, revised', 'changed', '["title"]'),
  ('concept', 'c1500000-0000-4000-8000-000000000001', 'c1', 'C1', 'changed', '["sparks"]'),
  ('spark', 'e1500000-0000-4000-8000-000000000001', 's1', 'S1', 'changed', '["summary"]'),
  ('spark', 'e1500000-0000-4000-8000-000000000002', 's2', 'S2', 'changed', '["prerequisites"]'),
  ('spark', 'e1500000-0000-4000-8000-000000000003', 's3', 'S3', 'removed', null),
  ('spark', 'e1500000-0000-4000-8000-000000000004', 's4', 'S4', 'added', null),
  ('beacon', 'f1500000-0000-4000-8000-000000000001', 'b1', 'B1', 'removed', null);
grant select on expected to anon, authenticated;
create function pg_temp.changes_of(body json) returns setof expected language sql as $$
  select e ->> 'type', (e ->> 'id')::uuid, e ->> 'slug', e ->> 'title', e ->> 'change', nullif((e -> 'fields')::jsonb, 'null')
  from json_array_elements(body -> 'data') e
$$;
grant execute on function pg_temp.changes_of(json) to anon, authenticated;

-- Neither snapshot is rolled up yet: digests are derived on the fly.
select results_eq(
  $$ select * from pg_temp.changes_of(api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001')) $$,
  $$ select * from expected order by array_position(array['category','domain','trail','concept','spark','beacon'], type), id $$,
  'derived digests: every added, removed and changed entity, with the changed fields named, by type then id');

-- The documents compared: a spark's own fields and the prerequisite links into it; a concept's
-- placements in order.
select is(
  (select d.document from private.content_entity_documents d
   where d.snapshot_id = 'a1500000-0000-4000-8000-000000000002' and d.kind = 'spark' and d.entity_id = 'e1500000-0000-4000-8000-000000000002'),
  '{"slug": "s2", "title": "S2", "summary": "", "difficulty": "beginner", "estimated_mins": 5, "prerequisites": [{"id": "e1500000-0000-4000-8000-000000000001", "weight": 0.5}], "links": []}'::jsonb,
  'a spark''s document is its fields with the prerequisite links into it and its other links');
select is(
  (select d.document -> 'sparks' from private.content_entity_documents d
   where d.snapshot_id = 'a1500000-0000-4000-8000-000000000002' and d.kind = 'concept' and d.entity_id = 'c1500000-0000-4000-8000-000000000001'),
  '["e1500000-0000-4000-8000-000000000002", "e1500000-0000-4000-8000-000000000001"]'::jsonb,
  'a concept''s document lists its sparks in placement order');

select private.refresh_content_rollups('a1500000-0000-4000-8000-000000000001');
select private.refresh_content_rollups('a1500000-0000-4000-8000-000000000002');
select set_eq(
  $$ select kind, entity_id, digest from app.content_entity_digests where snapshot_id = 'a1500000-0000-4000-8000-000000000002' $$,
  $$ select * from private.derive_content_digests('a1500000-0000-4000-8000-000000000002') $$,
  'the stored entity digests (written with the rollups) equal a recount');
select is(
  (select count(*)::int from app.trail_content_digests where snapshot_id = 'a1500000-0000-4000-8000-000000000002'), 1,
  'every trail of a rolled-up snapshot has a stored digest');
select set_eq(
  $$ select trail_id, kind, entity_id, digest from app.trail_entity_digests where snapshot_id = 'a1500000-0000-4000-8000-000000000001' $$,
  $$ select s.trail_id, s.kind, s.entity_id, d.digest
     from private.trail_scope('a1500000-0000-4000-8000-000000000001', null) s
     join private.derive_content_digests('a1500000-0000-4000-8000-000000000001') d on d.kind = s.kind and d.entity_id = s.entity_id $$,
  'the stored trail entity digests are each trail''s entities with their recounted digests');
select results_eq(
  $$ select * from pg_temp.changes_of(api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001')) $$,
  $$ select * from expected order by array_position(array['category','domain','trail','concept','spark','beacon'], type), id $$,
  'stored digests give the same list');
select is(
  (select count(*)::int from app.release_changes where snapshot_id = 'a1500000-0000-4000-8000-000000000001' and since = 'a1500000-0000-4000-8000-000000000002'), 7,
  'a snapshot rolled up while another is current keeps its whole change list against it');
-- v2 rolled up again as the release after v1 (v1 current then): its list is read, not compared.
update app.snapshots set status = 'archived' where id = 'a1500000-0000-4000-8000-000000000002';
update app.snapshots set status = 'published' where id = 'a1500000-0000-4000-8000-000000000001';
select private.refresh_content_digests('a1500000-0000-4000-8000-000000000002');
update app.snapshots set status = 'archived' where id = 'a1500000-0000-4000-8000-000000000001';
update app.snapshots set status = 'published' where id = 'a1500000-0000-4000-8000-000000000002';
select results_eq(
  $$ select * from pg_temp.changes_of(api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001')) $$,
  $$ select * from expected order by array_position(array['category','domain','trail','concept','spark','beacon'], type), id $$,
  'a release''s kept change list gives the same list');
-- The release's lists are kept described: the whole one and each trail's, and the API reads them.
select results_eq(
  $$ select kind, entity_id, change, slug, title, to_jsonb(fields) from app.release_changes
     where snapshot_id = 'a1500000-0000-4000-8000-000000000002' and since = 'a1500000-0000-4000-8000-000000000001'
     order by array_position(array['category','domain','trail','concept','spark','beacon'], kind), entity_id $$,
  $$ select type, id, change, slug, title, fields from expected
     order by array_position(array['category','domain','trail','concept','spark','beacon'], type), id $$,
  'a release''s whole list is kept with each row''s slug, title and changed fields');
select set_eq(
  $$ select trail_id, kind, entity_id, change, slug, title, to_jsonb(fields) from app.release_trail_changes
     where snapshot_id = 'a1500000-0000-4000-8000-000000000002' and since = 'a1500000-0000-4000-8000-000000000001' $$,
  $$ select 'b1500000-0000-4000-8000-000000000001'::uuid, type, id, change, slug, title, fields from expected
     where slug in ('t', 'c1', 's1', 's2', 'b1') $$,
  'and each trail''s list (the trail, its concepts, their sparks, its beacons), described the same way');
select results_eq(
  $$ select kind, entity_id, change, slug, title, to_jsonb(fields)
     from private.describe_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', array[
       ('spark', 'e1500000-0000-4000-8000-000000000001', 'changed'), ('spark', 'e1500000-0000-4000-8000-000000000003', 'removed'),
       ('spark', 'e1500000-0000-4000-8000-000000000004', 'added')]::private.entity_change[]) $$,
  $$ values ('spark', 'e1500000-0000-4000-8000-000000000001'::uuid, 'changed', 's1', 'S1', '["summary"]'::jsonb),
            ('spark', 'e1500000-0000-4000-8000-000000000003'::uuid, 'removed', 's3', 'S3', null),
            ('spark', 'e1500000-0000-4000-8000-000000000004'::uuid, 'added', 's4', 'S4', null) $$,
  'a row is described from the newer document, the older for a removed one, with the differing fields of a changed one');
update app.release_changes set title = 'kept whole'
 where snapshot_id = 'a1500000-0000-4000-8000-000000000002' and entity_id = 'e1500000-0000-4000-8000-000000000001';
update app.release_trail_changes set title = 'kept in trail'
 where snapshot_id = 'a1500000-0000-4000-8000-000000000002' and entity_id = 'e1500000-0000-4000-8000-000000000001';
select is(
  (select e ->> 'title' from json_array_elements(api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001') -> 'data') e
    where e ->> 'slug' = 's1'), 'kept whole',
  'the whole list of a release shows its kept rows, building no document');
select is(
  (select e ->> 'title' from json_array_elements(api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', 't') -> 'data') e
    where e ->> 'slug' = 's1'), 'kept in trail',
  'and so does a trail''s list');
update app.release_changes set title = 'S1'
 where snapshot_id = 'a1500000-0000-4000-8000-000000000002' and entity_id = 'e1500000-0000-4000-8000-000000000001';
update app.release_trail_changes set title = 'S1'
 where snapshot_id = 'a1500000-0000-4000-8000-000000000002' and entity_id = 'e1500000-0000-4000-8000-000000000001';
select is(
  (api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', null, 2, 3) -> 'meta')::jsonb,
  '{"total": 7, "page": 2, "per_page": 3, "total_pages": 3, "has_next": true, "has_prev": true}',
  'the list is paged with the standard meta');
select results_eq(
  $$ select slug, change from pg_temp.changes_of(api.list_snapshot_changes('a1500000-0000-4000-8000-000000000001', 'a1500000-0000-4000-8000-000000000002')) where change <> 'changed' $$,
  $$ values ('s3', 'added'), ('s4', 'removed'), ('b1', 'added') $$,
  'the other direction swaps added and removed');
select set_eq(
  $$ select slug from pg_temp.changes_of(api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', 't')) $$,
  $$ values ('t'), ('c1'), ('s1'), ('s2'), ('b1') $$,
  'a trail''s list keeps the trail, its concepts, the sparks placed in them and its beacons');
-- With thousands of trails (another snapshot's 2,000 here) the generic plan finds the trail
-- through the slug and id indexes at once (a BitmapOr), which casts the trail text as a uuid
-- whatever guards it in the same query.
insert into app.snapshots (id, name, version_label, status) values
  ('a1500000-0000-4000-8000-000000000003', 'changes draft', 'v3', 'draft');
insert into app.domains (snapshot_id, id, slug, name) values
  ('a1500000-0000-4000-8000-000000000003', 'd1500000-0000-4000-8000-000000000001', 'data', 'Data');
insert into app.trails (snapshot_id, id, domain_id, slug, title)
select 'a1500000-0000-4000-8000-000000000003', gen_random_uuid(), 'd1500000-0000-4000-8000-000000000001', 'many-' || n, 'Many ' || n
from generate_series(1, 2000) n;
analyze app.trails;
select is(
  api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', 't') ->> 'trail_id',
  'b1500000-0000-4000-8000-000000000001', 'a trail named by slug is found where its lookup uses the id index too');
select is(
  api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', 'B1500000-0000-4000-8000-000000000001') ->> 'trail_id',
  'b1500000-0000-4000-8000-000000000001', 'and one named by id, in either case');
select throws_ok(
  $$ select api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', 'nope') $$,
  'PT404', 'trail not found in either snapshot', 'and an unknown slug is not found, not an invalid uuid');
select is(
  api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000002')::jsonb - 'snapshot_id' - 'since',
  '{"trail_id": null, "data": [], "meta": {"total": 0, "page": 1, "per_page": 20, "total_pages": 0, "has_next": false, "has_prev": false}}',
  'a snapshot compared with itself has no changes');
select is(
  (api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000002', 't') -> 'data')::jsonb, '[]',
  'nor has one of its trails');
select is(
  private.trail_content_digest('a1500000-0000-4000-8000-000000000001', 'b1500000-0000-4000-8000-000000000001')
    <> private.trail_content_digest('a1500000-0000-4000-8000-000000000002', 'b1500000-0000-4000-8000-000000000001'),
  true, 'the trail''s digest differs between the versions, as its list is not empty');
create temporary table stored_trail_digest as
  select digest from app.trail_content_digests where snapshot_id = 'a1500000-0000-4000-8000-000000000002';
delete from app.trail_content_digests where snapshot_id = 'a1500000-0000-4000-8000-000000000002';
select is(
  private.trail_content_digest('a1500000-0000-4000-8000-000000000002', 'b1500000-0000-4000-8000-000000000001'),
  (select digest from stored_trail_digest),
  'the stored trail digest equals a recount');
select is(
  private.journey_content_changes('a1500000-0000-4000-8000-000000000001', 'a1500000-0000-4000-8000-000000000002', 'b1500000-0000-4000-8000-000000000001'),
  '{"content_changed_since_enrollment": true, "content_changes_url": "/snapshots/a1500000-0000-4000-8000-000000000002/changes?since=a1500000-0000-4000-8000-000000000001&trail=b1500000-0000-4000-8000-000000000001"}',
  'a journey enrolled under v1 and read from v2 says its trail changed and links to the list');
select is(
  private.journey_content_changes(null, 'a1500000-0000-4000-8000-000000000002', 'b1500000-0000-4000-8000-000000000001') ->> 'content_changed_since_enrollment',
  'false', 'with no enrollment snapshot nothing is claimed');

-- acting as alice, enrolled now (v2 current): unchanged since.
select tests.authenticate_as('alice');
select is(api.enroll_in_trail('b1500000-0000-4000-8000-000000000001') ->> 'content_changed_since_enrollment', 'false',
  'a new enrollment records the current snapshot: nothing changed since');

-- acting as a service caller: whoever may read snapshots may read their changes.
select tests.authenticate_as_service();
select is(
  (api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001') -> 'meta' ->> 'total')::int, 7,
  'a service caller reads changes, as it reads snapshots');
select throws_ok(
  $$ select api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-00000000000f') $$,
  'PT404', 'since snapshot not found', 'an unknown since is not found');
select throws_ok(
  $$ select api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001', 'nope') $$,
  'PT404', 'trail not found in either snapshot', 'an unknown trail is not found');
select throws_ok(
  $$ select api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', null) $$,
  '22023', 'since is required', 'since is required');

-- acting as anon: snapshots need a JWT or the service secret, and so do their changes.
select tests.clear_authentication();
select throws_ok(
  $$ select api.list_snapshot_changes('a1500000-0000-4000-8000-000000000002', 'a1500000-0000-4000-8000-000000000001') $$,
  'PT401', 'Authentication required', 'an anonymous caller reads no change list');

select * from finish();
rollback;
