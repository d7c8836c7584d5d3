-- title_word_starts_backfill: hand-written data backfill for 20261126223000_autocomplete_title_word_starts.
-- The content written before app.search_title_word_starts existed gets its word starts, by the
-- SQL the search-index triggers and the import now run (private.search_word_starts_sql).
do $$
begin
  execute private.search_word_starts_sql('spark', 'title', 'app.sparks', 1);
  execute private.search_word_starts_sql('concept', 'title', 'app.concepts', 1);
  execute private.search_word_starts_sql('trail', 'title', 'app.trails', 1);
  execute private.search_word_starts_sql('domain', 'name', 'app.domains', 1);
end
$$;
