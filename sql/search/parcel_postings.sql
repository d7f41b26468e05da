-- Parcel search by postings (core.parcel_postings): for a query whose only other filter is counties, matches, totals
-- and page tiers as unions and intersections of sorted id arrays, county by county.

-- Search by postings (core.parcel_postings): for a query with no filter but counties, a query's matches, exact total
-- and page tiers are unions and intersections of sorted id arrays, county by county; core.parcels is read only for
-- the page's rows and the parcels whose owner or address is the query's text. (Through the GIN index, counting or
-- ranking the matches reads every matching row's heap page.)
CREATE TYPE search.id_set AS (county_id smallint, ids integer[]);
COMMENT ON TYPE search.id_set IS 'Parcel ids of one county, ascending: a step of search by postings.';

CREATE TYPE search.term_hits AS (word integer, quality float8, county_id smallint, ids integer[]);
COMMENT ON TYPE search.term_hits IS
  'The ids of one county that hold one term of a query word (the word''s position and the term''s quality), among '
  'the candidates left when that word was read: what search by postings keeps to score its matches without reading '
  'the postings again.';

CREATE FUNCTION search.parcel_postings_matches(p_words api.query_word[], p_counties smallint[], p_min_quality float8,
                                            p_stop_below integer, p_with_hits boolean,
                                            OUT sets search.id_set[], OUT hits search.term_hits[])
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_word record;
  v_hits search.term_hits[];
  v_terms text[];
  -- the first word (the anchor) of a statewide query of several words, when some of its terms are paired
  -- (core.parcel_pair_terms): its paired terms' postings are never read, later words meet them through the pair
  -- postings (search.parcel_pairs_step), and the matches so far stay implicit until the second word
  v_anchor integer;
  v_anchor_hits boolean;
  v_anchor_terms text[];
  v_anchor_qualities float8[];
  v_anchor_rare search.id_set[];
  v_implicit boolean := false;
BEGIN
  hits := '{}';
  -- the rarest word first (its terms' parcels, statewide, from the vocabulary): every later word only narrows them,
  -- one intersection with each of its terms' postings
  FOR v_word IN
    SELECT w.i, w.terms, w.qualities, p_with_hits AND w.read > 1 AS with_hits FROM (
      SELECT u.i, ARRAY(SELECT x.t FROM unnest(u.terms, u.qualities) AS x(t, q) WHERE x.q >= p_min_quality) AS terms,
             ARRAY(SELECT x.q FROM unnest(u.terms, u.qualities) AS x(t, q) WHERE x.q >= p_min_quality) AS qualities,
             cardinality(u.terms) AS read
        FROM unnest(p_words) WITH ORDINALITY AS u(word, terms, qualities, i)) w
     ORDER BY (SELECT coalesce(sum(t.parcels), 0) FROM core.parcel_terms t WHERE t.term = ANY (w.terms))
  LOOP
    IF v_anchor IS NOT NULL THEN
      IF v_implicit THEN v_anchor_rare := coalesce(sets, '{}'); sets := NULL; END IF;
      SELECT st.sets, st.hits INTO sets, v_hits
        FROM search.parcel_pairs_step(sets, p_counties, v_anchor, v_anchor_terms, v_anchor_qualities, v_anchor_rare,
                                      v_anchor_hits, v_word.i::integer, v_word.terms, v_word.qualities,
                                      v_word.with_hits) AS st;
      v_implicit := false;
      hits := hits || coalesce(v_hits, '{}');
      EXIT WHEN sets IS NULL;
      EXIT WHEN p_stop_below IS NOT NULL AND search.parcel_postings_count(sets) < p_stop_below;
      CONTINUE;
    END IF;
    v_terms := v_word.terms;
    -- (statewide only: a county's postings are short, and there reading the pairs cost more than intersecting them)
    IF sets IS NULL AND cardinality(p_words) > 1 AND p_counties IS NULL THEN
      SELECT array_agg(x.t), array_agg(x.q) INTO v_anchor_terms, v_anchor_qualities
        FROM unnest(v_word.terms, v_word.qualities) AS x(t, q)
       WHERE EXISTS (SELECT FROM core.parcel_pair_terms pt WHERE pt.term = x.t);
      IF v_anchor_terms IS NOT NULL THEN
        -- the anchor's other terms are read below, united as any first word's
        v_anchor := v_word.i;
        v_anchor_hits := v_word.with_hits;
        v_terms := ARRAY(SELECT t FROM unnest(v_word.terms) AS t WHERE t <> ALL (v_anchor_terms));
        v_implicit := true;
      END IF;
    END IF;
    IF sets IS NULL AND NOT v_word.with_hits THEN
      -- the first word's terms' postings, united (kept in a CTE only for hits: copying them costs)
      SELECT array_agg(ROW(g.county_id, g.ids)::search.id_set), NULL INTO sets, v_hits
        FROM (SELECT pp.county_id, core.id_union(pp.ids) AS ids FROM core.parcel_postings pp
               WHERE pp.term = ANY (v_terms) AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))
               GROUP BY pp.county_id) g;
    ELSE
      -- each term's ids (for the first word its postings; for a later one, their intersection with the sets), kept
      -- as hits when asked for a word read as several terms (search.parcel_hits_scores counts a word of one term for
      -- every match), and united into the word's sets. A later word's postings are read by term (in the query's
      -- counties), then joined to the sets by county: probing each county for each term took thousands of index
      -- reads for a word standing for 128 terms statewide (the arrays are read only if joined).
      WITH x AS MATERIALIZED (
        SELECT pp.county_id, pp.term, pp.ids FROM core.parcel_postings pp
         WHERE sets IS NULL AND pp.term = ANY (v_terms) AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))
        UNION ALL
        SELECT s.county_id, pp.term, s.ids & pp.ids
          FROM unnest(sets) AS s
          JOIN (SELECT pp.county_id, pp.term, pp.ids FROM core.parcel_postings pp
                 WHERE pp.term = ANY (v_terms) AND (p_counties IS NULL OR pp.county_id = ANY (p_counties)) OFFSET 0) pp
            ON pp.county_id = s.county_id)
      SELECT (SELECT array_agg(ROW(m.county_id, m.ids)::search.id_set)
                FROM (SELECT x.county_id, core.id_union(x.ids) AS ids FROM x GROUP BY x.county_id) m WHERE m.ids <> '{}'),
             CASE WHEN v_word.with_hits THEN
               (SELECT array_agg(ROW(v_word.i, tq.q, x.county_id, x.ids)::search.term_hits)
                  FROM x JOIN unnest(v_word.terms, v_word.qualities) AS tq(t, q) ON tq.t = x.term WHERE x.ids <> '{}') END
        INTO sets, v_hits;
    END IF;
    hits := hits || coalesce(v_hits, '{}');
    CONTINUE WHEN v_implicit;
    EXIT WHEN sets IS NULL;
    -- (every word only narrows the matches: once fewer than p_stop_below, they stay so)
    EXIT WHEN p_stop_below IS NOT NULL AND search.parcel_postings_count(sets) < p_stop_below;
  END LOOP;
  sets := coalesce(sets, '{}');
