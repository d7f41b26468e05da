-- Autocomplete: the live computation of a suggestion list, and the precomputed one that answers a query of one word
-- of 1 to 3 characters (core.typeahead_prefixes, rebuilt by triggers on core.parcels from the live computation's own
-- steps), and the ranking api.autocomplete_parcels renders.

-- The last word's reading: the word itself when it is a term (quality 1) and, from 2 characters, its most common
-- completions (quality: the share of the completion the word covers), best first.
CREATE FUNCTION search.autocomplete_prefix_reading(p_word text) RETURNS api.query_word
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (
    SELECT ROW(p_word, coalesce(array_agg(c.term ORDER BY c.q DESC, c.parcels DESC, c.term), '{}'),
               coalesce(array_agg(c.q ORDER BY c.q DESC, c.parcels DESC, c.term), '{}'))::api.query_word
      FROM (SELECT t.term, t.parcels, 1.0::float8 AS q FROM core.parcel_terms t WHERE t.term = p_word
            UNION ALL
            -- the terms that start with the word: a range of the primary key (every character a term holds sorts
            -- before '~')
            (SELECT t.term, t.parcels, length(p_word)::float8 / length(t.term)
               FROM core.parcel_terms t
              WHERE length(p_word) >= 2 AND t.term > p_word AND t.term < p_word || '~'
                AND left(t.term, length(p_word)) = p_word
              ORDER BY t.parcels DESC, t.term LIMIT search.autocomplete_completions())) c);
END $$;
COMMENT ON FUNCTION search.autocomplete_prefix_reading(text) IS
  'How autocomplete reads the last word of a query: the word itself when it is a term (quality 1) and, from 2 '
  'characters, its search.autocomplete_completions() most common completions (quality: the share of the completion '
  'the word covers), best first. Example: SELECT * FROM search.autocomplete_prefix_reading(''JO'');';

-- Candidates scored: for each, how well the words match its address and its owner name, the better of the two, and
-- whether the suggestion shows the address (it matches at least as well, and there is one).
CREATE FUNCTION search.autocomplete_scored(p_ids integer[], p_words api.query_word[])
RETURNS TABLE (id integer, ord integer, score float8, by_address boolean)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_terms text[];
  v_word_of integer[];
  v_qualities float8[];
BEGIN
  SELECT array_agg(x.t), array_agg(w.i::int), array_agg(x.q) INTO v_terms, v_word_of, v_qualities
    FROM unnest(p_words) WITH ORDINALITY AS w(word, terms, qualities, i), unnest(w.terms, w.qualities) AS x(t, q);
  RETURN QUERY
  SELECT u.id, u.ord::integer, greatest(s.address_score, s.owner_score),
         s.address_score >= s.owner_score AND p.site_address_full IS NOT NULL
    FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)
    JOIN core.parcels p ON p.id = u.id
   CROSS JOIN LATERAL (SELECT o.score AS owner_score, a.score AS address_score
                         FROM search.autocomplete_score(v_terms, v_word_of, v_qualities, cardinality(p_words), p.owner_search) o,
                              search.autocomplete_score(v_terms, v_word_of, v_qualities, cardinality(p_words), p.address_search) a) s;
END $$;
COMMENT ON FUNCTION search.autocomplete_scored(integer[], api.query_word[]) IS
  'Helper of autocomplete: each candidate of p_ids (ord: its position) with its score for the words (the better of '
  'search.autocomplete_score on its address and its owner name) and whether its suggestion shows the address.';

