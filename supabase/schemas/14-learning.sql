-- Beyond the spec, for learners: what to learn next, spaced review (FSRS-6), voiding an event,
-- and the learner's events as xAPI statements. Everything here is about the caller only: the
-- RLS policies of app.learning_events, app.enrollments and the tables below (user_id =
-- auth.uid()) decide whose rows exist, as for journeys.

-- ---------------------------------------------------------------------------------------------
-- What next
-- ---------------------------------------------------------------------------------------------

-- api.list_next_sparks
-- Purpose: the sparks the caller is ready for: in the current snapshot, not completed (no
--          completed or mastered event that is not voided), and every prerequisite completed.
-- Params:  trail (optional slug of a current trail; enrolled or not); without it, the trails
--          of every enrollment whose trail is in the current snapshot;
--          limit_count (1..100, default 10).
-- Returns: {data: [{id, slug, title, difficulty, estimated_mins, trail: {id, slug, title},
--          concept: {id, slug, title}, builds_on: [{id, slug, title}]}],
--          meta: {limit, recent_level}}. Order: the trails by their journeys' last activity
--          (newest first; ties started_at desc, enrollment id), then the trail's order (concept
--          order_index, concept slug, the spark's order_index in its concept), then difficulty
--          closest to recent_level, then slug and id. A spark in several enrolled trails is
--          listed once, at its first place. builds_on: its prerequisites (all completed), by
--          slug. recent_level: the mean difficulty order (beginner 1 .. expert 4) of the 10 sparks
--          the caller completed most recently, 1 when none.
-- Errors:  PT401 without a user; 22023 limit_count out of range; PT404 unknown trail.
create or replace function api.list_next_sparks(trail text default null::text, limit_count integer default 10)
returns json
language plpgsql
stable
-- Its statement is large: planning it costs about 10 ms, several times what running it costs, and
-- the plan cache's own choice kept planning it again on every call for one trail. The generic plan
-- serves every caller (the caller, snapshot and trail are parameters).
set plan_cache_mode to 'force_generic_plan'
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_next_sparks');
  caller uuid := private.require_user();
  current_snapshot uuid := private.resolve_snapshot_id(null);
  chosen_trail uuid;
  rolled_up boolean;
  result json;
begin
  perform private.require_range('limit', list_next_sparks.limit_count, 1, 100);
  rolled_up := exists (select from app.snapshot_rollups r where r.snapshot_id = current_snapshot);
  if list_next_sparks.trail is not null then
    if current_snapshot is null then
      raise exception using errcode = 'PT404', message = 'trail not found',
        detail = pg_catalog.jsonb_build_object('trail', list_next_sparks.trail)::text;
    end if;
    chosen_trail := private.find_entity_id('trail', current_snapshot, list_next_sparks.trail, 'trail');
  end if;

  with states as materialized (
    select s.spark_id, s.completed_at, s.last_event_at from private.caller_spark_states() s
  ),
  -- The completed sparks. Readiness probes a position's first prerequisite in their hash before
  -- it compares the whole array (most positions fail there: the case keeps that order).
  done as (
    select s.spark_id from states s where s.completed_at is not null
  ),
  -- The 10 latest completions in the current snapshot: the states by completion time, each
  -- looked up until ten are found.
  level as (
    select coalesce(pg_catalog.avg(l.sort_order), 1)::double precision as value
    from (
      select dl.sort_order
      from (select st.spark_id, st.completed_at from states st where st.completed_at is not null
            order by st.completed_at desc, st.spark_id) st
      join app.sparks s on s.snapshot_id = current_snapshot and s.id = st.spark_id
      join app.difficulty_levels dl on dl.value = s.difficulty
      order by st.completed_at desc, st.spark_id
      limit 10
    ) l
  ),
  -- The current snapshot's trail positions: stored once the snapshot is rolled up, else derived
  -- (as private.caller_journeys reads them), read in place so that a walk reads a trail in order
  -- and stops.
  positions as not materialized (
    select p.trail_id, p.ordinal, p.placement, p.spark_id, p.concept_id, p.parents
    from app.trail_spark_positions p
    where rolled_up and p.snapshot_id = current_snapshot
    union all
    select d.trail_id, d.ordinal, d.placement, d.spark_id, d.concept_id, d.parents
    from private.derive_trail_spark_positions(current_snapshot, null) d
    where not rolled_up
  ),
  -- The trails to walk, in order: the chosen trail, else the trail of each enrollment whose trail
  -- is in the current snapshot, by its journey's last activity (private.journey_last_activity),
  -- newest first.
  trails as materialized (
    select t.trail_id,
      pg_catalog.row_number() over (order by t.last_activity_at desc, t.started_at desc, t.enrollment_id) as trail_rank
    from (
      select null::uuid as enrollment_id, chosen_trail as trail_id,
        null::timestamp with time zone as started_at, null::timestamp with time zone as last_activity_at
      where chosen_trail is not null
      union all
      select e.id, e.trail_id, e.started_at,
        private.journey_last_activity(
          -- The caller's sparks newest first, each probed until one is on the trail (a subquery,
          -- not exists: a semi-join would hash the trail's every position).
          (select st.last_event_at
           from (select st.spark_id, st.last_event_at from states st order by st.last_event_at desc) st
           where (select true from positions p where p.trail_id = e.trail_id and p.spark_id = st.spark_id)
           order by st.last_event_at desc
           limit 1),
          e.started_at)
      from app.enrollments e
      where chosen_trail is null and e.user_id = caller
        and exists (select from app.trails tr where tr.snapshot_id = current_snapshot and tr.id = e.trail_id)
    ) t
  ),
  -- Ready: not done, every prerequisite done (the positions carry the prerequisites); each spark
  -- once, at its first trail.
  ready as not materialized (
    select t.trail_rank, p.trail_id, p.ordinal, p.placement, p.spark_id, p.concept_id, p.parents
    from (select * from trails order by trail_rank) t
    cross join lateral (
      select p.* from positions p
      where p.trail_id = t.trail_id
        and p.spark_id not in (select d.spark_id from done d)
        and case when p.parents = '{}' then true
                 when p.parents[1] in (select d.spark_id from done d)
                   then p.parents <@ (select pg_catalog.array_agg(d.spark_id) from done d) end
        and not exists (select from trails e
                        where e.trail_rank < t.trail_rank
                          and exists (select from positions q where q.trail_id = e.trail_id and q.spark_id = p.spark_id))
    ) p
  ),
  -- Trail order (ordinal) ranks placements (concept order, concept slug, the spark's order_index),
  -- and only difficulty reorders the sparks of one placement; so the list's first limit_count
  -- sparks are among the first limit_count ready ones by (trail_rank, placement) and whatever ties
  -- with the last of them (fetch ... with ties). The trails are walked in order and each one's
  -- ready sparks sorted by placement as a group (an incremental sort), so a later trail is walked
  -- only while fewer were found.
  candidates as (
    select r.* from ready r
    order by r.trail_rank, r.placement
    fetch first list_next_sparks.limit_count rows with ties
  ),
  chosen as (
    select r.*, s.slug, s.title, s.difficulty, s.estimated_mins,
      c.slug as concept_slug, c.title as concept_title,
      pg_catalog.row_number() over (
        order by r.trail_rank, r.placement, pg_catalog.abs(dl.sort_order - level.value), s.slug, s.id) as position
    from candidates r
    join app.sparks s on s.snapshot_id = current_snapshot and s.id = r.spark_id
    join app.difficulty_levels dl on dl.value = s.difficulty
    join app.concepts c on c.snapshot_id = current_snapshot and c.id = r.concept_id
    cross join level
    order by position
    limit list_next_sparks.limit_count
  )
  select pg_catalog.json_build_object(
    'data', coalesce((
      select pg_catalog.json_agg(pg_catalog.json_build_object(
          'id', c.spark_id,
          'slug', c.slug,
          'title', c.title,
          'difficulty', c.difficulty,
          'estimated_mins', c.estimated_mins,
          'trail', pg_catalog.json_build_object('id', t.id, 'slug', t.slug, 'title', t.title),
          'concept', pg_catalog.json_build_object('id', c.concept_id, 'slug', c.concept_slug, 'title', c.concept_title),
          'builds_on', coalesce((
            select pg_catalog.json_agg(pg_catalog.json_build_object('id', n.spark_id, 'slug', n.slug, 'title', n.title)
                                       order by n.slug, n.spark_id)
            from app.spark_graph_nodes n
            where n.snapshot_id = current_snapshot and n.spark_id = any (c.parents)), '[]'::json))
        order by c.position)
      from chosen c
      join app.trails t on t.snapshot_id = current_snapshot and t.id = c.trail_id), '[]'::json),
    'meta', pg_catalog.json_build_object('limit', list_next_sparks.limit_count, 'recent_level', (select l.value from level l)))
  into result;
  return result;
end
$$;
comment on function api.list_next_sparks(text,integer) is
  'Sparks the caller is ready for (not completed, every prerequisite completed, current snapshot), enrolled trails by recent activity, then trail order, then difficulty closest to the recent level. Params: trail (slug), limit_count (1..100, default 10). Returns {data, meta}. Errors: PT401 no user, 22023 bad limit, PT404 unknown trail.';
grant execute on function api.list_next_sparks(text,integer) to anon, authenticated, service_role;

-- ---------------------------------------------------------------------------------------------
-- Spaced review: FSRS-6 as ts-fsrs 5.4.2 computes it, with its default parameters and the
-- long-term scheduler (enable_short_term = false: every interval is whole days; no minute
-- learning steps), no fuzz. See docs/learning.md.
-- ---------------------------------------------------------------------------------------------

-- private.fsrs_grade: a review rating as FSRS's grade (again 1, hard 2, good 3, easy 4), or
-- null for anything else.
create or replace function private.fsrs_grade(rating text)
returns integer
language sql
immutable
set search_path = ''
as $$
  select case fsrs_grade.rating when 'again' then 1 when 'hard' then 2 when 'good' then 3 when 'easy' then 4 end
$$;
comment on function private.fsrs_grade(text) is 'again|hard|good|easy as FSRS grades 1-4; null for anything else.';
grant execute on function private.fsrs_grade(text) to anon, authenticated;

-- private.js_round: JavaScript's Math.round(value * 10^decimals) / 10^decimals (halves round
-- up), the rounding FSRS applies to every memory state, so SQL and ts-fsrs agree to the bit.
-- plpgsql, not sql: called ~20 times per review, and a plpgsql call costs a third of a
-- non-inlined sql one.
create or replace function private.js_round(value double precision, decimals integer)
returns double precision
language plpgsql
immutable
set search_path = ''
as $$
declare
  scale constant double precision := 10.0::double precision ^ js_round.decimals;
  x constant double precision := js_round.value * scale;
