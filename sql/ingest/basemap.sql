-- The base map's county shapes (docs/formats.md#base-map), recomputed from the mapped parcels after a load
-- (`make basemap`, which `make load-data` runs; scripts/basemap.ts): every county, or the counties named.

CREATE OR REPLACE FUNCTION ingest.refresh_county_shapes(p_county_ids smallint[] DEFAULT NULL)
  RETURNS TABLE (county_id smallint, parcels_mapped integer, mapped boolean)
  LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  c_cell constant float8 := 0.01;     -- grid step, degrees (about 1 km)
  c_close constant float8 := 0.01;    -- gaps up to twice this between covered cells are closed
  c_simplify constant float8 := 0.002;
BEGIN
  RETURN QUERY
  WITH targets AS (
    SELECT c.id FROM core.counties c WHERE p_county_ids IS NULL OR c.id = ANY (p_county_ids)),
  cells AS (
    SELECT p.county_id, floor(ST_X(p.centroid) / c_cell)::integer AS ix,
           floor(ST_Y(p.centroid) / c_cell)::integer AS iy, count(*) AS n
      FROM core.parcels p
     WHERE p.county_id IN (SELECT t.id FROM targets t) AND p.centroid IS NOT NULL
     GROUP BY 1, 2, 3),
  -- each row's consecutive cells as one rectangle: a few dozen boxes per county to union instead of thousands
  runs AS (
    SELECT r.county_id, r.iy, min(r.ix) AS x0, max(r.ix) AS x1, sum(r.n) AS n
      FROM (SELECT cells.*, cells.ix - row_number() OVER (PARTITION BY cells.county_id, cells.iy ORDER BY cells.ix) AS run
              FROM cells) r
     GROUP BY r.county_id, r.iy, r.run),
  covered AS (
    SELECT runs.county_id, sum(runs.n)::integer AS n,
           ST_Union(ST_MakeEnvelope(runs.x0 * c_cell, runs.iy * c_cell, (runs.x1 + 1) * c_cell, (runs.iy + 1) * c_cell,
                                    4326)) AS area
      FROM runs GROUP BY 1),
  -- closed (grown, then shrunk) and simplified while grown, shrunk by that much less: every covered cell stays inside
  shapes AS (
    SELECT covered.county_id, covered.n,
           ST_Multi(ST_CollectionExtract(ST_MakeValid(ST_Buffer(
             ST_SimplifyPreserveTopology(ST_Buffer(covered.area, c_close, 'quad_segs=2'), c_simplify),
             c_simplify - c_close, 'quad_segs=2')), 3)) AS shape
      FROM covered),
  written AS (
    UPDATE core.county_shapes s
       SET shape = sh.shape,
           parcels_mapped = coalesce(sh.n, 0),
           label_point = CASE WHEN sh.shape IS NULL THEN s.seat_point
                              ELSE (ST_MaximumInscribedCircle(sh.shape)).center END,
           refreshed_at = now()
      FROM targets t LEFT JOIN shapes sh ON sh.county_id = t.id
     WHERE s.county_id = t.id
    RETURNING s.county_id, s.parcels_mapped, s.shape IS NOT NULL)
  SELECT * FROM written ORDER BY 1;
END $$;
COMMENT ON FUNCTION ingest.refresh_county_shapes(smallint[]) IS
  'Recomputes core.county_shapes for the given counties (all when NULL) from their parcels'' centroids: the union of '
  'the 0.01-degree cells holding one, gaps to about 2 km closed, simplified to 0.002 degrees; its name placed at the '
  'centre of the largest circle inside it; a county with no mapped parcel gets no shape and its name at its seat. '
  'Returns each county with the parcels its shape was drawn from.';
