-- Parcel search, counting: the exact total of a filter and its facets, for one search.parcel_filter value and the
-- query's reading.

CREATE FUNCTION search.parcel_count(f search.parcel_filter, p_words api.query_word[]) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_count integer;
BEGIN
  IF p_words IS NOT NULL THEN
    v_count := search.parcel_total_from_vocabulary(f, p_words);
    IF v_count IS NOT NULL THEN RETURN v_count; END IF;
    IF search.parcel_filter_is_words_only(f) THEN
      RETURN search.parcel_postings_count(search.parcel_postings_match(p_words, search.parcel_postings_counties(f.county), 0));
    END IF;
  END IF;
  IF search.parcel_filter_is_categorical(f) THEN
    EXECUTE format('SELECT coalesce(sum(p.parcels), 0)::integer FROM core.parcel_facet_counts p WHERE %s',
                   search.parcel_where(f, p_words)) INTO v_count;
    RETURN v_count;
  END IF;
  EXECUTE format('SELECT count(*) FROM core.parcels p WHERE %s', search.parcel_where(f, p_words)) INTO v_count;
  RETURN v_count;
END $$;
COMMENT ON FUNCTION search.parcel_count(search.parcel_filter, api.query_word[]) IS
  'The exact number of parcels a filter matches, p_words being its query''s reading (NULL without a query): from the '
  'vocabulary, the postings or the trigger-kept facet counts when they decide, else by counting rows.';

CREATE FUNCTION search.parcel_facets(p_facets text[], f search.parcel_filter, p_words api.query_word[]) RETURNS jsonb
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_where text := search.parcel_where(f, p_words);
  -- only county / use code / city / zip filters: sum the trigger-kept counts instead of counting rows
  v_categorical boolean := search.parcel_filter_is_categorical(f);
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
         FROM (SELECT %s AS v, %s AS n FROM %s p WHERE %s GROUP BY 1 ORDER BY 2 DESC, 1 NULLS LAST LIMIT %s) f',
      v_expr, v_measure, v_source, v_where, search.facet_values_max()) INTO v_counts;
    v_out := v_out || jsonb_build_object(v_facet, v_counts);
  END LOOP;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION search.parcel_facets(text[], search.parcel_filter, api.query_word[]) IS
  'Counts per value over everything a filter matches, for each facet of p_facets (see api.facet_parcels).';
