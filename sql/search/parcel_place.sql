-- Parcel search, place: near (a radius on the sphere), a box and a point, and their page when place is the only filter.

-- The sphere PostGIS measures geography on when told not to use the spheroid (ST_Distance(g1, g2, false),
-- ST_DWithin(g1, g2, r, false)): WGS 84's mean radius (2a + b) / 3, in metres.
CREATE FUNCTION search.sphere_radius_m() RETURNS float8
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN 6371008.771415059;
COMMENT ON FUNCTION search.sphere_radius_m() IS
  'Helper of the near search: the radius, in metres, of the sphere PostGIS measures geography on without the spheroid.';

CREATE FUNCTION search.near_box(p_lat float8, p_radius_m float8, OUT dlat float8, OUT dlng float8)
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  dlat := p_radius_m / 110574 * 1.01;
  dlng := p_radius_m / (111320 * cos(radians(p_lat))) * 1.01;
END $$;
COMMENT ON FUNCTION search.near_box(float8, float8) IS
  'Helper of the near search: half sizes, in degrees, of the lat/lng box 1% larger than a circle of p_radius_m metres around a point at latitude p_lat.';

-- A lat/lng box as a geometry literal: cheaper for the planner than the calls that would make it.
CREATE FUNCTION search.parcel_box_literal(p_lng float8, p_lat float8, p_dlng float8, p_dlat float8) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN quote_literal(ST_MakeEnvelope(p_lng - p_dlng, p_lat - p_dlat, p_lng + p_dlng, p_lat + p_dlat, 4326)::text) || '::geometry';
COMMENT ON FUNCTION search.parcel_box_literal(float8, float8, float8, float8) IS
  'Helper of parcel_where: the box lng +- dlng, lat +- dlat (degrees) as an EPSG:4326 geometry literal.';

-- Intersects a box: GEOS only for parcels whose bounding box does not lie inside it. @ compares the float4 boxes stored
-- with geometries (rounded outward), so it is given the box shrunk by a float4 step (NULL when too thin to shrink). A
-- CASE, not OR: the planner would scan the index once per arm of an OR.
CREATE FUNCTION search.parcel_box(p_bbox float8[], OUT env geometry, OUT inner_env geometry)
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  u float8 := greatest(abs(p_bbox[1]), abs(p_bbox[3]), abs(p_bbox[2]), abs(p_bbox[4])) * 2 ^ -23;
BEGIN
  env := ST_MakeEnvelope(p_bbox[1], p_bbox[2], p_bbox[3], p_bbox[4], 4326);
  IF p_bbox[3] - p_bbox[1] > 2 * u AND p_bbox[4] - p_bbox[2] > 2 * u THEN
    inner_env := ST_MakeEnvelope(p_bbox[1] + u, p_bbox[2] + u, p_bbox[3] - u, p_bbox[4] - u, 4326);
  END IF;
END $$;
COMMENT ON FUNCTION search.parcel_box(float8[]) IS
  'Helper of parcel search: a bbox {minLng,minLat,maxLng,maxLat} as an envelope, and the same shrunk by a float4 step (NULL when too thin), for search.parcel_in_box.';

CREATE FUNCTION search.parcel_in_box(p_geom geometry, p_env geometry, p_inner_env geometry) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_geom && p_env AND CASE WHEN p_geom @ p_inner_env THEN true ELSE ST_Intersects(p_geom, p_env) END $$;
COMMENT ON FUNCTION search.parcel_in_box(geometry, geometry, geometry) IS
  'Helper of parcel search (inlined, so the && uses the polygon index): does a parcel''s polygon intersect the box of search.parcel_box.';

-- A point or a box alone, in id order: static statements (plans cached per session; the dynamic path writes the
-- geometries as literals and plans twice a request, page and count, longer than either runs). A point's matches are
-- few (parcels stacked over one spot), so all are read once for the page and the total. A box's page and total come
-- from one scan: the count over every match rides along (a window) to the top-N sort by id.
CREATE FUNCTION search.parcel_page_by_place(f search.parcel_filter, p_limit integer, p_offset integer, p_with_total boolean,
  OUT ids bigint[], OUT total integer)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_all bigint[];
  v_pt geometry;
  v_box record;
BEGIN
  IF f.point_lng IS NOT NULL THEN
    v_pt := ST_SetSRID(ST_MakePoint(f.point_lng, f.point_lat), 4326);
    SELECT array_agg(p.id ORDER BY p.id) INTO v_all FROM core.parcels p WHERE p.geom && v_pt AND ST_Intersects(p.geom, v_pt);
    ids := coalesce(v_all[p_offset + 1 : p_offset + p_limit], '{}');
    total := CASE WHEN p_with_total THEN coalesce(cardinality(v_all), 0) END;
    RETURN;
  END IF;
  SELECT * INTO v_box FROM search.parcel_box(f.bbox);
  SELECT array_agg(t.id ORDER BY t.id), max(t.n) INTO ids, total
    FROM (SELECT p.id, count(*) OVER () AS n FROM core.parcels p
           WHERE search.parcel_in_box(p.geom, v_box.env, v_box.inner_env)
           ORDER BY p.id LIMIT p_limit OFFSET p_offset) t;
  ids := coalesce(ids, '{}');
  IF NOT p_with_total THEN
    total := NULL;
  ELSIF total IS NULL THEN  -- a page past the end: count on its own
    SELECT count(*) INTO total FROM core.parcels p WHERE search.parcel_in_box(p.geom, v_box.env, v_box.inner_env);
  END IF;
END $$;
COMMENT ON FUNCTION search.parcel_page_by_place(search.parcel_filter, integer, integer, boolean) IS
  'Helper of parcel_search_page for a filter of a point alone or a bbox alone, sorted by id: the page''s ids and (with '
  'p_with_total) the exact total, by statements planned once per session.';