begin
  return (pg_catalog.floor(x) + case when x - pg_catalog.floor(x) >= 0.5 then 1 else 0 end) / scale;
end
$$;
comment on function private.js_round(double precision, integer) is
  'Math.round(value * 10^decimals) / 10^decimals, as JavaScript computes it.';
grant execute on function private.js_round(double precision, integer) to anon, authenticated;

-- private.fsrs_weights: the FSRS-6 default weights w0..w20 (ts-fsrs 5.4.2 default_w; 1-based
-- here: w[i + 1] is w_i). Immutable without arguments, so every plan folds it to a constant.
create or replace function private.fsrs_weights()
returns double precision[]
language sql
immutable
set search_path = ''
as $$
  select array[0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
               1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542]::double precision[]
$$;
comment on function private.fsrs_weights() is 'FSRS-6 default weights w0..w20 (ts-fsrs 5.4.2 default_w), 1-based.';
grant execute on function private.fsrs_weights() to anon, authenticated;

-- private.fsrs_constants: what FSRS derives from the weights and the desired retention (0.9),
-- rounded as ts-fsrs rounds them: [decay = -w20, factor = e^(ln 0.9 / decay) - 1,
-- interval modifier = (0.9^(1/decay) - 1) / factor, D0(easy) = w4 - e^(3 w5) + 1]. Folded to a
-- constant by every plan, like the weights.
create or replace function private.fsrs_constants()
returns double precision[]
language sql
immutable
set search_path = ''
as $$
  select array[c.decay, c.factor, private.js_round((0.9::double precision ^ (1 / c.decay) - 1) / c.factor, 8),
               private.js_round(w.w[5] - pg_catalog.exp(3 * w.w[6]) + 1, 8)]
  from (select private.fsrs_weights() as w) w
  cross join lateral (select -w.w[21] as decay,
                        private.js_round(pg_catalog.exp((1 / -w.w[21]) * pg_catalog.ln(0.9::double precision)) - 1, 8) as factor) c
$$;
comment on function private.fsrs_constants() is
  'FSRS-6 derived constants [decay, factor, interval modifier at retention 0.9, D0(easy)], rounded as ts-fsrs.';
grant execute on function private.fsrs_constants() to anon, authenticated;

-- private.fsrs_retrievability
-- Purpose: FSRS-6's forgetting curve: the probability of recall after elapsed_days whole days
--          at this stability, R = (1 + factor * t / S) ^ decay (so R = 0.9 when t = S).
create or replace function private.fsrs_retrievability(stability double precision, elapsed_days integer)
returns double precision
language plpgsql
immutable
set search_path = ''
as $$
declare
  c constant double precision[] := private.fsrs_constants();
