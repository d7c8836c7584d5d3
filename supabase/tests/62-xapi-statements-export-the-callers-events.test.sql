-- api.list_statements: the caller's events as xAPI 1.0.3 statements (ids from idempotency keys,
-- ADL verbs, activity ids from spark ids, the home page setting), paged by `stored`, voided
-- events as voiding statements; nobody else's.
begin;
select plan(16);

select tests.create_user('alice');
select tests.create_user('bob');
select set_config('sparkpath.home_page', 'https://learn.example.org/', true);

-- The name-based UUID, against the value Node's SHA-1 gives for the same namespace and name
-- (the HTTP tests compute every statement id that way too).
select is(private.xapi_uuid('python.org'), 'a8795d2b-91b1-5952-a990-0f6a8e809011'::uuid,
  'xapi_uuid is the RFC 4122 version-5 UUID of the name in the Sparkpath namespace');
select is(
  substr(private.xapi_uuid('anything')::text, 15, 1) || (get_byte(uuid_send(private.xapi_uuid('anything')), 8) >> 6)::text,
  '52', 'xapi_uuid sets version 5 and the RFC 4122 variant');
select is(
  (select array_agg(v.value order by v.sort_order) from app.learning_verbs v where private.xapi_verb(v.value) is null),
  null, 'every learning verb has an xAPI verb');
select is(
  private.xapi_statement_id('11111111-1111-4111-8111-111111111111', 'ABCDEF01-2345-4678-9ABC-DEF012345678', gen_random_uuid()),
  'abcdef01-2345-4678-9abc-def012345678'::uuid, 'a UUID idempotency key is the statement id');
select is(
  private.xapi_statement_id('11111111-1111-4111-8111-111111111111', 'retry-7', gen_random_uuid()),
  private.xapi_uuid('11111111-1111-4111-8111-111111111111:retry-7'), 'any other key names a version-5 UUID of user and key');
select is(
  private.xapi_statement_id('11111111-1111-4111-8111-111111111111', null, '22222222-2222-4222-8222-222222222222'),
  '22222222-2222-4222-8222-222222222222'::uuid, 'an event without a key is its own statement id');

-- Fixture (as the owner): one published snapshot with one spark.
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a6200000-0000-4000-8000-000000000001', 'xapi', 'v1', 'published', now());
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
values ('a6200000-0000-4000-8000-000000000001', 'e6200000-0000-4000-8000-000000000001', 'select', 'SELECT "star"', 'beginner', 5);

-- acting as alice: three events stored one second apart (recorded_at set as the owner below).
select tests.authenticate_as('alice');
select api.record_learning_event('e6200000-0000-4000-8000-000000000001', 'started', '2026-03-01T10:00:00Z', 'k-started');
select api.record_learning_event('e6200000-0000-4000-8000-000000000001', 'completed', '2026-03-01T10:05:00Z', 'k-completed');
select api.record_learning_event('e6200000-0000-4000-8000-000000000001', 'bookmarked', '2026-03-01T10:06:00Z', 'k-bookmarked');
reset role;
update app.learning_events set recorded_at = occurred_at + interval '1 day' where user_id = tests.get_user_id('alice');
select tests.authenticate_as('alice');

select is(
  (api.list_statements() -> 'statements' -> 1)::jsonb,
  jsonb_build_object(
    'id', private.xapi_uuid(tests.get_user_id('alice') || ':k-completed'),
    'actor', jsonb_build_object('objectType', 'Agent', 'account', jsonb_build_object('homePage', 'https://learn.example.org', 'name', tests.get_user_id('alice'))),
    'verb', '{"id": "http://adlnet.gov/expapi/verbs/completed", "display": {"en-US": "completed"}}'::jsonb,
    'object', '{"objectType": "Activity", "id": "https://learn.example.org/activities/sparks/e6200000-0000-4000-8000-000000000001",
                "definition": {"type": "http://adlnet.gov/expapi/activities/lesson", "name": {"en-US": "SELECT \"star\""}}}'::jsonb,
    'timestamp', '2026-03-01T10:05:00.000000Z',
    'stored', '2026-03-02T10:05:00.000000Z',
    'version', '1.0.3'),
  'a statement: id from the key, account actor on the home page, ADL verb, activity from the spark id, timestamp and stored in UTC');
select is(
  (select array_agg(s -> 'verb' ->> 'id' order by n) from json_array_elements(api.list_statements() -> 'statements') with ordinality x(s, n)),
  array['http://id.tincanapi.com/verb/bookmarked', 'http://adlnet.gov/expapi/verbs/completed', 'http://adlnet.gov/expapi/verbs/attempted'],
  'newest stored first; started is ADL attempted');
select is(
  api.list_statements(null, null, 2) ->> 'more',
  '/user/me/statements?limit=2&cursor=' || ((extract(epoch from timestamptz '2026-03-02T10:05:00Z') * 1000000)::bigint)::text || '.'
    || (select id from app.learning_events where idempotency_key = 'k-completed'),
  'a full page links to the next with a cursor where it ended');
select is(
  (select json_array_length(p -> 'statements') || ' ' || (p ->> 'more') || ' ' || (p -> 'statements' -> 0 -> 'verb' ->> 'id')
   from api.list_statements(null, null, 2, substring(api.list_statements(null, null, 2) ->> 'more' from 'cursor=(.*)$')) p),
  '1  http://adlnet.gov/expapi/verbs/attempted', 'the cursor gives the rest, and an empty more ends the pages');
select is(
  json_array_length(api.list_statements('2026-03-02T10:00:00Z', '2026-03-02T10:05:00Z') -> 'statements'), 1,
  'since is exclusive and until inclusive, on stored');
select throws_ok($$ select api.list_statements(null, null, 100, 'not-a-cursor') $$, '22023', 'cursor is not one this API issued',
  'a cursor the API did not issue is refused');

select api.void_learning_event((select id from app.learning_events where idempotency_key = 'k-completed'));
select is(
  (select jsonb_agg(jsonb_build_object('verb', s -> 'verb' ->> 'id', 'object', s -> 'object') order by n)
   from json_array_elements(api.list_statements() -> 'statements') with ordinality x(s, n)),
  jsonb_build_array(
    jsonb_build_object('verb', 'http://adlnet.gov/expapi/verbs/voided',
      'object', jsonb_build_object('objectType', 'StatementRef', 'id', private.xapi_uuid(tests.get_user_id('alice') || ':k-completed'))),
    jsonb_build_object('verb', 'http://id.tincanapi.com/verb/bookmarked',
      'object', (api.list_statements() -> 'statements' -> 1 -> 'object')::jsonb),
    jsonb_build_object('verb', 'http://adlnet.gov/expapi/verbs/attempted',
      'object', (api.list_statements() -> 'statements' -> 2 -> 'object')::jsonb)),
  'a voided event is left out and a voiding statement of it is stored when it was voided (newest)');

-- acting as bob
select tests.authenticate_as('bob');
select is(api.list_statements()::jsonb, '{"statements": [], "more": ""}', 'bob exports none of alice''s events');

-- acting as anon
select tests.clear_authentication();
select throws_ok($$ select api.list_statements() $$, 'PT401', 'Authentication required', 'anonymous callers export nothing');

-- acting as a service caller
select tests.authenticate_as_service();
select throws_ok($$ select api.list_statements() $$, 'PT403', 'Service callers cannot use this endpoint',
  'a service caller exports no learner''s statements');

select * from finish();
rollback;
