-- Tax delinquencies and certificates: search, by-parcel, status counts, feed sources, freshness.
-- Search and count are plpgsql with EXECUTE ... USING on purpose: each call is planned with the actual
-- values, so every "p IS NULL OR ..." filter folds away and the remaining ones can use their index
-- (owner contains-search uses the trigram index on owner_search, parcel ids the parcel_key btree).

-- DelinquencyHit (interface 2.5): the row every search-like delinquency function returns.
CREATE TYPE api.delinquency_hit AS (
  id                        text,
  county_slug               text,
  county_parcel_id          text,
  tax_year                  integer,
  status                    text,
  delinquent_amount         float8,
  total_due                 float8,
  certificate_number        text,
  certificate_sale_date     text,
  owner_name                text,
  site_address_full         text,
  source_vendor             text,
  face_amount               float8,
  certificate_holder        text,
  certificate_interest_rate float8,
  bid_rate                  float8);
COMMENT ON TYPE api.delinquency_hit IS
  'DelinquencyHit (interface 2.5): ids as text, amounts and rates as float8, certificate_sale_date as YYYY-MM-DD; '
  'every field present, NULL where unknown.';

CREATE FUNCTION api.search_tax_delinquencies(
  p_county             text[]  DEFAULT NULL,
  p_tax_year           integer DEFAULT NULL,
  p_status             text    DEFAULT NULL,
  p_min_due            numeric DEFAULT NULL,
  p_max_due            numeric DEFAULT NULL,
  p_parcel_id          text    DEFAULT NULL,
  p_owner              text    DEFAULT NULL,
  p_vendor             text    DEFAULT NULL,
  p_certificate_number text    DEFAULT NULL,
  p_sort               text    DEFAULT NULL,
  p_limit              integer DEFAULT 25,
  p_offset             integer DEFAULT 0)
RETURNS SETOF api.delinquency_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  f        record;
  v_order  text;
BEGIN
  -- Every order ends in the unique id, so pages never overlap or skip rows.
  v_order := CASE coalesce(p_sort, 'due_desc')
    WHEN 'due_desc'    THEN 'd.total_due DESC NULLS LAST, d.id'
    WHEN 'due_asc'     THEN 'd.total_due ASC NULLS LAST, d.id'
    WHEN 'year_newest' THEN 'd.tax_year DESC NULLS LAST, d.id'
  END;
  IF v_order IS NULL THEN
    PERFORM core.bad_input('sort must be one of due_desc, due_asc, year_newest');
  END IF;
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 500 THEN
    PERFORM core.bad_input('limit must be between 1 and 500');
  END IF;
  IF p_offset IS NULL OR p_offset < 0 THEN
    PERFORM core.bad_input('offset must be >= 0');
  END IF;
  f := search.tax_delinquency_filters(p_county, p_tax_year, p_status, p_min_due, p_max_due, p_parcel_id, p_owner,
                                   p_vendor, p_certificate_number);
  RETURN QUERY EXECUTE format($q$
    SELECT d.id::text,
           c.slug,
           d.parcel_id,
           d.tax_year::integer,
           d.status,
           d.delinquent_amount::float8,
           d.total_due::float8,
           d.certificate_number,
           to_char(d.certificate_sale_date, 'YYYY-MM-DD'),
           d.owner_name,
           d.site_address_full,
           d.source_vendor,
           d.face_amount::float8,
           d.certificate_holder,
           d.certificate_interest_rate::float8,
           d.bid_rate::float8
      FROM %s d
      JOIN core.counties c ON c.id = d.county_id
     WHERE %s
     ORDER BY %s
     LIMIT $10 OFFSET $11 $q$,
    -- Several counties, one tax year, by amount due (the default): each county's first offset + limit rows, read in
    -- order from its (county, year[, status], amount due) index, then merged. One condition over all the counties
    -- would walk the amount-due index across the state, filtering out every other county (440 ms for two counties'
    -- 2025 redeemed records at full scale; 3 ms this way). Without a year, a county's index gives no order, and
    -- the walk over the state's index is the cheaper plan.
    CASE WHEN cardinality(f.county_ids) > 1 AND f.tax_year IS NOT NULL AND coalesce(p_sort, 'due_desc') = 'due_desc' THEN format(
      '(SELECT m.* FROM unnest($1) AS cc(id) CROSS JOIN LATERAL (SELECT d.* FROM core.tax_delinquencies d'
      ' WHERE d.county_id = cc.id AND %s ORDER BY %s LIMIT $10 + $11) m)', search.tax_delinquency_where(), v_order)
    ELSE 'core.tax_delinquencies' END,
    search.tax_delinquency_where(), v_order)
  USING f.county_ids, f.tax_year, f.status, f.min_due, f.max_due, f.parcel_key, f.owner, f.vendor,
        f.certificate_number, p_limit, p_offset;
