-- Up Migration
-- Exact parcel counts per county, DOR use code, appraiser use code, city and ZIP, kept by statement-level triggers in
-- the writing transaction: the total and the facets of a search whose filters are only among those five (for
-- example every single-family home in Miami-Dade) are sums over this small table instead of counts over the rows.
-- The columns carry the names of core.parcels' own, so the same WHERE clause applies to both.
CREATE TABLE core.parcel_facet_counts (
  county_id          smallint NOT NULL REFERENCES core.counties(id),
  dor_use_code       text,
  property_use_code  text,
  site_city          text,
  site_zip           text,
  parcels            integer NOT NULL CHECK (parcels >= 0),
  UNIQUE NULLS NOT DISTINCT (county_id, dor_use_code, property_use_code, site_city, site_zip)
);
CREATE INDEX parcel_facet_counts_unused_idx ON core.parcel_facet_counts (county_id) WHERE parcels = 0;
COMMENT ON TABLE core.parcel_facet_counts IS
  'Exact number of core.parcels rows per county, dor_use_code, property_use_code, site_city and site_zip, '
  'maintained by triggers on core.parcels.';

CREATE FUNCTION core.parcel_facet_counts_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.parcel_facet_counts;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO core.parcel_facet_counts AS f (county_id, dor_use_code, property_use_code, site_city, site_zip, parcels)
    SELECT county_id, dor_use_code, property_use_code, site_city, site_zip, count(*) FROM new_rows GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (county_id, dor_use_code, property_use_code, site_city, site_zip)
      DO UPDATE SET parcels = f.parcels + excluded.parcels;
    RETURN NULL;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE core.parcel_facet_counts f SET parcels = f.parcels - d.n
      FROM (SELECT county_id, dor_use_code, property_use_code, site_city, site_zip, count(*) AS n
              FROM old_rows GROUP BY 1, 2, 3, 4, 5) d
     WHERE f.county_id = d.county_id AND f.dor_use_code IS NOT DISTINCT FROM d.dor_use_code
       AND f.property_use_code IS NOT DISTINCT FROM d.property_use_code
       AND f.site_city IS NOT DISTINCT FROM d.site_city AND f.site_zip IS NOT DISTINCT FROM d.site_zip;
  ELSE
    WITH moved AS (
      SELECT o.county_id AS oc, o.dor_use_code AS od, o.property_use_code AS op, o.site_city AS oy, o.site_zip AS oz,
             n.county_id AS nc, n.dor_use_code AS nd, n.property_use_code AS np, n.site_city AS ny, n.site_zip AS nz
        FROM old_rows o JOIN new_rows n USING (id)
       WHERE (o.county_id, o.dor_use_code, o.property_use_code, o.site_city, o.site_zip)
             IS DISTINCT FROM (n.county_id, n.dor_use_code, n.property_use_code, n.site_city, n.site_zip)
    ), delta AS (
      SELECT c, d, p, y, z, sum(k)::integer AS k FROM (
        SELECT nc AS c, nd AS d, np AS p, ny AS y, nz AS z, 1 AS k FROM moved
        UNION ALL
        SELECT oc, od, op, oy, oz, -1 FROM moved) x
      GROUP BY 1, 2, 3, 4, 5 HAVING sum(k) <> 0
    ), gained AS (
      INSERT INTO core.parcel_facet_counts AS f (county_id, dor_use_code, property_use_code, site_city, site_zip, parcels)
      SELECT c, d, p, y, z, k FROM delta WHERE k > 0
      ON CONFLICT (county_id, dor_use_code, property_use_code, site_city, site_zip)
        DO UPDATE SET parcels = f.parcels + excluded.parcels
    )
    UPDATE core.parcel_facet_counts f SET parcels = f.parcels + delta.k
      FROM delta
     WHERE delta.k < 0 AND f.county_id = delta.c AND f.dor_use_code IS NOT DISTINCT FROM delta.d
       AND f.property_use_code IS NOT DISTINCT FROM delta.p AND f.site_city IS NOT DISTINCT FROM delta.y
       AND f.site_zip IS NOT DISTINCT FROM delta.z;
  END IF;
  DELETE FROM core.parcel_facet_counts WHERE parcels = 0;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.parcel_facet_counts_maintain() IS
  'Trigger function: applies a statement''s inserted / deleted / re-classified parcels to core.parcel_facet_counts.';

CREATE TRIGGER parcel_facet_counts_ins AFTER INSERT ON core.parcels
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_facet_counts_maintain();
CREATE TRIGGER parcel_facet_counts_upd AFTER UPDATE ON core.parcels
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_facet_counts_maintain();
CREATE TRIGGER parcel_facet_counts_del AFTER DELETE ON core.parcels
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_facet_counts_maintain();
CREATE TRIGGER parcel_facet_counts_truncate AFTER TRUNCATE ON core.parcels
  FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_facet_counts_maintain();

INSERT INTO core.parcel_facet_counts (county_id, dor_use_code, property_use_code, site_city, site_zip, parcels)
SELECT county_id, dor_use_code, property_use_code, site_city, site_zip, count(*) FROM core.parcels GROUP BY 1, 2, 3, 4, 5;

-- Down Migration
DROP TRIGGER parcel_facet_counts_truncate ON core.parcels;
DROP TRIGGER parcel_facet_counts_del ON core.parcels;
DROP TRIGGER parcel_facet_counts_upd ON core.parcels;
DROP TRIGGER parcel_facet_counts_ins ON core.parcels;
DROP FUNCTION core.parcel_facet_counts_maintain();
DROP TABLE core.parcel_facet_counts;
