-- api.resolve_snapshot with for_function: the version read of a snapshot read through the Data
-- API (DATA_API=supabase), where there is no dispatcher. The API answers from a body it holds
-- for that version only after this call, so it must refuse every caller the read itself would
-- refuse, and answer the others exactly as the read would resolve its snapshot.
begin;
select plan(10);

select tests.create_user('learner');
select tests.use_service_secret();
update app.snapshots set status = 'archived' where status = 'published';
insert into app.snapshots (id, name, version_label, status, published_at) values
  ('eeeeeeee-0000-4000-8000-000000000001', 'version read current', 'v2', 'published', now()),
  ('eeeeeeee-0000-4000-8000-000000000002', 'version read draft', 'v3', 'draft', null);

-- acting as anon
select tests.clear_authentication();
select is(api.resolve_snapshot(for_function => 'list_domains'),
  '{"snapshot_id": "eeeeeeee-0000-4000-8000-000000000001", "version": "eeeeeeee-0000-4000-8000-000000000001"}'::jsonb,
  'an anonymous caller resolves the current snapshot for a read of the open catalog');
select throws_ok($$ select api.resolve_snapshot(for_function => 'search_content') $$,
  'PT401', 'Authentication required',
  'an anonymous caller is refused the version of a read that needs a token, as the read refuses it');
select throws_ok($$ select api.resolve_snapshot(for_function => 'get_spark_graph') $$,
  'PT401', 'Authentication required',
  'the same holds for the spark graph');
select throws_ok($$ select api.resolve_snapshot(for_function => 'no_such_function') $$,
  '22023', 'for_function must name an api function',
  'a name without an access rule is invalid input, not an internal error');
select is(api.resolve_snapshot('eeeeeeee-0000-4000-8000-000000000002', 'list_domains') ->> 'version', 'eeeeeeee-0000-4000-8000-000000000002',
  'an explicit snapshot id is the version, as the read pins it');
select throws_ok($$ select api.resolve_snapshot('eeeeeeee-0000-4000-8000-0000000000ff', 'list_domains') $$,
  'PT404', 'snapshot not found',
  'an unknown explicit snapshot id is not found, as the read would answer');

-- acting as a service caller
select tests.authenticate_as_service();
select is(api.resolve_snapshot(for_function => 'search_content') ->> 'version', 'eeeeeeee-0000-4000-8000-000000000001',
  'a service caller may read search results, so it gets their version');
select throws_ok($$ select api.resolve_snapshot(for_function => 'get_learning_path') $$,
  'PT403', 'Service callers cannot use this endpoint',
  'a service caller is refused the version of a learner''s own read');

-- acting as the learner
select tests.authenticate_as('learner');
select is(api.resolve_snapshot(for_function => 'search_content') ->> 'version', 'eeeeeeee-0000-4000-8000-000000000001',
  'a learner gets the version of a search');
select is(api.resolve_snapshot() ->> 'version', 'eeeeeeee-0000-4000-8000-000000000001',
  'without for_function the version read is the open catalog''s, as before');

select * from finish();
rollback;
