-- Sales: a parcel's sale and deed history, and statewide sale search; each as a page and its total in one call, or
-- each alone. The filter is written as only the predicates it uses (search.sale_where), as parcel search's is.

CREATE TYPE api.sale_hit AS (
  id                  text,
  county_slug         text,
  county_parcel_id    text,
  sale_date           text,
  sale_price          float8,
  book                text,
  page                text,
  instrument_number   text,
  deed_code           text,
  qualification_code  text,
  grantor             text,
  grantee             text
);
COMMENT ON TYPE api.sale_hit IS 'SaleHit (interface 2.4). Codes are raw county / FDOR codes; grantor and grantee are null where the source has none (FDOR SDF files).';

CREATE FUNCTION api.list_parcel_sales(p_id bigint, p_limit integer DEFAULT 25, p_offset integer DEFAULT 0) RETURNS SETOF api.sale_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY
  -- (the ids as a column of a lateral row, not a sub-SELECT argument, so that sale_rows is inlined)
    SELECT r.* FROM (SELECT ARRAY(
      SELECT s.id FROM core.parcels p
        JOIN core.sales s ON s.county_id = p.county_id AND s.parcel_key = p.parcel_key
       WHERE p.id = p_id
       ORDER BY s.sale_date DESC, s.id DESC
       LIMIT p_limit OFFSET p_offset) AS ids) x
     CROSS JOIN LATERAL search.sale_rows(x.ids) r;
END $$;
COMMENT ON FUNCTION api.list_parcel_sales(bigint, integer, integer) IS
  'GET /v1/parcels/{id}/sales: the parcel''s recorded sales, newest first (ties by id). Sales match the parcel by county and punctuation-insensitive parcel id.';

CREATE FUNCTION api.count_parcel_sales(p_id bigint) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN (SELECT (SELECT count(*)::int FROM core.sales s WHERE s.county_id = p.county_id AND s.parcel_key = p.parcel_key)
            FROM core.parcels p WHERE p.id = p_id);
END $$;
COMMENT ON FUNCTION api.count_parcel_sales(bigint) IS 'How many sales the parcel has; NULL when no parcel has that id (the API answers 404).';

CREATE FUNCTION api.search_sales(
  p_county text[] DEFAULT NULL, p_from date DEFAULT NULL, p_to date DEFAULT NULL,
  p_min_price float8 DEFAULT NULL, p_max_price float8 DEFAULT NULL, p_use_code text[] DEFAULT NULL,
  p_sort text DEFAULT 'date_newest', p_limit integer DEFAULT 25, p_offset integer DEFAULT 0
) RETURNS SETOF api.sale_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_order text := CASE coalesce(p_sort, 'date_newest')
    WHEN 'date_newest' THEN 's.sale_date DESC, s.id DESC'
    WHEN 'date_oldest' THEN 's.sale_date ASC, s.id ASC'
    WHEN 'price_desc' THEN 's.sale_price DESC NULLS LAST, s.id'
    WHEN 'price_asc' THEN 's.sale_price ASC NULLS LAST, s.id'
  END;
  v_ids bigint[];
BEGIN
  IF v_order IS NULL THEN PERFORM core.bad_sort(p_sort, ARRAY['date_newest', 'date_oldest', 'price_desc', 'price_asc']); END IF;
  PERFORM core.check_page(p_limit, p_offset);
  EXECUTE format('SELECT array_agg(id) FROM (SELECT s.id FROM core.sales s WHERE %s ORDER BY %s LIMIT %s OFFSET %s) page',
                 search.sale_where(p_county, p_from, p_to, p_min_price, p_max_price, p_use_code), v_order, p_limit, p_offset)
     INTO v_ids;
  RETURN QUERY SELECT * FROM search.sale_rows(coalesce(v_ids, '{}'));
END $$;
COMMENT ON FUNCTION api.search_sales(text[], date, date, float8, float8, text[], text, integer, integer) IS
  'GET /v1/sales/search: recorded sales by county slugs, date range (p_from/p_to inclusive), price bounds and DOR use codes; p_sort date_newest (default), date_oldest, price_desc, price_asc; ties by id.';

CREATE FUNCTION api.count_sales(
  p_county text[] DEFAULT NULL, p_from date DEFAULT NULL, p_to date DEFAULT NULL,
  p_min_price float8 DEFAULT NULL, p_max_price float8 DEFAULT NULL, p_use_code text[] DEFAULT NULL
) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_count integer;
BEGIN
  EXECUTE format('SELECT count(*) FROM core.sales s WHERE %s', search.sale_where(p_county, p_from, p_to, p_min_price, p_max_price, p_use_code))
     INTO v_count;
  RETURN v_count;
END $$;
COMMENT ON FUNCTION api.count_sales(text[], date, date, float8, float8, text[]) IS 'The exact number of sales search_sales matches for the same filters.';

CREATE FUNCTION api.sale_search_hits(
  p_county text[] DEFAULT NULL, p_from date DEFAULT NULL, p_to date DEFAULT NULL,
  p_min_price float8 DEFAULT NULL, p_max_price float8 DEFAULT NULL, p_use_code text[] DEFAULT NULL,
  p_sort text DEFAULT 'date_newest', p_limit integer DEFAULT 25, p_offset integer DEFAULT 0,
  OUT total integer, OUT hits json
)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  SELECT coalesce(json_agg(r), '[]') INTO hits
    FROM api.search_sales(p_county, p_from, p_to, p_min_price, p_max_price, p_use_code, p_sort, p_limit, p_offset) r;
  total := api.count_sales(p_county, p_from, p_to, p_min_price, p_max_price, p_use_code);
END $$;
COMMENT ON FUNCTION api.sale_search_hits(text[], date, date, float8, float8, text[], text, integer, integer) IS
  'GET /v1/sales/search in one call: the exact total and the page (api.search_sales) as a JSON array of SaleHit '
  'objects, in order. Example: SELECT total, hits FROM api.sale_search_hits(p_county => ''{broward}'', p_limit => 5);';

CREATE FUNCTION api.parcel_sale_hits(p_id bigint, p_limit integer DEFAULT 25, p_offset integer DEFAULT 0,
                                     OUT total integer, OUT hits json)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  PERFORM core.check_page(p_limit, p_offset);
  total := api.count_parcel_sales(p_id);
  IF total IS NOT NULL THEN
    SELECT coalesce(json_agg(r), '[]') INTO hits FROM api.list_parcel_sales(p_id, p_limit, p_offset) r;
  END IF;
END $$;
COMMENT ON FUNCTION api.parcel_sale_hits(bigint, integer, integer) IS
  'GET /v1/parcels/{id}/sales in one call: the number of the parcel''s sales and the page (api.list_parcel_sales) as '
  'a JSON array of SaleHit objects; both NULL when no parcel has that id (the API answers 404).';
