-- A comment on every function and table of app, private and api that had none: 26 private
-- functions (input checks, page meta, the import's staging steps, the discovery builders, two
-- auth helpers) and 20 tables (snapshots, content, rollups, metadata, enrollments, events), so
-- that \df+, \dt+ and obj_description describe the whole schema (a pgTAP test keeps it so). No
-- behaviour changes.

comment on function private.begin_content_staging() is 'Creates or empties the transaction''s staging table pg_temp.content_bundle_items, which the content CLI fills with COPY and private.import_content_bundle from a jsonb document.';
comment on function private.child_previews(pg_catalog.text,pg_catalog.uuid[],pg_catalog.uuid[],integer) is 'The first preview_limit trails of each domain, or concepts of each trail (order_index, title, id), as {id, slug, title, estimated_mins}: one row per parent with children, none when preview_limit is null. The rule behind the trails and concepts previews.';
comment on function private.concept_figures(pg_catalog.uuid[],pg_catalog.uuid[]) is 'spark_count and estimated_mins (from app.concept_rollups) of the concepts whose id is in concept_ids and whose snapshot is in snapshots (not parallel arrays: callers pass the distinct snapshots).';
comment on function private.concept_items(app.concepts[],integer) is 'Discovery items of a page of concepts, in the given order, with their figures; sparks previews only when spark_limit is not null.';
comment on function private.discovery_allocation(bigint,bigint[],integer[]) is '/discovery/all: how many domains, trails and concepts the first `budget` items hold, by quota, the slots of exhausted types going to the others.';
comment on function private.discovery_facets(pg_catalog.uuid,pg_catalog.uuid,pg_catalog.uuid,pg_catalog.text,pg_catalog.text,boolean[]) is 'Facets over every matching discovery item (types, domains, tracks, difficulties), not just a page; unfiltered facets come from app.snapshot_rollups.';
comment on function private.discovery_items_json(pg_catalog.text,pg_catalog.uuid[],pg_catalog.uuid[],integer,pg_catalog.text) is 'A page of discovery items as JSON texts joined by '', '' (null for an empty page): the stored texts (built by their builder where none is stored), with preview_limit child previews (none, and no previews key, when it is null) and "type" first when type is given.';
comment on function private.discovery_preview_key(pg_catalog.text) is 'The key of a discovery item''s child previews: trails for a domain, concepts for a trail, sparks for a concept.';
comment on function private.discovery_quotas(integer,boolean[]) is '/discovery/all: the slots of a page for domains, trails and concepts (weights 10, 25, 65 over the included types, rounded half up; the last included type takes the rest).';
comment on function private.domain_items(app.domains[],integer) is 'Discovery items of a page of domains, in the given order, with their figures; trails previews only when trail_limit is not null.';
comment on function private.domain_summary(app.domains) is 'The seven fields every Domain carries.';
comment on function private.find_domain(pg_catalog.uuid,pg_catalog.text) is 'A domain by slug or id in the selected snapshot; PT404 when none matches.';
comment on function private.find_entity_id(pg_catalog.text,pg_catalog.uuid,pg_catalog.text,pg_catalog.text) is 'The id of a domain, trail or concept by slug in the selected snapshot (null: any); PT404 naming the parameter when none matches.';
comment on function private.find_prerequisite_cycle() is 'One prerequisite cycle among the staged edges (pg_temp.content_bundle_edges: spark or concept ids) as its ids in edge order, closed (the first id again at the end), or null when there is none. Deletes from that table every edge on no cycle.';
comment on function private.list_content_imports(integer) is 'The newest import attempts, newest first, for the content CLI''s list.';
comment on function private.list_content_snapshots() is 'Every snapshot with all its entity counts, newest first, for the content CLI''s list.';
comment on function private.page_meta(bigint,integer,integer) is 'The spec''s six pagination fields (total, page, per_page, total_pages, has_next, has_prev) of one page.';
comment on function private.require_difficulty(pg_catalog.text,pg_catalog.text) is 'Raises 22023 naming the field unless a difficulty is null or one of the metadata levels (app.difficulty_levels).';
comment on function private.require_range(pg_catalog.text,integer,integer,integer) is 'Raises 22023 naming the field, with {field, value, min, max} as detail, unless an integer parameter is within [low, high] (null is not).';
comment on function private.token_claims(app.users,pg_catalog.uuid) is '{sub, email, session_id} and private.role_claims of a user row and session: what the API signs into an access token. Its callers pass the freshly read profile, so every token carries current claims.';
comment on function private.trail_figures(pg_catalog.uuid[],pg_catalog.uuid[]) is 'concept_count, spark_count and estimated_mins of some trails, each spark counted once however many of the trail''s concepts place it.';
comment on function private.trail_items(app.trails[],integer) is 'Discovery items of a page of trails, in the given order, with their figures; concepts previews only when concept_limit is not null.';
comment on function private.try_jsonb(pg_catalog.text) is 'Text as jsonb, {"detail": text} when it is not JSON, null when empty: how an import failure''s detail is kept.';
comment on function private.user_json(app.users) is 'A user as the auth endpoints show one: {id, email, display_name, provider}.';
comment on function private.validate_staged_content(pg_catalog.text,pg_catalog.text) is 'Checks the staged bundle set-based (fields, slugs, references, ranges, link types, prerequisite cycles); returns every problem as {path, message[, cycle]}, empty when valid.';
comment on function private.write_staged_content(pg_catalog.uuid) is 'Writes the validated staged bundle into one snapshot, one INSERT ... SELECT per table; returns the row counts per table.';
comment on table app.beacons is 'Beacons of a snapshot: milestones a learner can aim for inside a trail, optionally pinned to the concept that unlocks them.';
comment on table app.categories is 'Domain categories of a snapshot: which domains are related (GET /discovery/domains/{slug}/related).';
comment on table app.concept_links is 'Links between concepts of a snapshot (prerequisite, related, extends), with a weight.';
comment on table app.concept_rollups is 'Per snapshot and concept: spark count and estimated minutes, computed once at import.';
comment on table app.concept_sparks is 'Which sparks a concept places, and where (order_index); a spark may be placed by several concepts.';
comment on table app.concepts is 'Concepts of a snapshot: a trail''s steps, in order_index order, with generated search columns.';
comment on table app.content_imports is 'One row per content import attempt, succeeded, failed or running: counts, timings and, for a failure, its error ({code, message, detail}; validation problems listed by path).';
comment on table app.difficulty_levels is 'The spec''s difficulty levels (value, label, sort order), as GET /metadata/difficulty-levels lists them.';
comment on table app.domain_rollups is 'Per snapshot and domain: trail, concept and spark counts and estimated minutes, computed once at import (private.refresh_content_rollups).';
comment on table app.domains is 'Domains of a snapshot (the top of domain > trail > concept > spark), with their generated search columns.';
comment on table app.enrollments is 'A learner''s enrollment in a trail (one per user and trail), with the snapshot current when they enrolled. Rows are the caller''s own under row-level security.';
comment on table app.journey_statuses is 'The spec''s journey statuses (value, label, sort order), as GET /metadata lists them.';
comment on table app.learning_events is 'What a learner did with a spark (verb, when), the record progress is derived from; idempotent by key, voided rather than deleted. Rows are the caller''s own under row-level security.';
comment on table app.learning_verbs is 'The learning event verbs (value, label, sort order), as GET /metadata lists them.';
comment on table app.snapshot_rollups is 'Per snapshot: the unfiltered discovery facets and the entity counts, computed once at import.';
comment on table app.snapshots is 'Versions of the content: draft, published (at most one: the current snapshot) or archived. Content rows belong to one snapshot; by convention a published snapshot''s content is not written again (the rollups are computed once, at import).';
comment on table app.spark_links is 'Links between sparks of a snapshot: source comes before target (prerequisite), or related, or extends, with a weight. The prerequisite graph the graph and path endpoints walk.';
comment on table app.sparks is 'Sparks of a snapshot: the smallest unit of learning, with difficulty, estimated minutes and generated search columns.';
comment on table app.trail_rollups is 'Per snapshot and trail: concept and spark counts (each spark once) and estimated minutes, computed once at import.';
comment on table app.trails is 'Trails of a snapshot: a domain''s learning tracks, in order_index order, with a difficulty level and generated search columns.';
