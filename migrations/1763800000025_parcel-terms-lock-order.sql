-- Up Migration
-- Two counties may load at the same time (`make load-data` runs two lanes). Their merges add the same common words
-- (SMITH, MAIN, ...) to core.parcel_terms; upserting them in term order makes every transaction take those row
-- locks in the same order, so one waits for the other instead of deadlocking. Same function otherwise.
CREATE OR REPLACE FUNCTION core.parcel_terms_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  -- One aggregate per statement over the transition tables; an update that leaves the words alone (a geometry or
  -- value import) changes nothing here.
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.parcel_terms;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO core.parcel_terms AS v (term, parcels)
    SELECT t, count(*) FROM new_rows, LATERAL (SELECT DISTINCT unnest(search_terms)) AS u(t) GROUP BY t ORDER BY t
    ON CONFLICT (term) DO UPDATE SET parcels = v.parcels + excluded.parcels;
    RETURN NULL;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE core.parcel_terms v SET parcels = v.parcels - d.n
      FROM (SELECT t, count(*) AS n FROM old_rows, LATERAL (SELECT DISTINCT unnest(search_terms)) AS u(t) GROUP BY t) d
     WHERE v.term = d.t;
  ELSE
    WITH delta AS (
      SELECT t, sum(d)::integer AS d FROM (
        SELECT t, 1 AS d FROM old_rows o JOIN new_rows n USING (id), LATERAL (SELECT DISTINCT unnest(n.search_terms)) AS u(t)
         WHERE o.search_terms IS DISTINCT FROM n.search_terms
        UNION ALL
        SELECT t, -1 FROM old_rows o JOIN new_rows n USING (id), LATERAL (SELECT DISTINCT unnest(o.search_terms)) AS u(t)
         WHERE o.search_terms IS DISTINCT FROM n.search_terms) x
      GROUP BY t HAVING sum(d) <> 0
    ), gained AS (
      INSERT INTO core.parcel_terms AS v (term, parcels)
      SELECT t, d FROM delta WHERE d > 0 ORDER BY t
      ON CONFLICT (term) DO UPDATE SET parcels = v.parcels + excluded.parcels
    )
    UPDATE core.parcel_terms v SET parcels = v.parcels + delta.d FROM delta WHERE delta.d < 0 AND v.term = delta.t;
  END IF;
  DELETE FROM core.parcel_terms WHERE parcels = 0;  -- a small partial index finds them
  RETURN NULL;
END $$;

-- Down Migration
-- The previous body differs only by the two ORDER BY t; it stays correct without them.
SELECT 1;
