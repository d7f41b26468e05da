-- Parcel search, the filter: one search.parcel_filter per request, built once from the request's parameters and
-- written as only the predicates it uses, so every combination of filters gets a plan of its own.

CREATE TYPE search.parcel_filter AS (
  query           text,
  county          text[],
  use_code        text[],
  dor_use_code    text[],
  city            text,
  zip             text,
  just_value_min  float8,
  just_value_max  float8,
  assessed_min    float8,
  assessed_max    float8,
  sale_after      date,
  sale_before     date,
  sale_price_min  float8,
  sale_price_max  float8,
  near_lat        float8,
  near_lng        float8,
  radius_m        float8,
  bbox            float8[],
  point_lng       float8,
  point_lat       float8,
  owner_changed_since    integer,
  just_value_change_min  float8,
  just_value_change_max  float8
);
COMMENT ON TYPE search.parcel_filter IS 'The filters of parcel search, as one value shared by search, count and facets.';

CREATE FUNCTION search.parcel_where(f search.parcel_filter, p_words api.query_word[]) RETURNS text
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  w text[] := ARRAY['true'];
  counties smallint[];
  pt text;
  r_earth constant float8 := search.sphere_radius_m();
  dlat float8;  -- half sizes, in degrees, of the box around a near circle
  dlng float8;
  k_in float8;  -- a corner is within r - 1 m of the near point when dlat^2 + k_in * dlng^2 <= t_in (degrees)
  t_in float8;
  bulge float8; -- metres by which geodesic edges of the parcels a guard box admits may stray from the lat/lng box
  rects text;   -- the rectangles inside a near circle
  ell_a float8; -- the ellipse (degrees) that holds every point within r + 1 + b m of a near point
  ell_b float8;
  k_out float8;
  angle float8;
