-- Parcel search, paging: the rows of a page, a page read tier by tier, and the one call that gives a page and its
-- total, choosing among the postings, place and filter paths.

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

CREATE FUNCTION search.parcel_search_page(
  p_filter search.parcel_filter, p_sort text DEFAULT NULL, p_limit integer DEFAULT 25, p_offset integer DEFAULT 0,
  p_words api.query_word[] DEFAULT NULL, p_with_total boolean DEFAULT true, OUT ids bigint[], OUT total integer
)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET plan_cache_mode = auto SET enable_sort = on SET enable_bitmapscan = on  -- restored at exit: changes below stay inside
  SET extra_float_digits = 3  -- match qualities written into SQL text keep every bit (scores tie as on the postings)
AS $$
DECLARE
  v_words api.query_word[] := search.parcel_words_of(p_filter.query, p_words);
  v_where text;
  v_texts text[];  -- the query's texts (search.exact_texts), for a relevance sort
  v_sort text := coalesce(p_sort, CASE WHEN p_filter.query IS NOT NULL THEN 'relevance' WHEN p_filter.near_lat IS NOT NULL THEN 'distance' ELSE 'id' END);
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
  v_best text;
  v_score text;
  v_exact_text text;
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
  PERFORM core.check_page(p_limit, p_offset);
  IF v_sort NOT IN ('relevance', 'distance', 'id') AND v_column IS NULL THEN
    PERFORM core.bad_sort(v_sort, ARRAY['relevance', 'distance', 'id', 'just_value_asc', 'just_value_desc',
      'assessed_value_asc', 'assessed_value_desc', 'taxable_value_asc', 'taxable_value_desc', 'last_sale_date_asc',
      'last_sale_date_desc', 'last_sale_price_asc', 'last_sale_price_desc', 'year_built_asc', 'year_built_desc']);
  END IF;
  IF v_sort = 'relevance' AND p_filter.query IS NULL THEN PERFORM core.bad_input('sort: relevance needs query'); END IF;
  IF v_sort = 'distance' AND p_filter.near_lat IS NULL THEN PERFORM core.bad_input('sort: distance needs near and radius_m'); END IF;
  IF v_sort = 'id' AND search.parcel_filter_is_place_only(p_filter) THEN
    SELECT pp.ids, pp.total INTO ids, total FROM search.parcel_page_by_place(p_filter, p_limit, p_offset, p_with_total) pp;
    RETURN;
  END IF;
  v_where := search.parcel_where(p_filter, v_words);
  IF v_sort = 'relevance' THEN v_texts := search.exact_texts(p_filter.query, v_words); END IF;

  IF v_column IS NOT NULL THEN
    -- parcels with a value in the sort's order (ties by id the same way), then those without one, by id
    v_ids := search.parcel_page_by_tiers(v_where,
      ARRAY[format('p.%I IS NOT NULL', v_column), format('p.%I IS NULL', v_column)],
      ARRAY[format('p.%1$I %2$s, p.id %2$s', v_column, v_dir), format('p.id %s', v_dir)], p_limit, p_offset);
  ELSIF v_sort = 'relevance' AND cardinality(v_words) > 0 AND search.parcel_filter_is_words_only(p_filter) THEN
    v_total := search.parcel_total_from_vocabulary(p_filter, v_words);
    SELECT pp.ids, coalesce(v_total, pp.total) INTO v_ids, v_total
      FROM search.parcel_page_by_postings(v_words, search.parcel_postings_counties(p_filter.county), v_texts, p_limit, p_offset,
                                       p_with_total AND v_total IS NULL) pp;
  ELSIF v_sort = 'relevance' AND cardinality(v_words) > 0 THEN
    -- Relevance: score (every word held exactly = 1), then an owner or address equal to one of the query's texts
    -- (search.exact_texts), then id. Up to
    -- search.ranked_in_full() matches are ranked in full. More (a common name or street statewide) are paged tier by tier without
    -- scoring the whole set: the query's exact text, then every word held exactly, each by id; then the query's exact
    -- texts with the best score left, by id; then the parcels whose every word is matched well (below), by score;
    -- then the rest, by id.
    -- The vocabulary bounds the number of matches: at most the smallest word's document frequency (the sum over its
    -- terms), exactly it for a single word that stands only for itself. Count (up to one past the bound) only when
    -- neither decides.
    v_matches := search.parcel_total_from_vocabulary(p_filter, v_words);
    IF v_matches IS NULL THEN
      SELECT min(d.f) INTO v_bound
        FROM unnest(v_words) AS qw,
             LATERAL (SELECT coalesce(sum(t.parcels), 0) AS f FROM core.parcel_terms t WHERE t.term = ANY (qw.terms)) d;
      v_matches := CASE WHEN v_bound <= search.ranked_in_full() THEN v_bound END;
    END IF;
    IF v_matches IS NULL THEN
      EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM core.parcels p WHERE %s LIMIT %s) m', v_where,
                     search.ranked_in_full() + 1) INTO v_matches;
    END IF;
    v_exact := format('(coalesce(p.owner_search = ANY (%1$L::text[]), false) OR coalesce(p.address_search = ANY (%1$L::text[]), false))',
                      v_texts);
    v_score := search.parcel_query_score_sql(v_words);
    IF v_matches <= search.ranked_in_full() THEN
      EXECUTE format('SELECT array_agg(id) FROM (SELECT p.id FROM core.parcels p WHERE %s ORDER BY %s DESC, %s DESC, p.id LIMIT %s OFFSET %s) page',
                     v_where, v_score, v_exact, p_limit, p_offset) INTO v_ids;
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
      -- an exact text that is not every word held exactly, with the best score left (search.parcel_best_exact)
      v_exact_text := search.parcel_exact_text_sql(v_texts);
      v_best := format('coalesce(%s AND NOT %s AND %s = %L::float8, false)', v_exact_text, v_words_exact, v_score,
                       search.parcel_best_score(v_words));
      v_ids := search.parcel_page_by_tiers(v_where,
        ARRAY[format('%s AND %s', v_exact_text, v_words_exact),
              CASE WHEN v_exact_bound > 0 THEN format('%s AND NOT %s', v_words_exact, v_exact) ELSE 'false' END,
              CASE WHEN v_only_exact THEN 'false' ELSE v_best END,
              CASE WHEN v_well IS NULL THEN 'false' ELSE format('%s AND NOT %s AND NOT %s', v_well, v_words_exact, v_best) END,
              CASE WHEN v_only_exact THEN 'false' ELSE format('NOT %s AND NOT (%s) AND NOT %s', v_words_exact, coalesce(v_well, 'false'), v_best) END],
        ARRAY['p.id', 'p.id', 'p.id', format('%s DESC, %s DESC, p.id', v_score, v_exact), 'p.id'], p_limit, p_offset,
        ARRAY[false, v_exact_bound::float8 ^ 2 > (p_offset + p_limit)::float8 * (SELECT c.reltuples FROM pg_class c WHERE c.oid = 'core.parcels'::regclass),
              false, false, true]);
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
    v_pt := quote_literal(ST_SetSRID(ST_MakePoint(p_filter.near_lng, p_filter.near_lat), 4326)::text);
    SELECT * INTO v_dlat, v_dlng FROM search.near_box(p_filter.near_lat, p_filter.radius_m);
    -- Ranking every match scans them all, so it counts them too (a window riding along to the top-N sort). With a
    -- total, up to 1 km (a few thousand matches in a city), that one scan costs less than reading the nearest and
    -- then scanning again to count (500 m: 2.9 ms against 2.1 for the page and 2.5 for the count).
    IF p_filter.radius_m >= 150 AND NOT (p_with_total AND p_filter.radius_m <= 1000) THEN
      PERFORM set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true);
      EXECUTE format(
        'SELECT array_agg(id ORDER BY d, id), array_agg(d ORDER BY d, id), count(*), max(raw)'
        '  FROM (SELECT p.id, p.centroid <-> %2$s::geometry AS raw, ST_Distance(p.centroid::geography, %2$s::geography, false) AS d'
        '          FROM core.parcels p WHERE %1$s AND p.centroid && %3$s ORDER BY p.centroid <-> %2$s::geometry LIMIT %4$s) t',
        v_where, v_pt, search.parcel_box_literal(p_filter.near_lng, p_filter.near_lat, v_dlng, v_dlat), 2 * v_k + 10) INTO v_ids, v_dist, v_read, v_raw;
      PERFORM set_config('enable_sort', 'on', true), set_config('enable_bitmapscan', 'on', true);
    END IF;
    v_lo := cos(radians(p_filter.near_lat)) * cos(radians(least(abs(p_filter.near_lat) + v_dlat, 90)));
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
    total := coalesce(v_total, search.parcel_count(p_filter, v_words));
  END IF;
END $$;
COMMENT ON FUNCTION search.parcel_search_page(search.parcel_filter, text, integer, integer, api.query_word[], boolean) IS
  'One page of parcel search as parcel ids (in order) and, with p_with_total (the default), the exact number of '
  'matches (search.parcel_count; for a relevance search with no filter but counties, counted from the same postings '
  'as the page, and for a distance sort that ranks every match, by the same scan: not twice). p_words: the query''s '
  'reading, NULL to read it here. Example: '
  'SELECT total, ids FROM search.parcel_search_page(search.parcel_filter_of(p_query => ''smith john''), p_limit => 5);';
