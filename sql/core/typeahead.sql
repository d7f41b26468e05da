-- The trigger function that keeps the precomputed autocomplete (sql/search/autocomplete.sql) in step with
-- core.parcels; the triggers themselves are in migrations/1764100000000_typeahead-prefixes.sql.
-- Empty means not built: search.typeahead_build_missing (after a bulk first load's indexes, and in `make db`) builds
-- the tables when they are empty. So a parcel written while ingest.deferred_indexes lists indexes, which the trigger
-- does not follow, empties them: they are never left stale and looking built (a deferral over a database whose
-- autocomplete was built, for example a killed load run again by hand).
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
    IF EXISTS (SELECT FROM core.typeahead_readings) OR EXISTS (SELECT FROM core.typeahead_prefixes) THEN
      DELETE FROM core.typeahead_prefixes;
      DELETE FROM core.typeahead_readings;
    END IF;
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
  'search.typeahead_refresh, which rebuilds the precomputed autocomplete they affect; while a bulk first load '
  'defers indexes (ingest.deferred_indexes) it only empties the tables, which are built whole once the indexes are '
  '(search.typeahead_build_missing: empty means not built).';
