-- Search postings always equal a recount from the content rows after any write (insert, update,
-- delete, replica-mode writes, snapshot deletion), and a search answered from the postings
-- answers exactly what the general search (every match listed, counted and ordered) answers.
begin;
select plan(15);

insert into app.snapshots (id, name, version_label, status, published_at)
values ('43000000-0000-0000-0000-000000000000', 'search figures fixture', 'v43', 'archived', now());
insert into app.domains (snapshot_id, id, slug, name, description, is_published)
values ('43000000-0000-0000-0000-000000000000', '43000000-0000-0000-0000-0000000000d1', 'quokka-land', 'Quokka Land', 'All about quokkas', true);
insert into app.trails (snapshot_id, id, domain_id, slug, title, description, difficulty_level)
values ('43000000-0000-0000-0000-000000000000', '43000000-0000-0000-0000-0000000000e1', '43000000-0000-0000-0000-0000000000d1',
        'quokka-trail', 'Quokka Trail', 'Walk with quokkas', 'intermediate');
insert into app.concepts (snapshot_id, id, trail_id, slug, title, description, order_index)
values ('43000000-0000-0000-0000-000000000000', '43000000-0000-0000-0000-0000000000f1', '43000000-0000-0000-0000-0000000000e1',
        'quokka-basics', 'Quokka Basics', 'What a quokka eats', 0);
-- 1300 sparks with "quokka" in the title (more than the rank cap of 1000), titles of different
-- lengths so that scores differ, and 40 with it only in the summary.
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
select '43000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'quokka-' || i,
       case when i % 7 = 0 then 'Quokka' when i % 3 = 0 then 'Quokka Habits ' || i else 'Quokka ' || i || ' Sunny Island Days' end,
       case when i % 5 = 0 then 'A quokka smiles' else 'An island note' end,
       (array['beginner', 'intermediate', 'advanced', 'expert'])[1 + i % 4], 5
from generate_series(1, 1300) i;
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
select '43000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'island-' || i, 'Island ' || i,
       'Where the quokka lives', 'beginner', 5
from generate_series(1, 40) i;

-- The postings recounted from the content rows of the fixture snapshot: sorted document numbers.
create function pg_temp.recount() returns table (lexeme text, type text, difficulty text, docs integer[], title_docs integer[])
language sql as $$
  select l.lexeme, x.type, x.difficulty, array_agg(x.search_doc order by x.search_doc),
         coalesce(array_agg(x.search_doc order by x.search_doc) filter (where 'A' = any(l.weights)), '{}')
  from (select 'spark' as type, s.difficulty, s.search_vector, s.search_doc from app.sparks s where s.snapshot_id = '43000000-0000-0000-0000-000000000000'
        union all select 'concept', null, c.search_vector, c.search_doc from app.concepts c where c.snapshot_id = '43000000-0000-0000-0000-000000000000'
        union all select 'trail', t.difficulty_level, t.search_vector, t.search_doc from app.trails t where t.snapshot_id = '43000000-0000-0000-0000-000000000000'
        union all select 'domain', null, d.search_vector, d.search_doc from app.domains d where d.snapshot_id = '43000000-0000-0000-0000-000000000000') x
  cross join lateral unnest(x.search_vector) l
  group by 1, 2, 3
$$;
create function pg_temp.figures_match() returns boolean language sql as $$
  select not exists (
    (select * from pg_temp.recount()
     except
     select p.lexeme, p.type, p.difficulty, p.docs, p.title_docs from app.search_postings p
      where p.snapshot_id = '43000000-0000-0000-0000-000000000000')
    union all
    (select p.lexeme, p.type, p.difficulty, p.docs, p.title_docs from app.search_postings p
      where p.snapshot_id = '43000000-0000-0000-0000-000000000000'
     except
     select * from pg_temp.recount()))
$$;

select ok(pg_temp.figures_match(), 'after inserts the postings equal a recount');

update app.sparks set title = 'Quokka Renamed', difficulty = 'expert'
 where snapshot_id = '43000000-0000-0000-0000-000000000000' and slug in ('quokka-1', 'quokka-2');
update app.sparks set title = 'Wallaby ' || slug
 where snapshot_id = '43000000-0000-0000-0000-000000000000' and slug in ('quokka-4', 'quokka-8');
update app.domains set name = 'Marsupial Land' where id = '43000000-0000-0000-0000-0000000000d1';
select ok(pg_temp.figures_match(), 'after updates of titles, difficulties and names the figures equal a recount');

delete from app.sparks where snapshot_id = '43000000-0000-0000-0000-000000000000' and slug in ('quokka-10', 'island-3');
select ok(pg_temp.figures_match(), 'after deletes the figures equal a recount');
select is((select count(*)::int from app.search_postings p
            where p.snapshot_id = '43000000-0000-0000-0000-000000000000' and p.docs = '{}'), 0,
  'no posting is left empty');

