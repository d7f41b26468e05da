-- Up Migration
-- Word-pair postings for parcel search: for every pair of frequent terms (core.parcel_pair_terms, chosen from the
-- vocabulary by core.choose_parcel_pairs) and county, the sorted ids of the county's parcels holding both. A query
-- holding two frequent words (JOHNSON JOHN, GONZALEZ JOSE, MAIN ST) then reads their common parcels instead of
-- intersecting both words' long postings. Kept exact by statement triggers on core.parcels, as the postings are,
-- inside the load's transaction; per county, so that two counties loading at once lock no row of each other's.
CREATE TABLE core.parcel_pair_terms (
  term text PRIMARY KEY
);
COMMENT ON TABLE core.parcel_pair_terms IS
  'The frequent terms whose pairs core.parcel_pair_postings holds, chosen from the vocabulary by '
  'core.choose_parcel_pairs; fixed between choices (a term that grows common later is simply not paired).';

CREATE TABLE core.parcel_pair_postings (
  term_a     text     NOT NULL,
  term_b     text     NOT NULL,
  county_id  smallint NOT NULL REFERENCES core.counties (id),
  ids        integer[] NOT NULL,
  PRIMARY KEY (term_a, term_b, county_id),
  CHECK (term_a < term_b)
);
ALTER TABLE core.parcel_pair_postings ALTER COLUMN ids SET STORAGE EXTERNAL;
CREATE INDEX parcel_pair_postings_empty_idx ON core.parcel_pair_postings (term_a) WHERE ids = '{}';
COMMENT ON TABLE core.parcel_pair_postings IS
  'Word-pair postings of parcel search: for each pair of terms of core.parcel_pair_terms (term_a < term_b) that some '
  'parcel of the county holds both of, the ids (ascending, as integers) of the county''s parcels holding both: the '
  'intersection of the two terms'' core.parcel_postings, kept exact by triggers on core.parcels. A pair of paired '
  'terms without a row has no parcel in that county.';

-- Each parcel's paired terms are found by one hash join of all the statement's terms with core.parcel_pair_terms, and
-- its pairs by joining those to themselves on the parcel (a function called per parcel cost 200 us a parcel).
CREATE FUNCTION core.parcel_pair_postings_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  -- As core.parcel_postings_maintain: one aggregate per statement over the transition tables, insertions in key
  -- order; an update that leaves the words and the county alone changes nothing here.
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.parcel_pair_postings;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO core.parcel_pair_postings AS pp (term_a, term_b, county_id, ids)
    WITH t AS MATERIALIZED (
      SELECT DISTINCT n.id, n.county_id, u.t
        FROM new_rows n CROSS JOIN LATERAL unnest(n.search_terms) AS u(t) JOIN core.parcel_pair_terms f ON f.term = u.t)
    SELECT a.t, b.t, a.county_id, array_agg(a.id::integer ORDER BY a.id)
      FROM t a JOIN t b ON b.id = a.id AND a.t < b.t
     GROUP BY a.t, b.t, a.county_id ORDER BY a.t, b.t, a.county_id
    ON CONFLICT (term_a, term_b, county_id) DO UPDATE SET ids = pp.ids | excluded.ids;
    RETURN NULL;
  ELSIF TG_OP = 'DELETE' THEN
    WITH t AS MATERIALIZED (
      SELECT DISTINCT o.id, o.county_id, u.t
        FROM old_rows o CROSS JOIN LATERAL unnest(o.search_terms) AS u(t) JOIN core.parcel_pair_terms f ON f.term = u.t)
    UPDATE core.parcel_pair_postings pp SET ids = pp.ids - d.ids
      FROM (SELECT a.t AS term_a, b.t AS term_b, a.county_id, array_agg(a.id::integer) AS ids
              FROM t a JOIN t b ON b.id = a.id AND a.t < b.t GROUP BY 1, 2, 3) d
     WHERE pp.term_a = d.term_a AND pp.term_b = d.term_b AND pp.county_id = d.county_id;
  ELSE
    -- a re-worded (or moved) parcel leaves the (pair, county) postings it lost and joins those it gained
    WITH c AS MATERIALIZED (
      SELECT o.id, o.county_id AS old_county, o.search_terms AS old_terms, n.county_id AS new_county, n.search_terms AS new_terms
        FROM old_rows o JOIN new_rows n USING (id)
       WHERE o.search_terms IS DISTINCT FROM n.search_terms OR o.county_id <> n.county_id),
    t AS MATERIALIZED (
      SELECT DISTINCT c.id, x.gained, x.county_id, u.t
        FROM c CROSS JOIN LATERAL (VALUES (false, c.old_county, c.old_terms), (true, c.new_county, c.new_terms)) AS x(gained, county_id, terms)
        CROSS JOIN LATERAL unnest(x.terms) AS u(t) JOIN core.parcel_pair_terms f ON f.term = u.t),
    p AS MATERIALIZED (SELECT a.id, a.county_id, a.t AS term_a, b.t AS term_b, a.gained
                         FROM t a JOIN t b ON b.id = a.id AND b.gained = a.gained AND a.t < b.t),
    d AS (SELECT id, county_id, term_a, term_b FROM p WHERE gained = false
          EXCEPT SELECT id, county_id, term_a, term_b FROM p WHERE gained = true)
    UPDATE core.parcel_pair_postings pp SET ids = pp.ids - g.ids
      FROM (SELECT term_a, term_b, county_id, array_agg(id::integer) AS ids FROM d GROUP BY 1, 2, 3) g
     WHERE pp.term_a = g.term_a AND pp.term_b = g.term_b AND pp.county_id = g.county_id;
    INSERT INTO core.parcel_pair_postings AS pp (term_a, term_b, county_id, ids)
    WITH c AS MATERIALIZED (
      SELECT o.id, o.county_id AS old_county, o.search_terms AS old_terms, n.county_id AS new_county, n.search_terms AS new_terms
        FROM old_rows o JOIN new_rows n USING (id)
       WHERE o.search_terms IS DISTINCT FROM n.search_terms OR o.county_id <> n.county_id),
    t AS MATERIALIZED (
      SELECT DISTINCT c.id, x.gained, x.county_id, u.t
        FROM c CROSS JOIN LATERAL (VALUES (false, c.old_county, c.old_terms), (true, c.new_county, c.new_terms)) AS x(gained, county_id, terms)
        CROSS JOIN LATERAL unnest(x.terms) AS u(t) JOIN core.parcel_pair_terms f ON f.term = u.t),
    p AS MATERIALIZED (SELECT a.id, a.county_id, a.t AS term_a, b.t AS term_b, a.gained
                         FROM t a JOIN t b ON b.id = a.id AND b.gained = a.gained AND a.t < b.t),
    d AS (SELECT id, county_id, term_a, term_b FROM p WHERE gained = true
          EXCEPT SELECT id, county_id, term_a, term_b FROM p WHERE gained = false)
    SELECT term_a, term_b, county_id, array_agg(id::integer ORDER BY id) FROM d GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (term_a, term_b, county_id) DO UPDATE SET ids = pp.ids | excluded.ids;
  END IF;
  DELETE FROM core.parcel_pair_postings WHERE ids = '{}';  -- a small partial index finds them
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.parcel_pair_postings_maintain() IS
  'Trigger function: applies a statement''s inserted / deleted / re-worded parcels to core.parcel_pair_postings.';

