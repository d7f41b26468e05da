-- Helpers of the delinquency reads in api (sql/api/tax_delinquencies.sql): the shared filter set of search and count,
-- and the feed-source filters.

-- The filter set shared by search and count, so both always agree. Positional parameters:
-- $1 county ids, $2 tax_year, $3 status, $4 min_due, $5 max_due, $6 parcel_key, $7 owner (normalized),
-- $8 vendor (lower case), $9 certificate_number.
CREATE FUNCTION search.tax_delinquency_where() RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN $w$
      ($1 IS NULL OR (cardinality($1) = 1 AND d.county_id = $1[1]) OR (cardinality($1) > 1 AND d.county_id = ANY ($1)))
  AND ($2 IS NULL OR d.tax_year = $2)
  AND ($3 IS NULL OR d.status = $3 OR ($3 = 'unknown' AND d.status IS NULL))
  AND ($4 IS NULL OR d.total_due >= $4)
  AND ($5 IS NULL OR d.total_due <= $5)
  AND ($6 IS NULL OR d.parcel_key = $6)
  AND ($7 IS NULL OR d.owner_search LIKE '%' || $7 || '%')
  AND ($8 IS NULL OR lower(d.source_vendor) = $8)
  AND ($9 IS NULL OR d.certificate_number = $9)
$w$;
COMMENT ON FUNCTION search.tax_delinquency_where() IS
  'Helper of search_tax_delinquencies / count_tax_delinquencies_matching: the WHERE clause text both execute, '
  'so the page and its exact total can never disagree; executed with its values, so the planner folds what is unused '
  '(one county becomes plain equality, letting an index that continues with the sort return rows in order). Not '
  'meant to be called directly.';

-- Validates and normalizes the search filters once; search and count both call it.
CREATE FUNCTION search.tax_delinquency_filters(
  p_county text[], p_tax_year integer, p_status text, p_min_due numeric, p_max_due numeric,
  p_parcel_id text, p_owner text, p_vendor text, p_certificate_number text,
  OUT county_ids smallint[], OUT tax_year integer, OUT status text, OUT min_due numeric, OUT max_due numeric,
  OUT parcel_key text, OUT owner text, OUT vendor text, OUT certificate_number text)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  county_ids := core.county_ids(p_county);
  IF p_tax_year IS NOT NULL AND p_tax_year NOT BETWEEN 1900 AND 2100 THEN
    PERFORM core.bad_input('tax_year must be between 1900 and 2100');
  END IF;
  tax_year := p_tax_year;
  IF p_status IS NOT NULL AND length(p_status) NOT BETWEEN 1 AND 40 THEN
    PERFORM core.bad_input('status must be 1-40 characters');
  END IF;
  status := lower(btrim(p_status));
  IF p_min_due = 'NaN' OR p_max_due = 'NaN' OR abs(p_min_due) = 'Infinity' OR abs(p_max_due) = 'Infinity' THEN
    PERFORM core.bad_input('min_due and max_due must be finite numbers');
  END IF;
  IF p_min_due > p_max_due THEN
    PERFORM core.bad_input('min_due (' || p_min_due || ') must not be greater than max_due (' || p_max_due || ')');
  END IF;
  min_due := p_min_due;
  max_due := p_max_due;
  IF p_parcel_id IS NOT NULL THEN
    IF length(p_parcel_id) NOT BETWEEN 1 AND 100 THEN
      PERFORM core.bad_input('parcel_id must be 1-100 characters');
    END IF;
    parcel_key := core.normalize_parcel_id(p_parcel_id);
    IF parcel_key = '' THEN
      PERFORM core.bad_input('parcel_id must contain at least one letter or digit');
    END IF;
  END IF;
  IF p_owner IS NOT NULL THEN
    IF length(p_owner) NOT BETWEEN 1 AND 200 THEN
      PERFORM core.bad_input('owner must be 1-200 characters');
    END IF;
    owner := core.normalize_text(p_owner);
    IF owner = '' THEN
      PERFORM core.bad_input('owner must contain at least one letter or digit');
    END IF;
  END IF;
  IF p_vendor IS NOT NULL AND length(p_vendor) NOT BETWEEN 1 AND 80 THEN
    PERFORM core.bad_input('vendor must be 1-80 characters');
  END IF;
  vendor := lower(btrim(p_vendor));
  IF p_certificate_number IS NOT NULL AND length(p_certificate_number) NOT BETWEEN 1 AND 80 THEN
    PERFORM core.bad_input('certificate_number must be 1-80 characters');
  END IF;
  certificate_number := btrim(p_certificate_number);
END $$;
COMMENT ON FUNCTION search.tax_delinquency_filters(text[], integer, text, numeric, numeric, text, text, text, text) IS
  'Helper of the tax-delinquency search: validates the filters (22023 naming the parameter) and returns them '
  'normalized: county ids, lower-case status and vendor, parcel_key via core.normalize_parcel_id, owner via '
  'core.normalize_text.';

-- Validates the sources filters (22023 naming the parameter) and returns the county ids.
CREATE FUNCTION search.tax_delinquency_source_filters(p_county text, p_vendor text, p_source_kind text)
RETURNS smallint[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  IF p_vendor IS NOT NULL AND length(p_vendor) NOT BETWEEN 1 AND 80 THEN
    PERFORM core.bad_input('vendor must be 1-80 characters');
  END IF;
  IF p_source_kind IS NOT NULL AND length(p_source_kind) NOT BETWEEN 1 AND 40 THEN
    PERFORM core.bad_input('source_kind must be 1-40 characters');
  END IF;
  RETURN core.county_ids(CASE WHEN p_county IS NULL THEN NULL ELSE ARRAY[p_county] END);
END $$;
COMMENT ON FUNCTION search.tax_delinquency_source_filters(text, text, text) IS
  'Helper of list/count_tax_delinquency_sources: validates county, vendor and source_kind; returns county ids.';

CREATE FUNCTION search.tax_delinquency_source_matches(
  v api.tax_delinquency_sources, p_county_ids smallint[], p_vendor text, p_source_kind text, p_active boolean)
RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (p_county_ids IS NULL OR v."countyId"::smallint = ANY (p_county_ids))
   AND (p_vendor IS NULL OR strpos(lower(v."vendor"), lower(p_vendor)) > 0)
   AND (p_source_kind IS NULL OR lower(v."sourceKind") = lower(p_source_kind))
   AND (p_active IS NULL OR v."active" = p_active);
COMMENT ON FUNCTION search.tax_delinquency_source_matches(api.tax_delinquency_sources, smallint[], text, text, boolean) IS
  'Helper of list/count_tax_delinquency_sources: the one filter both apply (vendor contains, case-insensitive; '
  'source_kind exact, case-insensitive; active when given).';
