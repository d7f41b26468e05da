-- The parcel search engine behind api.parcel_search_hits, api.search_parcels, api.count_parcels, api.facet_parcels
-- and the single-parcel reads: the filter (built once per request as a search.parcel_filter and written as only the
-- predicates it uses), the query's words and their vocabulary terms, place (near, box, point), the postings path for
-- word-only queries, and paging by tiers. Private: the API reaches it only through api.*.

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
  point_lat       float8
);
COMMENT ON TYPE search.parcel_filter IS 'The filters of parcel search, as one value shared by search, count and facets.';

-- One word's reading: the word itself, its typos and (for the last word) its completions, each with its quality.
CREATE FUNCTION search.parcel_word_terms(p_word text, p_words text[], p_wide boolean,
                                      OUT reading api.query_word, OUT held bigint, OUT cut boolean)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  -- one plan per statement, made once per session: planning them for each word took longer than running them
  SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_df integer;
  v_fuzzy boolean;
  v_edits integer := CASE WHEN length(p_word) >= 6 THEN 2 ELSE 1 END;
  v_terms text[];
  v_qualities float8[];
BEGIN
  SELECT t.parcels INTO v_df FROM core.parcel_terms t WHERE t.term = p_word;
  -- typos: for every word of a longer query, and for a lone word that is rare or unknown (a lone common word is
  -- meant as written, and its exact total then comes from the vocabulary); words of 3 to 20 characters, never
  -- numbers (a longer word is no name's typo, and costs thousands of lookups)
  v_fuzzy := (coalesce(v_df, 0) < 1000 OR cardinality(p_words) > 1) AND length(p_word) BETWEEN 3 AND 20
             AND p_word !~ '^[0-9]+$';
  SELECT coalesce(array_agg(m.term ORDER BY m.q DESC, m.parcels DESC, m.term), '{}'),
         coalesce(array_agg(m.q ORDER BY m.q DESC, m.parcels DESC, m.term), '{}'), coalesce(sum(m.parcels), 0),
         coalesce(bool_or(m.cut), false)
    INTO v_terms, v_qualities, held, cut
    -- (cut: the caps left out typos within the word's edits, so that a wide reading would differ; a window, as a
    -- typo that is also a completion keeps one of its two rows)
    FROM (SELECT DISTINCT ON (x.term) x.term, x.parcels, x.q, bool_or(x.cut) OVER () AS cut FROM (
            SELECT t.term, t.parcels, 1.0::float8 AS q, false AS cut FROM core.parcel_terms t WHERE t.term = p_word
            UNION ALL
            -- typos (when v_fuzzy), nearest first, then most common: 16, or up to 64 while together they are held
            -- by at most 5,000 parcels (a rare word's whole neighbourhood is cheap to search and ranks fairly; a
            -- common word's is not). Every term one edit away; for words of 6+ letters with fewer than 16 of those,
            -- every term two edits away too. Wide (p_wide): the 128 closest terms within the word's edits.
            -- Candidates come from the deletion index (core.parcel_term_deletes: terms sharing a deletion of the
            -- word), checked with levenshtein.
            (WITH near AS MATERIALIZED (
               SELECT x.term, x.edits
                 FROM (SELECT d.term, levenshtein_less_equal(p_word, d.term, v_edits) AS edits
                         FROM core.parcel_term_deletes d
                        WHERE v_fuzzy AND d.deletes && core.term_deletes(p_word, v_edits)
                          AND abs(length(d.term) - length(p_word)) <= v_edits) x
                -- a word of the query stands only for itself: were MARIA a typo of GARCIA, GARCIA MARIA would
                -- find every MARIA
                WHERE x.edits <= v_edits AND x.term <> ALL (p_words))
             SELECT k.term, k.parcels, k.q, count(*) OVER () < (SELECT count(*) FROM near) AS cut FROM (
             SELECT z.term, z.parcels, z.q FROM (
               SELECT y.term, t.parcels, 1 - y.edits::float8 / greatest(length(p_word), length(y.term)) AS q,
                      row_number() OVER w AS n, sum(t.parcels) OVER w AS held
                 -- (the counts are read only for the typos the edits allow)
                 FROM near y JOIN core.parcel_terms t ON t.term = y.term
                WHERE y.edits = 1 OR (y.edits = 2 AND (p_wide OR (SELECT count(*) FROM near WHERE near.edits = 1) < 16))
               -- (wide: the best matches first, as they rank: a longer term of the same edits is the closer)
               WINDOW w AS (ORDER BY CASE WHEN p_wide THEN y.edits::float8 / greatest(length(p_word), length(y.term))
                                          ELSE y.edits END, t.parcels DESC, y.term)) z
              WHERE z.n <= 16 OR (z.n <= 64 AND z.held <= 5000) OR (p_wide AND z.n <= 128)) k)
            UNION ALL
            -- the last word may be unfinished: complete it from the vocabulary (unless it is a common word as typed)
            (SELECT t.term, t.parcels, length(p_word)::float8 / length(t.term), false
               FROM core.parcel_terms t
              WHERE p_word = p_words[cardinality(p_words)] AND coalesce(v_df, 0) < 1000 AND length(p_word) >= 3
                AND p_word !~ '^[0-9]+$'
                -- the terms that start with the word: a range of the primary key (every character a term holds
                -- sorts before '~'), not LIKE, which a plan made once for every word reads from a trigram index
                AND t.term > p_word AND t.term < p_word || '~' AND left(t.term, length(p_word)) = p_word
                AND t.term <> ALL (p_words)
              ORDER BY t.parcels DESC, t.term LIMIT 5)) x
          ORDER BY x.term, x.q DESC) m;
  reading := ROW(p_word, v_terms, v_qualities);
END $$;
COMMENT ON FUNCTION search.parcel_word_terms(text, text[], boolean) IS
  'Helper of api.parcel_query_words: the reading of one word p_word of the query''s words p_words (see there), '
  'capped (p_wide false) or wide, the number of parcels its terms are held by, summed, and whether the caps cut '
  'typos within its edits (if not, the wide reading is the same). '
  'Example: SELECT * FROM search.parcel_word_terms(''DAIRILEY'', ''{MARGARET,DAIRILEY}'', true);';

-- The query's reading for search, count and facets: the one given by a caller that read it once, else read here.
CREATE FUNCTION search.parcel_words_of(p_query text, p_words api.query_word[]) RETURNS api.query_word[]
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN CASE WHEN p_query IS NOT NULL THEN coalesce(p_words, api.parcel_query_words(p_query)) END;
COMMENT ON FUNCTION search.parcel_words_of(text, api.query_word[]) IS
  'Helper of search_parcels / count_parcels / facet_parcels: p_words when given, else api.parcel_query_words(p_query); NULL without a query.';

-- The relevance score of a parcel for query words: the mean over words of the best quality among the word's terms
-- the parcel holds (1 when it holds every word exactly).
CREATE FUNCTION search.parcel_query_score_sql(p_words api.query_word[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '((' || (SELECT string_agg(format(
    'coalesce((SELECT max(x.q) FROM unnest(%L::text[], %L::float8[]) AS x(t, q) WHERE x.t = ANY (p.search_terms)), 0)',
    w.terms, w.qualities), ' + ') FROM unnest(p_words) AS w) || ') / ' || cardinality(p_words) || ')';
COMMENT ON FUNCTION search.parcel_query_score_sql(api.query_word[]) IS
  'Helper of search_parcels: the SQL expression (over core.parcels p) of a parcel''s relevance score for query words.';

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
  'The WHERE clause (over core.parcels p) for a parcel filter and its query words (api.parcel_query_words): only the predicates the filter uses, values quoted. Used by search_parcels, count_parcels and facet_parcels.';

-- ParcelHit rows for ids, in the order given.
CREATE FUNCTION search.parcel_rows(p_ids bigint[], p_with_geometry boolean) RETURNS SETOF api.parcel_hit
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT p.id::int, p.parcel_id, c.slug, c.name, p.owner_name, p.site_address_full, p.site_city, p.site_state, p.site_zip,
         p.dor_use_code, p.property_use_code, p.land_use_description,
         p.just_value::float8, p.assessed_value::float8, p.taxable_value::float8, p.year_built::int,
         p.last_sale_date::text, p.last_sale_price::float8, ST_Y(p.centroid), ST_X(p.centroid),
         CASE WHEN p_with_geometry AND p.geom IS NOT NULL
              THEN ST_AsGeoJSON(CASE WHEN ST_NumGeometries(p.geom) = 1 THEN ST_GeometryN(p.geom, 1) ELSE p.geom END, 7) END
    FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)
    JOIN core.parcels p ON p.id = u.id
    JOIN core.counties c ON c.id = p.county_id
   ORDER BY u.ord
$$;
COMMENT ON FUNCTION search.parcel_rows(bigint[], boolean) IS 'ParcelHit rows for parcel ids, in the order given; geometry only when asked.';

CREATE FUNCTION search.parcel_filter_of(
  p_query text, p_county text[], p_use_code text[], p_dor_use_code text[], p_city text, p_zip text,
  p_just_value_min float8, p_just_value_max float8, p_assessed_min float8, p_assessed_max float8,
  p_sale_after date, p_sale_before date, p_sale_price_min float8, p_sale_price_max float8,
  p_near_lat float8, p_near_lng float8, p_radius_m float8, p_bbox float8[], p_point_lng float8, p_point_lat float8
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
  IF p_radius_m IS NOT NULL AND (p_radius_m <= 0 OR p_radius_m > 50000) THEN
    PERFORM core.bad_input('radius_m: must be greater than 0 and at most 50000 (metres)');
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
  IF p_query IS NOT NULL AND core.normalize_text(p_query) = '' THEN PERFORM core.bad_input('query: must contain a letter or a digit'); END IF;
  RETURN ROW(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip, p_just_value_min, p_just_value_max,
             p_assessed_min, p_assessed_max, p_sale_after, p_sale_before, p_sale_price_min, p_sale_price_max,
             p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat)::search.parcel_filter;
END $$;
COMMENT ON FUNCTION search.parcel_filter_of(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8) IS
  'Checks the filters of parcel search (ranges, coordinates, radius up to 50 km) and makes one search.parcel_filter of them.';

-- The exact total of a search read straight from the vocabulary: a query of one word that stands only for itself
-- and no other filter matches exactly the parcels holding that word. NULL when the vocabulary does not decide.
CREATE FUNCTION search.parcel_total_from_vocabulary(f search.parcel_filter, p_words api.query_word[]) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  IF cardinality(p_words) = 1 AND cardinality(p_words[1].terms) = 1
     AND num_nonnulls(f.county, f.use_code, f.dor_use_code, f.city, f.zip, f.just_value_min, f.just_value_max,
                      f.assessed_min, f.assessed_max, f.sale_after, f.sale_before, f.sale_price_min, f.sale_price_max,
                      f.near_lat, f.bbox, f.point_lng) = 0 THEN
    RETURN coalesce((SELECT t.parcels FROM core.parcel_terms t WHERE t.term = p_words[1].terms[1]), 0);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION search.parcel_total_from_vocabulary(search.parcel_filter, api.query_word[]) IS
  'Helper of search_parcels / count_parcels: the exact number of matches when the query is one word standing only '
  'for itself and nothing else is filtered (that word''s count in core.parcel_terms); NULL otherwise.';

-- The rest of a large result starts with the parcels whose every word is matched at least as well as a quality level:
-- the lowest at which the vocabulary bounds them to 5,000 (so they can be ranked by score), a level below 1 (every
-- word exact is the tier before). A common word beside a misspelt rare one then shows the rare word's closest
-- spellings first, not the most common ones by id.
CREATE FUNCTION search.parcel_well_level(p_words api.query_word[]) RETURNS float8
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (WITH wt AS (SELECT qw.word, x.q, coalesce(t.parcels, 0) AS df
                FROM unnest(p_words) AS qw CROSS JOIN unnest(qw.terms, qw.qualities) AS x(term, q)
                LEFT JOIN core.parcel_terms t ON t.term = x.term)
  SELECT l.lv
    FROM (SELECT DISTINCT wt.q AS lv FROM wt WHERE wt.q < 1) l
   WHERE (SELECT min(b.f) FROM (SELECT coalesce(sum(wt.df) FILTER (WHERE wt.q >= l.lv), 0) AS f FROM wt GROUP BY wt.word) b)
         BETWEEN 1 AND 5000
   ORDER BY l.lv LIMIT 1);
END $$;
COMMENT ON FUNCTION search.parcel_well_level(api.query_word[]) IS
  'Helper of search_parcels: the lowest match quality below 1 at which the vocabulary bounds the parcels matching every '
  'word at least that well to 5,000 (between 1 and 5,000 of them); NULL when there is none, as when every word stands only for itself.';

-- Search by postings (core.parcel_postings): for a query with no filter but counties, a query's matches, exact total
-- and page tiers are unions and intersections of sorted id arrays, county by county; core.parcels is read only for
-- the page's rows and the parcels whose owner or address is the query's text. (Through the GIN index, counting or
-- ranking the matches reads every matching row's heap page.)
CREATE TYPE search.id_set AS (county_id smallint, ids integer[]);
COMMENT ON TYPE search.id_set IS 'Parcel ids of one county, ascending: a step of search by postings.';

CREATE FUNCTION search.parcel_filter_is_words_only(f search.parcel_filter) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN f.query IS NOT NULL
     AND num_nonnulls(f.use_code, f.dor_use_code, f.city, f.zip, f.just_value_min, f.just_value_max, f.assessed_min,
                      f.assessed_max, f.sale_after, f.sale_before, f.sale_price_min, f.sale_price_max, f.near_lat,
                      f.bbox, f.point_lng) = 0;
COMMENT ON FUNCTION search.parcel_filter_is_words_only(search.parcel_filter) IS
  'Helper of search_parcels / count_parcels: true when the filter is a query, with or without counties, and nothing '
  'else, so that search and count can run on core.parcel_postings.';

CREATE FUNCTION search.parcel_postings_match(p_words api.query_word[], p_counties smallint[], p_min_quality float8,
                                          p_stop_below integer DEFAULT NULL)
RETURNS search.id_set[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_terms text[];
  v_sets search.id_set[];
BEGIN
  -- the rarest word first (its terms' parcels, statewide, from the vocabulary): every later word only narrows them,
  -- one intersection with each of its terms' postings
  FOR v_terms IN
    SELECT w.terms FROM (
      SELECT ARRAY(SELECT x.t FROM unnest(qw.terms, qw.qualities) AS x(t, q) WHERE x.q >= p_min_quality) AS terms
        FROM unnest(p_words) AS qw) w
     ORDER BY (SELECT coalesce(sum(t.parcels), 0) FROM core.parcel_terms t WHERE t.term = ANY (w.terms))
  LOOP
    IF v_sets IS NULL THEN
      SELECT array_agg(ROW(g.county_id, g.ids)::search.id_set) INTO v_sets
        FROM (SELECT pp.county_id, core.id_union(pp.ids) AS ids FROM core.parcel_postings pp
               WHERE pp.term = ANY (v_terms) AND (p_counties IS NULL OR pp.county_id = ANY (p_counties))
               GROUP BY pp.county_id) g;
    ELSE
      -- the word's postings are read by term, then joined to the sets by county: probing each county for each
      -- term took thousands of index reads for a word standing for 128 terms (the arrays are read only if joined)
      SELECT array_agg(ROW(m.county_id, m.ids)::search.id_set) INTO v_sets
        FROM (SELECT s.county_id, core.id_union(s.ids & pp.ids) AS ids
                FROM unnest(v_sets) AS s
                JOIN (SELECT pp.county_id, pp.ids FROM core.parcel_postings pp WHERE pp.term = ANY (v_terms) OFFSET 0) pp
                  ON pp.county_id = s.county_id
               GROUP BY s.county_id) m
       WHERE m.ids <> '{}';
    END IF;
    EXIT WHEN v_sets IS NULL;
    -- (every word only narrows the matches: once fewer than p_stop_below, they stay so)
    EXIT WHEN p_stop_below IS NOT NULL AND search.parcel_postings_count(v_sets) < p_stop_below;
  END LOOP;
  RETURN coalesce(v_sets, '{}');
END $$;
COMMENT ON FUNCTION search.parcel_postings_match(api.query_word[], smallint[], float8, integer) IS
  'Helper of search by postings: per county (p_counties, NULL for all), the ids of the parcels holding, for every '
  'query word, one of its terms of quality p_min_quality or more (0: any term; 1: the word itself). With '
  'p_stop_below, it stops once fewer parcels than that hold the words so far (then only their number, below '
  'p_stop_below, is of use). Example: '
  'SELECT s.county_id, icount(s.ids) FROM unnest(search.parcel_postings_match(api.parcel_query_words(''smith jon''), NULL, 0)) s;';

-- County ids for the postings: NULL (every county) without slugs, none for an empty list, as the GIN path filters.
CREATE FUNCTION search.parcel_postings_counties(p_slugs text[]) RETURNS smallint[]
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN CASE WHEN p_slugs IS NOT NULL THEN coalesce(core.county_ids(p_slugs), '{}') END;
COMMENT ON FUNCTION search.parcel_postings_counties(text[]) IS
  'Helper of search by postings: the county ids of slugs (core.county_ids), NULL for no filter and none for an empty list.';

CREATE FUNCTION search.parcel_postings_count(p_sets search.id_set[]) RETURNS bigint
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (SELECT coalesce(sum(icount(s.ids)), 0) FROM unnest(p_sets) AS s);
END $$;
COMMENT ON FUNCTION search.parcel_postings_count(search.id_set[]) IS 'Helper of search by postings: the number of ids in sets.';

-- The first p_k ids of sets in ascending order, leaving out p_except: every county's first p_k + |p_except|, merged.
CREATE FUNCTION search.parcel_postings_first(p_sets search.id_set[], p_k integer, p_except integer[] DEFAULT '{}')
RETURNS integer[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN ARRAY(SELECT x FROM unnest(p_sets) AS s, unnest(subarray(s.ids, 1, p_k + cardinality(p_except)) - p_except) AS x
                ORDER BY x LIMIT p_k);
END $$;
COMMENT ON FUNCTION search.parcel_postings_first(search.id_set[], integer, integer[]) IS
  'Helper of search by postings: the p_k smallest ids of sets, those in p_except left out.';

-- Each set's ids less the other sets' ids of its county.
CREATE FUNCTION search.parcel_postings_minus(p_sets search.id_set[], p_others search.id_set[]) RETURNS search.id_set[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN ARRAY(SELECT ROW(s.county_id, coalesce(s.ids - (SELECT core.id_union(o.ids) FROM unnest(p_others) AS o
                                                          WHERE o.county_id = s.county_id), s.ids))::search.id_set
                 FROM unnest(p_sets) AS s);
END $$;
COMMENT ON FUNCTION search.parcel_postings_minus(search.id_set[], search.id_set[]) IS
  'Helper of search by postings: per county, the ids of p_sets that are in no set of p_others.';

-- The relevance score of matching parcels, as search.parcel_query_score_sql computes it from search_terms: for each
-- word the best quality among its terms the parcel holds (each term's postings intersected with the sets), then the
-- mean over words, summed in word order. A word of one term is held by every match: its quality counts as it is,
-- without reading its postings (often the longest, as for & or a common surname).
CREATE FUNCTION search.parcel_postings_scores(p_sets search.id_set[], p_words api.query_word[])
RETURNS TABLE (id integer, score float8)
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT y.id, sum(y.q ORDER BY y.i) / cardinality(p_words)
    FROM (SELECT w.i, x.id, max(tq.q) AS q
            FROM unnest(p_words) WITH ORDINALITY AS w(word, terms, qualities, i)
            CROSS JOIN unnest(w.terms, w.qualities) AS tq(t, q)
            -- the terms' postings read by term, then joined to the sets by county (as in parcel_postings_match)
            JOIN (SELECT pp.term, pp.county_id, pp.ids FROM core.parcel_postings pp
                   WHERE pp.term = ANY (ARRAY(SELECT t FROM unnest(p_words) AS qw, unnest(qw.terms) AS t
                                               WHERE cardinality(qw.terms) > 1)) OFFSET 0) pp
              ON pp.term = tq.t
            JOIN unnest(p_sets) AS s ON s.county_id = pp.county_id
            CROSS JOIN unnest(s.ids & pp.ids) AS x(id)
           WHERE cardinality(w.terms) > 1
           GROUP BY w.i, x.id
          UNION ALL
          SELECT w.i, x.id, w.qualities[1]
            FROM unnest(p_words) WITH ORDINALITY AS w(word, terms, qualities, i)
            CROSS JOIN unnest(p_sets) AS s
            CROSS JOIN unnest(s.ids) AS x(id)
           WHERE cardinality(w.terms) = 1) y
   GROUP BY y.id
$$;
COMMENT ON FUNCTION search.parcel_postings_scores(search.id_set[], api.query_word[]) IS
  'Helper of search by postings: the relevance score (as in search.parcel_query_score_sql) of every parcel in p_sets, '
  'each of which matches every word.';

-- The first tier of a relevance page: the parcels whose owner or address is the query's text, read from the btree
-- indexes on (hashtext(text), id) in id order, the hashes compared first and then the texts.
CREATE FUNCTION search.parcel_exact_text_sql(p_q text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN format('((hashtext(p.owner_search) = hashtext(%1$L) AND p.owner_search = %1$L)'
                ' OR (hashtext(p.address_search) = hashtext(%1$L) AND p.address_search = %1$L))', p_q);
COMMENT ON FUNCTION search.parcel_exact_text_sql(text) IS
  'Helper of search_parcels: the condition (on core.parcels p) that the owner or the address is p_q, normalized, '
  'written so that the (hashtext, id) indexes answer it.';

-- (In counties, the rows of other counties before the page's are read too: a county is not in the index.)
CREATE FUNCTION search.parcel_exact_text_first(p_q text, p_counties smallint[], p_k integer) RETURNS integer[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  -- the plan is made once, without the text: a bitmap would read all of a common text's parcels and sort them
  SET enable_bitmapscan = off
  SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN ARRAY(
    SELECT e.id FROM ((SELECT p.id::integer FROM core.parcels p
                        WHERE hashtext(p.owner_search) = hashtext(p_q) AND p.owner_search = p_q
                          AND (p_counties IS NULL OR p.county_id = ANY (p_counties)) ORDER BY p.id LIMIT p_k)
                      UNION
                      (SELECT p.id::integer FROM core.parcels p
                        WHERE hashtext(p.address_search) = hashtext(p_q) AND p.address_search = p_q
                          AND (p_counties IS NULL OR p.county_id = ANY (p_counties)) ORDER BY p.id LIMIT p_k)) e(id)
     ORDER BY e.id LIMIT p_k);
END $$;
COMMENT ON FUNCTION search.parcel_exact_text_first(text, smallint[], integer) IS
  'Helper of search by postings: the p_k smallest ids of the parcels in p_counties (NULL: all) whose owner or '
  'address is p_q (normalized); statewide it reads about p_k index entries of each text index however many parcels '
  'share the text. Example: SELECT search.parcel_exact_text_first(''SFR FLORIDA BORROWER LLC'', NULL, 25);';

-- The first tiers of a page by postings (every word exact): the parcels whose owner or address is the query's text
-- (p_exact, by id), then the others holding every word exactly (p_held), by id; p_k ids at most. (A parcel whose
-- owner or address is the query holds every word exactly; the check keeps a page right while a load changes the
-- vocabulary between the query's reading and its search.)
CREATE FUNCTION search.parcel_postings_exact_tiers(p_held search.id_set[], p_exact integer[], p_k integer) RETURNS integer[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_exact integer[] := CASE WHEN p_exact = '{}' THEN '{}'
                            ELSE coalesce((SELECT core.id_union(s.ids & p_exact) FROM unnest(p_held) AS s), '{}') END;
BEGIN
  RETURN v_exact[1 : p_k] || search.parcel_postings_first(p_held, p_k - least(cardinality(v_exact), p_k), v_exact);
END $$;
COMMENT ON FUNCTION search.parcel_postings_exact_tiers(search.id_set[], integer[], integer) IS
  'Helper of parcel_page_by_postings: the first p_k ids of the tiers of parcels holding every word exactly (p_held): '
  'those in p_exact (owner or address equal to the query) first, then the rest, each by id.';

-- A page of search by postings, in the order of the GIN path of search_parcels. First the parcels holding every word
-- exactly (score 1): those whose owner or address is the query's text, then the others, each by id. Then, up to
-- 5,000 matches, the rest by score and id; beyond, the parcels whose every word is matched at least as well as a
-- level (search.parcel_well_level) by score, then the rest by id. Without the total, the first tiers may fill the page
-- before all the matches are computed. Up to 5,000 matches, every match is scored in one pass: those holding every
-- word exactly are those of score 1, so they need no matching of their own.
CREATE FUNCTION search.parcel_page_by_postings(p_words api.query_word[], p_counties smallint[], p_q text,
                                            p_limit integer, p_offset integer, p_with_total boolean,
                                            OUT ids bigint[], OUT total bigint)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_k integer := p_offset + p_limit;
  v_all search.id_set[];
  v_matches bigint;
  v_held search.id_set[];
  v_exact integer[] := search.parcel_exact_text_first(p_q, p_counties, v_k);
  v_ids integer[];
  v_ranked integer[];
  v_exactly integer;
  v_level float8;
  v_well search.id_set[] := '{}';
BEGIN
  IF NOT p_with_total THEN
    v_held := search.parcel_postings_match(p_words, p_counties, 1);
    v_ids := search.parcel_postings_exact_tiers(v_held, v_exact, v_k);
    IF cardinality(v_ids) = v_k THEN ids := v_ids[p_offset + 1 : v_k]; RETURN; END IF;
  END IF;
  -- every match: the total, and the page's later tiers (computed once for both)
  v_all := search.parcel_postings_match(p_words, p_counties, 0);
  v_matches := search.parcel_postings_count(v_all);
  total := CASE WHEN p_with_total THEN v_matches END;
  IF v_matches <= 5000 THEN
    SELECT coalesce(array_agg(sc.id ORDER BY sc.score DESC, sc.id), '{}'), count(*) FILTER (WHERE sc.score = 1)
      INTO v_ranked, v_exactly FROM search.parcel_postings_scores(v_all, p_words) AS sc;
    v_exact := v_exact & v_ranked[1 : v_exactly];
    ids := (v_exact || ARRAY(SELECT r.id FROM unnest(v_ranked) WITH ORDINALITY AS r(id, o)
                              WHERE r.id <> ALL (v_exact) ORDER BY r.o LIMIT v_k))[p_offset + 1 : v_k];
    RETURN;
  END IF;
  IF v_held IS NULL THEN
    v_held := search.parcel_postings_match(p_words, p_counties, 1);
    v_ids := search.parcel_postings_exact_tiers(v_held, v_exact, v_k);
  END IF;
  IF cardinality(v_ids) < v_k THEN
    v_level := search.parcel_well_level(p_words);
    IF v_level IS NOT NULL THEN
      v_well := search.parcel_postings_minus(search.parcel_postings_match(p_words, p_counties, v_level), v_held);
      v_ids := v_ids || ARRAY(SELECT sc.id FROM search.parcel_postings_scores(v_well, p_words) AS sc
                               ORDER BY sc.score DESC, sc.id LIMIT v_k - cardinality(v_ids));
    END IF;
    IF cardinality(v_ids) < v_k THEN
      v_ids := v_ids || search.parcel_postings_first(search.parcel_postings_minus(v_all, v_held || v_well), v_k - cardinality(v_ids));
    END IF;
  END IF;
  ids := v_ids[p_offset + 1 : v_k];
END $$;
COMMENT ON FUNCTION search.parcel_page_by_postings(api.query_word[], smallint[], text, integer, integer, boolean) IS
  'Helper of parcel_search_page: the ids of one page of a relevance search whose only other filter is counties '
  '(p_counties, NULL for all), read from core.parcel_postings, and with p_with_total the number of matches (else '
  'NULL); p_q is the normalized query.';

-- A page of parcel ids over tiers: every tier is read in its own order from an index and only as far as the page
-- needs; a tier that ends before the page does is whole, and the next one continues it.
CREATE FUNCTION search.parcel_page_by_tiers(p_where text, p_tiers text[], p_orders text[], p_limit integer, p_offset integer,
                                         p_walk boolean[] DEFAULT NULL)
RETURNS bigint[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET enable_bitmapscan = on SET enable_seqscan = on  -- restored at exit: turning them off below stays inside
AS $$
DECLARE
  v_ids bigint[] := '{}';
  v_rows bigint[];
  v_skip integer := p_offset;
BEGIN
  FOR i IN 1 .. cardinality(p_tiers) LOOP
    EXIT WHEN cardinality(v_ids) >= p_limit;
    -- A tier known to be large (thousands of rows) is read by walking its order's index and filtering, which stops
    -- after a page; the planner's estimate for word arrays can be far too low and pick a scan and a full sort.
    PERFORM set_config('enable_bitmapscan', CASE WHEN coalesce(p_walk[i], false) THEN 'off' ELSE 'on' END, true),
            set_config('enable_seqscan', CASE WHEN coalesce(p_walk[i], false) THEN 'off' ELSE 'on' END, true);
    EXECUTE format('SELECT array_agg(id) FROM (SELECT p.id FROM core.parcels p WHERE %s AND %s ORDER BY %s LIMIT %s) t',
                   p_where, p_tiers[i], p_orders[i], v_skip + p_limit - cardinality(v_ids)) INTO v_rows;
    v_rows := coalesce(v_rows, '{}');
    v_ids := v_ids || coalesce(v_rows[v_skip + 1 :], '{}');
    v_skip := greatest(v_skip - cardinality(v_rows), 0);
  END LOOP;
  RETURN v_ids;
END $$;
COMMENT ON FUNCTION search.parcel_page_by_tiers(text, text[], text[], integer, integer, boolean[]) IS
  'Helper of search_parcels: the ids of one page (p_limit from p_offset) of the rows matching p_where, taken from '
  'p_tiers in turn, each tier ordered by its p_orders entry; p_walk[i] reads tier i along its order''s index (for tiers known to be large).';

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

CREATE FUNCTION search.parcel_filter_is_place_only(f search.parcel_filter) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN num_nonnulls(f.query, f.county, f.use_code, f.dor_use_code, f.city, f.zip, f.just_value_min, f.just_value_max,
                      f.assessed_min, f.assessed_max, f.sale_after, f.sale_before, f.sale_price_min, f.sale_price_max,
                      f.near_lat) = 0
     AND num_nonnulls(f.bbox, f.point_lng) = 1;
COMMENT ON FUNCTION search.parcel_filter_is_place_only(search.parcel_filter) IS
  'Helper of parcel_search_page: true when the filter is a point alone or a bbox alone (search.parcel_page_by_place).';

CREATE FUNCTION search.parcel_search_page(
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL,
  p_sort text DEFAULT NULL, p_limit integer DEFAULT 25, p_offset integer DEFAULT 0,
  p_words api.query_word[] DEFAULT NULL,
  p_with_total boolean DEFAULT true, OUT ids bigint[], OUT total integer
)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET plan_cache_mode = auto SET enable_sort = on SET enable_bitmapscan = on  -- restored at exit: changes below stay inside
  SET extra_float_digits = 3  -- match qualities written into SQL text keep every bit (scores tie as on the postings)
AS $$
DECLARE
  v_filter search.parcel_filter := search.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
    p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before,
    p_sale_price_min, p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat);
  v_words api.query_word[] := search.parcel_words_of(p_query, p_words);
  v_where text;
  v_q text := core.normalize_text(p_query);
  v_sort text := coalesce(p_sort, CASE WHEN p_query IS NOT NULL THEN 'relevance' WHEN p_near_lat IS NOT NULL THEN 'distance' ELSE 'id' END);
  v_column text := substring(v_sort FROM '^(just_value|assessed_value|taxable_value|last_sale_date|last_sale_price|year_built)_(?:asc|desc)$');
  v_dir text := CASE WHEN v_sort LIKE '%\_desc' THEN 'DESC' ELSE 'ASC' END;
  v_exact text;
  v_words_exact text;
  v_ids bigint[];
  v_matches bigint;
  v_bound bigint;
  v_exact_bound bigint;
  v_only_exact boolean;
  v_level float8;
  v_well text;
  v_pt text;
  v_k integer;
  v_dlat float8;
  v_dlng float8;
  v_dist float8[];
  v_read integer;
  v_raw float8;
  v_lo float8;
  v_r constant float8 := search.sphere_radius_m();
  v_total bigint;
BEGIN
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 500 THEN PERFORM core.bad_input('limit: must be between 1 and 500'); END IF;
  IF p_offset IS NULL OR p_offset < 0 THEN PERFORM core.bad_input('offset: must be 0 or more'); END IF;
  IF v_sort NOT IN ('relevance', 'distance', 'id') AND v_column IS NULL THEN
    PERFORM core.bad_input(format('sort: unknown sort ''%s''', v_sort));
  END IF;
  IF v_sort = 'relevance' AND p_query IS NULL THEN PERFORM core.bad_input('sort: relevance needs query'); END IF;
  IF v_sort = 'distance' AND p_near_lat IS NULL THEN PERFORM core.bad_input('sort: distance needs near and radius_m'); END IF;
  IF v_sort = 'id' AND search.parcel_filter_is_place_only(v_filter) THEN
    SELECT pp.ids, pp.total INTO ids, total FROM search.parcel_page_by_place(v_filter, p_limit, p_offset, p_with_total) pp;
    RETURN;
  END IF;
  v_where := search.parcel_where(v_filter, v_words);

  IF v_column IS NOT NULL THEN
    -- parcels with a value in the sort's order (ties by id the same way), then those without one, by id
    v_ids := search.parcel_page_by_tiers(v_where,
      ARRAY[format('p.%I IS NOT NULL', v_column), format('p.%I IS NULL', v_column)],
      ARRAY[format('p.%1$I %2$s, p.id %2$s', v_column, v_dir), format('p.id %s', v_dir)], p_limit, p_offset);
  ELSIF v_sort = 'relevance' AND cardinality(v_words) > 0 AND search.parcel_filter_is_words_only(v_filter) THEN
    v_total := search.parcel_total_from_vocabulary(v_filter, v_words);
    SELECT pp.ids, coalesce(v_total, pp.total) INTO v_ids, v_total
      FROM search.parcel_page_by_postings(v_words, search.parcel_postings_counties(p_county), v_q, p_limit, p_offset,
                                       p_with_total AND v_total IS NULL) pp;
  ELSIF v_sort = 'relevance' AND cardinality(v_words) > 0 THEN
    -- Relevance: score (every word held exactly = 1), then an owner or address equal to the query, then id. Up to
    -- 5,000 matches are ranked in full. More (a common name or street statewide) are paged tier by tier without
    -- scoring the whole set: the query's exact text, then every word held exactly, each by id; then the parcels whose
    -- every word is matched well (below), by score; then the rest, by id.
    -- The vocabulary bounds the number of matches: at most the smallest word's document frequency (the sum over its
    -- terms), exactly it for a single word that stands only for itself. Count (up to 5,001) only when neither decides.
    v_matches := search.parcel_total_from_vocabulary(v_filter, v_words);
    IF v_matches IS NULL THEN
      SELECT min(f) INTO v_bound
        FROM unnest(v_words) AS qw,
             LATERAL (SELECT coalesce(sum(t.parcels), 0) AS f FROM core.parcel_terms t WHERE t.term = ANY (qw.terms)) d;
      v_matches := CASE WHEN v_bound <= 5000 THEN v_bound END;
    END IF;
    IF v_matches IS NULL THEN
      EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM core.parcels p WHERE %s LIMIT 5001) m', v_where) INTO v_matches;
    END IF;
    v_exact := format('(coalesce(p.owner_search = %1$L, false) OR coalesce(p.address_search = %1$L, false))', v_q);
    IF v_matches <= 5000 THEN
      EXECUTE format('SELECT array_agg(id) FROM (SELECT p.id FROM core.parcels p WHERE %s ORDER BY %s DESC, %s DESC, p.id LIMIT %s OFFSET %s) page',
                     v_where, search.parcel_query_score_sql(v_words), v_exact, p_limit, p_offset) INTO v_ids;
    ELSE
      -- A tier the vocabulary shows empty is skipped: walking an index for a tier with no rows reads the whole
      -- table. Every word held exactly is empty when a word is in no parcel as typed (a typo); the rest is empty
      -- when no word stands for any term but itself. Walking a tier's order reads about (rows of the page) / (its
      -- share of the table) rows, a bitmap reads all of its rows: walk only when the tier can be large enough,
      -- bounded by its rarest word's count.
      SELECT min(coalesce(t.parcels, 0)), bool_and(qw.terms = ARRAY[qw.word])
        INTO v_exact_bound, v_only_exact
        FROM unnest(v_words) AS qw LEFT JOIN core.parcel_terms t ON t.term = qw.word;
      v_level := search.parcel_well_level(v_words);
      v_well := CASE WHEN v_level IS NOT NULL THEN (
        SELECT string_agg(format('p.search_terms && %L::text[]',
                                 ARRAY(SELECT x.term FROM unnest(qw.terms, qw.qualities) AS x(term, q) WHERE x.q >= v_level)), ' AND ')
          FROM unnest(v_words) AS qw) END;
      v_words_exact := format('p.search_terms @> %L::text[]', ARRAY(SELECT qw.word FROM unnest(v_words) AS qw));
      v_ids := search.parcel_page_by_tiers(v_where,
        ARRAY[search.parcel_exact_text_sql(v_q),
              CASE WHEN v_exact_bound > 0 THEN format('%s AND NOT %s', v_words_exact, v_exact) ELSE 'false' END,
              CASE WHEN v_well IS NULL THEN 'false' ELSE format('%s AND NOT %s', v_well, v_words_exact) END,
              CASE WHEN v_only_exact THEN 'false' ELSE format('NOT %s AND NOT (%s)', v_words_exact, coalesce(v_well, 'false')) END],
        ARRAY['p.id', 'p.id', format('%s DESC, p.id', search.parcel_query_score_sql(v_words)), 'p.id'], p_limit, p_offset,
        ARRAY[false, v_exact_bound::float8 ^ 2 > (p_offset + p_limit)::float8 * (SELECT c.reltuples FROM pg_class c WHERE c.oid = 'core.parcels'::regclass),
              false, true]);
    END IF;
  ELSIF v_sort = 'distance' THEN
    -- Distance to the centroid on the sphere (ST_Distance on geography, ~2 us a parcel). A page needs only the
    -- nearest offset + limit matches: read a few more than that from the centroid index in planar order (KNN on <->,
    -- raw degrees, within the near box) and rank them by ST_Distance. They hold the nearest of all when the page's
    -- last distance is under the distance to anywhere outside the box and, unless the box ran out, under the last
    -- planar distance read times the box's smallest metres per degree (which bound every match not read from
    -- below). Otherwise, and for radii under 150 m (a few hundred parcels at most), every match is ranked. Sorting
    -- is turned off so that the planner walks the index instead of sorting the whole box.
    v_k := p_offset + p_limit;
    v_pt := quote_literal(ST_SetSRID(ST_MakePoint(p_near_lng, p_near_lat), 4326)::text);
    SELECT * INTO v_dlat, v_dlng FROM search.near_box(p_near_lat, p_radius_m);
    -- Ranking every match scans them all, so it counts them too (a window riding along to the top-N sort). With a
    -- total, up to 1 km (a few thousand matches in a city), that one scan costs less than reading the nearest and
    -- then scanning again to count (500 m: 2.9 ms against 2.1 for the page and 2.5 for the count).
    IF p_radius_m >= 150 AND NOT (p_with_total AND p_radius_m <= 1000) THEN
      PERFORM set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true);
      EXECUTE format(
        'SELECT array_agg(id ORDER BY d, id), array_agg(d ORDER BY d, id), count(*), max(raw)'
        '  FROM (SELECT p.id, p.centroid <-> %2$s::geometry AS raw, ST_Distance(p.centroid::geography, %2$s::geography, false) AS d'
        '          FROM core.parcels p WHERE %1$s AND p.centroid && %3$s ORDER BY p.centroid <-> %2$s::geometry LIMIT %4$s) t',
        v_where, v_pt, search.parcel_box_literal(p_near_lng, p_near_lat, v_dlng, v_dlat), 2 * v_k + 10) INTO v_ids, v_dist, v_read, v_raw;
      PERFORM set_config('enable_sort', 'on', true), set_config('enable_bitmapscan', 'on', true);
    END IF;
    v_lo := cos(radians(p_near_lat)) * cos(radians(least(abs(p_near_lat) + v_dlat, 90)));
    IF v_read IS NULL  -- not read: every match is ranked
       OR NOT (v_read >= v_k
               AND v_dist[v_k] < least(v_r * radians(v_dlat), 2 * v_r * asin(sqrt(v_lo) * sin(radians(v_dlng) / 2)))
               AND (v_read < 2 * v_k + 10
                    OR v_r * radians(v_raw) * sqrt(v_lo * (1 - radians(greatest(v_dlat, v_dlng) + 0.001) ^ 2 / 12)) > v_dist[v_k])) THEN
      EXECUTE format(
        'SELECT array_agg(id ORDER BY d, id), coalesce(max(n), 0)'
        '  FROM (SELECT p.id, ST_Distance(p.centroid::geography, %2$s::geography, false) AS d, count(*) OVER () AS n'
        '          FROM core.parcels p WHERE %1$s ORDER BY d, p.id LIMIT %3$s) t',
        v_where, v_pt, v_k) INTO v_ids, v_total;
    END IF;
    v_ids := v_ids[p_offset + 1 : v_k];
  ELSE
    EXECUTE format('SELECT array_agg(id) FROM (SELECT p.id FROM core.parcels p WHERE %s ORDER BY p.id LIMIT %s OFFSET %s) page',
                   v_where, p_limit, p_offset) INTO v_ids;
  END IF;
  ids := coalesce(v_ids, '{}');
  IF p_with_total THEN
    total := coalesce(v_total, api.count_parcels(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
      p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before,
      p_sale_price_min, p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat, v_words));
  END IF;
END $$;
COMMENT ON FUNCTION search.parcel_search_page(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8, text, integer, integer, api.query_word[], boolean) IS
  'One page of api.search_parcels as parcel ids (in order) and, with p_with_total (the default), the exact number of '
  'matches (api.count_parcels; for a relevance search with no filter but counties, counted from the same postings '
  'as the page, and for a distance sort that ranks every match, by the same scan: not twice). '
  'api.parcel_search_hits (GET /v1/parcels/search) calls it, then search.parcel_rows(ids, false). Example: '
  'SELECT total, ids FROM search.parcel_search_page(p_query => ''smith john'', p_limit => 5);';

-- A filter on nothing but county, use codes, city and ZIP: its totals and facets are in core.parcel_facet_counts.
CREATE FUNCTION search.parcel_filter_is_categorical(f search.parcel_filter) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN num_nonnulls(f.query, f.just_value_min, f.just_value_max, f.assessed_min, f.assessed_max, f.sale_after,
                      f.sale_before, f.sale_price_min, f.sale_price_max, f.near_lat, f.bbox, f.point_lng) = 0;
COMMENT ON FUNCTION search.parcel_filter_is_categorical(search.parcel_filter) IS
  'Helper of count_parcels / facet_parcels: true when the filter uses only county, use_code, dor_use_code, city and '
  'zip, so exact totals and facets can be summed from core.parcel_facet_counts.';