-- The live computation from a reading (search.autocomplete_words_reading): candidates from the postings
-- (search.autocomplete_candidates: three times the suggestions asked for), then the best of them: the side (address
-- or owner) the words match best, whole words before prefixes (a completion's quality is the share it covers); on a
-- tie an address before an owner name, then candidate order.
CREATE FUNCTION search.autocomplete_of_reading(p_words api.query_word[], p_counties smallint[], p_limit integer)
RETURNS TABLE (id integer, by_address boolean)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY
  SELECT s.id, s.by_address
    FROM search.autocomplete_scored(search.autocomplete_candidates(p_words, p_counties, 3 * p_limit), p_words) AS s
   ORDER BY s.score DESC, s.by_address DESC, s.ord
   LIMIT p_limit;
END $$;
COMMENT ON FUNCTION search.autocomplete_of_reading(api.query_word[], smallint[], integer) IS
  'Helper of autocomplete: the p_limit best suggestions (parcel id, whether shown by address) for a query read as '
  'p_words (search.autocomplete_words_reading) in p_counties (NULL: statewide), computed from the postings.';

CREATE FUNCTION search.autocomplete_live(p_query text, p_counties smallint[], p_limit integer)
RETURNS TABLE (id integer, by_address boolean)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY SELECT * FROM search.autocomplete_of_reading(search.autocomplete_reading(p_query), p_counties, p_limit);
END $$;
COMMENT ON FUNCTION search.autocomplete_live(text, smallint[], integer) IS
  'Autocomplete computed from the postings at request time: the p_limit best suggestions (parcel id, whether shown '
  'by address) for p_query in p_counties (NULL: statewide). The precomputed answers (core.typeahead_prefixes) are '
  'built from its steps and tested against it. Example: SELECT * FROM search.autocomplete_live(''smith jo'', NULL, 10);';

-- The precomputed answer for a query of one word of 1 to 3 characters: the candidates of the counties' rows (the
-- statewide row for NULL) merged in their order (rank, then id), the first three times p_limit of them, ranked as
-- the live computation ranks them.
CREATE FUNCTION search.autocomplete_precomputed(p_word text, p_counties smallint[], p_limit integer)
RETURNS TABLE (id integer, by_address boolean)
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT c.id, c.by_address
    FROM (SELECT x.id, x.rank, x.score, x.by_address
            FROM core.typeahead_prefixes tp
           CROSS JOIN LATERAL unnest(tp.ids, tp.ranks, tp.scores, tp.by_address) AS x(id, rank, score, by_address)
           WHERE tp.word = p_word AND tp.county_id = ANY (coalesce(p_counties, '{0}'))
           ORDER BY x.rank, x.id LIMIT 3 * p_limit) c
   ORDER BY c.score DESC, c.by_address DESC, c.rank, c.id
   LIMIT p_limit
$$;
COMMENT ON FUNCTION search.autocomplete_precomputed(text, smallint[], integer) IS
  'Autocomplete''s answer for a query of the one word p_word (1 to 3 characters, normalized) read from '
  'core.typeahead_prefixes: the same suggestions as search.autocomplete_live. Example: '
  'SELECT * FROM search.autocomplete_precomputed(''JO'', NULL, 10);';

-- The suggestions api.autocomplete_parcels renders, best first: precomputed for a query of one word of 1 to 3
-- characters, else computed live.
CREATE FUNCTION search.autocomplete_ranked(p_query text, p_counties smallint[], p_limit integer)
RETURNS TABLE (id integer, by_address boolean)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_words text[] := search.query_words(p_query);
BEGIN
  IF cardinality(v_words) = 1 AND length(v_words[1]) <= 3 THEN
    RETURN QUERY SELECT * FROM search.autocomplete_precomputed(v_words[1], p_counties, p_limit);
  ELSE
    RETURN QUERY SELECT * FROM search.autocomplete_of_reading(search.autocomplete_words_reading(v_words), p_counties, p_limit);
  END IF;
END $$;
COMMENT ON FUNCTION search.autocomplete_ranked(text, smallint[], integer) IS
  'The p_limit best autocomplete suggestions for p_query in p_counties (NULL: statewide), best first: from '
  'core.typeahead_prefixes for one word of 1 to 3 characters, else computed live from the words it read '
  '(search.autocomplete_of_reading, as search.autocomplete_live).';

