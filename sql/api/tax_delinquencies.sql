-- Tax delinquencies and certificates: search (a page and its total in one call, or each alone), by parcel, status
-- counts, feed sources, freshness. The search is built as parcel search's is (sql/search/tax_delinquencies.sql): one
-- checked filter, written as only the predicates it uses, so each call is planned for its own filters.

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
  bid_rate                  float8,
  deed_application_from     text,
  expires_on                text,
  payoff_today              float8);
COMMENT ON TYPE api.delinquency_hit IS
  'DelinquencyHit (interface 2.5): ids as text, amounts and rates as float8, certificate_sale_date as YYYY-MM-DD; '
  'every field present, NULL where unknown. Added to the interface''s fields for an open certificate '
  '(docs/certificates.md): deed_application_from and expires_on (YYYY-MM-DD) and payoff_today (what redeeming it '
  'costs today in Florida, api.certificate_payoff), NULL for any other record.';

CREATE FUNCTION api.tax_delinquency_search_hits(
  p_county             text[]  DEFAULT NULL,
  p_tax_year           integer DEFAULT NULL,
  p_status             text    DEFAULT NULL,
  p_min_due            numeric DEFAULT NULL,
  p_max_due            numeric DEFAULT NULL,
  p_parcel_id          text    DEFAULT NULL,
  p_owner              text    DEFAULT NULL,
  p_vendor             text    DEFAULT NULL,
  p_certificate_number text    DEFAULT NULL,
  p_deed_eligible      boolean DEFAULT NULL,
  p_expires_before     date    DEFAULT NULL,
  p_expires_after      date    DEFAULT NULL,
  p_sort               text    DEFAULT NULL,
  p_limit              integer DEFAULT 25,
  p_offset             integer DEFAULT 0,
  OUT total integer, OUT hits json)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  f search.tax_delinquency_filter := search.tax_delinquency_filter_of(p_county, p_tax_year, p_status, p_min_due, p_max_due, p_parcel_id,
    p_owner, p_vendor, p_certificate_number, p_deed_eligible, p_expires_before, p_expires_after);
  v_ids bigint[];
BEGIN
  EXECUTE search.tax_delinquency_page_sql(f, p_sort, p_limit, p_offset) INTO v_ids;
  SELECT coalesce(json_agg(h ORDER BY p.n), '[]') INTO hits
    FROM unnest(v_ids) WITH ORDINALITY AS p(id, n) CROSS JOIN LATERAL search.tax_delinquency_hit(p.id, f.today) h;
  total := search.tax_delinquency_count(f);
END $$;
COMMENT ON FUNCTION api.tax_delinquency_search_hits(text[], integer, text, numeric, numeric, text, text, text, text, boolean, date, date, text, integer, integer) IS
  'GET /v1/tax-delinquencies/search and /by-parcel in one call: the exact total (pagination.total) and the page as a '
  'JSON array of DelinquencyHit objects, in order (the rows of api.search_tax_delinquencies for the same arguments). '
  'Example: SELECT total, hits FROM api.tax_delinquency_search_hits(p_county => ''{miami-dade}'', p_limit => 5);';

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
  p_deed_eligible      boolean DEFAULT NULL,
  p_expires_before     date    DEFAULT NULL,
  p_expires_after      date    DEFAULT NULL,
  p_sort               text    DEFAULT NULL,
  p_limit              integer DEFAULT 25,
  p_offset             integer DEFAULT 0)
RETURNS SETOF api.delinquency_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  f search.tax_delinquency_filter := search.tax_delinquency_filter_of(p_county, p_tax_year, p_status, p_min_due, p_max_due, p_parcel_id,
    p_owner, p_vendor, p_certificate_number, p_deed_eligible, p_expires_before, p_expires_after);
  v_ids bigint[];
BEGIN
  EXECUTE search.tax_delinquency_page_sql(f, p_sort, p_limit, p_offset) INTO v_ids;
  RETURN QUERY
    SELECT h.* FROM unnest(v_ids) WITH ORDINALITY AS p(id, n) CROSS JOIN LATERAL search.tax_delinquency_hit(p.id, f.today) h
     ORDER BY p.n;
