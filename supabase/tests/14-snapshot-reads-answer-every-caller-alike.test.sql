-- The reads of snapshot content (metadata, difficulty levels, which snapshot answers, the current
-- snapshot) answer anon, a learner and an admin alike: one answer per call, whoever asks, which is
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

-- acting as anon, as the learner and as the admin, each through the dispatcher
create temporary table answers (caller text, call text, body text);
insert into answers
select caller, call, private.dispatch(role, claims, call, '{}'::jsonb)
from (values
  ('anon', 'anon', null::text),
  ('learner', 'authenticated', tests.get_claims('learner')::text),
  ('admin', 'authenticated', tests.get_claims('admin')::text)
) as callers (caller, role, claims)
cross join (values ('api.get_metadata()'), ('api.list_difficulty_levels()'), ('api.resolve_snapshot()'), ('api.get_current_snapshot()')) as calls (call);
reset role;

select is((select count(*)::int from answers where body is not null), 12, 'every caller gets every answer');
select is((select count(distinct (call, body))::int from answers), 4, 'each call has one answer, whoever asks');
select is((select body::jsonb ->> 'name' from answers where caller = 'learner' and call = 'api.get_current_snapshot()'),
  'Shared', 'the current snapshot is the one just promoted');

select * from finish();
rollback;
