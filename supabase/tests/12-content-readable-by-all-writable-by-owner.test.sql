-- Content is readable by anon and authenticated users and writable by nobody but the owner.
begin;
select plan(13);

select tests.create_user('learner');

select is(private.import_content_bundle('{
  "snapshot": {"name": "Access", "version_label": "a1"},
  "domains": [{"slug": "data", "name": "Data"}],
  "trails": [{"slug": "sql", "domain": "data", "title": "SQL"}],
  "concepts": [{"slug": "select", "trail": "sql", "title": "Select", "sparks": ["a"]}],
  "sparks": [{"slug": "a", "title": "A", "difficulty": "beginner", "estimated_mins": 5}]
}'::jsonb, promote => true) ->> 'status', 'succeeded', 'the owner imports content');

-- acting as anon
select tests.clear_authentication();
-- (counted in the imported snapshot: other content, such as the seed's, may exist beside it)
select is((select count(*)::int from app.sparks s join app.snapshots n on n.id = s.snapshot_id where n.name = 'Access'), 1, 'anon reads sparks');
select is((select count(*)::int from app.snapshots where name = 'Access'), 1, 'anon reads snapshots');
select throws_ok($$ insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
                   select snapshot_id, gen_random_uuid(), 'x', 'X', 'beginner', 1 from app.sparks limit 1 $$,
  '42501', null, 'anon cannot insert content');
select throws_ok($$ update app.snapshots set name = 'hacked' $$, '42501', null, 'anon cannot update snapshots');
select throws_ok($$ select private.import_content_bundle('{}'::jsonb) $$, '42501', null, 'anon cannot import');
select throws_ok($$ select private.promote_snapshot(gen_random_uuid()) $$, '42501', null, 'anon cannot promote');
select throws_ok($$ select api.get_current_snapshot() $$, 'PT401', 'Authentication required',
  'anon reads no snapshot through the api: /snapshots needs a JWT or the service secret');
reset role;

-- acting as an authenticated learner
select tests.authenticate_as('learner');
select is((select count(*)::int from app.trails t join app.snapshots n on n.id = t.snapshot_id where n.name = 'Access'), 1, 'authenticated users read trails');
select throws_ok($$ delete from app.sparks $$, '42501', null, 'authenticated users cannot delete content');
select throws_ok($$ update app.domains set name = 'hacked' $$, '42501', null, 'authenticated users cannot update content');
select throws_ok($$ select * from app.content_imports $$, '42501', null, 'authenticated users cannot read import records');
select throws_ok($$ select private.rollback_snapshot() $$, '42501', null, 'authenticated users cannot roll back');
reset role;

select * from finish();
rollback;
