-- Up Migration
-- Postings for parcel search: for every search word and county, the sorted ids of the county's parcels holding the
-- word. A query's matches, exact total and page tiers are then intersections and unions of a few integer arrays
-- (intarray, a contrib module of PostgreSQL); core.parcels is read only for the page's rows and the parcels whose owner
-- or address is the query's text (by their hash indexes). Through the GIN index, counting or ranking the matches read
-- every matching row's heap page (PostgreSQL 15 fetches them even for count(*)): DEBORAH & statewide read 22,718
-- pages. Per county, so that a county's load rewrites only its own postings and a county-scoped search reads only its
-- county's.
CREATE EXTENSION IF NOT EXISTS intarray;

CREATE TABLE core.parcel_postings (
  term       text     NOT NULL,
  county_id  smallint NOT NULL REFERENCES core.counties (id),
  ids        integer[] NOT NULL,
  PRIMARY KEY (term, county_id)
);
-- large arrays are read whole and often: stored out of line uncompressed, so that reading one costs a copy
ALTER TABLE core.parcel_postings ALTER COLUMN ids SET STORAGE EXTERNAL;
CREATE INDEX parcel_postings_empty_idx ON core.parcel_postings (term) WHERE ids = '{}';
COMMENT ON TABLE core.parcel_postings IS
  'Postings of parcel search: for each word of core.parcels.search_terms and county, the ids (ascending, as integers) '
  'of the county''s parcels holding the word; maintained by triggers on core.parcels. The sum of a term''s counts '
  'over counties is its core.parcel_terms.parcels. Ids are stored as integers: a parcel id beyond 2,147,483,647 makes '
  'the write that adds it fail (integer out of range).';

-- intarray's union (sorted, without duplicates) as an aggregate: the parcels holding any of a word's terms
CREATE AGGREGATE core.id_union(integer[]) (SFUNC = _int_union, STYPE = integer[], INITCOND = '{}', PARALLEL = SAFE);
COMMENT ON AGGREGATE core.id_union(integer[]) IS
  'The sorted union, without duplicates, of sorted integer arrays (intarray''s |). Example: SELECT core.id_union(ids) FROM core.parcel_postings WHERE term IN (''SMITH'', ''SMYTH'') AND county_id = 13;';

CREATE FUNCTION core.parcel_postings_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  -- One aggregate per statement over the transition tables, insertions in key order (two counties loading at once
  -- lock no row of each other's: the key holds the county). An update that leaves the words and the county alone (a
  -- geometry or value import) changes nothing here.
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.parcel_postings;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO core.parcel_postings AS pp (term, county_id, ids)
    SELECT t, n.county_id, array_agg(n.id::integer ORDER BY n.id)
      FROM new_rows n, LATERAL (SELECT DISTINCT unnest(n.search_terms)) AS u(t)
     GROUP BY t, n.county_id ORDER BY t, n.county_id
    ON CONFLICT (term, county_id) DO UPDATE SET ids = pp.ids | excluded.ids;
    RETURN NULL;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE core.parcel_postings pp SET ids = pp.ids - d.ids
      FROM (SELECT t, o.county_id, array_agg(o.id::integer) AS ids
              FROM old_rows o, LATERAL (SELECT DISTINCT unnest(o.search_terms)) AS u(t) GROUP BY t, o.county_id) d
     WHERE pp.term = d.t AND pp.county_id = d.county_id;
  ELSE
    -- a re-worded (or moved) parcel leaves the postings of the (word, county) pairs it lost and joins those it gained
    UPDATE core.parcel_postings pp SET ids = pp.ids - d.ids
      FROM (SELECT x.t, x.c, array_agg(o.id::integer) AS ids
              FROM old_rows o JOIN new_rows n USING (id),
                   LATERAL (SELECT unnest(o.search_terms), o.county_id EXCEPT SELECT unnest(n.search_terms), n.county_id) AS x(t, c)
             WHERE o.search_terms IS DISTINCT FROM n.search_terms OR o.county_id <> n.county_id
             GROUP BY x.t, x.c) d
     WHERE pp.term = d.t AND pp.county_id = d.c;
    INSERT INTO core.parcel_postings AS pp (term, county_id, ids)
    SELECT x.t, x.c, array_agg(n.id::integer ORDER BY n.id)
      FROM old_rows o JOIN new_rows n USING (id),
           LATERAL (SELECT unnest(n.search_terms), n.county_id EXCEPT SELECT unnest(o.search_terms), o.county_id) AS x(t, c)
     WHERE o.search_terms IS DISTINCT FROM n.search_terms OR o.county_id <> n.county_id
     GROUP BY x.t, x.c ORDER BY x.t, x.c
    ON CONFLICT (term, county_id) DO UPDATE SET ids = pp.ids | excluded.ids;
  END IF;
  DELETE FROM core.parcel_postings WHERE ids = '{}';  -- a small partial index finds them
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.parcel_postings_maintain() IS
  'Trigger function: applies a statement''s inserted / deleted / re-worded parcels to core.parcel_postings.';

CREATE TRIGGER parcel_postings_ins AFTER INSERT ON core.parcels
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_postings_maintain();
CREATE TRIGGER parcel_postings_upd AFTER UPDATE ON core.parcels
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_postings_maintain();
CREATE TRIGGER parcel_postings_del AFTER DELETE ON core.parcels
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_postings_maintain();
CREATE TRIGGER parcel_postings_truncate AFTER TRUNCATE ON core.parcels
  FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_postings_maintain();

INSERT INTO core.parcel_postings (term, county_id, ids)
SELECT t, p.county_id, array_agg(p.id::integer ORDER BY p.id)
  FROM core.parcels p, LATERAL (SELECT DISTINCT unnest(p.search_terms)) AS u(t)
 GROUP BY t, p.county_id;

-- Down Migration
DROP TRIGGER parcel_postings_truncate ON core.parcels;
DROP TRIGGER parcel_postings_del ON core.parcels;
DROP TRIGGER parcel_postings_upd ON core.parcels;
DROP TRIGGER parcel_postings_ins ON core.parcels;
DROP FUNCTION core.parcel_postings_maintain();
DROP AGGREGATE core.id_union(integer[]) CASCADE;  -- with the api functions that use it (sql/api re-creates them)
DROP TABLE core.parcel_postings;
