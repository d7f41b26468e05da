-- The explorer's offline base map as Mapbox Vector Tiles (GET /explorer/basemap/{z}/{x}/{y}.mvt, tile servers or
-- psql): Florida's land, the counties as their mapped parcels show them, and every county's name, from
-- core.florida_outline and core.county_shapes (docs/formats.md#base-map). Web Mercator, XYZ scheme.

CREATE FUNCTION api.basemap_tile(p_z integer, p_x integer, p_y integer) RETURNS bytea
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  c_max_zoom constant integer := 22;
  v_side bigint;
  v_tile geometry;    -- the tile in EPSG:3857, what ST_AsMVTGeom scales to the 4096 grid
  v_search geometry;  -- the tile and its 64-unit buffer in EPSG:4326
  v_land bytea;
  v_counties bytea;
  v_labels bytea;
BEGIN
  IF p_z IS NULL OR p_z < 0 OR p_z > c_max_zoom THEN
    PERFORM core.bad_input(format('z: must be a zoom level from 0 to %s', c_max_zoom));
  END IF;
  v_side := 1::bigint << p_z;
  IF p_x IS NULL OR p_x < 0 OR p_x >= v_side THEN
    PERFORM core.bad_input(format('x: must be from 0 to %s at zoom %s', v_side - 1, p_z));
  END IF;
  IF p_y IS NULL OR p_y < 0 OR p_y >= v_side THEN
    PERFORM core.bad_input(format('y: must be from 0 to %s at zoom %s', v_side - 1, p_z));
  END IF;
  v_tile := ST_TileEnvelope(p_z, p_x, p_y);
  -- a Web Mercator rectangle is a longitude/latitude rectangle: its transformed corners bound it exactly
  v_search := ST_Transform(ST_TileEnvelope(p_z, p_x, p_y, margin => 64.0 / 4096), 4326);
  SELECT ST_AsMVT(t, 'florida', 4096, 'geom') INTO v_land
    FROM (SELECT 'Florida' AS name, ST_AsMVTGeom(ST_Transform(o.geom, 3857), v_tile, 4096, 64, true) AS geom
            FROM core.florida_outline o
           WHERE o.geom && v_search) t;
  SELECT ST_AsMVT(t, 'counties', 4096, 'geom', 'fid') INTO v_counties
    FROM (SELECT s.county_id::integer AS fid, c.name, c.slug, s.parcels_mapped,
                 ST_AsMVTGeom(ST_Transform(s.shape, 3857), v_tile, 4096, 64, true) AS geom
            FROM core.county_shapes s
            JOIN core.counties c ON c.id = s.county_id
           WHERE s.shape && v_search) t;
  SELECT ST_AsMVT(t, 'county_labels', 4096, 'geom', 'fid') INTO v_labels
    FROM (SELECT s.county_id::integer AS fid, c.name, c.slug, c.parcel_count, s.parcels_mapped,
                 s.shape IS NOT NULL AS mapped, s.seat,
                 ST_AsMVTGeom(ST_Transform(s.label_point, 3857), v_tile, 4096, 64, true) AS geom
            FROM core.county_shapes s
            JOIN core.counties c ON c.id = s.county_id
           WHERE s.label_point && v_search) t;
  RETURN coalesce(v_land, ''::bytea) || coalesce(v_counties, ''::bytea) || coalesce(v_labels, ''::bytea);
END $$;
COMMENT ON FUNCTION api.basemap_tile(integer, integer, integer) IS
  'GET /explorer/basemap/{z}/{x}/{y}.mvt: one Mapbox Vector Tile (extent 4096, buffer 64) of the offline base map, '
  'three layers: florida (the state''s land, a coarse outline, property name), counties (the area each county''s '
  'mapped parcels cover, from core.county_shapes; properties name, slug, parcels_mapped; feature id the county id) '
  'and county_labels (a point per county, all 67: inside its shape, else at its seat; properties name, slug, '
  'parcel_count, parcels_mapped, mapped, seat). Where nothing is, zero bytes. x and y must be in 0 .. 2^z - 1 and z '
  'in 0 .. 22 (22023 otherwise). Example: SELECT length(api.basemap_tile(6, 17, 26));';
