-- Parcels as GeoJSON Features (RFC 7946): what GET /v1/parcels/search, /parcels/{id} and /parcels/by-parcel-id answer
-- with format=geojson. The properties are the parcels' ParcelHit rows (so they are the JSON answer's fields), the
-- geometry the parcel's polygon written here by ST_AsGeoJSON.

CREATE FUNCTION api.parcel_features(p_ids bigint[]) RETURNS TABLE (id bigint, feature text)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  -- row_to_json keeps the columns' order and writes compact JSON; the geometry text is embedded as it is (json, not
  -- jsonb, which would reorder the keys). Exterior rings counterclockwise, holes clockwise: RFC 7946's right-hand
  -- rule, which the imported polygons do not all follow. One part: a Polygon, as in ParcelHit.geometry. (The rows
  -- are the search's own, search.parcel_rows, taken whole: a set-returning function called per id would not be
  -- inlined.)
  RETURN QUERY
  SELECT h.id::bigint,
         row_to_json(f)::text
    FROM search.parcel_rows(p_ids, false) h
    JOIN core.parcels p ON p.id = h.id
    CROSS JOIN LATERAL (
      SELECT 'Feature' AS type,
             h.id,
             CASE WHEN p.geom IS NOT NULL THEN
               ST_AsGeoJSON(ST_ForcePolygonCCW(CASE WHEN ST_NumGeometries(p.geom) = 1 THEN ST_GeometryN(p.geom, 1)
                                                    ELSE p.geom END), 7)::json
             END AS geometry,
             (SELECT row_to_json(x) FROM (
                SELECT h.id, h.parcel_id, h.county_slug, h.county_name, h.owner_name, h.site_address_full, h.site_city,
                       h.site_state, h.site_zip, h.dor_use_code, h.property_use_code, h.land_use_description,
                       h.just_value, h.assessed_value, h.taxable_value, h.year_built, h.last_sale_date,
                       h.last_sale_price, h.centroid_lat, h.centroid_lng) x) AS properties
    ) f
   ORDER BY array_position(p_ids, h.id::bigint);
END $$;
COMMENT ON FUNCTION api.parcel_features(bigint[]) IS
  'GeoJSON Features (RFC 7946, text) for parcel ids, in the order given, one row per known id (unknown ids give no '
  'row): id = the parcel id, geometry = the polygon (Polygon, or MultiPolygon for several parts; null when unmapped) '
  'in WGS 84 with 7 decimals and counterclockwise exterior rings, properties = the ParcelHit fields except geometry. '
  'format=geojson on GET /v1/parcels/search, /parcels/{id} and /parcels/by-parcel-id. Example: '
  'SELECT feature FROM api.parcel_features(ARRAY[1, 2]);';
