-- Delinquency search, as parcel search does it: one search.tax_delinquency_filter per request, checked and normalized
-- once, written as only the predicates it uses (values quoted with format('%L')), so every combination of filters
-- gets a plan of its own; a page and its exact total come from the same filter. Also the feed-source filters.

CREATE TYPE search.tax_delinquency_filter AS (
  county_ids          smallint[],
  tax_year            integer,
  status              text,     -- lower case
  min_due             numeric,
  max_due             numeric,
  parcel_key          text,     -- core.normalize_parcel_id
  owner               text,     -- core.normalize_text
  vendor              text,     -- lower case
  certificate_number  text,
  deed_eligible       boolean,  -- against today
  expires_before      date,
  expires_after       date,
  today               date      -- the day in Florida the request was made: what deed_eligible and payoff_today use
);
COMMENT ON TYPE search.tax_delinquency_filter IS 'The filters of delinquency search, checked and normalized, shared by its page and total.';

CREATE FUNCTION search.tax_delinquency_filter_of(
  p_county text[] DEFAULT NULL, p_tax_year integer DEFAULT NULL, p_status text DEFAULT NULL,
  p_min_due numeric DEFAULT NULL, p_max_due numeric DEFAULT NULL, p_parcel_id text DEFAULT NULL,
  p_owner text DEFAULT NULL, p_vendor text DEFAULT NULL, p_certificate_number text DEFAULT NULL,
  p_deed_eligible boolean DEFAULT NULL, p_expires_before date DEFAULT NULL, p_expires_after date DEFAULT NULL
) RETURNS search.tax_delinquency_filter
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  f search.tax_delinquency_filter;
BEGIN
  f.county_ids := core.county_ids(p_county);
  IF p_tax_year NOT BETWEEN 1900 AND 2100 THEN PERFORM core.bad_input('tax_year: must be between 1900 and 2100'); END IF;
  f.tax_year := p_tax_year;
  IF length(p_status) NOT BETWEEN 1 AND 40 THEN PERFORM core.bad_input('status: must be 1-40 characters'); END IF;
  f.status := lower(btrim(p_status));
  IF p_min_due = 'NaN' OR p_max_due = 'NaN' OR abs(p_min_due) = 'Infinity' OR abs(p_max_due) = 'Infinity' THEN
    PERFORM core.bad_input('min_due: min_due and max_due must be finite numbers');
  END IF;
  IF p_min_due > p_max_due THEN PERFORM core.bad_input('min_due: must not be greater than max_due'); END IF;
  f.min_due := p_min_due;
  f.max_due := p_max_due;
  IF length(p_parcel_id) NOT BETWEEN 1 AND 100 THEN PERFORM core.bad_input('parcel_id: must be 1-100 characters'); END IF;
  f.parcel_key := core.normalize_parcel_id(p_parcel_id);
  IF f.parcel_key = '' THEN PERFORM core.bad_input('parcel_id: must contain a letter or a digit'); END IF;
  IF length(p_owner) NOT BETWEEN 1 AND 200 THEN PERFORM core.bad_input('owner: must be 1-200 characters'); END IF;
  f.owner := core.normalize_text(p_owner);
  IF f.owner = '' THEN PERFORM core.bad_input('owner: must contain a letter or a digit'); END IF;
  IF length(p_vendor) NOT BETWEEN 1 AND 80 THEN PERFORM core.bad_input('vendor: must be 1-80 characters'); END IF;
  f.vendor := lower(btrim(p_vendor));
  IF length(p_certificate_number) NOT BETWEEN 1 AND 80 THEN
    PERFORM core.bad_input('certificate_number: must be 1-80 characters');
  END IF;
  f.certificate_number := btrim(p_certificate_number);
  IF p_expires_after >= p_expires_before THEN
    PERFORM core.bad_input('expires_after: must be before expires_before');
  END IF;
  f.deed_eligible := p_deed_eligible;
  f.expires_before := p_expires_before;
  f.expires_after := p_expires_after;
  f.today := search.florida_today();
  RETURN f;
END $$;
COMMENT ON FUNCTION search.tax_delinquency_filter_of(text[], integer, text, numeric, numeric, text, text, text, text, boolean, date, date) IS
  'Checks the filters of delinquency search (22023 naming the parameter) and makes one normalized '
  'search.tax_delinquency_filter of them: county ids, lower-case status and vendor, parcel_key, normalized owner.';

CREATE FUNCTION search.tax_delinquency_where(f search.tax_delinquency_filter) RETURNS text
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  w text[] := ARRAY['true'];
  eligible text;