-- The content writer runs with session_replication_role = replica: the triggers still fire.
set local session_replication_role = replica;
insert into app.sparks (snapshot_id, id, slug, title, summary, difficulty, estimated_mins)
values ('43000000-0000-0000-0000-000000000000', extensions.gen_random_uuid(), 'replica-quokka', 'Replica Quokka', 'Copied', 'beginner', 5);
set local session_replication_role = origin;
select ok(pg_temp.figures_match(), 'rows written in replica mode (the content import) are counted too');

select is(private.search_query_terms(private.search_query('quokka island')),
          array[row(1, 'quokka', false), row(1, 'island', false), row(2, 'quokka', false), row(2, 'island', true)]::private.search_term[],
  'plain words are two clauses: every word, and the last one as a prefix');
select is(private.search_query_terms(private.search_query('quokka or island')),
          array[row(1, 'quokka', false), row(2, 'island', false), row(3, 'quokka', false), row(3, 'island', true)]::private.search_term[],
  'an OR between words separates clauses');
select is(private.search_query_terms(private.search_query('"quokka island"')), null,
  'a phrase takes the general path');
select is(private.search_query_terms(private.search_query('quokka -island')), null,
  'a NOT takes the general path');
select is(private.search_query_terms(private.search_query('the')), null,
  'only stop words: no terms');

-- The postings against the general path, over filters and pages. A prefix term's sets are
-- folded when it has few postings ('12':* : 12, 120-129, 1200-1299, 111 postings) and unnested
-- and sorted when it has many ('1':* : over 400); the test checks that both counts hold.
select ok((select count(*) from private.search_term_postings('43000000-0000-0000-0000-000000000000', row(1, '12', true)::private.search_term))
            between 2 and 256
          and (select count(*) from private.search_term_postings('43000000-0000-0000-0000-000000000000', row(1, '1', true)::private.search_term)) > 256,
  'the fixture has a prefix term of a few postings and one of many');
create temporary table fast_answers as
select q, t, d, pg, api.search_content(q, t, d, pg, 20, '43000000-0000-0000-0000-000000000000') as answer
from unnest(array['quokka', 'Quokkas', 'island', 'quokka habits', 'wallaby', 'platypus', 'quokk', 'quokkas quokka', 'quokka platypus',
                   'quokka island', 'island quokka', 'quokka hab', 'wa', 'sunny island days', 'quokka or island', 'quokka smiles',
                   'quokka 12', 'quokka 1']) q,
     unnest(array[null, 'spark', 'trail', 'domain', 'concept']) t,
     unnest(array[null, 'beginner', 'intermediate']) d,
     unnest(array[1, 2, 50, 51]) pg;
select ok((select (answer -> 'meta' ->> 'total')::int from fast_answers where q = 'quokka' and t is null and d is null and pg = 1) > 1000,
  'the fixture has more title matches than the rank cap');

create or replace function private.search_query_terms(query tsquery) returns private.search_term[]
language plpgsql immutable set search_path = '' as $$ begin return null; end $$;
create temporary table general_answers as
select q, t, d, pg, api.search_content(q, t, d, pg, 20, '43000000-0000-0000-0000-000000000000') as answer
from unnest(array['quokka', 'Quokkas', 'island', 'quokka habits', 'wallaby', 'platypus', 'quokk', 'quokkas quokka', 'quokka platypus',
                   'quokka island', 'island quokka', 'quokka hab', 'wa', 'sunny island days', 'quokka or island', 'quokka smiles',
                   'quokka 12', 'quokka 1']) q,
     unnest(array[null, 'spark', 'trail', 'domain', 'concept']) t,
     unnest(array[null, 'beginner', 'intermediate']) d,
     unnest(array[1, 2, 50, 51]) pg;
select is((select count(*)::int from fast_answers f join general_answers g
             on g.q = f.q and g.t is not distinct from f.t and g.d is not distinct from f.d and g.pg = f.pg
            where g.answer = f.answer), 1080,
  'the postings answer exactly what the general path answers (data, meta, facets)');

select is((select answer -> 'data' -> 0 ->> 'title' from fast_answers where q = 'quokka' and t is null and d is null and pg = 1),
          'Quokka', 'an exact title match ranks first');

delete from app.snapshots where id = '43000000-0000-0000-0000-000000000000';
select is((select count(*)::int from app.search_postings where snapshot_id = '43000000-0000-0000-0000-000000000000'), 0,
  'deleting a snapshot deletes its postings');

select * from finish();
rollback;
