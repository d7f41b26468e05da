-- Helpers of the sale reads in api (sql/api/sales.sql): the rows of a page, and the filter as SQL text.

CREATE FUNCTION search.sale_rows(p_ids bigint[]) RETURNS SETOF api.sale_hit
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT s.id::text, c.slug, s.parcel_id, s.sale_date::text, s.sale_price::float8, s.book, s.page, s.instrument_number,
         s.deed_code, s.qualification_code, s.grantor, s.grantee
    FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)
    JOIN core.sales s ON s.id = u.id
    JOIN core.counties c ON c.id = s.county_id
   ORDER BY u.ord
$$;
COMMENT ON FUNCTION search.sale_rows(bigint[]) IS 'SaleHit rows for sale ids, in the order given.';

-- The filters of sale search as one WHERE clause over core.sales s (only the predicates used, values quoted).
CREATE FUNCTION search.sale_where(p_county text[], p_from date, p_to date, p_min_price float8, p_max_price float8, p_use_code text[])
RETURNS text
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  w text[] := ARRAY['true'];
BEGIN
  IF p_from > p_to THEN PERFORM core.bad_input('from: must not be later than to'); END IF;
  IF p_min_price > p_max_price THEN PERFORM core.bad_input('min_price: must not be greater than max_price'); END IF;
  IF p_county IS NOT NULL THEN w := w || format('s.county_id = ANY (%L::smallint[])', core.county_ids(p_county)); END IF;
  IF p_from IS NOT NULL THEN w := w || format('s.sale_date >= %L::date', p_from); END IF;
  IF p_to IS NOT NULL THEN w := w || format('s.sale_date <= %L::date', p_to); END IF;
  IF p_min_price IS NOT NULL THEN w := w || format('s.sale_price >= %L::float8', p_min_price); END IF;
  IF p_max_price IS NOT NULL THEN w := w || format('s.sale_price <= %L::float8', p_max_price); END IF;
  IF p_use_code IS NOT NULL THEN
    w := w || format('s.dor_use_code = ANY (%L::text[])', (SELECT array_agg(core.normalize_dor_use_code(u)) FROM unnest(p_use_code) u));
  END IF;
  RETURN array_to_string(w, ' AND ');
END $$;
COMMENT ON FUNCTION search.sale_where(text[], date, date, float8, float8, text[]) IS
  'The WHERE clause of sale search; use codes are the DOR use code recorded with the sale (1-4 digits, 01 = 0100).';