BEGIN
  -- one county as plain equality, so an index that continues with the sort returns rows already in order
  IF f.county_ids IS NOT NULL THEN
    w := w || CASE WHEN cardinality(f.county_ids) = 1 THEN format('d.county_id = %s', f.county_ids[1])
                   ELSE format('d.county_id = ANY (%L::smallint[])', f.county_ids) END;
  END IF;
  IF f.tax_year IS NOT NULL THEN w := w || format('d.tax_year = %s', f.tax_year); END IF;
  IF f.status = 'unknown' THEN w := w || '(d.status = ''unknown'' OR d.status IS NULL)'::text;
  ELSIF f.status IS NOT NULL THEN w := w || format('d.status = %L', f.status); END IF;
  IF f.min_due IS NOT NULL THEN w := w || format('d.total_due >= %L::numeric', f.min_due); END IF;
  IF f.max_due IS NOT NULL THEN w := w || format('d.total_due <= %L::numeric', f.max_due); END IF;
  IF f.parcel_key IS NOT NULL THEN w := w || format('d.parcel_key = %L', f.parcel_key); END IF;
  -- contains, through the trigram index on owner_search (the normalized owner holds no LIKE wildcards)
  IF f.owner IS NOT NULL THEN w := w || format('d.owner_search LIKE %L', '%' || f.owner || '%'); END IF;
  IF f.vendor IS NOT NULL THEN w := w || format('lower(d.source_vendor) = %L', f.vendor); END IF;
  IF f.certificate_number IS NOT NULL THEN w := w || format('d.certificate_number = %L', f.certificate_number); END IF;
  -- deed_application_from is set on open certificates only (a range on it implies one); a stopped clock's expires_on
  -- is 'infinity', so not expired is a plain range (docs/certificates.md)
  IF f.deed_eligible IS NOT NULL THEN
    eligible := format('d.deed_application_from <= %L::date AND d.expires_on >= %1$L::date', f.today);
    w := w || CASE WHEN f.deed_eligible THEN eligible ELSE format('NOT coalesce(%s, false)', eligible) END;
  END IF;
  IF f.expires_before IS NOT NULL THEN w := w || format('d.expires_on < %L::date', f.expires_before); END IF;
  IF f.expires_after IS NOT NULL THEN
    w := w || format('d.expires_on > %L::date AND d.expires_on < ''infinity''::date', f.expires_after);
  END IF;
  RETURN array_to_string(w, ' AND ');
END $$;
COMMENT ON FUNCTION search.tax_delinquency_where(search.tax_delinquency_filter) IS
  'The WHERE clause (over core.tax_delinquencies d) of a delinquency filter: only the predicates it uses, values quoted.';

-- The query of one page: the ids of its records, in order, as one array. It reads core.tax_delinquencies alone, so
-- its plan (made again for every request) is the choice of an index and an order, and nothing that a hit adds to
-- its record (the county, the payoff: search.tax_delinquency_hit) weighs on that choice or on planning it.
CREATE FUNCTION search.tax_delinquency_page_sql(f search.tax_delinquency_filter, p_sort text, p_limit integer,
                                                p_offset integer) RETURNS text
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_sort text := coalesce(p_sort, 'due_desc');
  -- every order ends in the unique id, so pages never overlap or skip rows
  v_order text := CASE v_sort
    WHEN 'due_desc'    THEN 'd.total_due DESC NULLS LAST, d.id'
    WHEN 'due_asc'     THEN 'd.total_due ASC NULLS LAST, d.id'
    WHEN 'year_newest' THEN 'd.tax_year DESC NULLS LAST, d.id'
    -- a stopped clock ('infinity') after every date, a record without an open certificate (NULL) last
    WHEN 'expires_soonest' THEN 'd.expires_on ASC NULLS LAST, d.id'
  END;
  v_where text := search.tax_delinquency_where(f);
BEGIN
  IF v_order IS NULL THEN
    PERFORM core.bad_sort(p_sort, ARRAY['due_desc', 'due_asc', 'year_newest', 'expires_soonest']);
  END IF;
  PERFORM core.check_page(p_limit, p_offset);
  RETURN format('SELECT ARRAY(SELECT d.id FROM %s d WHERE %s ORDER BY %s LIMIT %s OFFSET %s)',
    -- Several counties, one tax year, by amount due (the default): each county's first offset + limit rows, read in
    -- order from its (county, year[, status], amount due) index, then merged. One condition over all the counties
    -- would walk the amount-due index across the state, filtering out every other county. Without a year, a
    -- county's index gives no order, and the walk over the state's index is the cheaper plan.
    CASE WHEN cardinality(f.county_ids) > 1 AND f.tax_year IS NOT NULL AND v_sort = 'due_desc' THEN format(
      '(SELECT m.* FROM unnest(%L::smallint[]) AS cc(id) CROSS JOIN LATERAL (SELECT d.* FROM core.tax_delinquencies d'
      ' WHERE %s AND d.county_id = cc.id ORDER BY %s LIMIT %s) m)',
      f.county_ids, search.tax_delinquency_where(ROW(NULL, f.tax_year, f.status, f.min_due, f.max_due, f.parcel_key,
        f.owner, f.vendor, f.certificate_number, f.deed_eligible, f.expires_before, f.expires_after,
        f.today)::search.tax_delinquency_filter), v_order, p_limit + p_offset)
    ELSE 'core.tax_delinquencies' END,
    v_where, v_order, p_limit, p_offset);
