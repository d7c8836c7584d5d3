-- private.lock_learner_sparks, which every review-card refresh takes before it reads the history:
-- a learner's write holds the bulk key shared and its pair's key; a bulk load holds the bulk key
-- alone, exclusively, whatever its number of pairs. (test/db/review-cards-under-concurrent-writes
-- runs two writers at once.)
begin;
select plan(6);

select tests.create_user('alice');

-- Fixture (as the owner): one spark in the current snapshot.
select tests.archive_current_snapshot();
insert into app.snapshots (id, name, version_label, status, published_at)
values ('a6300000-0000-4000-8000-000000000001', 'locks', 'v1', 'published', now());
insert into app.sparks (snapshot_id, id, slug, title, difficulty, estimated_mins)
values ('a6300000-0000-4000-8000-000000000001', 'e6300000-0000-4000-8000-000000000001', 'one', 'One', 'beginner', 5);

-- The advisory locks this transaction holds in the cards' key space: (second key, mode).
create temporary view held_locks as
select l.objid::integer as key, l.mode
from pg_locks l
where l.pid = pg_backend_pid() and l.locktype = 'advisory' and l.objsubid = 2
  and l.classid = 'app.review_cards'::regclass;
grant select on held_locks to authenticated;

-- acting as alice: a start refreshes no card, a completion does.
select tests.authenticate_as('alice');
select api.record_learning_event('e6300000-0000-4000-8000-000000000001', 'started', null, null);
select is_empty('select * from held_locks', 'a start refreshes no card and takes no lock');
select api.record_learning_event('e6300000-0000-4000-8000-000000000001', 'completed', null, null);
select results_eq(
  'select key, mode from held_locks order by key = 0 desc, mode',
  format($$ values (0, 'ShareLock'), (%s, 'ExclusiveLock') $$,
    coalesce(nullif(hashtext(tests.get_user_id('alice')::text || 'e6300000-0000-4000-8000-000000000001'), 0), 1)),
  'a completion holds the bulk key shared and its pair''s key');

-- as the owner: the same pair again, twice in one call, adds nothing; no pair takes nothing.
reset role;
select private.lock_learner_sparks(
  array[tests.get_user_id('alice'), tests.get_user_id('alice')],
  array['e6300000-0000-4000-8000-000000000001', 'e6300000-0000-4000-8000-000000000001']::uuid[]);
select is((select count(*)::int from held_locks), 2, 'a pair named twice is one key, already held');
select private.lock_learner_sparks('{}', '{}');
select is((select count(*)::int from held_locks), 2, 'no pair, no lock');

-- A bulk load: completions of 40 learners (40 pairs).
insert into app.learning_events (user_id, spark_id, verb, occurred_at)
select ('f6300000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, 'e6300000-0000-4000-8000-000000000001',
  'completed', '2026-04-01T00:00:00Z'::timestamptz + u * interval '1 minute'
from generate_series(1, 40) u;
select is((select count(*)::int from app.review_cards where user_id::text like 'f6300000-%'), 40, 'the load refreshed its 40 cards');
select results_eq(
  'select key, mode from held_locks where key = 0 order by mode',
  $$ values (0, 'ExclusiveLock'), (0, 'ShareLock') $$,
  'and took the bulk key exclusively, no key per pair (still 3 locks)');

select * from finish();
rollback;
