-- Up Migration
-- A bulk first load (scripts/load-state.ts into an empty database) builds the precomputed autocomplete once, after its
-- last county, as it builds the secondary indexes (a county's load changes the statewide reading of many words, and
-- each such word is rebuilt in every county already loaded: work that grows with the square of the counties).
-- While ingest.deferred_indexes lists indexes (a bulk first load is under way, or was killed and not yet finished
-- by the next load or `make db`), the trigger leaves the tables alone; whoever builds the indexes then builds them
-- (search.typeahead_build_missing: the tables are still empty).
CREATE OR REPLACE FUNCTION core.parcel_typeahead_maintain() RETURNS trigger
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
  ELSIF EXISTS (SELECT FROM ingest.deferred_indexes) THEN
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
  'search.typeahead_refresh, which rebuilds the precomputed autocomplete they affect; nothing while a bulk first '
  'load defers indexes (ingest.deferred_indexes), after which the whole is built once.';

-- Down Migration
CREATE OR REPLACE FUNCTION core.parcel_typeahead_maintain() RETURNS trigger
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