END $$;
COMMENT ON FUNCTION search.parcel_postings_matches(api.query_word[], smallint[], float8, integer, boolean) IS
  'Helper of search by postings: per county (p_counties, NULL for all), the ids of the parcels holding, for every '
  'query word, one of its terms of quality p_min_quality or more (0: any term; 1: the word itself); with '
  'p_with_hits, the term hits that score them (search.parcel_hits_scores). With p_stop_below, it stops once fewer '
  'parcels than that hold the words so far (then only their number, below p_stop_below, is of use).';

CREATE FUNCTION search.parcel_postings_match(p_words api.query_word[], p_counties smallint[], p_min_quality float8,
                                          p_stop_below integer DEFAULT NULL)
RETURNS search.id_set[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (search.parcel_postings_matches(p_words, p_counties, p_min_quality, p_stop_below, false)).sets;
END $$;
COMMENT ON FUNCTION search.parcel_postings_match(api.query_word[], smallint[], float8, integer) IS
  'Helper of search by postings: the matches of search.parcel_postings_matches, without hits. Example: '
  'SELECT s.county_id, icount(s.ids) FROM unnest(search.parcel_postings_match(api.parcel_query_words(''smith jon''), NULL, 0)) s;';

-- County ids for the postings: NULL (every county) without slugs, none for an empty list, as the GIN path filters.
CREATE FUNCTION search.parcel_postings_counties(p_slugs text[]) RETURNS smallint[]
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN CASE WHEN p_slugs IS NOT NULL THEN coalesce(core.county_ids(p_slugs), '{}') END;
COMMENT ON FUNCTION search.parcel_postings_counties(text[]) IS
  'Helper of search by postings: the county ids of slugs (core.county_ids), NULL for no filter and none for an empty list.';

CREATE FUNCTION search.parcel_postings_count(p_sets search.id_set[]) RETURNS bigint
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (SELECT coalesce(sum(icount(s.ids)), 0) FROM unnest(p_sets) AS s);
END $$;
COMMENT ON FUNCTION search.parcel_postings_count(search.id_set[]) IS 'Helper of search by postings: the number of ids in sets.';

-- The first p_k ids of sets in ascending order, leaving out p_except: every county's first p_k + |p_except|, merged.
CREATE FUNCTION search.parcel_postings_first(p_sets search.id_set[], p_k integer, p_except integer[] DEFAULT '{}')
RETURNS integer[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN ARRAY(SELECT x FROM unnest(p_sets) AS s, unnest(subarray(s.ids, 1, p_k + cardinality(p_except)) - p_except) AS x
                ORDER BY x LIMIT p_k);
END $$;
COMMENT ON FUNCTION search.parcel_postings_first(search.id_set[], integer, integer[]) IS
  'Helper of search by postings: the p_k smallest ids of sets, those in p_except left out.';

-- Each set's ids less the other sets' ids of its county.
CREATE FUNCTION search.parcel_postings_minus(p_sets search.id_set[], p_others search.id_set[]) RETURNS search.id_set[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN ARRAY(SELECT ROW(s.county_id, coalesce(s.ids - (SELECT core.id_union(o.ids) FROM unnest(p_others) AS o
                                                          WHERE o.county_id = s.county_id), s.ids))::search.id_set
                 FROM unnest(p_sets) AS s);
END $$;
COMMENT ON FUNCTION search.parcel_postings_minus(search.id_set[], search.id_set[]) IS
  'Helper of search by postings: per county, the ids of p_sets that are in no set of p_others.';

-- The relevance score of matching parcels, as search.parcel_query_score_sql computes it from search_terms: for each
-- word the best quality among its terms the parcel holds, then the mean over words, summed in word order. The terms
-- a parcel holds come from the term hits search.parcel_postings_matches kept while matching (p_hits: each term's
-- ids among the candidates of its step), so the postings are not read again. A word of one term is held by every
-- match: its quality counts as it is.
CREATE FUNCTION search.parcel_hits_scores(p_sets search.id_set[], p_hits search.term_hits[], p_words api.query_word[])
RETURNS TABLE (id integer, score float8)
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT y.id, sum(y.q ORDER BY y.i) / cardinality(p_words)
    FROM (SELECT h.word AS i, x.id, max(h.quality) AS q
            FROM unnest(p_hits) AS h
            JOIN unnest(p_sets) AS s ON s.county_id = h.county_id
            CROSS JOIN unnest(s.ids & h.ids) AS x(id)
           GROUP BY h.word, x.id
          UNION ALL
          SELECT w.i, x.id, w.qualities[1]
            FROM unnest(p_words) WITH ORDINALITY AS w(word, terms, qualities, i)
            CROSS JOIN unnest(p_sets) AS s
            CROSS JOIN unnest(s.ids) AS x(id)
           WHERE cardinality(w.terms) = 1) y
   GROUP BY y.id
$$;
COMMENT ON FUNCTION search.parcel_hits_scores(search.id_set[], search.term_hits[], api.query_word[]) IS
  'Helper of search by postings: the relevance score (as in search.parcel_query_score_sql) of every parcel in p_sets, '
  'each of which matches every word, from the term hits kept while matching them (search.parcel_postings_matches '
  'with p_with_hits).';

-- The same scores read from the parcels' rows (search_terms), for a few parcels.
CREATE FUNCTION search.parcel_rows_scores(p_ids integer[], p_words api.query_word[])
RETURNS TABLE (id integer, score float8)
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT p.id::integer,
         coalesce((SELECT sum(b.q ORDER BY b.i) FROM (
                     SELECT w.i, max(tq.q) AS q
                       FROM unnest(p_words) WITH ORDINALITY AS w(word, terms, qualities, i)
                       CROSS JOIN unnest(w.terms, w.qualities) AS tq(t, q)
                      WHERE tq.t = ANY (p.search_terms)
                      GROUP BY w.i) b), 0) / cardinality(p_words)
    FROM core.parcels p
   WHERE p.id = ANY (p_ids::bigint[])
$$;
COMMENT ON FUNCTION search.parcel_rows_scores(integer[], api.query_word[]) IS
  'Helper of search by postings: the relevance score (as in search.parcel_query_score_sql) of each parcel of p_ids, '
  'read from its row; 0 for a parcel that holds none of the words'' terms.';

-- The highest score a parcel can have for query words short of holding every word exactly: each word matched by
-- its best term (the first), summed in word order as every score is.
CREATE FUNCTION search.parcel_best_score(p_words api.query_word[]) RETURNS float8
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (SELECT sum(w.qualities[1] ORDER BY w.i) FROM unnest(p_words) WITH ORDINALITY AS w(word, terms, qualities, i))
         / cardinality(p_words);
END $$;
COMMENT ON FUNCTION search.parcel_best_score(api.query_word[]) IS
  'The best relevance score a parcel can have for query words: each word matched by its first (best) term.';

-- The first tier of a relevance page: the parcels whose owner or address is one of the query's texts
-- (search.exact_texts: as typed, as best read, in any word order), read from the btree indexes on (hashtext(text),
-- id) in id order, the hashes compared first and then the texts.
CREATE FUNCTION search.parcel_exact_text_sql(p_texts text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN format('((hashtext(p.owner_search) = ANY (%1$L::int[]) AND p.owner_search = ANY (%2$L::text[]))'
                ' OR (hashtext(p.address_search) = ANY (%1$L::int[]) AND p.address_search = ANY (%2$L::text[])))',
                (SELECT array_agg(hashtext(x)) FROM unnest(p_texts) AS x), p_texts);
COMMENT ON FUNCTION search.parcel_exact_text_sql(text[]) IS
  'The condition (on core.parcels p) that the owner or the address is one of p_texts, normalized, written so that '
  'the (hashtext, id) indexes answer it.';

-- Statewide from the (hashtext(text), id) indexes; in counties from the (county_id, hashtext(text), id) ones, each
-- county's first p_k, merged: a county's first ids are read without the other counties' parcels of the same text.
CREATE FUNCTION search.parcel_exact_text_first(p_texts text[], p_counties smallint[], p_k integer) RETURNS integer[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  -- the plan is made once, without the texts: a bitmap would read all of a common text's parcels and sort them
  SET enable_bitmapscan = off
  SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  IF p_counties IS NULL THEN
    RETURN ARRAY(
      SELECT e.id FROM unnest(p_texts) AS x(q),
             LATERAL ((SELECT p.id::integer FROM core.parcels p
                        WHERE hashtext(p.owner_search) = hashtext(x.q) AND p.owner_search = x.q ORDER BY p.id LIMIT p_k)
                      UNION
                      (SELECT p.id::integer FROM core.parcels p
                        WHERE hashtext(p.address_search) = hashtext(x.q) AND p.address_search = x.q ORDER BY p.id LIMIT p_k)) e(id)
       GROUP BY e.id ORDER BY e.id LIMIT p_k);
  END IF;
  RETURN ARRAY(
    SELECT e.id FROM unnest(p_texts) AS x(q), unnest(p_counties) AS c(id),
           LATERAL ((SELECT p.id::integer FROM core.parcels p
                      WHERE p.county_id = c.id AND hashtext(p.owner_search) = hashtext(x.q) AND p.owner_search = x.q
                      ORDER BY p.id LIMIT p_k)
                    UNION
                    (SELECT p.id::integer FROM core.parcels p
                      WHERE p.county_id = c.id AND hashtext(p.address_search) = hashtext(x.q) AND p.address_search = x.q
                      ORDER BY p.id LIMIT p_k)) e(id)
     GROUP BY e.id ORDER BY e.id LIMIT p_k);
END $$;
COMMENT ON FUNCTION search.parcel_exact_text_first(text[], smallint[], integer) IS
  'The p_k smallest ids of the parcels in p_counties (NULL: all) whose owner or address is one of p_texts '
  '(normalized); it reads about p_k index entries of each text index per text (and per county) however many parcels '
  'share it. Example: SELECT search.parcel_exact_text_first(''{SFR FLORIDA BORROWER LLC}'', NULL, 25);';

-- The first tiers of a page by postings (every word exact, score 1): the parcels whose owner or address is one of
-- the query's texts (p_exact), then the others (p_held), each by id; p_k ids at most.
CREATE FUNCTION search.parcel_postings_exact_tiers(p_held search.id_set[], p_exact integer[], p_k integer) RETURNS integer[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_exact integer[] := CASE WHEN p_exact = '{}' THEN '{}'
                            ELSE coalesce((SELECT core.id_union(s.ids & p_exact) FROM unnest(p_held) AS s), '{}') END;
BEGIN
  RETURN v_exact[1 : p_k] || search.parcel_postings_first(p_held, p_k - least(cardinality(v_exact), p_k), v_exact);
END $$;
COMMENT ON FUNCTION search.parcel_postings_exact_tiers(search.id_set[], integer[], integer) IS
  'Helper of parcel_page_by_postings: the first p_k ids of the tiers of parcels holding every word exactly (p_held): '
  'those in p_exact (owner or address equal to one of the query''s texts) first, then the rest, each by id.';

-- The tier after the parcels holding every word exactly (p_held_ids, when fewer than p_k): the parcels of p_exact
-- (owner or address equal to one of the query's texts) whose score is the best a parcel not in that tier can have,
-- by id. A full ranking puts them next: the highest score left, and an exact text.
CREATE FUNCTION search.parcel_best_exact(p_exact integer[], p_held_ids integer[], p_words api.query_word[], p_k integer)
RETURNS integer[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  IF cardinality(p_held_ids) >= p_k OR cardinality(p_exact) = 0 THEN RETURN '{}'; END IF;
  RETURN ARRAY(SELECT sc.id FROM search.parcel_rows_scores(p_exact - p_held_ids, p_words) AS sc
                WHERE sc.score = search.parcel_best_score(p_words)
                ORDER BY sc.id LIMIT p_k - cardinality(p_held_ids));
END $$;
COMMENT ON FUNCTION search.parcel_best_exact(integer[], integer[], api.query_word[], integer) IS
  'Helper of parcel_page_by_postings: up to p_k less the held tier''s ids (p_held_ids), the parcels of p_exact not in '
  'it whose score is search.parcel_best_score, by id; none when the held tier fills p_k.';

-- A page of search by postings, in the order of the GIN path of search_parcels; among parcels of the same score, an
-- owner or address equal to one of the query's texts (search.exact_texts) comes first. Up to
-- search.ranked_in_full() matches, every match is scored in one pass and ranked by score, that, and id. Beyond: the
-- parcels holding every word exactly (score 1), by id; then those whose owner or address is one of the query's texts
-- and whose score is the best left (search.parcel_best_score), by id: the next in a full ranking; then those whose
-- every word is matched at least as well as a level (search.parcel_well_level), by score; then the rest by id.
-- Without the total, the first two tiers may fill the page before all the matches are computed.
CREATE FUNCTION search.parcel_page_by_postings(p_words api.query_word[], p_counties smallint[], p_texts text[],
                                            p_limit integer, p_offset integer, p_with_total boolean,
                                            OUT ids bigint[], OUT total bigint)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_k integer := p_offset + p_limit;
  v_all search.id_set[];
  v_hits search.term_hits[];
  v_matches bigint;
  v_held search.id_set[];
  v_exact integer[] := search.parcel_exact_text_first(p_texts, p_counties, v_k);
  v_ids integer[];
  v_ranked integer[];
  v_level float8;
  v_well search.id_set[] := '{}';
  v_best integer[] := '{}';
BEGIN
  IF NOT p_with_total THEN
    v_held := search.parcel_postings_match(p_words, p_counties, 1);
    v_ids := search.parcel_postings_exact_tiers(v_held, v_exact, v_k);
    v_best := search.parcel_best_exact(v_exact, v_ids, p_words, v_k);
    v_ids := v_ids || v_best;
    IF cardinality(v_ids) = v_k THEN ids := v_ids[p_offset + 1 : v_k]; RETURN; END IF;
  END IF;
  -- every match: the total, and the page's later tiers (computed once for both)
  SELECT m.sets, m.hits INTO v_all, v_hits FROM search.parcel_postings_matches(p_words, p_counties, 0, NULL, true) AS m;
  v_matches := search.parcel_postings_count(v_all);
  total := CASE WHEN p_with_total THEN v_matches END;
  IF v_matches <= search.ranked_in_full() THEN
    SELECT coalesce(array_agg(sc.id ORDER BY sc.score DESC, sc.id = ANY (v_exact) DESC, sc.id), '{}')
      INTO v_ranked FROM search.parcel_hits_scores(v_all, v_hits, p_words) AS sc;
    ids := v_ranked[p_offset + 1 : v_k];
    RETURN;
  END IF;
  IF v_held IS NULL THEN
    v_held := search.parcel_postings_match(p_words, p_counties, 1);
    v_ids := search.parcel_postings_exact_tiers(v_held, v_exact, v_k);
    v_best := search.parcel_best_exact(v_exact, v_ids, p_words, v_k);
    v_ids := v_ids || v_best;
  END IF;
  IF cardinality(v_ids) < v_k THEN
    v_level := search.parcel_well_level(p_words);
    IF v_level IS NOT NULL THEN
      SELECT search.parcel_postings_minus(m.sets, v_held), m.hits INTO v_well, v_hits
        FROM search.parcel_postings_matches(p_words, p_counties, v_level, NULL, true) AS m;
      v_ids := v_ids || ARRAY(SELECT sc.id FROM search.parcel_hits_scores(v_well, v_hits, p_words) AS sc
                               WHERE sc.id <> ALL (v_best)
                               ORDER BY sc.score DESC, sc.id = ANY (v_exact) DESC, sc.id LIMIT v_k - cardinality(v_ids));
    END IF;
    IF cardinality(v_ids) < v_k THEN
      v_ids := v_ids || search.parcel_postings_first(search.parcel_postings_minus(v_all, v_held || v_well),
                                                      v_k - cardinality(v_ids), v_best);
    END IF;
  END IF;
  ids := v_ids[p_offset + 1 : v_k];
END $$;
COMMENT ON FUNCTION search.parcel_page_by_postings(api.query_word[], smallint[], text[], integer, integer, boolean) IS
  'Helper of parcel_search_page: the ids of one page of a relevance search whose only other filter is counties '
  '(p_counties, NULL for all), read from core.parcel_postings, and with p_with_total the number of matches (else '
  'NULL); p_texts are the query''s texts (search.exact_texts).';

-- Autocomplete's candidates: the parcels holding every word but the last (any of its terms), taken completion by
-- completion of the last word, best completion first (the word itself, then shorter and more common completions),
-- each completion's parcels in id order, until p_k are found. A common prefix (JO: JOHN, JOSE, JONES ...) is never
-- united in full: each completion is one intersection with the earlier words' parcels.
CREATE FUNCTION search.autocomplete_candidates(p_words api.query_word[], p_counties smallint[], p_k integer)
RETURNS integer[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_last api.query_word := p_words[cardinality(p_words)];
  v_earlier search.id_set[];
  v_sets search.id_set[];
  v_ids integer[] := '{}';
  v_term text;
BEGIN
  IF cardinality(p_words) = 0 THEN RETURN '{}'; END IF;
  IF cardinality(p_words) > 1 THEN
    v_earlier := search.parcel_postings_match(p_words[1 : cardinality(p_words) - 1], p_counties, 0);
    IF search.parcel_postings_count(v_earlier) = 0 THEN RETURN '{}'; END IF;
  END IF;
  FOREACH v_term IN ARRAY v_last.terms LOOP
    SELECT array_agg(ROW(pp.county_id, CASE WHEN v_earlier IS NULL THEN pp.ids
                                             ELSE pp.ids & (SELECT e.ids FROM unnest(v_earlier) AS e
                                                             WHERE e.county_id = pp.county_id) END)::search.id_set)
      INTO v_sets
      FROM core.parcel_postings pp
     WHERE pp.term = v_term AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))
       AND (v_earlier IS NULL OR pp.county_id IN (SELECT e.county_id FROM unnest(v_earlier) AS e));
    v_ids := v_ids || search.parcel_postings_first(coalesce(v_sets, '{}'), p_k - cardinality(v_ids), v_ids);
    EXIT WHEN cardinality(v_ids) >= p_k;
  END LOOP;
  RETURN v_ids;
END $$;
COMMENT ON FUNCTION search.autocomplete_candidates(api.query_word[], smallint[], integer) IS
  'Up to p_k parcels for autocomplete (search.autocomplete_reading''s words), from the postings: holding every '
  'earlier word, and the last word''s completions in order, best first.';