-- Rebuilds what a change of parcels does to the precomputed autocomplete. p_terms and p_counties (side by side) are the
-- (term, county) pairs the change touched. The words a term is read from (itself up to 3 characters, its prefixes of
-- 2 and 3) get their reading again; a word whose reading changed (a completion's count moved it, or a term came or
-- went) is rebuilt in every county, any other only in the counties touched; then the statewide rows of every word
-- touched are merged from its counties' rows. The candidates are the live computation's: each term's first 60 ids
-- (postings are sorted) are enough for the first 60 parcels by (best term's rank, id).
CREATE FUNCTION search.typeahead_refresh(p_terms text[], p_counties smallint[]) RETURNS void
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_k integer := 3 * search.autocomplete_limit_max();
  v_pair_words text[];
  v_pair_counties smallint[];
  v_words text[];
  v_changed text[];
BEGIN
  -- two counties loading at once share words and the statewide rows: one refresh at a time, the other waits for
  -- its commit (their vocabulary upserts already make them wait so, core.parcel_terms_maintain)
  PERFORM pg_advisory_xact_lock(hashtext('core.typeahead_prefixes'));
  SELECT array_agg(y.w), array_agg(y.c) INTO v_pair_words, v_pair_counties
    FROM (SELECT DISTINCT w, x.c
            FROM unnest(p_terms, p_counties) AS x(t, c),
                 unnest(CASE WHEN length(x.t) = 1 THEN ARRAY[x.t]
                             WHEN length(x.t) = 2 THEN ARRAY[x.t]
                             ELSE ARRAY[left(x.t, 2), left(x.t, 3)] END) AS w) y;
  IF v_pair_words IS NULL THEN RETURN; END IF;
  v_words := ARRAY(SELECT DISTINCT w FROM unnest(v_pair_words) AS w);

  WITH fresh AS (SELECT r.word, r.terms, r.qualities FROM unnest(v_words) AS w, search.autocomplete_prefix_reading(w) AS r),
       gone AS (DELETE FROM core.typeahead_readings tr
                 WHERE tr.word = ANY (v_words)
                   AND NOT EXISTS (SELECT FROM fresh f WHERE f.word = tr.word AND cardinality(f.terms) > 0)
                RETURNING tr.word),
       put AS (INSERT INTO core.typeahead_readings AS tr (word, terms, qualities)
               SELECT f.word, f.terms, f.qualities FROM fresh f WHERE cardinality(f.terms) > 0
               ON CONFLICT (word) DO UPDATE SET terms = excluded.terms, qualities = excluded.qualities
                WHERE (tr.terms, tr.qualities) IS DISTINCT FROM (excluded.terms, excluded.qualities)
               RETURNING tr.word)
  SELECT coalesce(array_agg(z.word), '{}') INTO v_changed FROM (SELECT word FROM gone UNION SELECT word FROM put) z;

  DELETE FROM core.typeahead_prefixes tp
   WHERE tp.word = ANY (v_changed)
      OR (tp.word, tp.county_id) IN (SELECT * FROM unnest(v_pair_words, v_pair_counties))
      OR (tp.county_id = 0 AND tp.word = ANY (v_words));

  -- the rows to build: a changed word in every county holding one of its terms, any other in the counties touched
  INSERT INTO core.typeahead_prefixes (word, county_id, ids, ranks, scores, by_address)
  SELECT s.word, s.county_id, array_agg(s.id ORDER BY s.n), array_agg(s.rank ORDER BY s.n),
         array_agg(s.score ORDER BY s.n), array_agg(s.by_address ORDER BY s.n)
    FROM (SELECT c.word, c.county_id, c.id, c.rank, c.n, greatest(sa.score, so.score) AS score,
                 sa.score >= so.score AND p.site_address_full IS NOT NULL AS by_address
            FROM (SELECT h.word, h.county_id, h.id, h.rank, row_number() OVER w AS n
                    FROM (SELECT g.word, g.county_id, i.id, min(g.rank)::smallint AS rank
                            FROM (SELECT td.word, td.county_id, u.rank, pp.ids,
                                         -- a term after one the county holds v_k times adds none of the first v_k
                                         -- (the stored size, 20 or 24 bytes and 4 an id, tells without reading it)
                                         bool_or(pg_column_size(pp.ids) >= 24 + 4 * v_k)
                                           OVER (PARTITION BY td.word, td.county_id ORDER BY u.rank
                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS covered
                                    FROM (SELECT tr.word, pp.county_id
                                            FROM core.typeahead_readings tr, unnest(tr.terms) AS t
                                            JOIN core.parcel_postings pp ON pp.term = t
                                           WHERE tr.word = ANY (v_changed)
                                          UNION
                                          SELECT * FROM unnest(v_pair_words, v_pair_counties)) td
                                    JOIN core.typeahead_readings tr ON tr.word = td.word
                                   CROSS JOIN LATERAL unnest(tr.terms) WITH ORDINALITY AS u(term, rank)
                                    JOIN core.parcel_postings pp ON pp.term = u.term AND pp.county_id = td.county_id) g
                           CROSS JOIN LATERAL unnest(g.ids[1 : v_k]) AS i(id)
                           WHERE NOT coalesce(g.covered, false)
                           GROUP BY g.word, g.county_id, i.id) h
                  WINDOW w AS (PARTITION BY h.word, h.county_id ORDER BY h.rank, h.id)) c
            JOIN core.typeahead_readings tr ON tr.word = c.word
            JOIN core.parcels p ON p.id = c.id
           CROSS JOIN LATERAL search.autocomplete_score(tr.terms, array_fill(1, ARRAY[cardinality(tr.terms)]), tr.qualities,
                                                        1, p.address_search) AS sa
           CROSS JOIN LATERAL search.autocomplete_score(tr.terms, array_fill(1, ARRAY[cardinality(tr.terms)]), tr.qualities,
                                                        1, p.owner_search) AS so
           WHERE c.n <= v_k) s
   GROUP BY s.word, s.county_id;

  INSERT INTO core.typeahead_prefixes (word, county_id, ids, ranks, scores, by_address)
  SELECT s.word, 0, array_agg(s.id ORDER BY s.rank, s.id), array_agg(s.rank ORDER BY s.rank, s.id),
         array_agg(s.score ORDER BY s.rank, s.id), array_agg(s.by_address ORDER BY s.rank, s.id)
    FROM (SELECT tp.word, x.*, row_number() OVER (PARTITION BY tp.word ORDER BY x.rank, x.id) AS n
            FROM core.typeahead_prefixes tp
           CROSS JOIN LATERAL unnest(tp.ids, tp.ranks, tp.scores, tp.by_address) AS x(id, rank, score, by_address)
           WHERE tp.word = ANY (v_words) AND tp.county_id <> 0) s
   WHERE s.n <= v_k
   GROUP BY s.word;
END $$;
COMMENT ON FUNCTION search.typeahead_refresh(text[], smallint[]) IS
  'Rebuilds the precomputed autocomplete (core.typeahead_readings, core.typeahead_prefixes) that a change of the '
  '(term, county) pairs p_terms / p_counties affects; called by the triggers on core.parcels, in the writing '
  'transaction, one transaction at a time (an advisory lock).';

-- Every word and county from scratch (after a change of how suggestions are computed, or when the tables are empty).
CREATE FUNCTION search.typeahead_rebuild() RETURNS void
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  DELETE FROM core.typeahead_prefixes;
  DELETE FROM core.typeahead_readings;
  PERFORM search.typeahead_refresh(array_agg(pp.term), array_agg(pp.county_id)) FROM core.parcel_postings pp;
END $$;
COMMENT ON FUNCTION search.typeahead_rebuild() IS
  'Rebuilds the precomputed autocomplete of every word and county. Example: SELECT search.typeahead_rebuild();';

-- A database whose parcels were loaded before the tables existed gets them built once (scripts/db-setup.ts calls
-- this after applying sql/).
CREATE FUNCTION search.typeahead_build_missing() RETURNS boolean
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  IF EXISTS (SELECT FROM core.typeahead_readings) OR NOT EXISTS (SELECT FROM core.parcel_terms) THEN RETURN false; END IF;
  PERFORM search.typeahead_rebuild();
  RETURN true;
END $$;
COMMENT ON FUNCTION search.typeahead_build_missing() IS
  'Builds the precomputed autocomplete when it is empty and parcels exist (a database loaded before it existed); '
  'true when it did.';
