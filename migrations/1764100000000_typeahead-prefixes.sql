-- Up Migration
-- Precomputed autocomplete for queries of one short word (1 to 3 characters: what a search box sends on the first
-- keystrokes): the candidates of each such word, ranked and scored as the live computation ranks them, statewide and
-- per county, so that a keystroke is one index read. Kept exact by statement triggers on core.parcels, inside the
-- writing transaction (an import, its rollback, a dry run). The functions that compute them are repeatable objects in
-- sql/search/autocomplete.sql; applying sql/ builds the tables once when they are empty and parcels exist.
CREATE TABLE core.typeahead_readings (
  word       text     PRIMARY KEY,
  terms      text[]   NOT NULL,
  qualities  float8[] NOT NULL
);
COMMENT ON TABLE core.typeahead_readings IS
  'Autocomplete''s statewide reading of every word of 1 to 3 characters that some search term starts with: the word '
  'itself when it is a term, and its most common completions (search.autocomplete_prefix_reading), best first. A '
  'change of a reading rebuilds the word''s suggestions in every county (core.typeahead_prefixes).';

CREATE TABLE core.typeahead_prefixes (
  word        text       NOT NULL,
  county_id   smallint   NOT NULL,
  ids         integer[]  NOT NULL,
  ranks       smallint[] NOT NULL,
  scores      float8[]   NOT NULL,
  by_address  boolean[]  NOT NULL,
  PRIMARY KEY (word, county_id)
);
COMMENT ON TABLE core.typeahead_prefixes IS
  'Autocomplete''s candidates for a query of one word of 1 to 3 characters, per county (county_id 0: statewide): the '
  'first 60 parcels (3 times the most suggestions) holding a term of the word''s reading (core.typeahead_readings), '
  'ordered by the rank of the best such term, then id, each with that rank, its score (the better of address and '
  'owner) and whether the address matches at least as well. Maintained by triggers on core.parcels.';

-- The trigger passes the (term, county) pairs a statement touched to search.typeahead_refresh: every term of an
-- inserted or deleted parcel, and of an updated one whose words, county or sides changed (its score may change even
-- where its terms did not). An update that leaves them alone (a geometry or value import) passes nothing.
CREATE FUNCTION core.parcel_typeahead_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
DECLARE
  v_terms text[];
  v_counties smallint[];
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.typeahead_prefixes;
    DELETE FROM core.typeahead_readings;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    SELECT array_agg(x.t), array_agg(x.c) INTO v_terms, v_counties
      FROM (SELECT DISTINCT t, n.county_id AS c FROM new_rows n, unnest(n.search_terms) AS t) x;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(x.t), array_agg(x.c) INTO v_terms, v_counties
      FROM (SELECT DISTINCT t, o.county_id AS c FROM old_rows o, unnest(o.search_terms) AS t) x;
  ELSE
    SELECT array_agg(x.t), array_agg(x.c) INTO v_terms, v_counties
      FROM (SELECT DISTINCT y.t, y.c
              FROM old_rows o JOIN new_rows n USING (id),
                   LATERAL (SELECT unnest(o.search_terms), o.county_id UNION SELECT unnest(n.search_terms), n.county_id) AS y(t, c)
             WHERE (o.search_terms, o.county_id, o.owner_search, o.address_search, o.site_address_full IS NULL)
                   IS DISTINCT FROM (n.search_terms, n.county_id, n.owner_search, n.address_search, n.site_address_full IS NULL)) x;
  END IF;
  IF v_terms IS NOT NULL THEN
    PERFORM search.typeahead_refresh(v_terms, v_counties);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.parcel_typeahead_maintain() IS
  'Trigger function: passes the (term, county) pairs of a statement''s inserted, deleted and re-worded parcels to '
  'search.typeahead_refresh, which rebuilds the precomputed autocomplete they affect.';

-- (named to fire after the parcel_terms and parcel_postings triggers, whose counts and postings it reads)
CREATE TRIGGER parcel_typeahead_ins AFTER INSERT ON core.parcels
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_typeahead_maintain();
CREATE TRIGGER parcel_typeahead_upd AFTER UPDATE ON core.parcels
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_typeahead_maintain();
CREATE TRIGGER parcel_typeahead_del AFTER DELETE ON core.parcels
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_typeahead_maintain();
CREATE TRIGGER parcel_typeahead_truncate AFTER TRUNCATE ON core.parcels
  FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_typeahead_maintain();

-- Down Migration
DROP TRIGGER parcel_typeahead_truncate ON core.parcels;
DROP TRIGGER parcel_typeahead_del ON core.parcels;
DROP TRIGGER parcel_typeahead_upd ON core.parcels;
DROP TRIGGER parcel_typeahead_ins ON core.parcels;
DROP FUNCTION core.parcel_typeahead_maintain();
DROP TABLE core.typeahead_prefixes;
DROP TABLE core.typeahead_readings;
