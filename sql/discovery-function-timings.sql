-- Server-side timings of the discovery api functions as anon: best / median / p95 of `runs` calls
-- each after 2 warm-ups (one session, no HTTP, no body cache). Run as a superuser on a database
-- with a generated catalog (slugs domain-000002, trail-000033, concept-001521 must exist):
--   psql -d <db> -v runs=15 -f sql/discovery-function-timings.sql 2>&1 | grep NOTICE
select set_config('bench.runs', :'runs', false) is not null as runs_set;
set role anon;
do $$
declare
  calls text[] := array[
    'api.list_discovery_domains()',
    'api.list_discovery_domains(per_page => 100)',
    'api.browse_catalog()',
    'api.list_discovery_items(include_facets => true)',
    'api.list_discovery_items(page => 50)',
    'api.list_discovery_items(domain => ''domain-000002'', q => ''ab'', include_facets => true)',
    'api.get_discovery_facets()',
    'api.get_discovery_facets(domain => ''domain-000002'')',
    'api.get_domain_trails(''domain-000002'', page => 3)',
    'api.list_domains()',
    'api.get_domain(''domain-000002'')',
    'api.list_related_domains(''domain-000002'')',
    'api.list_discovery_trails()',
    'api.list_discovery_trails(domain => ''domain-000002'', difficulty => ''advanced'')',
    'api.list_discovery_trails(page => 2, per_page => 100)',
    'api.list_discovery_concepts()',
    'api.list_discovery_concepts(trail => ''trail-000033'')',
    'api.list_discovery_concepts(page => 100)',
    'api.list_discovery_sparks(concept => ''concept-001521'')'];
  c text; t0 timestamptz; ms float8[]; i int; s float8[]; r text;
begin
  foreach c in array calls loop
    ms := '{}';
    for i in 1..(current_setting('bench.runs')::int + 2) loop
      t0 := clock_timestamp();
      execute 'select length(' || c || '::text)';
      if i > 2 then ms := ms || extract(epoch from clock_timestamp() - t0) * 1000; end if;
    end loop;
    select array_agg(x order by x) into s from unnest(ms) x;
    raise notice '% | best % | p50 % | p95 %', rpad(c, 88), round(s[1]::numeric, 2), round(s[(cardinality(s) + 1) / 2]::numeric, 2), round(s[ceil(cardinality(s) * 0.95)::int]::numeric, 2);
  end loop;
end $$;