CREATE TRIGGER parcel_pair_postings_ins AFTER INSERT ON core.parcels
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_pair_postings_maintain();
CREATE TRIGGER parcel_pair_postings_upd AFTER UPDATE ON core.parcels
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_pair_postings_maintain();
CREATE TRIGGER parcel_pair_postings_del AFTER DELETE ON core.parcels
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_pair_postings_maintain();
CREATE TRIGGER parcel_pair_postings_truncate AFTER TRUNCATE ON core.parcels
  FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_pair_postings_maintain();

-- Choosing the paired terms: every term held by at least p_min_parcels parcels, by default 1% of the parcels and
-- never fewer than 1,000 (so that a small state pairs nothing), then the
-- pair postings rebuilt from the parcels. Run after a first load or when the vocabulary has shifted; it takes the
-- postings' lock order (the table first), so it waits for loads in flight rather than racing them.
CREATE FUNCTION core.choose_parcel_pairs(p_min_parcels integer DEFAULT NULL) RETURNS integer
  LANGUAGE plpgsql
AS $$
DECLARE
  v_min integer := coalesce(p_min_parcels,
                            greatest(1000, (SELECT c.reltuples FROM pg_class c WHERE c.oid = 'core.parcels'::regclass)::bigint / 100)::integer);
  v_terms integer;
BEGIN
  IF v_min < 1 THEN RAISE EXCEPTION 'choose_parcel_pairs: p_min_parcels must be at least 1' USING ERRCODE = '22023'; END IF;
  LOCK TABLE core.parcel_pair_postings, core.parcel_pair_terms IN EXCLUSIVE MODE;
  DELETE FROM core.parcel_pair_terms;
  INSERT INTO core.parcel_pair_terms (term) SELECT t.term FROM core.parcel_terms t WHERE t.parcels >= v_min;
  GET DIAGNOSTICS v_terms = ROW_COUNT;
  TRUNCATE core.parcel_pair_postings;
  INSERT INTO core.parcel_pair_postings (term_a, term_b, county_id, ids)
  WITH t AS MATERIALIZED (
    SELECT DISTINCT p.id, p.county_id, u.t
      FROM core.parcels p CROSS JOIN LATERAL unnest(p.search_terms) AS u(t) JOIN core.parcel_pair_terms f ON f.term = u.t)
  SELECT a.t, b.t, a.county_id, array_agg(a.id::integer ORDER BY a.id)
    FROM t a JOIN t b ON b.id = a.id AND a.t < b.t
   GROUP BY a.t, b.t, a.county_id;
  ANALYZE core.parcel_pair_terms, core.parcel_pair_postings;
  RETURN v_terms;
END $$;
COMMENT ON FUNCTION core.choose_parcel_pairs(integer) IS
  'Chooses the paired terms (held by at least p_min_parcels parcels; by default 1% of the parcels, at least 1,000) and '
  'rebuilds core.parcel_pair_postings; returns how many terms are paired. Example: SELECT core.choose_parcel_pairs();';

SELECT core.choose_parcel_pairs();

-- Down Migration
DROP TRIGGER parcel_pair_postings_truncate ON core.parcels;
DROP TRIGGER parcel_pair_postings_del ON core.parcels;
DROP TRIGGER parcel_pair_postings_upd ON core.parcels;
DROP TRIGGER parcel_pair_postings_ins ON core.parcels;
DROP FUNCTION core.choose_parcel_pairs(integer);
DROP FUNCTION core.parcel_pair_postings_maintain();
DROP TABLE core.parcel_pair_postings;
DROP TABLE core.parcel_pair_terms;
