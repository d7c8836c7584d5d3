-- Benchmark users, enrollments and learning events, set-based.
--
--   psql -v users=5000 -v enrollments=20000 -v events=500000 -f bench/sql/journeys.sql
--
-- Users are the rows of bench_users (n, user_id), which the orchestrator fills: the learners it
-- signed in through the auth service first, then md5('bench-user-N')::uuid for the rest. Enrollments
-- pick distinct trails of the current snapshot per user; events pick sparks of the trails the
-- user is enrolled in (so journey progress has something to count), verbs weighted towards
-- started/completed.
\set ON_ERROR_STOP on
begin;

create temporary table bench_trails on commit drop as
select row_number() over (order by t.id) as n, t.id
from app.trails t
where t.snapshot_id = private.resolve_snapshot_id(null);

create temporary table bench_enrollments on commit drop as
select row_number() over () as n, bu.user_id, bt.id as trail_id
from bench_users bu
cross join generate_series(0, (:enrollments / :users) - 1) k
join bench_trails bt on bt.n = 1 + ((bu.n * 37 + k * 53) % (select count(*) from bench_trails))
where bu.n <= :users;

insert into app.enrollments (user_id, trail_id, started_at)
select user_id, trail_id, now() - make_interval(days => (n % 90)::int)
from bench_enrollments
on conflict do nothing;

-- Sparks per trail of the current snapshot, numbered inside the trail.
create temporary table bench_trail_sparks on commit drop as
select c.trail_id, cs.spark_id, row_number() over (partition by c.trail_id order by c.order_index, cs.order_index) as n
from app.concepts c
join app.concept_sparks cs on cs.snapshot_id = c.snapshot_id and cs.concept_id = c.id
where c.snapshot_id = private.resolve_snapshot_id(null);
create index on bench_trail_sparks (trail_id, n);
analyze bench_trail_sparks;
create index on bench_enrollments (n);

create temporary table bench_event_owners on commit drop as
select row_number() over () as n, e.user_id, e.trail_id, t.total
from bench_enrollments e
join (select trail_id, count(*) as total from bench_trail_sparks group by trail_id) t on t.trail_id = e.trail_id;
create index on bench_event_owners (n);
analyze bench_event_owners;

insert into app.learning_events (user_id, spark_id, verb, occurred_at, recorded_at)
select e.user_id, ts.spark_id,
       (array['started', 'started', 'completed', 'completed', 'mastered', 'bookmarked'])[1 + (g % 6)],
       now() - make_interval(secs => g),
       now() - make_interval(secs => g)
from generate_series(1, :events) g
join bench_event_owners e on e.n = 1 + (g % (select count(*) from bench_event_owners))
join bench_trail_sparks ts on ts.trail_id = e.trail_id and ts.n = 1 + ((g / 7) % e.total);

commit;
analyze app.enrollments;
analyze app.learning_events;
