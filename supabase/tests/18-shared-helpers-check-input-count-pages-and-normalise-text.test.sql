-- The small shared pieces every endpoint leans on, tested on their own: the input checks (22023
-- naming the field, with a detail the API turns into the error envelope), the pagination meta,
-- search's text normalisation and the import's lenient JSON reading.
begin;
select plan(27);

-- acting as the owner: these private helpers are called by the api functions, never by a client

-- The detail of the error a statement raises, as jsonb (null when it raises none).
create function pg_temp.error_detail(statement text) returns jsonb
language plpgsql as $$
declare
  detail text;
begin
  execute statement;
  return null;
exception when others then
  get stacked diagnostics detail = pg_exception_detail;
  return detail::jsonb;
end
$$;

-- ---------------------------------------------------------------------------------------------
-- private.require_range
-- ---------------------------------------------------------------------------------------------

select lives_ok($$ select private.require_range('per_page', 1, 1, 100), private.require_range('per_page', 100, 1, 100) $$,
  'both bounds of a range are inside it');
select throws_ok($$ select private.require_range('per_page', 101, 1, 100) $$, '22023',
  'per_page must be an integer between 1 and 100', 'one above the range is refused, naming the field and the range');
select throws_ok($$ select private.require_range('page', 0, 1, 100000) $$, '22023',
  'page must be an integer between 1 and 100000', 'one below the range is refused');
select throws_ok($$ select private.require_range('limit', null, 1, 50) $$, '22023',
  'limit must be an integer between 1 and 50', 'null is not in any range');
select is(pg_temp.error_detail($$ select private.require_range('per_page', 101, 1, 100) $$),
  '{"field": "per_page", "value": 101, "min": 1, "max": 100}'::jsonb,
  'the detail names the field, the value and both bounds');

-- ---------------------------------------------------------------------------------------------
-- private.require_difficulty
-- ---------------------------------------------------------------------------------------------

select lives_ok($$ select private.require_difficulty('difficulty', l.value) from app.difficulty_levels l
                   union all select private.require_difficulty('difficulty', null) $$,
  'every metadata level passes, and so does null (no filter)');
select throws_ok($$ select private.require_difficulty('difficulty', 'hard') $$, '22023',
  'difficulty must be one of beginner, intermediate, advanced, expert', 'an unknown level is refused');
select throws_ok($$ select private.require_difficulty('level', 'Beginner') $$, '22023',
  'level must be one of beginner, intermediate, advanced, expert', 'levels are matched exactly, as the enumeration spells them');
select is(pg_temp.error_detail($$ select private.require_difficulty('difficulty', 'hard') $$),
  '{"field": "difficulty", "value": "hard"}'::jsonb,
  'the detail names the field and the value');

-- ---------------------------------------------------------------------------------------------
-- private.require_idempotency_key
-- ---------------------------------------------------------------------------------------------

select lives_ok($$ select private.require_idempotency_key(null), private.require_idempotency_key('k'),
                          private.require_idempotency_key(pg_catalog.repeat('k', 200)) $$,
  'no key, one character and 200 characters are valid keys');
select throws_ok($$ select private.require_idempotency_key('') $$, '22023',
  'idempotency_key must be 1 to 200 characters', 'an empty key is refused');
select throws_ok($$ select private.require_idempotency_key(pg_catalog.repeat('k', 201)) $$, '22023',
  'idempotency_key must be 1 to 200 characters', 'a key of 201 characters is refused');

-- ---------------------------------------------------------------------------------------------
-- private.require_learning_time
-- ---------------------------------------------------------------------------------------------

select is(private.require_learning_time('occurred_at', null), pg_catalog.now(), 'no time means now');
select is(private.require_learning_time('occurred_at', pg_catalog.now() + interval '4 minutes'),
  pg_catalog.now() + interval '4 minutes', 'four minutes ahead is clock skew, kept as given');
select throws_ok($$ select private.require_learning_time('occurred_at', pg_catalog.now() + interval '6 minutes') $$, '22023',
  'occurred_at must not be in the future (5 minutes of clock skew allowed)', 'six minutes ahead is the future');
select is(private.require_learning_time('reviewed_at', '2000-01-01 00:00:00+00'), '2000-01-01 00:00:00+00'::timestamptz,
  'the first instant of 2000 is the earliest time accepted');
select throws_ok($$ select private.require_learning_time('reviewed_at', '1999-12-31 23:59:59+00') $$, '22023',
  'reviewed_at must not be before 2000-01-01T00:00:00Z', 'a time before 2000 is refused, naming the field');
select is((select array[d ->> 'field', ((d ->> 'min')::timestamptz = '2000-01-01 00:00:00+00')::text]
            from pg_temp.error_detail($$ select private.require_learning_time('reviewed_at', '1999-12-31 23:59:59+00') $$) d),
  array['reviewed_at', 'true'],
  'the detail names the field and the bound (compared as an instant)');

-- ---------------------------------------------------------------------------------------------
-- private.page_meta
-- ---------------------------------------------------------------------------------------------

select is(private.page_meta(0, 1, 20),
  '{"total": 0, "page": 1, "per_page": 20, "total_pages": 0, "has_next": false, "has_prev": false}'::jsonb,
  'nothing to list: no pages, no next, no previous');
select is(private.page_meta(41, 2, 20),
  '{"total": 41, "page": 2, "per_page": 20, "total_pages": 3, "has_next": true, "has_prev": true}'::jsonb,
  'a partial last page still counts as a page');
select is(private.page_meta(40, 2, 20) -> 'has_next', 'false'::jsonb, 'the last full page has no next');
select is(private.page_meta(5, 9, 20) - 'total' - 'per_page',
  '{"page": 9, "total_pages": 1, "has_next": false, "has_prev": true}'::jsonb,
  'a page past the end has a previous page and no next');

-- ---------------------------------------------------------------------------------------------
-- private.search_normalize
-- ---------------------------------------------------------------------------------------------

select is(private.search_normalize('Crème Brûlée À LA Façon'), 'creme brulee a la facon',
  'search text loses its accents and its capitals');
select is(private.search_normalize(null), '', 'null normalises to the empty text');
select is(private.search_normalize('SQL-99: Joins & Windows'), 'sql-99: joins & windows',
  'everything but letters is kept as written');

-- ---------------------------------------------------------------------------------------------
-- private.try_jsonb
-- ---------------------------------------------------------------------------------------------

select is(array[private.try_jsonb(null), private.try_jsonb('')], array[null, null]::jsonb[],
  'no text is no document');
select is(array[private.try_jsonb('{"path": "sparks[3].slug"}'), private.try_jsonb('slug is missing')],
  array['{"path": "sparks[3].slug"}', '{"detail": "slug is missing"}']::jsonb[],
  'JSON text is read as JSON; any other text is kept as {"detail": text}, never an error');

select * from finish();
rollback;
