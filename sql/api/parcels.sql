-- Parcels (Part 4.1): search, the two single-parcel reads, and the shapes they return.
-- Search, count and facets share one filter builder (api.parcel_where), which writes only the predicates a
-- request uses, so every combination of filters gets a plan of its own (no "x IS NULL OR ..." that defeats
-- indexes). Values are quoted with format('%L'): nothing a client sends becomes SQL.

CREATE TYPE api.parcel_hit AS (
  id                    integer,
  parcel_id             text,
  county_slug           text,
  county_name           text,
  owner_name            text,
  site_address_full     text,
  site_city             text,
  site_state            text,
  site_zip              text,
  dor_use_code          text,
  property_use_code     text,
  land_use_description  text,
  just_value            float8,
  assessed_value        float8,
  taxable_value         float8,
  year_built            integer,
  last_sale_date        text,
  last_sale_price       float8,
  centroid_lat          float8,
  centroid_lng          float8,
  geometry              text
);
COMMENT ON TYPE api.parcel_hit IS
  'ParcelHit (interface 2.3) plus the internal id. geometry is a GeoJSON Polygon or MultiPolygon as text, filled only by the single-parcel reads.';

CREATE TYPE api.parcel_filter AS (
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
COMMENT ON TYPE api.parcel_filter IS 'The filters of parcel search, as one value shared by search, count and facets.';

-- DOR use codes arrive as 1-4 digits ('1', '01', '001', '0100'); the roll keeps the 4-character form '0100'.
CREATE FUNCTION api.normalize_dor_use_code(p_code text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN CASE WHEN p_code ~ '^\d{4}$' THEN p_code
              WHEN p_code ~ '^\d{1,3}$' AND p_code::int < 100 THEN lpad(p_code::int::text, 2, '0') || '00'
              ELSE upper(p_code) END;
COMMENT ON FUNCTION api.normalize_dor_use_code(text) IS
  'A DOR use code in the 4-character form the roll stores: 1, 01 and 001 all mean 0100 (single family).';

-- County slugs to ids; an unknown slug is a 400 that names it (a typo should not look like "no data").
CREATE FUNCTION api.county_ids(p_slugs text[]) RETURNS smallint[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_unknown text;
  v_ids smallint[];
BEGIN
  IF p_slugs IS NULL THEN RETURN NULL; END IF;
  IF EXISTS (SELECT 1 FROM unnest(p_slugs) s WHERE s IS NULL OR length(s) NOT BETWEEN 1 AND 40) THEN
    PERFORM core.bad_input('county: each county slug must be 1-40 characters');
  END IF;
  SELECT s INTO v_unknown FROM unnest(p_slugs) s
   WHERE NOT EXISTS (SELECT 1 FROM core.counties c WHERE c.slug = lower(s)) LIMIT 1;
  IF v_unknown IS NOT NULL THEN
    PERFORM core.bad_input(format('county: unknown county ''%s''; GET /v1/counties lists the slugs', v_unknown));
  END IF;
  SELECT array_agg(c.id ORDER BY c.id) INTO v_ids FROM core.counties c WHERE c.slug = ANY (SELECT lower(s) FROM unnest(p_slugs) s);
  RETURN v_ids;
END $$;
COMMENT ON FUNCTION api.county_ids(text[]) IS 'County ids for slugs (case-insensitive), NULL for NULL or no slugs; a slug outside 1-40 characters or unknown raises 22023 naming it. Used by every search-like surface.';

-- One query word and the vocabulary terms it matches, each with a match quality in (0, 1]: 1 for the word itself,
-- 1 - edits / length for a typo, the covered share for a prefix completion.
CREATE TYPE api.query_word AS (word text, terms text[], qualities float8[]);
COMMENT ON TYPE api.query_word IS 'A parcel-search query word and the vocabulary terms (with match qualities) it stands for.';

CREATE FUNCTION api.parcel_query_words(p_query text) RETURNS api.query_word[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET pg_trgm.similarity_threshold = 0.2
AS $$
DECLARE
  v_words text[] := ARRAY(
    SELECT w FROM unnest(string_to_array(core.normalize_text(p_query), ' ')) WITH ORDINALITY AS u(w, i)
     WHERE w <> '' GROUP BY w ORDER BY min(i) LIMIT 12);
  v_word text;
  v_df integer;
  v_word_out api.query_word;
  v_out api.query_word[] := '{}';
BEGIN
  FOREACH v_word IN ARRAY v_words LOOP
    SELECT t.parcels INTO v_df FROM core.parcel_terms t WHERE t.term = v_word;
    -- the trigram prefilter of typo candidates: loose enough for one edit in a short word (JON ~ JOHN shares 0.29),
    -- tighter for longer words, whose candidates within two edits share more (and far fewer index entries are read)
    PERFORM set_config('pg_trgm.similarity_threshold', CASE WHEN length(v_word) <= 4 THEN '0.2' ELSE '0.3' END, true);
    SELECT v_word, coalesce(array_agg(m.term ORDER BY m.q DESC, m.parcels DESC, m.term), '{}'),
           coalesce(array_agg(m.q ORDER BY m.q DESC, m.parcels DESC, m.term), '{}')
      INTO v_word_out
      FROM (SELECT DISTINCT ON (x.term) x.term, x.parcels, x.q FROM (
              SELECT t.term, t.parcels, 1.0::float8 AS q FROM core.parcel_terms t WHERE t.term = v_word
              UNION ALL
              -- typos: for every word of a longer query, and for a lone word that is rare or unknown (a lone common
              -- word is meant as written, and its exact total then comes from the vocabulary); never numbers
              (SELECT t.term, t.parcels, 1 - levenshtein(v_word, t.term)::float8 / greatest(length(v_word), length(t.term))
                 FROM core.parcel_terms t
                WHERE (coalesce(v_df, 0) < 1000 OR cardinality(v_words) > 1) AND length(v_word) >= 3 AND v_word !~ '^[0-9]+$'
                  AND t.term % v_word AND t.term <> v_word
                  AND levenshtein(v_word, t.term) <= CASE WHEN length(v_word) <= 5 THEN 1 ELSE 2 END
                ORDER BY levenshtein(v_word, t.term), t.parcels DESC, t.term LIMIT 16)
              UNION ALL
              -- the last word may be unfinished: complete it from the vocabulary (unless it is a common word as typed)
              (SELECT t.term, t.parcels, length(v_word)::float8 / length(t.term)
                 FROM core.parcel_terms t
                WHERE v_word = v_words[cardinality(v_words)] AND coalesce(v_df, 0) < 1000 AND length(v_word) >= 3
                  AND v_word !~ '^[0-9]+$'
                  AND t.term LIKE v_word || '%' AND t.term <> v_word
                ORDER BY t.parcels DESC, t.term LIMIT 5)) x
            ORDER BY x.term, x.q DESC) m;
    -- a word that matches nothing in the vocabulary cannot narrow the search: it is left out
    IF cardinality(v_word_out.terms) > 0 THEN v_out := v_out || v_word_out; END IF;
  END LOOP;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION api.parcel_query_words(text) IS
  'How parcel search reads a query: its distinct normalized words (at most 12), each with the vocabulary terms it '
  'matches (core.parcel_terms): the word itself; unless it is a number or a lone word held by 1,000 parcels or more, up '
  'to 16 terms within 1 edit (2 for words of 6+ letters); for a last word held by fewer than 1,000 parcels, up to 5 '
  'completions. Words '
  'matching nothing are left out. Example: SELECT * FROM unnest(api.parcel_query_words(''smyth jon''));';

-- The relevance score of a parcel for query words: the mean over words of the best quality among the word's terms
-- the parcel holds (1 when it holds every word exactly).
CREATE FUNCTION api.parcel_query_score_sql(p_words api.query_word[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '((' || (SELECT string_agg(format(
    'coalesce((SELECT max(x.q) FROM unnest(%L::text[], %L::float8[]) AS x(t, q) WHERE x.t = ANY (p.search_terms)), 0)',
    w.terms, w.qualities), ' + ') FROM unnest(p_words) AS w) || ') / ' || cardinality(p_words) || ')';
COMMENT ON FUNCTION api.parcel_query_score_sql(api.query_word[]) IS
  'Helper of search_parcels: the SQL expression (over core.parcels p) of a parcel''s relevance score for query words.';

CREATE FUNCTION api.parcel_where(f api.parcel_filter, p_words api.query_word[]) RETURNS text
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  w text[] := ARRAY['true'];
  pt text;
BEGIN
  IF f.county IS NOT NULL THEN
    -- one value as plain equality, so an index that continues with the sort key returns rows already in order
    w := w || (SELECT CASE WHEN cardinality(ids) = 1 THEN format('p.county_id = %s', ids[1])
                           ELSE format('p.county_id = ANY (%L::smallint[])', ids) END
                 FROM (SELECT api.county_ids(f.county) AS ids) c);
  END IF;
  IF f.query IS NOT NULL THEN
    -- every query word must match: one GIN condition per word, over the word's vocabulary terms
    IF cardinality(p_words) = 0 THEN
      w := w || 'false'::text;
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
                 FROM (SELECT array_agg(DISTINCT api.normalize_dor_use_code(u)) AS codes FROM unnest(f.dor_use_code) u) c);
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
    pt := format('ST_SetSRID(ST_MakePoint(%L::float8, %L::float8), 4326)', f.near_lng, f.near_lat);
    -- a degree box around the point first (GiST on geom), then the exact distance on the spheroid
    w := w || format('p.geom && ST_Expand(%1$s, %2$L::float8, %3$L::float8) AND ST_DWithin(p.geom::geography, %1$s::geography, %4$L::float8, false)',
                     pt, f.radius_m / (111320 * cos(radians(f.near_lat))) * 1.01, f.radius_m / 110574 * 1.01, f.radius_m);
  END IF;
  IF f.bbox IS NOT NULL THEN
    w := w || format('p.geom && ST_MakeEnvelope(%1$L, %2$L, %3$L, %4$L, 4326) AND ST_Intersects(p.geom, ST_MakeEnvelope(%1$L, %2$L, %3$L, %4$L, 4326))',
                     f.bbox[1], f.bbox[2], f.bbox[3], f.bbox[4]);
  END IF;
  IF f.point_lng IS NOT NULL THEN
    pt := format('ST_SetSRID(ST_MakePoint(%L::float8, %L::float8), 4326)', f.point_lng, f.point_lat);
    w := w || format('p.geom && %1$s AND ST_Intersects(p.geom, %1$s)', pt);
  END IF;
  RETURN array_to_string(w, ' AND ');
END $$;
COMMENT ON FUNCTION api.parcel_where(api.parcel_filter, api.query_word[]) IS
  'The WHERE clause (over core.parcels p) for a parcel filter and its query words (api.parcel_query_words): only the predicates the filter uses, values quoted. Used by search_parcels, count_parcels and facet_parcels.';

-- ParcelHit rows for ids, in the order given.
CREATE FUNCTION api.parcel_rows(p_ids bigint[], p_with_geometry boolean) RETURNS SETOF api.parcel_hit
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
COMMENT ON FUNCTION api.parcel_rows(bigint[], boolean) IS 'ParcelHit rows for parcel ids, in the order given; geometry only when asked.';

CREATE FUNCTION api.parcel_filter_of(
  p_query text, p_county text[], p_use_code text[], p_dor_use_code text[], p_city text, p_zip text,
  p_just_value_min float8, p_just_value_max float8, p_assessed_min float8, p_assessed_max float8,
  p_sale_after date, p_sale_before date, p_sale_price_min float8, p_sale_price_max float8,
  p_near_lat float8, p_near_lng float8, p_radius_m float8, p_bbox float8[], p_point_lng float8, p_point_lat float8
) RETURNS api.parcel_filter
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
             p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat)::api.parcel_filter;
END $$;
COMMENT ON FUNCTION api.parcel_filter_of(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8) IS
  'Checks the filters of parcel search (ranges, coordinates, radius up to 50 km) and makes one api.parcel_filter of them.';

-- The exact total of a search read straight from the vocabulary: a query of one word that stands only for itself
-- and no other filter matches exactly the parcels holding that word. NULL when the vocabulary does not decide.
CREATE FUNCTION api.parcel_total_from_vocabulary(f api.parcel_filter, p_words api.query_word[]) RETURNS integer
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT coalesce((SELECT t.parcels FROM core.parcel_terms t WHERE t.term = p_words[1].terms[1]), 0)
   WHERE cardinality(p_words) = 1 AND cardinality(p_words[1].terms) = 1
     AND num_nonnulls(f.county, f.use_code, f.dor_use_code, f.city, f.zip, f.just_value_min, f.just_value_max,
                      f.assessed_min, f.assessed_max, f.sale_after, f.sale_before, f.sale_price_min, f.sale_price_max,
                      f.near_lat, f.bbox, f.point_lng) = 0
$$;
COMMENT ON FUNCTION api.parcel_total_from_vocabulary(api.parcel_filter, api.query_word[]) IS
  'Helper of search_parcels / count_parcels: the exact number of matches when the query is one word standing only '
  'for itself and nothing else is filtered (that word''s count in core.parcel_terms); NULL otherwise.';

-- A page of parcel ids over tiers: every tier is read in its own order from an index and only as far as the page
-- needs; a tier that ends before the page does is whole, and the next one continues it.
CREATE FUNCTION api.parcel_page_by_tiers(p_where text, p_tiers text[], p_orders text[], p_limit integer, p_offset integer,
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
COMMENT ON FUNCTION api.parcel_page_by_tiers(text, text[], text[], integer, integer, boolean[]) IS
  'Helper of search_parcels: the ids of one page (p_limit from p_offset) of the rows matching p_where, taken from '
  'p_tiers in turn, each tier ordered by its p_orders entry; p_walk[i] reads tier i along its order''s index (for tiers known to be large).';

CREATE FUNCTION api.search_parcels(
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL,
  p_sort text DEFAULT NULL, p_limit integer DEFAULT 25, p_offset integer DEFAULT 0
) RETURNS SETOF api.parcel_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_filter api.parcel_filter := api.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
    p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before,
    p_sale_price_min, p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat);
  v_words api.query_word[] := CASE WHEN p_query IS NOT NULL THEN api.parcel_query_words(p_query) END;
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
BEGIN
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 500 THEN PERFORM core.bad_input('limit: must be between 1 and 500'); END IF;
  IF p_offset IS NULL OR p_offset < 0 THEN PERFORM core.bad_input('offset: must be 0 or more'); END IF;
  IF v_sort NOT IN ('relevance', 'distance', 'id') AND v_column IS NULL THEN
    PERFORM core.bad_input(format('sort: unknown sort ''%s''', v_sort));
  END IF;
  IF v_sort = 'relevance' AND p_query IS NULL THEN PERFORM core.bad_input('sort: relevance needs query'); END IF;
  IF v_sort = 'distance' AND p_near_lat IS NULL THEN PERFORM core.bad_input('sort: distance needs near and radius_m'); END IF;
  v_where := api.parcel_where(v_filter, v_words);

  IF v_column IS NOT NULL THEN
    -- parcels with a value in the sort's order (ties by id the same way), then those without one, by id
    v_ids := api.parcel_page_by_tiers(v_where,
      ARRAY[format('p.%I IS NOT NULL', v_column), format('p.%I IS NULL', v_column)],
      ARRAY[format('p.%1$I %2$s, p.id %2$s', v_column, v_dir), format('p.id %s', v_dir)], p_limit, p_offset);
  ELSIF v_sort = 'relevance' AND cardinality(v_words) > 0 THEN
    -- Relevance: score (every word held exactly = 1), then an owner or address equal to the query, then id. Up to
    -- 5,000 matches are ranked in full. More (a common name or street statewide) are paged tier by tier, each tier in
    -- id order, without scoring the whole set: the query's exact text, then every word held exactly, then the rest.
    -- The vocabulary bounds the number of matches: at most the smallest word's document frequency (the sum over its
    -- terms), exactly it for a single word that stands only for itself. Count (up to 5,001) only when neither decides.
    v_matches := api.parcel_total_from_vocabulary(v_filter, v_words);
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
                     v_where, api.parcel_query_score_sql(v_words), v_exact, p_limit, p_offset) INTO v_ids;
    ELSE
      v_words_exact := format('p.search_terms @> %L::text[]', ARRAY(SELECT qw.word FROM unnest(v_words) AS qw));
      v_ids := api.parcel_page_by_tiers(v_where,
        ARRAY[format('(p.owner_search = %1$L OR p.address_search = %1$L)', v_q),
              format('%s AND NOT %s', v_words_exact, v_exact), format('NOT (%s)', v_words_exact)],
        ARRAY['p.id', 'p.id', 'p.id'], p_limit, p_offset, ARRAY[false, true, true]);
    END IF;
  ELSE
    EXECUTE format('SELECT array_agg(id) FROM (SELECT p.id FROM core.parcels p WHERE %s ORDER BY %s LIMIT %s OFFSET %s) page',
                   v_where,
                   CASE WHEN v_sort = 'distance'
                        THEN format('ST_Distance(p.centroid::geography, ST_SetSRID(ST_MakePoint(%L::float8, %L::float8), 4326)::geography, false), p.id', p_near_lng, p_near_lat)
                        ELSE 'p.id' END,
                   p_limit, p_offset) INTO v_ids;
  END IF;
  RETURN QUERY SELECT * FROM api.parcel_rows(coalesce(v_ids, '{}'), false);
END $$;
COMMENT ON FUNCTION api.search_parcels(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8, text, integer, integer) IS
  'GET /v1/parcels/search. Owner/address search (p_query: every word must match a word of the owner name or site address exactly, by a typo or, for the last word, as a prefix, see api.parcel_query_words; ranked by score, then an owner or address equal to the query, then id; beyond 5,000 matches paged tier by tier (exact text, every word exact, the rest), each tier by id), county slugs, use codes, city, zip, value and last-sale bounds, p_near_lat/p_near_lng/p_radius_m (metres, at most 50000), p_bbox {minLng,minLat,maxLng,maxLat}, p_point_lng/p_point_lat (parcels containing the point). p_sort: relevance (default with a query), distance (default with near), id (default otherwise), or just_value, assessed_value, taxable_value, last_sale_date, last_sale_price, year_built with _asc/_desc (parcels without the value last; ties broken by id in the sort''s direction). geometry is null. Example: SELECT * FROM api.search_parcels(p_query => ''smith john'', p_county => ''{miami-dade}'');';

-- A filter on nothing but county, use codes, city and ZIP: its totals and facets are in core.parcel_facet_counts.
CREATE FUNCTION api.parcel_filter_is_categorical(f api.parcel_filter) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN num_nonnulls(f.query, f.just_value_min, f.just_value_max, f.assessed_min, f.assessed_max, f.sale_after,
                      f.sale_before, f.sale_price_min, f.sale_price_max, f.near_lat, f.bbox, f.point_lng) = 0;
COMMENT ON FUNCTION api.parcel_filter_is_categorical(api.parcel_filter) IS
  'Helper of count_parcels / facet_parcels: true when the filter uses only county, use_code, dor_use_code, city and '
  'zip, so exact totals and facets can be summed from core.parcel_facet_counts.';

CREATE FUNCTION api.count_parcels(
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL
) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_filter api.parcel_filter := api.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
    p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before,
    p_sale_price_min, p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat);
  v_words api.query_word[] := CASE WHEN p_query IS NOT NULL THEN api.parcel_query_words(p_query) END;
  v_count integer;
BEGIN
  v_count := api.parcel_total_from_vocabulary(v_filter, v_words);
  IF v_count IS NOT NULL THEN RETURN v_count; END IF;
  IF api.parcel_filter_is_categorical(v_filter) THEN
    EXECUTE format('SELECT coalesce(sum(p.parcels), 0)::integer FROM core.parcel_facet_counts p WHERE %s',
                   api.parcel_where(v_filter, v_words)) INTO v_count;
    RETURN v_count;
  END IF;
  EXECUTE format('SELECT count(*) FROM core.parcels p WHERE %s', api.parcel_where(v_filter, v_words)) INTO v_count;
  RETURN v_count;
END $$;
COMMENT ON FUNCTION api.count_parcels(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8) IS
  'The exact number of parcels search_parcels matches for the same filters (pagination.total).';

CREATE FUNCTION api.facet_parcels(
  p_facets text[],
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL
) RETURNS jsonb
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_filter api.parcel_filter := api.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
      p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before,
      p_sale_price_min, p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat);
  v_where text := api.parcel_where(v_filter, CASE WHEN p_query IS NOT NULL THEN api.parcel_query_words(p_query) END);
  -- only county / use code / city / zip filters: sum the trigger-kept counts instead of counting rows
  v_categorical boolean := api.parcel_filter_is_categorical(v_filter);
  v_source text := CASE WHEN v_categorical THEN 'core.parcel_facet_counts' ELSE 'core.parcels' END;
  v_measure text := CASE WHEN v_categorical THEN 'sum(p.parcels)::int' ELSE 'count(*)::int' END;
  v_facet text;
  v_expr text;
  v_counts jsonb;
  v_out jsonb := '{}';
