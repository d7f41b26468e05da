-- Parcel search by postings, the word pairs: a later word intersected with the first word's parcels through the pair
-- postings (core.parcel_pair_postings) of the first word's paired terms, so that two frequent words' long postings
-- are never read to intersect them.

-- The first word read (the anchor) is split into its paired terms (core.parcel_pair_terms), whose postings are not
-- read, and the rest, whose postings are united as before (p_anchor_rare, per county). A later word's term t then
-- meets the anchor's parcels as: the pair postings of t with each paired anchor term (t itself when the anchor holds
-- it too), t's postings intersected with the anchor's rest, and, for a t that is not paired (few parcels), t's
-- postings intersected with the paired anchor terms' postings in the counties where t has parcels. Once the
-- candidates are known (p_sets, after the second word), a term that is not paired meets them directly.
CREATE FUNCTION search.parcel_pairs_step(
  p_sets search.id_set[], p_counties smallint[],
  p_anchor integer, p_anchor_terms text[], p_anchor_qualities float8[], p_anchor_rare search.id_set[], p_anchor_hits boolean,
  p_word integer, p_terms text[], p_qualities float8[], p_hits boolean,
  OUT sets search.id_set[], OUT hits search.term_hits[])
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_paired text[] := ARRAY(SELECT t FROM unnest(p_terms) AS t WHERE EXISTS (SELECT FROM core.parcel_pair_terms pt WHERE pt.term = t));
  v_rare text[] := ARRAY(SELECT t FROM unnest(p_terms) AS t WHERE t <> ALL (v_paired));
  -- the anchor's rest among the candidates: where the postings of this word's paired terms are still read
  v_anchor_rare search.id_set[] := CASE WHEN p_sets IS NULL THEN p_anchor_rare ELSE ARRAY(
    SELECT ROW(r.county_id, r.ids & s.ids)::search.id_set FROM unnest(p_anchor_rare) AS r
      JOIN unnest(p_sets) AS s ON s.county_id = r.county_id WHERE r.ids && s.ids) END;
BEGIN
  WITH x AS MATERIALIZED (
    -- pairs: (county, paired anchor term, paired term of this word, their common parcels)
    SELECT y.county_id, y.t1, y.t, CASE WHEN p_sets IS NULL THEN y.ids ELSE y.ids & s.ids END AS ids
      FROM (SELECT pp.county_id, pp.term_a AS t1, pp.term_b AS t, pp.ids FROM core.parcel_pair_postings pp
             WHERE pp.term_a = ANY (p_anchor_terms) AND pp.term_b = ANY (v_paired)
               AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))
            UNION ALL
            SELECT pp.county_id, pp.term_b, pp.term_a, pp.ids FROM core.parcel_pair_postings pp
             WHERE pp.term_b = ANY (p_anchor_terms) AND pp.term_a = ANY (v_paired)
               AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))
            UNION ALL
            -- a term both words stand for pairs with itself: its own postings
            SELECT pp.county_id, pp.term, pp.term, pp.ids FROM core.parcel_postings pp
             WHERE pp.term = ANY (p_anchor_terms) AND pp.term = ANY (v_paired)
               AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))) y
      LEFT JOIN unnest(p_sets) AS s ON s.county_id = y.county_id
     WHERE p_sets IS NULL OR s.ids IS NOT NULL
    UNION ALL
    -- the anchor's rest (among the candidates) and this word's terms: paired ones always, the others before the
    -- candidates are known (after, they meet the candidates below)
    SELECT r.county_id, NULL, pp.term, r.ids & pp.ids
      FROM unnest(v_anchor_rare) AS r
      JOIN (SELECT pp.county_id, pp.term, pp.ids FROM core.parcel_postings pp
             WHERE pp.term = ANY (CASE WHEN p_sets IS NULL THEN p_terms ELSE v_paired END) OFFSET 0) pp
        ON pp.county_id = r.county_id
    UNION ALL
    -- this word's terms that are not paired: with the candidates once known, else with each paired anchor term's
    -- postings where they have parcels
    SELECT r.county_id, a.term, r.term, r.ids & coalesce(a.ids, s.ids)
      FROM (SELECT pp.county_id, pp.term, pp.ids FROM core.parcel_postings pp
             WHERE pp.term = ANY (v_rare) AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))) r
      LEFT JOIN unnest(p_sets) AS s ON s.county_id = r.county_id
      LEFT JOIN core.parcel_postings a ON p_sets IS NULL AND a.county_id = r.county_id AND a.term = ANY (p_anchor_terms)
     WHERE coalesce(a.ids, s.ids) IS NOT NULL)
  SELECT (SELECT array_agg(ROW(m.county_id, m.ids)::search.id_set)
            FROM (SELECT x.county_id, core.id_union(x.ids) AS ids FROM x GROUP BY x.county_id) m WHERE m.ids <> '{}'),
         CASE WHEN p_hits THEN
           (SELECT array_agg(ROW(p_word, tq.q, h.county_id, h.ids)::search.term_hits)
              FROM (SELECT x.county_id, x.t, core.id_union(x.ids) AS ids FROM x GROUP BY x.county_id, x.t) h
              JOIN unnest(p_terms, p_qualities) AS tq(t, q) ON tq.t = h.t WHERE h.ids <> '{}') END
         -- the paired anchor terms' hits: with the second word, every anchor parcel that matches it is in a row above
         || CASE WHEN p_anchor_hits AND p_sets IS NULL THEN
           (SELECT array_agg(ROW(p_anchor, tq.q, h.county_id, h.ids)::search.term_hits)
              FROM (SELECT x.county_id, x.t1, core.id_union(x.ids) AS ids FROM x WHERE x.t1 IS NOT NULL
                     GROUP BY x.county_id, x.t1) h
              JOIN unnest(p_anchor_terms, p_anchor_qualities) AS tq(t, q) ON tq.t = h.t1 WHERE h.ids <> '{}') END
    INTO sets, hits;
END $$;
COMMENT ON FUNCTION search.parcel_pairs_step(search.id_set[], smallint[], integer, text[], float8[], search.id_set[], boolean,
                                             integer, text[], float8[], boolean) IS
  'Helper of search.parcel_postings_matches: the candidates p_sets (NULL: the anchor word''s parcels, its paired terms '
  'p_anchor_terms and the union p_anchor_rare of its other terms'' postings) narrowed by one later word (p_terms), '
  'through the pair postings; with p_hits the word''s term hits, and with p_anchor_hits (second word only) the '
  'anchor''s paired terms'' hits.';