begin
  return private.js_round((1 + c[2] * fsrs_retrievability.elapsed_days / fsrs_retrievability.stability) ^ c[1], 8);
end
$$;
comment on function private.fsrs_retrievability(double precision, integer) is
  'FSRS-6 forgetting curve: recall probability after elapsed_days at a stability (rounded to 8 decimals as ts-fsrs).';
grant execute on function private.fsrs_retrievability(double precision, integer) to anon, authenticated;

-- private.fsrs_review
-- Purpose: one FSRS-6 review of a card (ts-fsrs 5.4.2 LongTermScheduler, no fuzz).
-- Params:  the card before (stability, difficulty, last_review_at; all null for a new card),
--          reps, lapses, grade (1 again .. 4 easy), reviewed_at (not before last_review_at).
-- Returns: the card after: stability, difficulty, due_at, scheduled_days, reps, lapses.
-- Rules:   elapsed = whole UTC calendar days since the last review. A new card starts at
--          S = max(w[g-1], 0.1), D = clamp(w4 - e^((g-1) w5) + 1, 1, 10). A reviewed one: R from
--          the forgetting curve; again: S = min(max(S, 0.001), w11 D^-w12 ((S+1)^w13 - 1)
--          e^(w14 (1-R))); else S (1 + e^w8 (11 - D) S^-w9 (e^(w10 (1-R)) - 1) * w15 (hard) * w16
--          (easy)); D moves by -w6 (g - 3) damped by (10 - D) / 9, reverts to D0(easy) by w7,
--          clamped to [1, 10]. Interval: round(S * (0.9^(1/decay) - 1) / factor) in [1, 36500]
--          for each grade, made strictly increasing from again to easy; due = reviewed_at +
--          interval * 24 h. Every value is rounded to 8 decimals where ts-fsrs rounds it, and
--          computed in ts-fsrs's order of operations.
create or replace function private.fsrs_review(
  stability double precision, difficulty double precision, last_review_at timestamp with time zone,
  reps integer, lapses integer, grade integer, reviewed_at timestamp with time zone,
  out next_stability double precision, out next_difficulty double precision, out due_at timestamp with time zone,
  out scheduled_days integer, out next_reps integer, out next_lapses integer)
language plpgsql
immutable
set search_path = ''
as $$
declare
  w constant double precision[] := private.fsrs_weights();
  c constant double precision[] := private.fsrs_constants();
  maximum_interval constant integer := 36500;
  r double precision;
  s double precision[] := array[0, 0, 0, 0];
  days integer[] := array[0, 0, 0, 0];
  x double precision;
  g integer;
begin
  if fsrs_review.grade is null or fsrs_review.grade not between 1 and 4 then
    raise exception using errcode = '22023', message = 'grade must be 1 to 4',
      detail = pg_catalog.jsonb_build_object('field', 'grade', 'value', fsrs_review.grade)::text;
  end if;

  if fsrs_review.last_review_at is null then
    -- A new card: its first review sets the initial state.
    for g in 1..4 loop
      s[g] := greatest(w[g], 0.1);
    end loop;
    next_difficulty := least(greatest(private.js_round(w[5] - pg_catalog.exp((fsrs_review.grade - 1) * w[6]) + 1, 8), 1), 10);
  else
    r := private.fsrs_retrievability(fsrs_review.stability,
           (fsrs_review.reviewed_at at time zone 'UTC')::date - (fsrs_review.last_review_at at time zone 'UTC')::date);
    -- Forgetting (again): never above the stability before.
    s[1] := least(greatest(private.js_round(fsrs_review.stability, 8), 0.001),
              private.js_round(least(greatest(
                w[12] * fsrs_review.difficulty ^ (-w[13]) * ((fsrs_review.stability + 1) ^ w[14] - 1) * pg_catalog.exp((1 - r) * w[15]),
                0.001), 36500), 8));
    -- Recall (hard, good, easy).
    for g in 2..4 loop
      s[g] := private.js_round(least(greatest(
                fsrs_review.stability * (1 + pg_catalog.exp(w[9]) * (11 - fsrs_review.difficulty) * fsrs_review.stability ^ (-w[10])
                  * (pg_catalog.exp((1 - r) * w[11]) - 1)
                  * case when g = 2 then w[16] else 1 end * case when g = 4 then w[17] else 1 end),
                0.001), 36500), 8);
    end loop;
    -- Difficulty: the grade's step, damped, then mean reversion towards D0(easy).
    next_difficulty := least(greatest(private.js_round(
        w[8] * c[4]
        + (1 - w[8]) * (fsrs_review.difficulty + private.js_round(-w[7] * (fsrs_review.grade - 3) * (10 - fsrs_review.difficulty) / 9, 8)),
      8), 1), 10);
  end if;
  -- Intervals of all four grades (Math.round inline: floor, plus one from a half up), then
  -- strictly increasing from again to easy.
  for g in 1..4 loop
    x := s[g] * c[3];
    days[g] := least(greatest(1, (pg_catalog.floor(x) + case when x - pg_catalog.floor(x) >= 0.5 then 1 else 0 end)::integer), maximum_interval);
  end loop;
  days[1] := least(days[1], days[2]);
  days[2] := greatest(days[2], days[1] + 1);
  days[3] := greatest(days[3], days[2] + 1);
  days[4] := greatest(days[4], days[3] + 1);

  next_stability := s[fsrs_review.grade];
  scheduled_days := days[fsrs_review.grade];
  due_at := fsrs_review.reviewed_at + scheduled_days * interval '86400 seconds';
  next_reps := coalesce(fsrs_review.reps, 0) + 1;
  next_lapses := coalesce(fsrs_review.lapses, 0)
    + case when fsrs_review.grade = 1 and fsrs_review.last_review_at is not null then 1 else 0 end;
end
$$;
comment on function private.fsrs_review(double precision,double precision,timestamp with time zone,integer,integer,integer,timestamp with time zone) is
  'One FSRS-6 review (ts-fsrs 5.4.2 long-term scheduler, default parameters, no fuzz): the card''s stability, difficulty, due time, interval, reps and lapses after grade 1-4.';
grant execute on function private.fsrs_review(double precision,double precision,timestamp with time zone,integer,integer,integer,timestamp with time zone) to anon, authenticated;

