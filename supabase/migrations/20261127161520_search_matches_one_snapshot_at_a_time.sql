-- search_matches_one_snapshot_at_a_time: private.search_matches searches its snapshots one at a
-- time with `snapshot_id = one`. The generic plan of `snapshot_id = any(list)` left the snapshot
-- out of the GIN index condition and visited the matches of every snapshot.

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION private.search_matches(snapshot uuid, query tsquery, normalized text, fuzzy boolean, kind text DEFAULT NULL::text, level text DEFAULT NULL::text)
 RETURNS TABLE(type text, snapshot_id uuid, id uuid, difficulty text, title_hit boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET "pg_trgm.word_similarity_threshold" TO '0.4'
AS $function$
declare
  -- The spec's "no current snapshot: no filter" as a list, searched one snapshot at a time so
  -- that every plan (generic ones included) gives the snapshot to the index. With
  -- `snapshot is null or …` no plan can; with `= any(list)` the generic plan filtered heap rows
  -- instead, visiting the matches of every snapshot (at 500,000 sparks with one release and its
  -- next, 43,580 heap pages instead of 21,874 for "principles tools").
  snapshots uuid[] := case when search_matches.snapshot is null then array(select x.id from app.snapshots x)
                           else array[search_matches.snapshot] end;
  one uuid;
begin
  foreach one in array snapshots loop
    if not search_matches.fuzzy then
      return query
        select 'spark'::text, s.snapshot_id, s.id, s.difficulty,
               pg_catalog.ts_filter(s.search_vector, '{a}') @@ search_matches.query
          from app.sparks s
         where coalesce(search_matches.kind, 'spark') = 'spark'
           and s.snapshot_id = one
           and s.search_vector @@ search_matches.query
           and (search_matches.level is null or s.difficulty = search_matches.level)
        union all
        select 'concept', c.snapshot_id, c.id, null,
               pg_catalog.ts_filter(c.search_vector, '{a}') @@ search_matches.query
          from app.concepts c
         where coalesce(search_matches.kind, 'concept') = 'concept' and search_matches.level is null
           and c.snapshot_id = one
           and c.search_vector @@ search_matches.query
        union all
        select 'trail', t.snapshot_id, t.id, t.difficulty_level,
               pg_catalog.ts_filter(t.search_vector, '{a}') @@ search_matches.query
          from app.trails t
         where coalesce(search_matches.kind, 'trail') = 'trail'
           and t.snapshot_id = one
           and t.search_vector @@ search_matches.query
           and (search_matches.level is null or t.difficulty_level = search_matches.level)
        union all
        select 'domain', d.snapshot_id, d.id, null,
               pg_catalog.ts_filter(d.search_vector, '{a}') @@ search_matches.query
          from app.domains d
         where coalesce(search_matches.kind, 'domain') = 'domain' and search_matches.level is null
           and d.snapshot_id = one
           and d.search_vector @@ search_matches.query;
    else
      return query
        select 'spark'::text, s.snapshot_id, s.id, s.difficulty, true
          from app.sparks s
         where coalesce(search_matches.kind, 'spark') = 'spark'
           and s.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) s.search_title
           and (search_matches.level is null or s.difficulty = search_matches.level)
        union all
        select 'concept', c.snapshot_id, c.id, null, true
          from app.concepts c
         where coalesce(search_matches.kind, 'concept') = 'concept' and search_matches.level is null
           and c.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) c.search_title
        union all
        select 'trail', t.snapshot_id, t.id, t.difficulty_level, true
          from app.trails t
         where coalesce(search_matches.kind, 'trail') = 'trail'
           and t.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) t.search_title
           and (search_matches.level is null or t.difficulty_level = search_matches.level)
        union all
        select 'domain', d.snapshot_id, d.id, null, true
          from app.domains d
         where coalesce(search_matches.kind, 'domain') = 'domain' and search_matches.level is null
           and d.snapshot_id = one
           and search_matches.normalized operator(extensions.<%) d.search_title;
    end if;
  end loop;
end
$function$
;
