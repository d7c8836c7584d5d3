-- Fallback synthetic catalog for the benchmark, used only while `npm run content -- generate`
-- (the content CLI) is not on the branch. Set-based, deterministic, one published snapshot.
--
--   psql -v sparks=50000 -f bench/sql/fallback-content.sql
--
-- Shape: 20 domains (4 categories) -> 10 trails each -> 10 concepts each -> sparks/2000 sparks
-- each. Prerequisite edges stay inside a trail (sources come earlier in the trail), three per
-- spark where the trail is long enough: about 3 x sparks edges, acyclic by construction.
\set ON_ERROR_STOP on
begin;

create temporary table words (i int primary key, w text) on commit drop;
insert into words
select row_number() over (), w from unnest(string_to_array(
  'algebra analysis array async binary cache calculus circuit class closure compiler concurrency '
  'database debugging design distributed encryption entropy function geometry gradient graph hashing '
  'index inference integral kernel lambda linear logic matrix memory network neural numbers '
  'optimization parser pattern pointer probability protocol queue recursion regression scheduling '
  'security sorting statistics stream string syntax testing theorem topology transaction tree '
  'typing vector volume writing rhetoric grammar poetry history economics markets finance accounting '
  'chemistry biology genetics ecology physics optics mechanics thermodynamics astronomy geology', ' ')) w;

insert into app.snapshots (id, name, version_label, description, status, published_at)
values ('00000000-0000-4000-8000-0000000b0001', 'Benchmark catalog', 'bench-1', 'synthetic', 'published', now());

insert into app.categories (snapshot_id, id, slug, name)
select '00000000-0000-4000-8000-0000000b0001', md5('category-' || c)::uuid, 'category-' || c, 'Category ' || c
from generate_series(1, 4) c;

insert into app.domains (snapshot_id, id, slug, name, description, category_id, learning_outcomes)
select '00000000-0000-4000-8000-0000000b0001', md5('domain-' || d)::uuid, format('domain-%s', lpad(d::text, 3, '0')),
       initcap((select w from words where i = 1 + (d * 7) % (select count(*) from words))) || ' ' || d,
       'Domain about ' || (select w from words where i = 1 + (d * 13) % (select count(*) from words)),
       md5('category-' || (1 + d % 4))::uuid, array['outcome one', 'outcome two']
from generate_series(1, 20) d;

insert into app.trails (snapshot_id, id, domain_id, slug, title, description, difficulty_level, order_index)
select '00000000-0000-4000-8000-0000000b0001', md5('trail-' || t)::uuid, md5('domain-' || (1 + (t - 1) / 10))::uuid,
       format('trail-%s', lpad(t::text, 4, '0')),
       initcap((select w from words where i = 1 + (t * 11) % (select count(*) from words))) || ' ' || (select w from words where i = 1 + (t * 17) % (select count(*) from words)) || ' ' || t,
       'Trail on ' || (select w from words where i = 1 + (t * 19) % (select count(*) from words)),
       (array['beginner', 'intermediate', 'advanced', 'expert'])[1 + t % 4], (t - 1) % 10
from generate_series(1, 200) t;

insert into app.concepts (snapshot_id, id, trail_id, slug, title, description, order_index)
select '00000000-0000-4000-8000-0000000b0001', md5('concept-' || c)::uuid, md5('trail-' || (1 + (c - 1) / 10))::uuid,
       format('concept-%s', lpad(c::text, 5, '0')),
       initcap((select w from words where i = 1 + (c * 23) % (select count(*) from words))) || ' ' || (select w from words where i = 1 + (c * 29) % (select count(*) from words)) || ' ' || c,
       'Concept on ' || (select w from words where i = 1 + (c * 31) % (select count(*) from words)), (c - 1) % 10
from generate_series(1, 2000) c;

insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
select '00000000-0000-4000-8000-0000000b0001', md5('spark-' || s)::uuid, format('spark-%s', lpad(s::text, 6, '0')),
       initcap((select w from words where i = 1 + (s * 37) % (select count(*) from words))) || ' ' || (select w from words where i = 1 + (s * 41) % (select count(*) from words)) || ' ' || s,
       'A short lesson on ' || (select w from words where i = 1 + (s * 43) % (select count(*) from words)) || ' and ' || (select w from words where i = 1 + (s * 47) % (select count(*) from words)),
       (array['beginner', 'intermediate', 'advanced', 'expert'])[1 + s % 4], 1 + s % 15
from generate_series(1, :sparks) s;

-- Spark s sits in concept ceil(s / per_concept); concepts run 1..2000 in trail order.
insert into app.concept_sparks (snapshot_id, concept_id, spark_id, order_index)
select '00000000-0000-4000-8000-0000000b0001', md5('concept-' || (1 + (s - 1) / (:sparks / 2000)))::uuid, md5('spark-' || s)::uuid,
       (s - 1) % (:sparks / 2000)
from generate_series(1, (:sparks / 2000) * 2000) s;

-- Position of spark s inside its trail: (s - 1) % per_trail. Three earlier sparks of the same
-- trail at offsets from disjoint ranges (1-5, 6-30, 31-120), so the three edges are distinct.
insert into app.spark_links (snapshot_id, source_id, target_id, type, weight)
select '00000000-0000-4000-8000-0000000b0001', md5('spark-' || (s - o))::uuid, md5('spark-' || s)::uuid, 'prerequisite', 1
from generate_series(1, (:sparks / 2000) * 2000) s
cross join lateral (values
  (1 + (s * 7) % 5), (6 + (s * 13) % 25), (31 + (s * 17) % 90)) v(o)
where o <= (s - 1) % ((:sparks / 2000) * 10);

commit;
analyze;