END $$;
COMMENT ON FUNCTION api.search_tax_delinquencies(text[], integer, text, numeric, numeric, text, text, text, text, text, integer, integer) IS
  'DelinquencyHit rows (interface 2.5) matching every given filter. GET /v1/tax-delinquencies/search. '
  'p_county: slugs (case-insensitive), NULL = statewide, unknown slug = 400; p_tax_year: 1900-2100; '
  'p_status: exact, case-insensitive, ''unknown'' also matches records with no status; p_min_due / p_max_due: '
  'inclusive bounds on total_due (min > max = 400); p_parcel_id: punctuation-insensitive (parcel_key); '
  'p_owner: case- and punctuation-insensitive contains on the owner name (trigram index); p_vendor: source '
  'vendor, case-insensitive exact; p_certificate_number: exact; p_sort: due_desc (default: largest total_due '
  'first, NULLs last), due_asc (NULLs last), year_newest (tax_year desc, NULLs last), each tie-broken by id; '
  'p_limit 1-500, p_offset >= 0. The exact total is count_tax_delinquencies_matching with the same filters.';

CREATE FUNCTION api.count_tax_delinquencies_matching(
  p_county             text[]  DEFAULT NULL,
  p_tax_year           integer DEFAULT NULL,
  p_status             text    DEFAULT NULL,
  p_min_due            numeric DEFAULT NULL,
  p_max_due            numeric DEFAULT NULL,
  p_parcel_id          text    DEFAULT NULL,
  p_owner              text    DEFAULT NULL,
  p_vendor             text    DEFAULT NULL,
  p_certificate_number text    DEFAULT NULL)
RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  f       record;
  v_total integer;
BEGIN
  f := search.tax_delinquency_filters(p_county, p_tax_year, p_status, p_min_due, p_max_due, p_parcel_id, p_owner,
                                   p_vendor, p_certificate_number);
  IF f.min_due IS NULL AND f.max_due IS NULL AND f.parcel_key IS NULL AND f.owner IS NULL AND f.vendor IS NULL
     AND f.certificate_number IS NULL THEN
    -- Only county / year / status: the exact figure is in the trigger-maintained counts, no table scan.
    SELECT coalesce(sum(s.records), 0)::integer INTO v_total
      FROM core.tax_delinquency_status_counts s
     WHERE (f.county_ids IS NULL OR s.county_id = ANY (f.county_ids))
       AND (f.tax_year IS NULL OR s.tax_year = f.tax_year)
       AND (f.status IS NULL OR s.status = f.status);
    RETURN v_total;
  END IF;
  EXECUTE 'SELECT count(*)::integer FROM core.tax_delinquencies d WHERE ' || search.tax_delinquency_where()
     INTO v_total
    USING f.county_ids, f.tax_year, f.status, f.min_due, f.max_due, f.parcel_key, f.owner, f.vendor,
          f.certificate_number;
  RETURN v_total;
END $$;
COMMENT ON FUNCTION api.count_tax_delinquencies_matching(text[], integer, text, numeric, numeric, text, text, text, text) IS
  'Exact number of records search_tax_delinquencies matches for the same filters (its pagination.total); '
  'same parameters and validation, without sort / limit / offset.';

CREATE FUNCTION api.get_tax_delinquencies_by_parcel(
  p_parcel_id text,
  p_county    text    DEFAULT NULL,
  p_limit     integer DEFAULT 25,
  p_offset    integer DEFAULT 0)