BEGIN
  IF f.county IS NOT NULL THEN
    -- one value as plain equality, so an index that continues with the sort key returns rows already in order
    counties := core.county_ids(f.county);
    w := w || CASE WHEN cardinality(counties) = 1 THEN format('p.county_id = %s', counties[1])
                   ELSE format('p.county_id = ANY (%L::smallint[])', counties) END;
  END IF;
  IF f.query IS NOT NULL THEN
    -- every query word must match: one GIN condition per word, over the word's vocabulary terms; within counties,
    -- over those terms qualified by each county (parcels_county_terms_idx: that county's postings only)
    IF cardinality(p_words) = 0 THEN
      w := w || 'false'::text;
    ELSIF counties IS NOT NULL THEN
      w := w || ARRAY(SELECT format('core.county_terms(p.county_id, p.search_terms) && %L::text[]',
                                    ARRAY(SELECT t || '@' || c FROM unnest(qw.terms) AS t, unnest(counties) AS c))
                        FROM unnest(p_words) AS qw);
    ELSE
      w := w || ARRAY(SELECT format('p.search_terms && %L::text[]', qw.terms) FROM unnest(p_words) AS qw);
    END IF;
  END IF;
  IF f.use_code IS NOT NULL THEN
    w := w || format('p.property_use_code = ANY (%L::text[])', (SELECT array_agg(upper(u)) FROM unnest(f.use_code) u));
  END IF;
  IF f.dor_use_code IS NOT NULL THEN
    w := w || (SELECT CASE WHEN cardinality(codes) = 1 THEN format('p.dor_use_code = %L', codes[1])
                           ELSE format('p.dor_use_code = ANY (%L::text[])', codes) END
                 FROM (SELECT array_agg(DISTINCT core.normalize_dor_use_code(u)) AS codes FROM unnest(f.dor_use_code) u) c);
  END IF;
  IF f.city IS NOT NULL THEN w := w || format('upper(p.site_city) = upper(%L)', btrim(f.city)); END IF;
  IF f.zip IS NOT NULL THEN w := w || format('p.site_zip = %L', left(btrim(f.zip), 5)); END IF;
  IF f.just_value_min IS NOT NULL THEN w := w || format('p.just_value >= %L::float8', f.just_value_min); END IF;
  IF f.just_value_max IS NOT NULL THEN w := w || format('p.just_value <= %L::float8', f.just_value_max); END IF;
  IF f.assessed_min IS NOT NULL THEN w := w || format('p.assessed_value >= %L::float8', f.assessed_min); END IF;
  IF f.assessed_max IS NOT NULL THEN w := w || format('p.assessed_value <= %L::float8', f.assessed_max); END IF;
  IF f.sale_after IS NOT NULL THEN w := w || format('p.last_sale_date >= %L::date', f.sale_after); END IF;
  IF f.sale_before IS NOT NULL THEN w := w || format('p.last_sale_date <= %L::date', f.sale_before); END IF;
  IF f.sale_price_min IS NOT NULL THEN w := w || format('p.last_sale_price >= %L::float8', f.sale_price_min); END IF;
  IF f.sale_price_max IS NOT NULL THEN w := w || format('p.last_sale_price <= %L::float8', f.sale_price_max); END IF;
  -- roll history (docs/history.md): the change columns the NAL merge keeps on the current parcel
  IF f.owner_changed_since IS NOT NULL THEN w := w || format('p.owner_changed_year >= %L', f.owner_changed_since); END IF;
  IF f.just_value_change_min IS NOT NULL THEN w := w || format('p.just_value_change_pct >= %L::numeric', f.just_value_change_min); END IF;
  IF f.just_value_change_max IS NOT NULL THEN w := w || format('p.just_value_change_pct <= %L::numeric', f.just_value_change_max); END IF;
  IF f.near_lat IS NOT NULL THEN
    -- Near: ST_DWithin(p.geom::geography, point, r) on the sphere. That test costs ~10 us a parcel (the cast and a
    -- geodesic distance), so only parcels that cheaper bounds cannot decide get it (under 1% at 500 m). The bounds
    -- keep a metre to spare and use haversine with x^2 (1 - x^2 / 12) / 4 <= sin^2(x / 2) <= x^2 / 4: in degrees,
    -- dlat^2 + k * dlng^2 <= t(d) = 4 sin^2(d / 2R) puts a point within d metres when k >= cos(lat0) * cos(lat), and
    -- beyond when (1 - x^2 / 12) * k <= cos(lat0) * cos(lat) and the inequality fails, with cos(lat) bounded over the
    -- latitudes the point can have. In order:
    --  1. the degree box 1% larger than the circle (GiST on geom);
    --  2. in: the bounding box inside one of three rectangles whose corners are within r - 1 m (then so is all of the
    --     rectangle, its farthest points being corners, and so are the polygon's vertices, the same points on the
    --     sphere). The operator @ reads the float4 box stored with the geometry, rounded outward: the rectangles are
    --     shrunk by a float4 step;
    --  3. a bounding box not inside the guard box (the near box grown by 0.01 degree): the exact test. Parcels
    --     inside it (under ~3 km wide at 500 m) have geodesic edges within b metres of straight lat/lng lines, which
    --     the bounds below add to their margin;
    --  4. out: the bounding box (<#>, raw degrees, the stored box too) farther from a segment of the point's parallel
    --     than the stadium around it that holds the ellipse of every point within r + 1 + b m;
    --  5. the planar distance from the polygon, its longitudes scaled by cos(lat0), to the point (also scaled): in
    --     when under the bound for r - 1 - b m, out when over the bound for r + 1 + b m, else the exact test.
    -- Constant geometries are written as literals: cheaper to plan than the calls that would make them.
    pt := quote_literal(ST_SetSRID(ST_MakePoint(f.near_lng, f.near_lat), 4326)::text);
    SELECT * INTO dlat, dlng FROM search.near_box(f.near_lat, f.radius_m);
    k_in := cos(radians(f.near_lat)) * cos(radians(greatest(abs(f.near_lat) - dlat, 0)));
    t_in := CASE WHEN f.radius_m > 1 THEN 4 * sin((f.radius_m - 1) / (2 * r_earth)) ^ 2 * (180 / pi()) ^ 2 ELSE -1 END;
    bulge := r_earth * radians(2 * (dlng + 0.01)) ^ 2 / 16;
    -- every point within r + 1 + b m lies in the ellipse dlat^2 + k_out * dlng^2 <= ell_b^2 (degrees), semi-axes
    -- ell_a (lng) >= ell_b (lat), and so within ell_b of the segment lng0 +- (ell_a - ell_b) on the point's parallel
    ell_b := sqrt(4 * sin((f.radius_m + 1 + bulge) / (2 * r_earth)) ^ 2 / (1 - radians(greatest(dlat, dlng) + 0.001) ^ 2 / 12)) * 180 / pi();
    k_out := cos(radians(f.near_lat)) * cos(radians(least(abs(f.near_lat) + greatest(dlat, ell_b * 1.001), 90)));
    ell_a := ell_b / sqrt(k_out);
    rects := 'false';
    IF t_in > 0 THEN
      FOREACH angle IN ARRAY ARRAY[45, 30, 60] LOOP
        rects := rects || ' OR p.geom @ ' || search.parcel_box_literal(f.near_lng, f.near_lat,
          sqrt(t_in / k_in) * cos(radians(angle)) * (1 - 1e-9) - (abs(f.near_lng) + dlng) * 2 ^ -23,
          sqrt(t_in) * sin(radians(angle)) * (1 - 1e-9) - (abs(f.near_lat) + dlat) * 2 ^ -23);
      END LOOP;
    END IF;
    w := w || ('p.geom && ' || search.parcel_box_literal(f.near_lng, f.near_lat, dlng, dlat));
    w := w || format(
      'CASE WHEN %1$s THEN true'
      ' WHEN NOT p.geom @ %2$s THEN ST_DWithin(p.geom::geography, %3$s::geography, %4$L::float8, false)'
      ' WHEN p.geom <#> %5$s::geometry > %6$L::float8 THEN false'
      ' ELSE CASE width_bucket(ST_Distance(ST_Scale(p.geom, %7$L::float8, 1), %8$s::geometry), %9$L::float8, %10$L::float8, 1)'
      '   WHEN 0 THEN true WHEN 2 THEN false ELSE ST_DWithin(p.geom::geography, %3$s::geography, %4$L::float8, false) END END',
      rects, search.parcel_box_literal(f.near_lng, f.near_lat, dlng + 0.01, dlat + 0.01), pt, f.radius_m,
      quote_literal(ST_SetSRID(ST_MakeLine(ST_MakePoint(f.near_lng - (ell_a - ell_b), f.near_lat),
                                           ST_MakePoint(f.near_lng + (ell_a - ell_b), f.near_lat)), 4326)::text),
      ell_b,
      -- 5: the scaling, the scaled point, and the planar distances under which a parcel is in and over which it is out
      cos(radians(f.near_lat)), quote_literal(ST_SetSRID(ST_MakePoint(f.near_lng * cos(radians(f.near_lat)), f.near_lat), 4326)::text),
      CASE WHEN f.radius_m > 1 + bulge
           THEN sqrt(4 * sin((f.radius_m - 1 - bulge) / (2 * r_earth)) ^ 2 * (180 / pi()) ^ 2 * cos(radians(f.near_lat)) ^ 2 / k_in)
           ELSE 0 END,
      ell_b * cos(radians(f.near_lat)) / sqrt(k_out) * (1 + 1e-9));
  END IF;
  IF f.bbox IS NOT NULL THEN
    w := w || (SELECT format('search.parcel_in_box(p.geom, %L::geometry, %L::geometry)', b.env, b.inner_env)
                 FROM search.parcel_box(f.bbox) b);
  END IF;
  IF f.point_lng IS NOT NULL THEN
    pt := format('ST_SetSRID(ST_MakePoint(%L::float8, %L::float8), 4326)', f.point_lng, f.point_lat);
    w := w || format('p.geom && %1$s AND ST_Intersects(p.geom, %1$s)', pt);
  END IF;
  RETURN array_to_string(w, ' AND ');
END $$;
COMMENT ON FUNCTION search.parcel_where(search.parcel_filter, api.query_word[]) IS
  'The WHERE clause (over core.parcels p) for a parcel filter and its query words (api.parcel_query_words): only the '
  'predicates the filter uses, values quoted. Used by search.parcel_search_page, parcel_count and parcel_facets.';

CREATE FUNCTION search.parcel_filter_of(
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL,
  p_dor_use_code text[] DEFAULT NULL, p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL,
  p_owner_changed_since integer DEFAULT NULL, p_just_value_change_min float8 DEFAULT NULL,
  p_just_value_change_max float8 DEFAULT NULL
) RETURNS search.parcel_filter
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  IF (p_near_lat IS NULL) <> (p_near_lng IS NULL) OR (p_near_lat IS NULL) <> (p_radius_m IS NULL) THEN
    PERFORM core.bad_input('near: give near (lat,lng) and radius_m together');
  END IF;
  IF p_near_lat IS NOT NULL AND (p_near_lat NOT BETWEEN -90 AND 90 OR p_near_lng NOT BETWEEN -180 AND 180) THEN
    PERFORM core.bad_input('near: latitude must be within -90..90 and longitude within -180..180');
  END IF;
  IF p_radius_m IS NOT NULL AND (p_radius_m <= 0 OR p_radius_m > search.near_radius_max_m()) THEN
    PERFORM core.bad_input(format('radius_m: must be greater than 0 and at most %s (metres)', search.near_radius_max_m()));
  END IF;
  IF p_bbox IS NOT NULL AND (cardinality(p_bbox) <> 4 OR p_bbox[1] > p_bbox[3] OR p_bbox[2] > p_bbox[4]
                             OR p_bbox[1] < -180 OR p_bbox[3] > 180 OR p_bbox[2] < -90 OR p_bbox[4] > 90) THEN
    PERFORM core.bad_input('bbox: must be minLng,minLat,maxLng,maxLat with min <= max, longitudes within -180..180 and latitudes within -90..90');
  END IF;
  IF (p_point_lng IS NULL) <> (p_point_lat IS NULL)
     OR (p_point_lng IS NOT NULL AND (p_point_lng NOT BETWEEN -180 AND 180 OR p_point_lat NOT BETWEEN -90 AND 90)) THEN
    PERFORM core.bad_input('point: must be lng,lat with longitude within -180..180 and latitude within -90..90');
  END IF;
  IF p_just_value_min > p_just_value_max THEN PERFORM core.bad_input('just_value_min: must not be greater than just_value_max'); END IF;
  IF p_assessed_min > p_assessed_max THEN PERFORM core.bad_input('assessed_min: must not be greater than assessed_max'); END IF;
  IF p_sale_after > p_sale_before THEN PERFORM core.bad_input('sale_after: must not be later than sale_before'); END IF;
  IF p_sale_price_min > p_sale_price_max THEN PERFORM core.bad_input('sale_price_min: must not be greater than sale_price_max'); END IF;
  IF p_owner_changed_since NOT BETWEEN 1900 AND 2200 THEN PERFORM core.bad_input('owner_changed_since: must be a roll year (YYYY)'); END IF;
  IF p_just_value_change_min > p_just_value_change_max THEN
    PERFORM core.bad_input('just_value_change_min: must not be greater than just_value_change_max');
  END IF;
  IF p_query IS NOT NULL AND core.normalize_text(p_query) = '' THEN PERFORM core.bad_input('query: must contain a letter or a digit'); END IF;
  RETURN ROW(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip, p_just_value_min, p_just_value_max,
             p_assessed_min, p_assessed_max, p_sale_after, p_sale_before, p_sale_price_min, p_sale_price_max,
             p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat, p_owner_changed_since,
             p_just_value_change_min, p_just_value_change_max)::search.parcel_filter;
END $$;
COMMENT ON FUNCTION search.parcel_filter_of(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8, integer, float8, float8) IS
  'Checks the filters of parcel search (ranges, coordinates, radius up to search.near_radius_max_m()) and makes the one '
  'search.parcel_filter value that search, count and facets of a request share.';

CREATE FUNCTION search.parcel_filter_is_words_only(f search.parcel_filter) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN f.query IS NOT NULL
     AND num_nonnulls(f.use_code, f.dor_use_code, f.city, f.zip, f.just_value_min, f.just_value_max, f.assessed_min,
                      f.assessed_max, f.sale_after, f.sale_before, f.sale_price_min, f.sale_price_max, f.near_lat,
                      f.bbox, f.point_lng, f.owner_changed_since, f.just_value_change_min, f.just_value_change_max) = 0;
COMMENT ON FUNCTION search.parcel_filter_is_words_only(search.parcel_filter) IS
  'Helper of search_parcels / count_parcels: true when the filter is a query, with or without counties, and nothing '
  'else, so that search and count can run on core.parcel_postings.';

CREATE FUNCTION search.parcel_filter_is_place_only(f search.parcel_filter) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN num_nonnulls(f.query, f.county, f.use_code, f.dor_use_code, f.city, f.zip, f.just_value_min, f.just_value_max,
                      f.assessed_min, f.assessed_max, f.sale_after, f.sale_before, f.sale_price_min, f.sale_price_max,
                      f.near_lat, f.owner_changed_since, f.just_value_change_min, f.just_value_change_max) = 0
     AND num_nonnulls(f.bbox, f.point_lng) = 1;
COMMENT ON FUNCTION search.parcel_filter_is_place_only(search.parcel_filter) IS
  'Helper of parcel_search_page: true when the filter is a point alone or a bbox alone (search.parcel_page_by_place).';

-- A filter on nothing but county, use codes, city and ZIP: its totals and facets are in core.parcel_facet_counts.
CREATE FUNCTION search.parcel_filter_is_categorical(f search.parcel_filter) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN num_nonnulls(f.query, f.just_value_min, f.just_value_max, f.assessed_min, f.assessed_max, f.sale_after,
                      f.sale_before, f.sale_price_min, f.sale_price_max, f.near_lat, f.bbox, f.point_lng,
                      f.owner_changed_since, f.just_value_change_min, f.just_value_change_max) = 0;
COMMENT ON FUNCTION search.parcel_filter_is_categorical(search.parcel_filter) IS
  'Helper of count_parcels / facet_parcels: true when the filter uses only county, use_code, dor_use_code, city and '
  'zip, so exact totals and facets can be summed from core.parcel_facet_counts.';