create table app.spark_reviews (
  id uuid default extensions.gen_random_uuid() primary key,
  user_id uuid default auth.uid() not null,
  spark_id uuid not null,
  rating text not null check (rating = any (array['again'::text, 'hard'::text, 'good'::text, 'easy'::text])),
  reviewed_at timestamp with time zone default now() not null,
  recorded_at timestamp with time zone default now() not null,
  idempotency_key text check ((length(idempotency_key) >= 1) and (length(idempotency_key) <= 200)),
  constraint spark_reviews_natural_key unique (user_id, spark_id, reviewed_at),
  constraint spark_reviews_user_id_idempotency_key_key unique (user_id, idempotency_key),
  -- The bounds api.record_review reports field by field (22023), for any writer: not before
  -- 2000, at most 5 minutes after it was recorded (client clock skew).
  constraint spark_reviews_reviewed_at_in_bounds
    check (reviewed_at >= '2000-01-01 00:00:00+00'::timestamp with time zone and reviewed_at <= recorded_at + '00:05:00'::interval),
  constraint spark_reviews_recorded_at_in_bounds
    check (recorded_at >= '2000-01-01 00:00:00+00'::timestamp with time zone and recorded_at < 'infinity'::timestamp with time zone)
);
comment on table app.spark_reviews is
  'Each review a learner recorded of a spark (rating again|hard|good|easy): with the spark''s first completion, the history FSRS schedules from.';
alter table app.spark_reviews enable row level security;
create policy "learners read their own reviews" on app.spark_reviews
  for select to authenticated
  using (user_id = (select auth.uid()));
create policy "learners record their own reviews" on app.spark_reviews
  for insert to authenticated
  with check (user_id = (select auth.uid()));
grant select on app.spark_reviews to authenticated;
grant insert (spark_id, rating, reviewed_at, idempotency_key) on app.spark_reviews to authenticated;

-- Reviews are of sparks of the current snapshot, whoever writes them (the rule of new learning
-- events: private.require_current_content, 10-journeys.sql).
create trigger spark_reviews_spark_is_current
  before insert on app.spark_reviews
  for each row execute function private.require_current_content();

-- The memory state after each card's latest review: derived from the history (the first
-- completion of the spark plus its reviews) by private.refresh_review_cards, in the transaction
-- that changes the history. Learners read their own; only the triggers below write.
create table app.review_cards (
  user_id uuid not null,
  spark_id uuid not null,
  stability double precision not null,
  difficulty double precision not null,
  due_at timestamp with time zone not null,
  last_review_at timestamp with time zone not null,
  scheduled_days integer not null,
  reps integer not null,
  lapses integer not null,
  constraint review_cards_pkey primary key (user_id, spark_id)
);
comment on table app.review_cards is
  'FSRS card of each (learner, spark) with a history: the state after its latest review, recomputed from app.learning_events (first completion) and app.spark_reviews by private.refresh_review_cards.';
alter table app.review_cards enable row level security;
create policy "learners read their own review cards" on app.review_cards
  for select to authenticated
  using (user_id = (select auth.uid()));
grant select on app.review_cards to authenticated;

-- GET /user/me/reviews: the caller's cards in due order.
create index review_cards_due on app.review_cards (user_id, due_at, spark_id);