RETURNS SETOF api.delinquency_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  IF p_parcel_id IS NULL THEN
    PERFORM core.bad_input('parcel_id is required');
  END IF;
  RETURN QUERY
    SELECT * FROM api.search_tax_delinquencies(
      p_county    => CASE WHEN p_county IS NULL THEN NULL ELSE ARRAY[p_county] END,
      p_parcel_id => p_parcel_id,
      p_sort      => 'year_newest',
      p_limit     => p_limit,
      p_offset    => p_offset);
END $$;
COMMENT ON FUNCTION api.get_tax_delinquencies_by_parcel(text, text, integer, integer) IS
  'Every delinquency record of one parcel, newest tax year first (then id). GET /v1/tax-delinquencies/by-parcel. '
  'p_parcel_id: required, 1-100 characters, punctuation-insensitive (matched on parcel_key, for example '
  '''01-3104-008-0010'' = ''0131040080010''); p_county: optional slug scope (unknown slug = 400); p_limit 1-500, '
  'p_offset >= 0. A county with no feed or a parcel that is current on taxes gives no rows, never an error; the '
  'exact total is count_tax_delinquencies_matching(p_county => ARRAY[p_county], p_parcel_id => p_parcel_id).';

-- The status-counts stored procedure of the design card.
CREATE FUNCTION api.count_tax_delinquencies(p_county text DEFAULT NULL, p_tax_year integer DEFAULT NULL)
RETURNS TABLE (status text, count integer)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_ids smallint[];
BEGIN
  v_ids := core.county_ids(CASE WHEN p_county IS NULL THEN NULL ELSE ARRAY[p_county] END);
  IF p_tax_year IS NOT NULL AND p_tax_year NOT BETWEEN 1900 AND 2100 THEN
    PERFORM core.bad_input('tax_year must be between 1900 and 2100');
  END IF;
  RETURN QUERY
    SELECT s.status COLLATE "C", sum(s.records)::integer
      FROM core.tax_delinquency_status_counts s
     WHERE (v_ids IS NULL OR s.county_id = ANY (v_ids))
       AND (p_tax_year IS NULL OR s.tax_year = p_tax_year)
     GROUP BY 1
     ORDER BY 2 DESC, 1;
END $$;
COMMENT ON FUNCTION api.count_tax_delinquencies(text, integer) IS
  'Records per status, most frequent first, ties by status name (byte order). Records with no status are counted '
  'as ''unknown'' (together with any stored literally as unknown). Read from core.tax_delinquency_status_counts '
  '(exact, trigger-maintained), so a statewide count never scans the records. p_county: one slug, NULL = statewide, unknown '
  'slug = 400; p_tax_year: 1900-2100, NULL = all years. A county with no feed gives no rows. '
  'GET /v1/tax-delinquencies/counts.';

-- TaxDelinquencySource, camelCase as the sources endpoints return it (docs/api.md).
CREATE VIEW api.tax_delinquency_sources AS
SELECT s.id::text                      AS "id",
       s.county_id::text               AS "countyId",
       c.slug                          AS "countySlug",
       s.tax_year::integer             AS "taxYear",
       s.vendor                        AS "vendor",
       s.sale_url                      AS "saleUrl",
       s.download_url                  AS "downloadUrl",
       s.source_kind                   AS "sourceKind",
       s.requires_login                AS "requiresLogin",
       core.iso_utc(s.last_checked_at) AS "lastCheckedAt",
       core.iso_utc(s.last_success_at) AS "lastSuccessAt",
       s.last_error                    AS "lastError",
       s.active                        AS "active",
       s.notes                         AS "notes",
       core.iso_utc(s.created_at)      AS "createdAt",
       core.iso_utc(s.updated_at)      AS "updatedAt"
  FROM core.tax_delinquency_sources s
  JOIN core.counties c ON c.id = s.county_id;
COMMENT ON VIEW api.tax_delinquency_sources IS
  'TaxDelinquencySource (interface 2.6): one row per county and tax year of a delinquency / certificate feed; '
  'timestamps ISO 8601 UTC. Counties without a row have no feed loaded.';

CREATE FUNCTION api.list_tax_delinquency_sources(
  p_county      text    DEFAULT NULL,
  p_vendor      text    DEFAULT NULL,
  p_source_kind text    DEFAULT NULL,
  p_active      boolean DEFAULT NULL,
  p_limit       integer DEFAULT 100,
  p_offset      integer DEFAULT 0)
RETURNS SETOF api.tax_delinquency_sources
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_ids smallint[];
BEGIN
  v_ids := search.tax_delinquency_source_filters(p_county, p_vendor, p_source_kind);
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 500 THEN
    PERFORM core.bad_input('limit must be between 1 and 500');
  END IF;
  IF p_offset IS NULL OR p_offset < 0 THEN
    PERFORM core.bad_input('offset must be >= 0');
  END IF;
  RETURN QUERY
    SELECT v.*
      FROM api.tax_delinquency_sources v
      JOIN core.counties c ON c.slug = v."countySlug"
     WHERE search.tax_delinquency_source_matches(v, v_ids, p_vendor, p_source_kind, p_active)
     ORDER BY c.name, v."taxYear" DESC, v."id"::bigint
     LIMIT p_limit OFFSET p_offset;
END $$;
COMMENT ON FUNCTION api.list_tax_delinquency_sources(text, text, text, boolean, integer, integer) IS
  'Delinquency feed sources ordered by county name, then tax year newest first. GET /v1/tax-delinquencies/sources. '
  'p_county: slug (unknown = 400); p_vendor: case-insensitive contains; p_source_kind: case-insensitive exact '
  '(for example cert_sale_portal, bulk_download); p_active: true only active, false only inactive, NULL both; '
  'p_limit 1-500 (default 100), p_offset >= 0. Exact total: count_tax_delinquency_sources with the same filters.';

CREATE FUNCTION api.count_tax_delinquency_sources(
  p_county      text    DEFAULT NULL,
  p_vendor      text    DEFAULT NULL,
  p_source_kind text    DEFAULT NULL,
  p_active      boolean DEFAULT NULL)
RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_ids   smallint[] := search.tax_delinquency_source_filters(p_county, p_vendor, p_source_kind);
  v_total integer;
BEGIN
  SELECT count(*)::integer INTO v_total
    FROM api.tax_delinquency_sources v
   WHERE search.tax_delinquency_source_matches(v, v_ids, p_vendor, p_source_kind, p_active);
  RETURN v_total;
END $$;
COMMENT ON FUNCTION api.count_tax_delinquency_sources(text, text, text, boolean) IS
  'Exact number of rows list_tax_delinquency_sources gives for the same filters (its pagination.total).';

CREATE FUNCTION api.list_tax_delinquency_sources_by_county(p_county text) RETURNS SETOF api.tax_delinquency_sources
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT v.* FROM api.tax_delinquency_sources v
   WHERE v."countySlug" = lower(p_county)
   ORDER BY v."taxYear" DESC, v."id"::bigint
$$;
COMMENT ON FUNCTION api.list_tax_delinquency_sources_by_county(text) IS
  'Every feed source row of one county (slug, case-insensitive), newest tax year first; no rows for an unknown '
  'slug or a county with no feed (the API answers an unknown slug 404 via get_county). '
  'GET /v1/tax-delinquencies/sources/{county}.';

CREATE FUNCTION api.get_tax_delinquency_freshness()
RETURNS TABLE (total integer, latest_tax_year integer, last_ingested_at text, last_source_success_at text)
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT (SELECT coalesce(sum(s.records), 0)::integer FROM core.tax_delinquency_status_counts s),
         (SELECT max(s.tax_year)::integer FROM core.tax_delinquency_status_counts s),
         (SELECT core.iso_utc(max(d.ingested_at)) FROM core.tax_delinquencies d),
         (SELECT core.iso_utc(max(s.last_success_at)) FROM core.tax_delinquency_sources s)
$$;
COMMENT ON FUNCTION api.get_tax_delinquency_freshness() IS
  'DelinquencyFreshness (interface 2.7), one row: total records, latest tax year, when records were last ingested '
  'and the latest source success (ISO 8601 UTC; NULL when none). GET /v1/tax-delinquencies/freshness.';
