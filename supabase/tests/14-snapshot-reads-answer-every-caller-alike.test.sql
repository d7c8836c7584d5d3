-- The reads of snapshot content (metadata, difficulty levels, which snapshot answers, the current
-- snapshot) answer anon (a service caller for the current snapshot, which anon may not read), a
-- learner and an admin alike: one answer per call, whoever asks, which is
-- what lets the API keep one body per (snapshot version, call) for every caller.
begin;
select plan(3);

select tests.create_user('learner');
select tests.create_user('admin', 'admin');
select private.import_content_bundle('{
  "categories": [{"slug": "tech", "name": "Technology"}],
  "domains": [{"slug": "data", "name": "Data", "category": "tech"}],
  "trails": [{"slug": "sql", "domain": "data", "title": "SQL", "difficulty_level": "beginner"}],
  "concepts": [{"slug": "select", "trail": "sql", "title": "Select", "sparks": ["select-star"]}],
  "sparks": [{"slug": "select-star", "title": "SELECT *", "difficulty": "beginner", "estimated_mins": 5}]
}'::jsonb, 'Shared', 'v5', '', promote => true);

-- acting as anon, as the learner and as the admin, each through the dispatcher: one request
-- per transaction-local role, as PostgREST and the API do, so the role is reset between calls
create temporary table answers (caller text, call text, body text);
insert into answers select 'anon', 'api.get_metadata()', private.dispatch('anon', null, 'api.get_metadata()', '{}'::jsonb);
reset role;
insert into answers select 'anon', 'api.list_difficulty_levels()', private.dispatch('anon', null, 'api.list_difficulty_levels()', '{}'::jsonb);
reset role;
insert into answers select 'anon', 'api.resolve_snapshot()', private.dispatch('anon', null, 'api.resolve_snapshot()', '{}'::jsonb);
reset role;
select tests.use_service_secret();
insert into answers select 'service', 'api.get_current_snapshot()',
  private.dispatch('anon', null, 'api.get_current_snapshot()', '{}'::jsonb, jsonb_build_object('x-service-auth', tests.service_secret()));
reset role;
insert into answers select 'learner', 'api.get_metadata()', private.dispatch('authenticated', tests.get_claims('learner')::text, 'api.get_metadata()', '{}'::jsonb);
reset role;
insert into answers select 'learner', 'api.list_difficulty_levels()', private.dispatch('authenticated', tests.get_claims('learner')::text, 'api.list_difficulty_levels()', '{}'::jsonb);
reset role;
insert into answers select 'learner', 'api.resolve_snapshot()', private.dispatch('authenticated', tests.get_claims('learner')::text, 'api.resolve_snapshot()', '{}'::jsonb);
reset role;
insert into answers select 'learner', 'api.get_current_snapshot()', private.dispatch('authenticated', tests.get_claims('learner')::text, 'api.get_current_snapshot()', '{}'::jsonb);
reset role;
insert into answers select 'admin', 'api.get_metadata()', private.dispatch('authenticated', tests.get_claims('admin')::text, 'api.get_metadata()', '{}'::jsonb);
reset role;
insert into answers select 'admin', 'api.list_difficulty_levels()', private.dispatch('authenticated', tests.get_claims('admin')::text, 'api.list_difficulty_levels()', '{}'::jsonb);
reset role;
insert into answers select 'admin', 'api.resolve_snapshot()', private.dispatch('authenticated', tests.get_claims('admin')::text, 'api.resolve_snapshot()', '{}'::jsonb);
reset role;
insert into answers select 'admin', 'api.get_current_snapshot()', private.dispatch('authenticated', tests.get_claims('admin')::text, 'api.get_current_snapshot()', '{}'::jsonb);
reset role;

select is((select count(*)::int from answers where body is not null), 12, 'every caller gets every answer');
select is((select count(distinct (call, body))::int from answers), 4, 'each call has one answer, whoever asks');
select is((select body::jsonb ->> 'name' from answers where caller = 'learner' and call = 'api.get_current_snapshot()'),
  'Shared', 'the current snapshot is the one just promoted');

select * from finish();
rollback;
