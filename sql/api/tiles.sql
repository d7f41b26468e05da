-- Parcels as Mapbox Vector Tiles (GET /v1/tiles/parcels/{z}/{x}/{y}.mvt, and tile servers or psql): one layer,
-- `parcels`, in Web Mercator (EPSG:3857) tiles of the XYZ scheme (y counted from the north).

CREATE FUNCTION api.parcel_tile_zooms(OUT min_zoom integer, OUT polygon_zoom integer, OUT max_zoom integer)
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$ BEGIN min_zoom := 14; polygon_zoom := 15; max_zoom := 22; END $$;
COMMENT ON FUNCTION api.parcel_tile_zooms() IS
  'The zoom rules of api.parcel_tile: below min_zoom every tile is empty; from min_zoom to polygon_zoom - 1 parcels '
  'are points (a point inside each polygon); from polygon_zoom up, polygons; z above max_zoom is refused (22023).';

CREATE FUNCTION api.parcel_tile(p_z integer, p_x integer, p_y integer) RETURNS bytea
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_zooms record := api.parcel_tile_zooms();
  v_side bigint;
  v_tile geometry;    -- the tile in EPSG:3857, what ST_AsMVTGeom scales to the 4096 grid
  v_search geometry;  -- the tile and its 64-unit buffer in EPSG:4326, what the indexes are searched with
  v_mvt bytea;
BEGIN
  IF p_z IS NULL OR p_z < 0 OR p_z > v_zooms.max_zoom THEN
    PERFORM core.bad_input(format('z: must be a zoom level from 0 to %s', v_zooms.max_zoom));
  END IF;
  v_side := 1::bigint << p_z;
  IF p_x IS NULL OR p_x < 0 OR p_x >= v_side THEN
    PERFORM core.bad_input(format('x: must be from 0 to %s at zoom %s', v_side - 1, p_z));
  END IF;
  IF p_y IS NULL OR p_y < 0 OR p_y >= v_side THEN
    PERFORM core.bad_input(format('y: must be from 0 to %s at zoom %s', v_side - 1, p_z));
  END IF;
  IF p_z < v_zooms.min_zoom THEN
    RETURN ''::bytea;
  END IF;
  v_tile := ST_TileEnvelope(p_z, p_x, p_y);
  -- a Web Mercator rectangle is a longitude/latitude rectangle: its transformed corners bound it exactly
  v_search := ST_Transform(ST_TileEnvelope(p_z, p_x, p_y, margin => 64.0 / 4096), 4326);
  -- (ST_AsMVT leaves out the rows whose geometry ST_AsMVTGeom clipped away, NULL: a filter on it would compute every
  -- geometry twice)
  IF p_z >= v_zooms.polygon_zoom THEN
    SELECT ST_AsMVT(t, 'parcels', 4096, 'geom', 'fid') INTO v_mvt
      FROM (SELECT p.id AS fid, p.id, p.parcel_id, c.slug AS county, p.dor_use_code, p.just_value::float8 AS just_value,
                   p.owner_name, ST_AsMVTGeom(ST_Transform(p.geom, 3857), v_tile, 4096, 64, true) AS geom
              FROM core.parcels p
              JOIN core.counties c ON c.id = p.county_id
             WHERE p.geom && v_search) t;
  ELSE
    SELECT ST_AsMVT(t, 'parcels', 4096, 'geom', 'fid') INTO v_mvt
      FROM (SELECT p.id AS fid, p.id, p.dor_use_code,
                   ST_AsMVTGeom(ST_Transform(p.centroid, 3857), v_tile, 4096, 0, true) AS geom
              FROM core.parcels p
             WHERE p.centroid && v_search) t;
  END IF;
  RETURN coalesce(v_mvt, ''::bytea);
END $$;
COMMENT ON FUNCTION api.parcel_tile(integer, integer, integer) IS
  'GET /v1/tiles/parcels/{z}/{x}/{y}.mvt: one Mapbox Vector Tile (extent 4096, buffer 64) with the layer parcels. From '
  'zoom 15 (api.parcel_tile_zooms) each mapped parcel is its polygon with the properties id, parcel_id, county (slug), '
  'dor_use_code, just_value and owner_name; at zoom 14 a point inside the parcel with id and dor_use_code; the feature '
  'id is the parcel id. Below zoom 14, and where no parcel is, the tile is empty (zero bytes). x and y must be in 0 .. '
  '2^z - 1 and z in 0 .. 22 (22023 otherwise). Example: SELECT length(api.parcel_tile(16, 18212, 28803));';