END $$;
COMMENT ON FUNCTION api.search_tax_delinquencies(text[], integer, text, numeric, numeric, text, text, text, text, boolean, date, date, text, integer, integer) IS
  'DelinquencyHit rows (interface 2.5) matching every given filter. GET /v1/tax-delinquencies/search. '
  'p_county: slugs (case-insensitive), NULL = statewide, unknown slug = 400; p_tax_year: 1900-2100; '
  'p_status: exact, case-insensitive, ''unknown'' also matches records with no status; p_min_due / p_max_due: '
  'inclusive bounds on total_due (min > max = 400); p_parcel_id: punctuation-insensitive (parcel_key); '
  'p_owner: case- and punctuation-insensitive contains on the owner name (trigram index); p_vendor: source '
  'vendor, case-insensitive exact; p_certificate_number: exact; p_deed_eligible: true = open certificates whose '
  'deed application date has passed and that have not expired, today in Florida (false = every other record); '
  'p_expires_before / p_expires_after: expires_on strictly before / after the date (open certificates only); '
  'p_sort: due_desc (default: largest total_due '
  'first, NULLs last), due_asc (NULLs last), year_newest (tax_year desc, NULLs last), expires_soonest (expires_on, '
  'NULLs last), each tie-broken by id; '
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
  p_certificate_number text    DEFAULT NULL,
  p_deed_eligible      boolean DEFAULT NULL,
  p_expires_before     date    DEFAULT NULL,
  p_expires_after      date    DEFAULT NULL)
RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN search.tax_delinquency_count(search.tax_delinquency_filter_of(p_county, p_tax_year, p_status, p_min_due, p_max_due, p_parcel_id,
    p_owner, p_vendor, p_certificate_number, p_deed_eligible, p_expires_before, p_expires_after));
END $$;
COMMENT ON FUNCTION api.count_tax_delinquencies_matching(text[], integer, text, numeric, numeric, text, text, text, text, boolean, date, date) IS
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
  IF p_parcel_id IS NULL THEN PERFORM core.bad_input('parcel_id: is required'); END IF;
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
  'p_offset >= 0. A county with no feed or a parcel that is current on taxes gives no rows, never an error. With its '
  'total in one call: api.tax_delinquency_search_hits(p_county => ARRAY[p_county], p_parcel_id => p_parcel_id, '
  'p_sort => ''year_newest'').';

-- The status-counts stored procedure of the design card.
CREATE FUNCTION api.count_tax_delinquencies(p_county text DEFAULT NULL, p_tax_year integer DEFAULT NULL)
RETURNS TABLE (status text, count integer)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_ids smallint[];
BEGIN
  v_ids := core.county_ids(CASE WHEN p_county IS NULL THEN NULL ELSE ARRAY[p_county] END);
  IF p_tax_year NOT BETWEEN 1900 AND 2100 THEN PERFORM core.bad_input('tax_year: must be between 1900 and 2100'); END IF;
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
  PERFORM core.check_page(p_limit, p_offset);
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

CREATE FUNCTION api.tax_delinquency_source_hits(
  p_county      text    DEFAULT NULL,
  p_vendor      text    DEFAULT NULL,
  p_source_kind text    DEFAULT NULL,
  p_active      boolean DEFAULT NULL,
  p_limit       integer DEFAULT 100,
  p_offset      integer DEFAULT 0,
  OUT total integer, OUT hits json)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  SELECT coalesce(json_agg(v), '[]') INTO hits
    FROM api.list_tax_delinquency_sources(p_county, p_vendor, p_source_kind, p_active, p_limit, p_offset) v;
  total := api.count_tax_delinquency_sources(p_county, p_vendor, p_source_kind, p_active);
END $$;
COMMENT ON FUNCTION api.tax_delinquency_source_hits(text, text, text, boolean, integer, integer) IS
  'GET /v1/tax-delinquencies/sources in one call: the exact total and the page (list_tax_delinquency_sources) as a '
  'JSON array of TaxDelinquencySource objects, in order.';

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
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY
  SELECT v.* FROM api.tax_delinquency_sources v
     WHERE v."countySlug" = lower(p_county)
     ORDER BY v."taxYear" DESC, v."id"::bigint;
END $$;
COMMENT ON FUNCTION api.list_tax_delinquency_sources_by_county(text) IS
  'Every feed source row of one county (slug, case-insensitive), newest tax year first; no rows for an unknown '
  'slug or a county with no feed (the API answers an unknown slug 404 via get_county). '
  'GET /v1/tax-delinquencies/sources/{county}.';

CREATE FUNCTION api.get_tax_delinquency_freshness()
RETURNS TABLE (total integer, latest_tax_year integer, last_ingested_at text, last_source_success_at text)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY
  SELECT (SELECT coalesce(sum(s.records), 0)::integer FROM core.tax_delinquency_status_counts s),
           (SELECT max(s.tax_year)::integer FROM core.tax_delinquency_status_counts s),
           (SELECT core.iso_utc(max(d.ingested_at)) FROM core.tax_delinquencies d),
           (SELECT core.iso_utc(max(s.last_success_at)) FROM core.tax_delinquency_sources s);
END $$;
COMMENT ON FUNCTION api.get_tax_delinquency_freshness() IS
  'DelinquencyFreshness (interface 2.7), one row: total records, latest tax year, when records were last ingested '
  'and the latest source success (ISO 8601 UTC; NULL when none). GET /v1/tax-delinquencies/freshness.';
