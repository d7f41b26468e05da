-- Parcel search, the query's words: each word's vocabulary terms (itself, its typos, the last word's completions)
-- with their qualities, the relevance score, and what the vocabulary alone says about a total.

-- A query's words, read as the parcels' terms are written (core.search_word_rules): normalized, a word no parcel holds
-- that is one edit from a rule's word read as that rule (TRUTS -> TR); a run of name
-- particles joined to the word after it when the vocabulary holds the joined form (MC DONALD -> MCDONALD, which
-- every MC DONALD and MCDONALD parcel holds), else kept apart (JOHN O SMITH keeps O and SMITH); optional words (LLC,
-- TR, AND, ...) left out unless nothing else is left; each word once, in order.
CREATE FUNCTION search.query_words(p_query text) RETURNS text[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_words text[] := array_remove(string_to_array(core.normalize_text(p_query), ' '), '');
  v_out text[] := '{}';
  v_run text[] := '{}';
  v_word text;
BEGIN
  FOREACH v_word IN ARRAY v_words LOOP
    -- a misspelt rule word (TRUTS, RAOD, STREEET), which no parcel holds, reads as the rule says (TR, RD, ST)
    IF length(v_word) >= 4 AND v_word !~ '^[0-9]' AND NOT EXISTS (SELECT 1 FROM core.parcel_terms t WHERE t.term = v_word) THEN
      SELECT coalesce(r.reads_as, v_word) INTO v_word
        FROM (SELECT v_word AS w) x
        LEFT JOIN LATERAL (
          SELECT r.reads_as FROM core.search_word_rules r
           WHERE r.kind = 'same' AND length(r.written) >= 4 AND r.written !~ ' '
             AND (levenshtein_less_equal(x.w, r.written, 1) <= 1 OR r.written = ANY (search.adjacent_swaps(x.w)))
           ORDER BY levenshtein(x.w, r.written), r.written LIMIT 1) r ON true;
      CONTINUE WHEN v_word = '';
    END IF;
    IF v_word = ANY (core.search_particles()) THEN
      v_run := v_run || v_word;
      CONTINUE;
    END IF;
    IF cardinality(v_run) > 0 AND v_word !~ '^[0-9]'
       AND EXISTS (SELECT 1 FROM core.parcel_terms t WHERE t.term = array_to_string(v_run, '') || v_word) THEN
      v_out := v_out || (array_to_string(v_run, '') || v_word);
    ELSE
      v_out := v_out || v_run || v_word;
    END IF;
    v_run := '{}';
  END LOOP;
  v_out := v_out || v_run;
  IF EXISTS (SELECT 1 FROM unnest(v_out) AS w WHERE w <> ALL (core.search_optional_words())) THEN
    v_out := ARRAY(SELECT w FROM unnest(v_out) AS w WHERE w <> ALL (core.search_optional_words()));
  END IF;
  RETURN ARRAY(SELECT w FROM unnest(v_out) WITH ORDINALITY AS u(w, i) GROUP BY w ORDER BY min(i)
                LIMIT search.query_words_max());
END $$;
COMMENT ON FUNCTION search.query_words(text) IS
  'The words parcel search reads in a query, in order. Example: search.query_words(''John Mc Donald Trust'') = '
  '{JOHN,MCDONALD} when some parcel holds MCDONALD.';

-- The texts an owner or address equal to which ranks first among parcels of the same score: the query as typed, with
-- its runs of name particles joined (MC DONALD JOHN -> MCDONALD JOHN), and as best read (each word replaced by its
-- best term: SIMTH JOHN -> SMITH JOHN), each in every word order when it has 2 or 3 words (ROSA LOPEZ -> LOPEZ ROSA),
-- all normalized.
CREATE FUNCTION search.exact_texts(p_query text, p_words api.query_word[]) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_typed text[] := array_remove(string_to_array(core.normalize_text(p_query), ' '), '');
  v_joined text[] := search.particles_joined(v_typed);
  v_best text[] := ARRAY(SELECT coalesce((SELECT qw.terms[1] FROM unnest(p_words) AS qw WHERE qw.word = w.w LIMIT 1), w.w)
                           FROM unnest(v_joined) WITH ORDINALITY AS w(w, i) ORDER BY w.i);
BEGIN
  RETURN ARRAY(
    SELECT DISTINCT array_to_string(ARRAY(SELECT v.words[u.i] FROM unnest(o.pos) WITH ORDINALITY AS u(i, n) ORDER BY u.n), ' ')
      FROM (VALUES (v_typed), (v_joined), (v_best)) AS v(words), search.word_orders(cardinality(v.words)) AS o(pos));
END $$;
COMMENT ON FUNCTION search.exact_texts(text, api.query_word[]) IS
  'The normalized texts an owner or address must equal to rank first among equals for a query and its reading. '
  'Example: SELECT search.exact_texts(''Rosa Lopez'', api.parcel_query_words(''Rosa Lopez''));';

-- Words with each run of name particles and the word after it joined, as core.search_terms also indexes them: a
-- particle is joined to what follows when its run of particles ends in a word that is not a number.
CREATE FUNCTION search.particles_joined(p_words text[]) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
AS $$
DECLARE
  v_particles text := array_to_string(core.search_particles(), '|');
BEGIN
  RETURN string_to_array(regexp_replace(array_to_string(p_words, ' '),
                                        format('\m(%1$s) (?=((%1$s) )*(?!(%1$s)( |$))[^0-9 ])', v_particles), '\1', 'g'), ' ');
END $$;
COMMENT ON FUNCTION search.particles_joined(text[]) IS
  'p_words with each run of name particles and the word after it joined into one word (as core.join_particles '
  'forms them). Example: search.particles_joined(''{MC,DONALD,JOHN}'') = {MCDONALD,JOHN}.';

-- The orders exact texts are tried in: every permutation of 2 or 3 words, else only the order given.
CREATE FUNCTION search.word_orders(p_n integer) RETURNS SETOF integer[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  WITH RECURSIVE orders(pos) AS (
    SELECT ARRAY[]::int[]
    UNION ALL
    SELECT o.pos || i FROM orders o, generate_series(1, p_n) AS i
     WHERE p_n BETWEEN 2 AND 3 AND i <> ALL (o.pos) AND cardinality(o.pos) < p_n)
  SELECT pos FROM orders WHERE p_n BETWEEN 2 AND 3 AND cardinality(pos) = p_n
  UNION ALL
  SELECT ARRAY(SELECT generate_series(1, p_n)) WHERE p_n NOT BETWEEN 2 AND 3
$$;
COMMENT ON FUNCTION search.word_orders(integer) IS
  'Orders of p_n words as arrays of positions: all of them for 2 or 3 words, else only 1..p_n. '
  'Example: SELECT * FROM search.word_orders(2);';

-- One word's reading: the word itself, its typos and (for the last word) its completions, each with its quality.
CREATE FUNCTION search.parcel_word_terms(p_word text, p_words text[], p_wide boolean,
                                      OUT reading api.query_word, OUT held bigint, OUT cut boolean)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  -- one plan per statement, made once per session: planning them for each word took longer than running them
  SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_df integer;
  v_fuzzy boolean;
  v_edits integer := CASE WHEN length(p_word) >= 6 THEN 2 ELSE 1 END;
  v_terms text[];
  v_qualities float8[];
  -- the word with two neighbouring letters swapped, each way it can be: a term one of these is within e - 1 edits of
  -- is within e edits of the word when a transposition counts as one (optimal string alignment)
  v_swaps text[] := search.adjacent_swaps(p_word);
BEGIN
  SELECT t.parcels INTO v_df FROM core.parcel_terms t WHERE t.term = p_word;
  -- typos: for every word of a longer query, and for a lone word that is rare or unknown (a lone common word is
  -- meant as written, and its exact total then comes from the vocabulary); words of 3 to 20 characters, never
  -- numbers (a longer word is no name's typo, and costs thousands of lookups)
  v_fuzzy := (coalesce(v_df, 0) < search.common_word() OR cardinality(p_words) > 1) AND length(p_word) BETWEEN 3 AND 20
             AND p_word !~ '^[0-9]+$';
  SELECT coalesce(array_agg(m.term ORDER BY m.q DESC, m.parcels DESC, m.term), '{}'),
         coalesce(array_agg(m.q ORDER BY m.q DESC, m.parcels DESC, m.term), '{}'), coalesce(sum(m.parcels), 0),
         coalesce(bool_or(m.cut), false)
    INTO v_terms, v_qualities, held, cut
    -- (cut: the caps left out typos within the word's edits, so that a wide reading would differ; a window, as a
    -- typo that is also a completion keeps one of its two rows)
    FROM (SELECT DISTINCT ON (x.term) x.term, x.parcels, x.q, bool_or(x.cut) OVER () AS cut FROM (
            SELECT t.term, t.parcels, 1.0::float8 AS q, false AS cut FROM core.parcel_terms t WHERE t.term = p_word
            UNION ALL
            -- typos (when v_fuzzy), nearest first, then most common: search.typo_terms(), or up to
            -- search.rare_typo_terms() while together they hold at most search.ranked_in_full() parcels (a rare
            -- word's whole neighbourhood is cheap to search and ranks fairly; a common word's is not). Every term
            -- one edit away; for words of 6+ letters with fewer than search.typo_terms() of those, every term two
            -- edits away too. Wide (p_wide): the search.wide_typo_terms() closest terms within the word's edits.
            -- Candidates come from the deletion index (core.parcel_term_deletes: terms sharing a deletion of the
            -- word; a transposition deletes one of the swapped letters on each side), checked by search.typo_edits.
            (WITH near AS MATERIALIZED (
               SELECT x.term, x.edits
                 FROM (SELECT l.term,
                              -- a swap saves an edit only where plain edits are 2 (the term is a swap of the
                              -- word) or e + 1 (a swap and e - 1 other edits)
                              CASE WHEN l.lev = 2 THEN CASE WHEN l.term = ANY (v_swaps) THEN 1 ELSE 2 END
                                   WHEN l.lev = v_edits + 1 AND v_edits > 1 AND abs(length(l.term) - length(p_word)) < v_edits
                                   THEN least(l.lev, 1 + (SELECT min(levenshtein_less_equal(w, l.term, v_edits - 1))
                                                            FROM unnest(v_swaps) AS w))
                                   ELSE l.lev END AS edits
                         FROM (SELECT d.term, levenshtein_less_equal(p_word, d.term, v_edits + 1) AS lev
                                 FROM core.parcel_term_deletes d
                                WHERE v_fuzzy AND d.deletes && core.term_deletes(p_word, v_edits)
                                  AND abs(length(d.term) - length(p_word)) <= v_edits) l) x
                -- a word of the query stands only for itself: were MARIA a typo of GARCIA, GARCIA MARIA would
                -- find every MARIA
                WHERE x.edits <= v_edits AND x.term <> ALL (p_words))
             SELECT k.term, k.parcels, k.q, count(*) OVER () < (SELECT count(*) FROM near) AS cut FROM (
             SELECT z.term, z.parcels, z.q FROM (
               SELECT y.term, t.parcels, 1 - y.edits::float8 / greatest(length(p_word), length(y.term)) AS q,
                      row_number() OVER w AS n, sum(t.parcels) OVER w AS held
                 -- (the counts are read only for the typos the edits allow)
                 FROM near y JOIN core.parcel_terms t ON t.term = y.term
                WHERE y.edits = 1 OR (y.edits = 2 AND (p_wide OR (SELECT count(*) FROM near WHERE near.edits = 1) < search.typo_terms()))
               -- (wide: the best matches first, as they rank: a longer term of the same edits is the closer)
               WINDOW w AS (ORDER BY CASE WHEN p_wide THEN y.edits::float8 / greatest(length(p_word), length(y.term))
                                          ELSE y.edits END, t.parcels DESC, y.term)) z
              WHERE z.n <= search.typo_terms() OR (z.n <= search.rare_typo_terms() AND z.held <= search.ranked_in_full())
                 OR (p_wide AND z.n <= search.wide_typo_terms())) k)
            UNION ALL
            -- the last word may be unfinished: complete it from the vocabulary (unless it is a common word as typed)
            (SELECT t.term, t.parcels, length(p_word)::float8 / length(t.term), false
               FROM core.parcel_terms t
              WHERE p_word = p_words[cardinality(p_words)] AND coalesce(v_df, 0) < search.common_word() AND length(p_word) >= 3
                AND p_word !~ '^[0-9]+$'
                -- the terms that start with the word: a range of the primary key (every character a term holds
                -- sorts before '~'), not LIKE, which a plan made once for every word reads from a trigram index
                AND t.term > p_word AND t.term < p_word || '~' AND left(t.term, length(p_word)) = p_word
                AND t.term <> ALL (p_words)
              ORDER BY t.parcels DESC, t.term LIMIT search.completions())) x
          ORDER BY x.term, x.q DESC) m;
  reading := ROW(p_word, v_terms, v_qualities);
END $$;
COMMENT ON FUNCTION search.parcel_word_terms(text, text[], boolean) IS
  'Helper of api.parcel_query_words: the reading of one word p_word of the query''s words p_words (see there), '
  'capped (p_wide false) or wide, the number of parcels its terms are held by, summed, and whether the caps cut '
  'typos within its edits (if not, the wide reading is the same). '
  'Example: SELECT * FROM search.parcel_word_terms(''DAIRILEY'', ''{MARGARET,DAIRILEY}'', true);';

-- Edits count as in Lucene's fuzzy queries: an insertion, a deletion, a substitution, or a swap of two neighbouring
-- letters (SIMTH -> SMITH, OKA -> OAK) each count one (optimal string alignment, with one swap per word). A term
-- within e - 1 edits of one of the word's swaps is within e edits of the word.
CREATE FUNCTION search.adjacent_swaps(p_word text) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
AS $$
DECLARE
  v_out text[] := '{}';
BEGIN
  FOR i IN 1 .. length(p_word) - 1 LOOP
    IF substr(p_word, i, 1) <> substr(p_word, i + 1, 1) THEN
      v_out := v_out || (left(p_word, i - 1) || substr(p_word, i + 1, 1) || substr(p_word, i, 1) || substr(p_word, i + 2));
    END IF;
  END LOOP;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION search.adjacent_swaps(text) IS
  'Every string made by swapping two different neighbouring letters of p_word. Example: search.adjacent_swaps(''OKA'') = {KOA,OAK}.';

-- The query's reading for search, count and facets: the one given by a caller that read it once, else read here.
CREATE FUNCTION search.parcel_words_of(p_query text, p_words api.query_word[]) RETURNS api.query_word[]
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN CASE WHEN p_query IS NOT NULL THEN coalesce(p_words, api.parcel_query_words(p_query)) END;
COMMENT ON FUNCTION search.parcel_words_of(text, api.query_word[]) IS
  'Helper of search_parcels / count_parcels / facet_parcels: p_words when given, else api.parcel_query_words(p_query); NULL without a query.';

-- The relevance score of a parcel for query words: the mean over words of the best quality among the word's terms
-- the parcel holds (1 when it holds every word exactly).
CREATE FUNCTION search.parcel_query_score_sql(p_words api.query_word[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '((' || (SELECT string_agg(format(
    'coalesce((SELECT max(x.q) FROM unnest(%L::text[], %L::float8[]) AS x(t, q) WHERE x.t = ANY (p.search_terms)), 0)',
    w.terms, w.qualities), ' + ') FROM unnest(p_words) AS w) || ') / ' || cardinality(p_words) || ')';
COMMENT ON FUNCTION search.parcel_query_score_sql(api.query_word[]) IS
  'Helper of search_parcels: the SQL expression (over core.parcels p) of a parcel''s relevance score for query words.';

-- The exact total of a search read straight from the vocabulary: a query of one word that stands only for itself
-- and no other filter matches exactly the parcels holding that word. NULL when the vocabulary does not decide.
CREATE FUNCTION search.parcel_total_from_vocabulary(f search.parcel_filter, p_words api.query_word[]) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  IF cardinality(p_words) = 1 AND cardinality(p_words[1].terms) = 1
     AND num_nonnulls(f.county, f.use_code, f.dor_use_code, f.city, f.zip, f.just_value_min, f.just_value_max,
                      f.assessed_min, f.assessed_max, f.sale_after, f.sale_before, f.sale_price_min, f.sale_price_max,
                      f.near_lat, f.bbox, f.point_lng, f.owner_changed_since, f.just_value_change_min,
                      f.just_value_change_max) = 0 THEN
    RETURN coalesce((SELECT t.parcels FROM core.parcel_terms t WHERE t.term = p_words[1].terms[1]), 0);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION search.parcel_total_from_vocabulary(search.parcel_filter, api.query_word[]) IS
  'Helper of search_parcels / count_parcels: the exact number of matches when the query is one word standing only '
  'for itself and nothing else is filtered (that word''s count in core.parcel_terms); NULL otherwise.';

-- The rest of a large result starts with the parcels whose every word is matched at least as well as a quality level:
-- the lowest at which the vocabulary bounds them to search.ranked_in_full() (so they can be ranked by score), a level below 1 (every
-- word exact is the tier before). A common word beside a misspelt rare one then shows the rare word's closest
-- spellings first, not the most common ones by id.
CREATE FUNCTION search.parcel_well_level(p_words api.query_word[]) RETURNS float8
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (WITH wt AS (SELECT qw.word, x.q, coalesce(t.parcels, 0) AS df
                FROM unnest(p_words) AS qw CROSS JOIN unnest(qw.terms, qw.qualities) AS x(term, q)
                LEFT JOIN core.parcel_terms t ON t.term = x.term)
  SELECT l.lv
    FROM (SELECT DISTINCT wt.q AS lv FROM wt WHERE wt.q < 1) l
   WHERE (SELECT min(b.f) FROM (SELECT coalesce(sum(wt.df) FILTER (WHERE wt.q >= l.lv), 0) AS f FROM wt GROUP BY wt.word) b)
         BETWEEN 1 AND search.ranked_in_full()
   ORDER BY l.lv LIMIT 1);
END $$;
COMMENT ON FUNCTION search.parcel_well_level(api.query_word[]) IS
  'Helper of search_parcels: the lowest match quality below 1 at which the vocabulary bounds the parcels matching every '
  'word at least that well to search.ranked_in_full() (at least 1); NULL when there is none, as when every word stands only for itself.';

-- Autocomplete's reading of a query's words (search.query_words): the words before the last as search reads them
-- (typos included), the last as a prefix: itself when it is a term, and its most common completions (for 2
-- characters or more).
CREATE FUNCTION search.autocomplete_words_reading(p_words text[]) RETURNS api.query_word[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_last text := p_words[cardinality(p_words)];
  v_out api.query_word[] := '{}';
  v_reading api.query_word;
BEGIN
  FOR i IN 1 .. cardinality(p_words) - 1 LOOP
    v_reading := (search.parcel_word_terms(p_words[i], p_words, false)).reading;
    IF cardinality(v_reading.terms) > 0 THEN v_out := v_out || v_reading; END IF;
  END LOOP;
  -- a last word of 1 to 3 characters has its reading stored (core.typeahead_readings, kept equal to
  -- search.autocomplete_prefix_reading by the triggers on core.parcels; a word no term starts with has none)
  IF length(v_last) <= 3 THEN
    v_reading := coalesce((SELECT ROW(tr.word, tr.terms, tr.qualities)::api.query_word
                             FROM core.typeahead_readings tr WHERE tr.word = v_last),
                          ROW(v_last, '{}', '{}')::api.query_word);
  ELSE
    v_reading := search.autocomplete_prefix_reading(v_last);  -- (sql/search/autocomplete.sql)
  END IF;
  -- a last word of one character (a letter or digit just typed) narrows nothing yet unless it is all there is
  IF cardinality(v_reading.terms) > 0 AND (length(v_last) > 1 OR cardinality(v_out) = 0) THEN
    v_out := v_out || v_reading;
  END IF;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION search.autocomplete_words_reading(text[]) IS
  'How autocomplete reads a query''s words (search.query_words): every word but the last as parcel search reads it, '
  'the last as a prefix (the word itself, quality 1, and, from 2 characters, its most common completions, quality = '
  'covered share, read from core.typeahead_readings for 1 to 3 characters; a last word of one character after '
  'others is left out). Example: SELECT * FROM unnest(search.autocomplete_words_reading(ARRAY[''SMITH'', ''JO'']));';

CREATE FUNCTION search.autocomplete_reading(p_query text) RETURNS api.query_word[]
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN search.autocomplete_words_reading(search.query_words(p_query));
COMMENT ON FUNCTION search.autocomplete_reading(text) IS
  'How autocomplete reads a query: search.autocomplete_words_reading of its words. '
  'Example: SELECT * FROM unnest(search.autocomplete_reading(''smith jo''));';

-- How well a query's words match one side of a parcel: the mean over words of the best quality among the word's
-- terms that side holds (0 for a word it lacks). The words' terms come flattened (p_terms, with the index of their
-- word and their quality), so that each of the side's few words is looked up by array_positions.
-- (a set-returning function of one row, so that the planner inlines it where it is joined)
CREATE FUNCTION search.autocomplete_score(p_terms text[], p_word_of integer[], p_qualities float8[], p_words integer,
                                          p_side text)
RETURNS TABLE (score float8)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT coalesce(sum(b.best), 0) / p_words
    FROM (SELECT max(p_qualities[pos]) AS best
            FROM unnest(string_to_array(p_side, ' ')
                        || CASE WHEN string_to_array(p_side, ' ') && core.search_particles()
                                THEN core.join_particles(string_to_array(p_side, ' ')) END) AS w,
                 unnest(array_positions(p_terms, w)) AS pos
           GROUP BY p_word_of[pos]) b
$$;
COMMENT ON FUNCTION search.autocomplete_score(text[], integer[], float8[], integer, text) IS
  'How well query words match a normalized owner name or address, in 0..1 (the terms of all words flattened, with '
  'their word''s index and quality; p_words: how many words).';