-- Metadata enumerations are defined in the database and served through api functions.
begin;
select plan(6);

select results_eq(
  $$ select value, label, sort_order from app.difficulty_levels order by sort_order $$,
  $$ values ('beginner', 'Beginner', 1), ('intermediate', 'Intermediate', 2), ('advanced', 'Advanced', 3), ('expert', 'Expert', 4) $$,
  'difficulty levels are the four levels in order');

select results_eq(
  $$ select value from app.journey_statuses order by sort_order $$,
  $$ values ('in_progress'), ('completed'), ('paused') $$,
  'journey statuses are in_progress, completed, paused');

select results_eq(
  $$ select value from app.learning_verbs order by sort_order $$,
  $$ values ('started'), ('completed'), ('mastered'), ('bookmarked') $$,
  'learning verbs are started, completed, mastered, bookmarked');

-- acting as anon
select tests.clear_authentication();
select is(
  jsonb_array_length(api.get_metadata() -> 'difficulty_levels'), 4,
  'anon reads the metadata through api.get_metadata');
select is(
  api.list_difficulty_levels() -> 'data' -> 3,
  '{"value":"expert","label":"Expert","order":4}'::jsonb,
  'api.list_difficulty_levels returns value, label and order');
select throws_ok(
  $$ insert into app.learning_verbs values ('hacked', 'Hacked', 99) $$,
  '42501', null,
  'anon cannot write an enumeration');
reset role;

select * from finish();
rollback;