END $$;
COMMENT ON FUNCTION search.tax_delinquency_page_sql(search.tax_delinquency_filter, text, integer, integer) IS
  'The query of one page for a filter, sort (due_desc, due_asc, year_newest, expires_soonest), limit and offset: '
  'one bigint[] of the records'' ids, in order (search.tax_delinquency_hit completes each).';

-- One DelinquencyHit: the record, its county's slug and, for an open certificate, its payoff on p_today. A plain
-- query the planner inlines where it is called in FROM, so the entry points' static statement that completes a
-- page is planned once a session.
CREATE FUNCTION search.tax_delinquency_hit(p_id bigint, p_today date) RETURNS SETOF api.delinquency_hit
  LANGUAGE sql STABLE PARALLEL SAFE ROWS 1
BEGIN ATOMIC
  SELECT d.id::text, c.slug, d.parcel_id, d.tax_year::integer, d.status, d.delinquent_amount::float8,
         d.total_due::float8, d.certificate_number, to_char(d.certificate_sale_date, 'YYYY-MM-DD'), d.owner_name,
         d.site_address_full, d.source_vendor, d.face_amount::float8, d.certificate_holder,
         d.certificate_interest_rate::float8, d.bid_rate::float8, to_char(d.deed_application_from, 'YYYY-MM-DD'),
         to_char(nullif(d.expires_on, 'infinity'), 'YYYY-MM-DD'),
         -- deed_application_from is set on open certificates only: no other record has a payoff to compute
         CASE WHEN d.deed_application_from IS NOT NULL THEN
           (search.certificate_payoff(d.id, d.certificate_number, d.status, d.certificate_sale_date, d.face_amount,
              d.bid_rate, d.certificate_interest_rate, d.certificate_holder, d.county_purchase_date, d.expires_on,
              c.name, cs.month_of_issue_counts, p_today)).payer_pays::float8
         END
    FROM core.tax_delinquencies d
    JOIN core.counties c ON c.id = d.county_id
    LEFT JOIN core.county_certificate_settings cs ON cs.county_id = d.county_id
   WHERE d.id = p_id;
END;
COMMENT ON FUNCTION search.tax_delinquency_hit(bigint, date) IS
  'The DelinquencyHit of one record, payoff_today as of p_today (NULL without an open certificate). Inlined when '
  'called in FROM.';

CREATE FUNCTION search.tax_delinquency_count(f search.tax_delinquency_filter) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_total integer;
BEGIN
  IF num_nonnulls(f.min_due, f.max_due, f.parcel_key, f.owner, f.vendor, f.certificate_number, f.deed_eligible,
                  f.expires_before, f.expires_after) = 0 THEN
    -- only county / year / status: the exact figure is in the trigger-maintained counts, no table scan
    SELECT coalesce(sum(s.records), 0)::integer INTO v_total
      FROM core.tax_delinquency_status_counts s
     WHERE (f.county_ids IS NULL OR s.county_id = ANY (f.county_ids))
       AND (f.tax_year IS NULL OR s.tax_year = f.tax_year)
       AND (f.status IS NULL OR s.status = f.status);
    RETURN v_total;
  END IF;
  IF num_nonnulls(f.min_due, f.max_due, f.parcel_key, f.owner, f.vendor, f.certificate_number) = 0
     AND (f.deed_eligible OR f.expires_before IS NOT NULL OR f.expires_after IS NOT NULL) THEN
    -- open certificates only, by county / year / status and the two deadlines: the same WHERE over the
    -- trigger-maintained counts, whose columns bear the same names (a few dozen rows a county)
    EXECUTE 'SELECT coalesce(sum(d.records), 0)::integer FROM core.tax_certificate_deadline_counts d WHERE '
            || search.tax_delinquency_where(f) INTO v_total;
    RETURN v_total;
  END IF;
  EXECUTE 'SELECT count(*)::integer FROM core.tax_delinquencies d WHERE ' || search.tax_delinquency_where(f) INTO v_total;
  RETURN v_total;
END $$;
COMMENT ON FUNCTION search.tax_delinquency_count(search.tax_delinquency_filter) IS
  'The exact number of records a delinquency filter matches: from core.tax_delinquency_status_counts when only '
  'county, year and status are given, from core.tax_certificate_deadline_counts when they come with deed_eligible = '
  'true or an expiry bound (open certificates only), else by counting rows.';

-- Validates the sources filters (22023 naming the parameter) and returns the county ids.
CREATE FUNCTION search.tax_delinquency_source_filters(p_county text, p_vendor text, p_source_kind text)
RETURNS smallint[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  IF p_vendor IS NOT NULL AND length(p_vendor) NOT BETWEEN 1 AND 80 THEN
    PERFORM core.bad_input('vendor: must be 1-80 characters');
  END IF;
  IF p_source_kind IS NOT NULL AND length(p_source_kind) NOT BETWEEN 1 AND 40 THEN
    PERFORM core.bad_input('source_kind: must be 1-40 characters');
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