-- private.lock_learner_sparks
-- Purpose: serialises the recomputes of what is derived per (learner, spark) from its history
--          (the review cards). Each recompute reads the history after its lock: a concurrent
--          writer's event is then either committed and read, or that writer recomputes after this
--          transaction ends. Without it, the later of two concurrent writers of one pair wrote a
--          card computed without the other's event.
-- Params:  user_ids, spark_ids: parallel arrays of pairs (duplicates allowed).
-- Locks:   transaction-level advisory locks: up to 32 distinct pairs (a learner's write) take
--          the bulk key shared and each pair's key, in key order; more (a bulk load) take the
--          bulk key exclusively, so the shared lock table holds a few locks whatever the load.
create or replace function private.lock_learner_sparks(user_ids uuid[], spark_ids uuid[])
returns void
language plpgsql
set search_path = ''
as $$
declare
  -- Keys of their own: the first of two int4 keys is the cards table's oid, which no other
  -- advisory lock of the project uses (the promote lock takes a single bigint key); the
  -- second is 0 for the bulk key, else the pair's hash (never 0).
  lock_space constant integer := 'app.review_cards'::regclass::oid::integer;
  keys integer[];
begin
  select pg_catalog.array_agg(distinct coalesce(nullif(pg_catalog.hashtext(p.user_id::text || p.spark_id::text), 0), 1))
  into keys
  from rows from (pg_catalog.unnest(lock_learner_sparks.user_ids), pg_catalog.unnest(lock_learner_sparks.spark_ids)) p(user_id, spark_id);
  if pg_catalog.cardinality(keys) > 32 then
    perform pg_catalog.pg_advisory_xact_lock(lock_space, 0);
  elsif keys is not null then
    perform pg_catalog.pg_advisory_xact_lock_shared(lock_space, 0);
    -- array_agg(distinct) gives the keys sorted: every transaction takes them in one order.
    perform pg_catalog.pg_advisory_xact_lock(lock_space, k) from pg_catalog.unnest(keys) k;
  end if;
end
$$;
comment on function private.lock_learner_sparks(uuid[], uuid[]) is
  'Serialises recomputes of per-(learner, spark) derived rows: advisory locks per pair (up to 32) under a shared bulk key, or the bulk key exclusively for more.';
revoke execute on function private.lock_learner_sparks(uuid[], uuid[]) from public;

-- private.refresh_review_cards
-- Purpose: recomputes the cards of the given (user, spark) pairs from their whole history and
--          writes them; a pair without history loses its card. The history of a pair: its first
--          completion (the earliest completed or mastered event that is not voided; completed
--          counts as rating good, mastered as easy; mastered first on a tie), then its reviews, in
--          time order (the completion first on a tie). Set-based: one recursive fold over every
--          pair at once, one FSRS step per history row (private.fsrs_review).
-- Params:  user_ids, spark_ids: parallel arrays of pairs (duplicates allowed).
-- Runs as its owner only (called by the security-definer triggers below).
-- Plans: a learner's write calls it with one pair, and planning this statement cost four times
-- running it; so plpgsql (its plan is kept for the session, which a SQL function's is not before
-- PostgreSQL 18) with one generic plan. Nothing in that plan grows faster than the pairs: index
-- probes per pair, hashes over their rows, and the pairs left without history are a set
-- difference (a `not exists` over the history CTE scanned it once per pair: 39-47 s for 20,000).
create or replace function private.refresh_review_cards(user_ids uuid[], spark_ids uuid[])
returns void
language plpgsql
set plan_cache_mode to 'force_generic_plan'
set search_path = ''
as $$
begin
  -- The history is read after the pairs' locks (see private.lock_learner_sparks).
  perform private.lock_learner_sparks(refresh_review_cards.user_ids, refresh_review_cards.spark_ids);
  with recursive
  pairs as materialized (
    select distinct p.user_id, p.spark_id
    from rows from (pg_catalog.unnest(refresh_review_cards.user_ids), pg_catalog.unnest(refresh_review_cards.spark_ids)) p(user_id, spark_id)
  ),
  history as materialized (
    select h.user_id, h.spark_id, h.grade, h.at,
      pg_catalog.row_number() over (partition by h.user_id, h.spark_id order by h.at, h.source, h.id) as n
    from (
      (select distinct on (le.user_id, le.spark_id) le.user_id, le.spark_id,
         case when le.verb = 'mastered' then 4 else 3 end as grade, le.occurred_at as at, 0 as source, le.id
       from pairs p
       join app.learning_events le on le.user_id = p.user_id and le.spark_id = p.spark_id
       where le.verb in ('completed', 'mastered') and le.voided_at is null
       order by le.user_id, le.spark_id, le.occurred_at, (le.verb = 'mastered') desc, le.id)
      union all
      select r.user_id, r.spark_id, private.fsrs_grade(r.rating), r.reviewed_at, 1, r.id
      from pairs p
      join app.spark_reviews r on r.user_id = p.user_id and r.spark_id = p.spark_id
    ) h
  ),
  fold (user_id, spark_id, n, stability, difficulty, due_at, last_review_at, scheduled_days, reps, lapses) as (
    select h.user_id, h.spark_id, h.n, f.next_stability, f.next_difficulty, f.due_at, h.at, f.scheduled_days, f.next_reps, f.next_lapses
    from history h
    cross join lateral private.fsrs_review(null, null, null, 0, 0, h.grade, h.at) f
    where h.n = 1
    union all
    select h.user_id, h.spark_id, h.n, f.next_stability, f.next_difficulty, f.due_at, h.at, f.scheduled_days, f.next_reps, f.next_lapses
    from fold c
    join history h on h.user_id = c.user_id and h.spark_id = c.spark_id and h.n = c.n + 1
    cross join lateral private.fsrs_review(c.stability, c.difficulty, c.last_review_at, c.reps, c.lapses, h.grade, h.at) f
  ),
  latest as (
    select distinct on (f.user_id, f.spark_id) f.*
    from fold f
    order by f.user_id, f.spark_id, f.n desc
  ),
  written as (
    insert into app.review_cards (user_id, spark_id, stability, difficulty, due_at, last_review_at, scheduled_days, reps, lapses)
    select l.user_id, l.spark_id, l.stability, l.difficulty, l.due_at, l.last_review_at, l.scheduled_days, l.reps, l.lapses
    from latest l
    on conflict (user_id, spark_id) do update set
      stability = excluded.stability, difficulty = excluded.difficulty, due_at = excluded.due_at,
      last_review_at = excluded.last_review_at, scheduled_days = excluded.scheduled_days,
      reps = excluded.reps, lapses = excluded.lapses
    returning 1
  ),
  orphans as (
    select p.user_id, p.spark_id from pairs p
    except
    select h.user_id, h.spark_id from history h
  )
  delete from app.review_cards c
  using orphans o
  where c.user_id = o.user_id and c.spark_id = o.spark_id;
end
$$;
comment on function private.refresh_review_cards(uuid[], uuid[]) is
  'Recomputes (FSRS fold over first completion + reviews) and writes the app.review_cards rows of the given (user, spark) pairs; pairs without history lose theirs.';
revoke execute on function private.refresh_review_cards(uuid[], uuid[]) from public;

-- A completion that is recorded or voided changes its card's history: refresh those cards, once
-- per statement (a bulk insert refreshes every card it touched in one fold).
create or replace function private.refresh_review_cards_after_events()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.refresh_review_cards(pg_catalog.array_agg(e.user_id), pg_catalog.array_agg(e.spark_id))
  from changed_events e
  where e.verb in ('completed', 'mastered')
  having pg_catalog.count(*) > 0;
  return null;
end
$$;
comment on function private.refresh_review_cards_after_events() is
  'Trigger: refreshes the review cards of the (user, spark) pairs whose completed or mastered events were recorded or voided.';
revoke execute on function private.refresh_review_cards_after_events() from public;

create trigger learning_events_review_cards_insert
  after insert on app.learning_events referencing new table as changed_events
  for each statement execute function private.refresh_review_cards_after_events();

-- Learners update voided_at only (column grant); any update refreshes, which is always correct.
create trigger learning_events_review_cards_update
  after update on app.learning_events referencing new table as changed_events
  for each statement execute function private.refresh_review_cards_after_events();

create or replace function private.refresh_review_cards_after_reviews()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.refresh_review_cards(pg_catalog.array_agg(r.user_id), pg_catalog.array_agg(r.spark_id))
  from new_reviews r
  having pg_catalog.count(*) > 0;
  return null;
end
$$;
comment on function private.refresh_review_cards_after_reviews() is
  'Trigger: refreshes the review cards of the (user, spark) pairs that got new reviews.';
revoke execute on function private.refresh_review_cards_after_reviews() from public;

create trigger spark_reviews_review_cards
  after insert on app.spark_reviews referencing new table as new_reviews
  for each statement execute function private.refresh_review_cards_after_reviews();

-- private.review_card_json: one card as the API shows it, with its retrievability at `at`.
-- plpgsql, not sql: called once per listed card, and a SQL function that cannot be inlined (its
-- SET clause) starts an executor on every call; plpgsql evaluates one expression without one.
create or replace function private.review_card_json(card app.review_cards, at timestamp with time zone)
returns json
language plpgsql
stable
set search_path = ''
as $$
begin
  return pg_catalog.json_build_object(
    'due_at', (review_card_json.card).due_at,
    'stability', (review_card_json.card).stability,
    'difficulty', (review_card_json.card).difficulty,
    'retrievability', private.fsrs_retrievability((review_card_json.card).stability,
      greatest((review_card_json.at at time zone 'UTC')::date - ((review_card_json.card).last_review_at at time zone 'UTC')::date, 0)),
    'last_review_at', (review_card_json.card).last_review_at,
    'scheduled_days', (review_card_json.card).scheduled_days,
    'reps', (review_card_json.card).reps,
    'lapses', (review_card_json.card).lapses);
end
$$;
comment on function private.review_card_json(app.review_cards, timestamp with time zone) is
  'ReviewCard JSON: due_at, stability, difficulty, retrievability at a time, last_review_at, scheduled_days, reps, lapses.';
grant execute on function private.review_card_json(app.review_cards, timestamp with time zone) to anon, authenticated;

-- api.list_due_reviews
-- Purpose: the caller's sparks due for review.
-- Params:  due_before (default now): cards due at or before it; limit_count (1..100, default 20).
-- Returns: {data: [{spark: {id, slug, title, estimated_mins}, card: ReviewCard}],
--          meta: {due_before, limit, total}} in due order (then spark id); total counts every
--          due card. Only sparks of the current snapshot are listed (a removed spark's card waits).
-- Errors:  PT401 without a user; 22023 limit_count out of range.
create or replace function api.list_due_reviews(due_before timestamp with time zone default null::timestamp with time zone, limit_count integer default 20)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_due_reviews');
  caller uuid := private.require_user();
  cutoff constant timestamptz := coalesce(list_due_reviews.due_before, pg_catalog.now());
  current_snapshot uuid := private.resolve_snapshot_id(null);
  result json;
begin
  perform private.require_range('limit', list_due_reviews.limit_count, 1, 100);
  with due as (
    select c, s.id, s.slug, s.title, s.estimated_mins
    from app.review_cards c
    join app.sparks s on s.snapshot_id = current_snapshot and s.id = c.spark_id
    where c.user_id = caller and c.due_at <= cutoff
  ),
  page as (
    select d.* from due d order by (d.c).due_at, d.id limit list_due_reviews.limit_count
  )
  select pg_catalog.json_build_object(
    'data', coalesce((
      select pg_catalog.json_agg(pg_catalog.json_build_object(
          'spark', pg_catalog.json_build_object('id', p.id, 'slug', p.slug, 'title', p.title, 'estimated_mins', p.estimated_mins),
          'card', private.review_card_json(p.c, pg_catalog.now()))
        order by (p.c).due_at, p.id)
      from page p), '[]'::json),
    'meta', pg_catalog.json_build_object('due_before', cutoff, 'limit', list_due_reviews.limit_count,
      'total', (select pg_catalog.count(*) from due)))
  into result;
  return result;
end
$$;
comment on function api.list_due_reviews(timestamp with time zone, integer) is
  'The caller''s review cards due at or before due_before (default now), in due order. Params: due_before, limit_count (1..100, default 20). Returns {data: [{spark, card}], meta: {due_before, limit, total}}. Errors: PT401 no user, 22023 bad limit.';
grant execute on function api.list_due_reviews(timestamp with time zone, integer) to anon, authenticated, service_role;

-- private.spark_review_json: the SparkReview document of one review, with the card after it.
create or replace function private.spark_review_json(review app.spark_reviews, created boolean)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select pg_catalog.jsonb_build_object(
    'id', (review).id,
    'spark_id', (review).spark_id,
    'rating', (review).rating,
    'reviewed_at', (review).reviewed_at,
    'recorded_at', (review).recorded_at,
    'idempotency_key', (review).idempotency_key,
    'created', spark_review_json.created,
    'card', (select private.review_card_json(c, pg_catalog.now()) from app.review_cards c
             where c.user_id = (review).user_id and c.spark_id = (review).spark_id))
$$;
comment on function private.spark_review_json(app.spark_reviews, boolean) is
  'SparkReview JSON for one app.spark_reviews row with created and the spark''s card as it is now.';
grant execute on function private.spark_review_json(app.spark_reviews, boolean) to anon, authenticated;

-- api.record_review
-- Purpose: record the caller's review of a spark; its card is rescheduled in the same
--          transaction.
-- Params:  spark_id (a spark of the current snapshot; a spark never completed gets its first
--          card from this review); rating again|hard|good|easy; reviewed_at (null = now; at most
--          5 minutes ahead, not before 2000-01-01); idempotency_key (optional, 1-200, per user).
-- Returns: SparkReview {id, spark_id, rating, reviewed_at, recorded_at, idempotency_key,
--          created, card}. created = false when an earlier review is returned: the same
--          idempotency_key (a retry, checked first), or the same spark and reviewed_at.
-- Errors:  PT401 without a user; 22023 missing spark_id, unknown rating, bad key or time;
--          PT404 spark not in the current snapshot; 23505 the key or the (spark, reviewed_at)
--          was already used for a different review.
create or replace function api.record_review(spark_id uuid, rating text, reviewed_at timestamp with time zone default null::timestamp with time zone, idempotency_key text default null::text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('record_review');
  caller uuid := private.require_user();
  review_time timestamptz;
  review app.spark_reviews;
begin
  if record_review.spark_id is null then
    raise exception using errcode = '22023', message = 'spark_id is required',
      detail = pg_catalog.jsonb_build_object('field', 'spark_id')::text;
  end if;
  if private.fsrs_grade(record_review.rating) is null then
    raise exception using errcode = '22023', message = 'rating must be one of again, hard, good, easy',
      detail = pg_catalog.jsonb_build_object('field', 'rating', 'value', record_review.rating,
        'allowed', pg_catalog.jsonb_build_array('again', 'hard', 'good', 'easy'))::text;
  end if;
  perform private.require_idempotency_key(record_review.idempotency_key);

  -- A retry with the same key returns the original review, before any check that could have
  -- changed since.
  if record_review.idempotency_key is not null then
    select r.* into review from app.spark_reviews r
    where r.user_id = caller and r.idempotency_key = record_review.idempotency_key;
    if found then
      if review.spark_id <> record_review.spark_id or review.rating <> record_review.rating
         or (record_review.reviewed_at is not null and review.reviewed_at <> record_review.reviewed_at) then
        raise exception using errcode = '23505', message = 'idempotency key already used for a different review',
          detail = pg_catalog.jsonb_build_object('idempotency_key', record_review.idempotency_key, 'review_id', review.id)::text;
      end if;
      return private.spark_review_json(review, false);
    end if;
  end if;

  review_time := private.require_learning_time('reviewed_at', record_review.reviewed_at);

  -- user_id defaults to auth.uid(); the insert policy checks it, and the trigger
  -- spark_reviews_spark_is_current that the spark is in the current snapshot (PT404).
  insert into app.spark_reviews (spark_id, rating, reviewed_at, idempotency_key)
  values (record_review.spark_id, record_review.rating, review_time, record_review.idempotency_key)
  on conflict do nothing
  returning * into review;
  if review.id is not null then
    return private.spark_review_json(review, true);
  end if;

  -- A conflict on either key: the review already recorded (a retry), unless it says otherwise.
  select r.* into review from app.spark_reviews r
  where r.user_id = caller
    and (r.idempotency_key = record_review.idempotency_key
         or (r.spark_id = record_review.spark_id and r.reviewed_at = review_time))
  order by (r.idempotency_key is not distinct from record_review.idempotency_key) desc
  limit 1;
  if review.rating <> record_review.rating or review.spark_id <> record_review.spark_id
     or review.idempotency_key is distinct from coalesce(record_review.idempotency_key, review.idempotency_key) then
    raise exception using errcode = '23505', message = 'a different review of this spark was recorded at this time',
      detail = pg_catalog.jsonb_build_object('review_id', review.id, 'reviewed_at', review.reviewed_at)::text;
  end if;
  return private.spark_review_json(review, false);
end
$$;
comment on function api.record_review(uuid,text,timestamp with time zone,text) is
  'Records the caller''s review (again|hard|good|easy) of a current spark and reschedules its FSRS card. Params: spark_id, rating, reviewed_at (null = now), idempotency_key. Returns SparkReview + created + card. Errors: PT401 no user, 22023 invalid input, PT404 unknown spark, 23505 key or time reused for another review.';
grant execute on function api.record_review(uuid,text,timestamp with time zone,text) to anon, authenticated, service_role;

-- ---------------------------------------------------------------------------------------------
-- Voiding an event
-- ---------------------------------------------------------------------------------------------

-- api.void_learning_event
-- Purpose: the caller takes back one of their learning events: from now on it counts for
--          nothing (journeys, the learning path, what next, review cards) and the xAPI export
--          shows a voiding statement instead of it. Idempotent; a voided event stays voided.
-- Params:  id (the event id).
-- Returns: LearningEvent (voided_at set; created false).
-- Errors:  PT401 without a user; PT404 no event of the caller has this id.
create or replace function api.void_learning_event(id uuid)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('void_learning_event');
  caller uuid := private.require_user();
  event app.learning_events;
begin
  update app.learning_events le set voided_at = pg_catalog.now()
  where le.id = void_learning_event.id and le.user_id = caller and le.voided_at is null
  returning * into event;
  if event.id is null then
    select le.* into event from app.learning_events le where le.id = void_learning_event.id and le.user_id = caller;
  end if;
  if event.id is null then
    raise exception using errcode = 'PT404', message = 'learning event not found',
      detail = pg_catalog.jsonb_build_object('id', void_learning_event.id)::text;
  end if;
  return private.learning_event_json(event, false);
end
$$;
comment on function api.void_learning_event(uuid) is
  'Voids one of the caller''s learning events (idempotent): it stops counting for progress and exports as a voiding statement. Params: id. Returns LearningEvent. Errors: PT401 no user, PT404 not the caller''s event.';
grant execute on function api.void_learning_event(uuid) to anon, authenticated, service_role;

-- ---------------------------------------------------------------------------------------------
-- xAPI 1.0.3 export
-- ---------------------------------------------------------------------------------------------

-- The statement export pages through the caller's events by the time they were stored
-- (recorded_at; a voiding statement is stored when the event was voided).
create index learning_events_statements on app.learning_events (user_id, recorded_at, id) where (voided_at is null);

create index learning_events_voids on app.learning_events (user_id, voided_at, id) where (voided_at is not null);

-- private.xapi_uuid: the RFC 4122 version-5 (SHA-1, name-based) UUID of a name in the
-- Sparkpath xAPI namespace 8b1f4c1e-5d2a-4f0e-9c3b-7a6d5e4f3c2b: statement ids the export makes
-- up are the same on every export.
create or replace function private.xapi_uuid(name text)
returns uuid
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.encode(
    pg_catalog.set_byte(pg_catalog.set_byte(pg_catalog.substr(h.bytes, 1, 16),
      6, (pg_catalog.get_byte(h.bytes, 6) & 15) | 80),
      8, (pg_catalog.get_byte(h.bytes, 8) & 63) | 128), 'hex')::uuid
  from (select extensions.digest(pg_catalog.uuid_send('8b1f4c1e-5d2a-4f0e-9c3b-7a6d5e4f3c2b'::uuid)
                                 || pg_catalog.convert_to(xapi_uuid.name, 'UTF8'), 'sha1') as bytes) h
$$;
comment on function private.xapi_uuid(text) is 'RFC 4122 version-5 UUID (SHA-1) of a name in the Sparkpath xAPI namespace 8b1f4c1e-5d2a-4f0e-9c3b-7a6d5e4f3c2b.';
grant execute on function private.xapi_uuid(text) to anon, authenticated;

-- private.xapi_statement_id
-- Purpose: the statement id of a learning event: its idempotency key when that is a UUID
--          (lower-cased); private.xapi_uuid('<user id>:<key>') for any other key (keys are per
--          user); the event id when it has no key.
create or replace function private.xapi_statement_id(user_id uuid, idempotency_key text, event_id uuid)
returns uuid
language sql
immutable
set search_path = ''
as $$
  select case
    when xapi_statement_id.idempotency_key is null then xapi_statement_id.event_id
    else coalesce(private.uuid_or_null(xapi_statement_id.idempotency_key),
                  private.xapi_uuid(xapi_statement_id.user_id || ':' || xapi_statement_id.idempotency_key))
  end
$$;
comment on function private.xapi_statement_id(uuid, text, uuid) is
  'xAPI statement id of a learning event: the idempotency key if it is a UUID, else a v5 UUID of user:key, else the event id.';
grant execute on function private.xapi_statement_id(uuid, text, uuid) to anon, authenticated;

-- private.xapi_verb: the xAPI verb of a learning verb (ADL vocabulary where it has one), or of
-- 'voided'. Every app.learning_verbs value has one (pgTAP checks).
create or replace function private.xapi_verb(verb text)
returns json
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.json_build_object('id', v.iri, 'display', pg_catalog.json_build_object('en-US', v.display))
  from (values
    ('started', 'http://adlnet.gov/expapi/verbs/attempted', 'attempted'),
    ('completed', 'http://adlnet.gov/expapi/verbs/completed', 'completed'),
    ('mastered', 'http://adlnet.gov/expapi/verbs/mastered', 'mastered'),
    ('bookmarked', 'http://id.tincanapi.com/verb/bookmarked', 'bookmarked'),
    ('voided', 'http://adlnet.gov/expapi/verbs/voided', 'voided')
  ) v(verb, iri, display)
  where v.verb = xapi_verb.verb
$$;
comment on function private.xapi_verb(text) is
  'xAPI verb {id, display} of a learning verb (started=attempted, completed, mastered: ADL; bookmarked: id.tincanapi.com) or voided.';
grant execute on function private.xapi_verb(text) to anon, authenticated;

-- private.xapi_home_page: the service's home page (connection setting sparkpath.home_page, set
-- from PUBLIC_BASE_URL; http://localhost:3000 when unset), without a trailing slash.
create or replace function private.xapi_home_page()
returns text
language sql
stable
set search_path = ''
as $$
  select pg_catalog.rtrim(coalesce(nullif(pg_catalog.current_setting('sparkpath.home_page', true), ''), 'http://localhost:3000'), '/')
$$;
comment on function private.xapi_home_page() is
  'The service home page for xAPI actors and activity ids: setting sparkpath.home_page, default http://localhost:3000.';
grant execute on function private.xapi_home_page() to anon, authenticated;

-- api.list_statements
-- Purpose: the caller's learning events as xAPI 1.0.3 statements (a StatementResult), newest
--          stored first: one statement per event that is not voided, one voiding statement per
--          voided event (a voided statement itself is never returned, as an LRS does).
-- Params:  since (exclusive) and until (inclusive) bound `stored`; limit_count (0..500; 0 = the
--          maximum, 500; default 100); cursor (from a previous `more`: where that page ended).
-- Returns: {statements: [...], more: IRL of the next page or ""}. A statement: id (see
--          private.xapi_statement_id), actor {objectType Agent, account {homePage, name: user
--          id}}, verb (private.xapi_verb), object {objectType Activity, id
--          <home>/activities/sparks/<spark id>, definition {type lesson, name}}, timestamp
--          (occurred_at), stored (recorded_at), version 1.0.3. A voiding statement: verb voided,
--          object {objectType StatementRef, id}, timestamp and stored = voided_at, id =
--          private.xapi_uuid('voided:<statement id>').
-- Errors:  PT401 without a user; 22023 limit_count out of range or a malformed cursor.
create or replace function api.list_statements(since timestamp with time zone default null::timestamp with time zone, until timestamp with time zone default null::timestamp with time zone, limit_count integer default 100, cursor text default null::text)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
  caller_role constant text := private.authorize('list_statements');
  caller uuid := private.require_user();
  wanted constant integer := case when list_statements.limit_count = 0 then 500 else list_statements.limit_count end;
  home constant text := private.xapi_home_page();
  -- The same for every statement of the page: built once.
  actor constant json := pg_catalog.json_build_object('objectType', 'Agent',
    'account', pg_catalog.json_build_object('homePage', home, 'name', caller));
  voided constant json := private.xapi_verb('voided');
  -- Timestamps as the export writes them: ISO 8601 in UTC with microseconds.
  utc constant text := 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';
  current_snapshot uuid := private.resolve_snapshot_id(null);
  before_stored timestamptz;
  before_id uuid;
  result json;
begin
  perform private.require_range('limit', list_statements.limit_count, 0, 500);
  if list_statements.cursor is not null then
    if list_statements.cursor !~* '^[0-9]{1,18}\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      raise exception using errcode = '22023', message = 'cursor is not one this API issued',
        detail = pg_catalog.jsonb_build_object('field', 'cursor')::text;
    end if;
    before_stored := timestamptz 'epoch' + pg_catalog.split_part(list_statements.cursor, '.', 1)::bigint * interval '1 microsecond';
    before_id := pg_catalog.split_part(list_statements.cursor, '.', 2)::uuid;
  end if;

  with rows as (
    -- Newest first: each branch one backward range of its partial index, merged.
    (select false as voiding, le.id, le.spark_id, le.verb, le.occurred_at, le.recorded_at as stored, le.idempotency_key
     from app.learning_events le
     where le.user_id = caller and le.voided_at is null
       and (list_statements.since is null or le.recorded_at > list_statements.since)
       and (list_statements.until is null or le.recorded_at <= list_statements.until)
       and (before_stored is null or (le.recorded_at, le.id) < (before_stored, before_id))
     order by le.recorded_at desc, le.id desc
     limit wanted + 1)
    union all
    (select true, le.id, le.spark_id, le.verb, le.occurred_at, le.voided_at, le.idempotency_key
     from app.learning_events le
     where le.user_id = caller and le.voided_at is not null
       and (list_statements.since is null or le.voided_at > list_statements.since)
       and (list_statements.until is null or le.voided_at <= list_statements.until)
       and (before_stored is null or (le.voided_at, le.id) < (before_stored, before_id))
     order by le.voided_at desc, le.id desc
     limit wanted + 1)
  ),
  page as (
    select r.*, pg_catalog.row_number() over (order by r.stored desc, r.id desc) as position
    from rows r
    order by r.stored desc, r.id desc
    limit wanted + 1
  ),
  statements as (
    select p.*, private.xapi_statement_id(caller, p.idempotency_key, p.id) as event_statement_id
    from page p
    where p.position <= wanted
  ),
  -- One xAPI verb per learning verb, not one call per statement.
  verbs as materialized (
    select lv.value, private.xapi_verb(lv.value) as xapi from app.learning_verbs lv
  )
  select pg_catalog.json_build_object(
    'statements', coalesce((
      select pg_catalog.json_agg(
        case when not s.voiding then pg_catalog.json_build_object(
          'id', s.event_statement_id,
          'actor', actor,
          'verb', v.xapi,
          'object', pg_catalog.json_build_object('objectType', 'Activity',
            'id', home || '/activities/sparks/' || s.spark_id,
            'definition', case when sp.title is null
              then pg_catalog.json_build_object('type', 'http://adlnet.gov/expapi/activities/lesson')
              else pg_catalog.json_build_object('type', 'http://adlnet.gov/expapi/activities/lesson',
                     'name', pg_catalog.json_build_object('en-US', sp.title)) end),
          'timestamp', pg_catalog.to_char(s.occurred_at at time zone 'UTC', utc),
          'stored', pg_catalog.to_char(s.stored at time zone 'UTC', utc),
          'version', '1.0.3')
        else pg_catalog.json_build_object(
          'id', private.xapi_uuid('voided:' || s.event_statement_id),
          'actor', actor,
          'verb', voided,
          'object', pg_catalog.json_build_object('objectType', 'StatementRef', 'id', s.event_statement_id),
          'timestamp', pg_catalog.to_char(s.stored at time zone 'UTC', utc),
          'stored', pg_catalog.to_char(s.stored at time zone 'UTC', utc),
          'version', '1.0.3') end
        order by s.position)
      from statements s
      left join verbs v on v.value = s.verb
      left join app.sparks sp on sp.snapshot_id = current_snapshot and sp.id = s.spark_id and not s.voiding), '[]'::json),
    'more', coalesce((
      select '/user/me/statements?' || pg_catalog.concat_ws('&',
          'limit=' || list_statements.limit_count,
          'since=' || pg_catalog.to_char(list_statements.since at time zone 'UTC', utc),
          'until=' || pg_catalog.to_char(list_statements.until at time zone 'UTC', utc),
          'cursor=' || ((extract(epoch from l.stored) * 1000000)::numeric(20, 0))::text || '.' || l.id)
      from page l
      where l.position = wanted
        and exists (select from page x where x.position = wanted + 1)), ''))
  into result;
  return result;
end
$$;
comment on function api.list_statements(timestamp with time zone, timestamp with time zone, integer, text) is
  'The caller''s learning events as an xAPI 1.0.3 StatementResult, newest stored first, voided events as voiding statements. Params: since (exclusive), until (inclusive) on stored, limit_count (0..500, 0 = 500, default 100), cursor. Returns {statements, more}. Errors: PT401 no user, 22023 bad limit or cursor.';
grant execute on function api.list_statements(timestamp with time zone, timestamp with time zone, integer, text) to anon, authenticated, service_role;
