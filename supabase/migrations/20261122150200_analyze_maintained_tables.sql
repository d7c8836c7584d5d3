-- Statistics for the tables the last migrations created and backfilled.
--
-- A migration that creates and fills a table leaves it without statistics until autovacuum
-- gets to it; until then the planner guesses, and for app.spark_graph_nodes it guessed badly:
-- on a copy of the benchmark dataset, depth-10 graph reads ran at 32 req/s right after
-- `db:migrate` and at 995 req/s after this ANALYZE (same machine, same request). ANALYZE is
-- transactional and reads a sample, so it is cheap here and safe on a live database.
analyze app.spark_graph_nodes;
analyze app.trail_spark_positions;
analyze app.spark_rounds;
analyze app.search_lexeme_counts;
analyze app.search_title_postings;
