-- Parcel search's tuning numbers, each named once. SQL functions of a constant: inlined and folded where they are
-- used, so a name costs nothing at run time.

CREATE FUNCTION search.ranked_in_full() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 5000;
COMMENT ON FUNCTION search.ranked_in_full() IS
  'Matches up to which a relevance search scores and ranks every match (more are paged tier by tier); also the '
  'parcels a rare word''s typo terms may hold together, and the bound of the well-matched tier.';

CREATE FUNCTION search.few_matches() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 25;
COMMENT ON FUNCTION search.few_matches() IS
  'Matches under which a query''s rare words are read again wide (search.wide_typo_terms) to fill a page.';

CREATE FUNCTION search.common_word() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 1000;
COMMENT ON FUNCTION search.common_word() IS
  'Parcels from which a word is common: alone it is read as typed (no typos), and as the last word it gets no '
  'completions.';

CREATE FUNCTION search.typo_terms() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 16;
COMMENT ON FUNCTION search.typo_terms() IS
  'Typo terms a word stands for (nearest first); a word of 6+ letters with fewer terms 1 edit away also reads those 2 edits away.';

CREATE FUNCTION search.rare_typo_terms() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 64;
COMMENT ON FUNCTION search.rare_typo_terms() IS
  'Typo terms a word stands for while they hold at most search.ranked_in_full() parcels together.';

CREATE FUNCTION search.wide_typo_terms() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 128;
COMMENT ON FUNCTION search.wide_typo_terms() IS 'Typo terms a rare word stands for when read wide (search.few_matches).';

CREATE FUNCTION search.completions() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 5;
COMMENT ON FUNCTION search.completions() IS 'Completions the last word of a query stands for when it is rare.';

CREATE FUNCTION search.query_words_max() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 12;
COMMENT ON FUNCTION search.query_words_max() IS 'Distinct words of a query that are read; the rest are ignored.';

CREATE FUNCTION search.near_radius_max_m() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 50000;
COMMENT ON FUNCTION search.near_radius_max_m() IS 'The largest near radius in metres (the HTTP schema states the same bound).';

CREATE FUNCTION search.facet_values_max() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 100;
COMMENT ON FUNCTION search.facet_values_max() IS 'Values a facet lists at most (the most frequent).';

CREATE FUNCTION search.autocomplete_completions() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 50;
COMMENT ON FUNCTION search.autocomplete_completions() IS 'Completions autocomplete reads for the last word of a query.';

CREATE FUNCTION search.autocomplete_limit_max() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 20;
COMMENT ON FUNCTION search.autocomplete_limit_max() IS 'The most suggestions autocomplete gives (the HTTP schema states the same bound).';