BEGIN
  FOREACH v_facet IN ARRAY coalesce(p_facets, '{}') LOOP
    v_expr := CASE v_facet
      WHEN 'county' THEN '(SELECT c.slug FROM core.counties c WHERE c.id = p.county_id)'
      WHEN 'dor_use_code' THEN 'p.dor_use_code'
      WHEN 'property_use_code' THEN 'p.property_use_code'
      WHEN 'city' THEN 'p.site_city'
      WHEN 'zip' THEN 'p.site_zip'
    END;
    IF v_expr IS NULL THEN
      PERFORM core.bad_input(format('facets: unknown facet ''%s'' (county, dor_use_code, property_use_code, city, zip)', v_facet));
    END IF;
    EXECUTE format(
      'SELECT coalesce(jsonb_agg(jsonb_build_object(''value'', v, ''count'', n) ORDER BY n DESC, v NULLS LAST), ''[]'')
         FROM (SELECT %s AS v, %s AS n FROM %s p WHERE %s GROUP BY 1 ORDER BY 2 DESC, 1 NULLS LAST LIMIT 100) f',
      v_expr, v_measure, v_source, v_where) INTO v_counts;
    v_out := v_out || jsonb_build_object(v_facet, v_counts);
  END LOOP;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION api.facet_parcels(text[], text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8) IS
  'Counts per value over the whole filtered result (not a page) for each facet of p_facets (county, dor_use_code, property_use_code, city, zip): {"county": [{"value": "miami-dade", "count": 12}, ...]}, most frequent first, at most 100 values per facet, null for parcels without a value.';

CREATE FUNCTION api.get_parcel(p_id bigint) RETURNS SETOF api.parcel_hit
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT * FROM api.parcel_rows(ARRAY[p_id], true) $$;
COMMENT ON FUNCTION api.get_parcel(bigint) IS 'GET /v1/parcels/{id}: one parcel by internal id, with its polygon as GeoJSON text; no row when unknown.';

CREATE FUNCTION api.get_parcel_by_parcel_id(p_county text, p_parcel_id text) RETURNS SETOF api.parcel_hit
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT r.* FROM api.parcel_rows(ARRAY(
    SELECT p.id FROM core.parcels p
     WHERE p.county_id = ANY (api.county_ids(ARRAY[p_county]))
       AND p.parcel_key = core.normalize_parcel_id(p_parcel_id)
     ORDER BY p.id LIMIT 1), true) r
$$;
COMMENT ON FUNCTION api.get_parcel_by_parcel_id(text, text) IS
  'GET /v1/parcels/by-parcel-id: a parcel by county slug and county-assigned parcel id, punctuation-insensitive (01-3132-035-0010 = 0131320350010; letters and leading zeros kept). Unknown county: 22023.';
