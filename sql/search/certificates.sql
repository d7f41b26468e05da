-- Certificate arithmetic (Florida Statutes chapter 197, docs/certificates.md): the one place that computes a
-- certificate's payoff, shared by api.certificate_payoff, the payoff_today of every DelinquencyHit and
-- api.parcel_certificates. Amounts are numeric dollars rounded to the cent; rule codes name the rule each number
-- came from.

-- The calendar day in Florida: every "today" of the certificate reads (America/New_York holds all but the
-- panhandle's Central-time counties, whose day starts an hour later; one day for the whole state).
CREATE FUNCTION search.florida_today() RETURNS date
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN (now() AT TIME ZONE 'America/New_York')::date;
COMMENT ON FUNCTION search.florida_today() IS 'Today''s date in Florida (America/New_York).';

CREATE TYPE search.certificate_amounts AS (
  holder_kind        text,     -- county | individual, on the day asked about
  purchase_months    integer,  -- bought over the counter: months from the certificate's date to the purchase
  purchase_price     numeric,  -- and what the buyer paid, the new face
  face               numeric,  -- the face interest runs on
  rate               numeric,  -- percent a year
  interest_from      date,     -- the certificate's date, or the purchase date
  months             integer,
  computed_interest  numeric,
  minimum_interest   numeric,
  minimum_applied    boolean,
  interest           numeric,
  fee                numeric,
  payer_pays         numeric,
  holder_receives    numeric
);
COMMENT ON TYPE search.certificate_amounts IS
  'A certificate''s payoff on one day (search.certificate_payoff_row names the rule of each number).';

-- Months of interest from p_from to p_as_of: every month from the first day of each month, a part of a month
-- counted whole (s. 197.172(4), s. 197.4725(2)); the month of p_from itself only when the county counts it.
CREATE FUNCTION search.certificate_months(p_from date, p_as_of date, p_month_of_issue_counts boolean) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN (extract(year FROM p_as_of)::integer * 12 + extract(month FROM p_as_of)::integer)
       - (extract(year FROM p_from)::integer * 12 + extract(month FROM p_from)::integer)
       + CASE WHEN p_month_of_issue_counts THEN 1 ELSE 0 END;
COMMENT ON FUNCTION search.certificate_months(date, date, boolean) IS
  'Months of interest from a date to the day asked about, a part of a month counted whole; the first month too '
  'when p_month_of_issue_counts.';

-- Whether the county holds (or held, before a purchase) the certificate: struck to the county at the sale, or a
-- holder named as the county.
CREATE FUNCTION search.certificate_county_held(p_status text, p_holder text, p_county_name text) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN coalesce(p_status = 'struck', false)
      OR coalesce(upper(btrim(p_holder)) IN ('COUNTY', 'COUNTY HELD', 'COUNTY-HELD', 'STRUCK TO COUNTY',
                                              upper(p_county_name) || ' COUNTY'), false);
COMMENT ON FUNCTION search.certificate_county_held(text, text, text) IS
  'True for a certificate struck to the county (status struck, or a holder written as the county).';

CREATE FUNCTION search.certificate_amounts_of(
  p_face numeric, p_bid_rate numeric, p_certificate_date date, p_county_held boolean, p_purchase_date date,
  p_as_of date, p_month_of_issue_counts boolean) RETURNS search.certificate_amounts
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  a search.certificate_amounts;
  bought boolean := p_county_held AND p_purchase_date IS NOT NULL AND p_as_of >= p_purchase_date;
BEGIN
  a.fee := 6.25;
  IF bought THEN
    -- s. 197.4725: 1.5% a month from the certificate's date to the purchase, plus the fee, is the new face; it
    -- earns 18% from the purchase.
    a.holder_kind := 'individual';
    a.purchase_months := search.certificate_months(p_certificate_date, p_purchase_date, p_month_of_issue_counts);
    a.purchase_price := p_face + round(p_face * 0.015 * a.purchase_months, 2) + a.fee;
    a.face := a.purchase_price;
    a.rate := 18;
    a.interest_from := p_purchase_date;
  ELSE
    a.holder_kind := CASE WHEN p_county_held THEN 'county' ELSE 'individual' END;
    a.face := p_face;
    a.rate := CASE WHEN p_county_held THEN 18 ELSE p_bid_rate END;
    a.interest_from := p_certificate_date;
  END IF;
  a.months := search.certificate_months(a.interest_from, p_as_of, p_month_of_issue_counts);
  a.computed_interest := round(a.face * a.rate / 100 * a.months / 12, 2);
  -- s. 197.472(2): at least 5% of the face, for county-held and individual certificates alike; a 0% bid earns none
  a.minimum_interest := CASE WHEN a.rate = 0 THEN 0 ELSE round(a.face * 0.05, 2) END;
  a.minimum_applied := a.rate > 0 AND a.computed_interest < a.minimum_interest;
  a.interest := greatest(a.computed_interest, a.minimum_interest);
  a.payer_pays := a.face + a.interest + a.fee;
  a.holder_receives := a.face + a.interest;
  RETURN a;
END $$;
COMMENT ON FUNCTION search.certificate_amounts_of(numeric, numeric, date, boolean, date, date, boolean) IS
  'A certificate''s payoff on p_as_of: the face (after an over-the-counter purchase, s. 197.4725), the rate (the bid, '
  '18 for county-held), months (s. 197.172(4)), interest with the 5% minimum (s. 197.472(2)), the $6.25 fee, what '
  'the payer pays and the holder receives.';

CREATE FUNCTION search.certificate_name(p_certificate_number text, p_id bigint) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN coalesce('certificate ' || p_certificate_number, 'the certificate of record ' || p_id);
COMMENT ON FUNCTION search.certificate_name(text, bigint) IS
  'How a message names a certificate: by its number, else by its record''s id.';

-- Why no payoff can be given for a certificate on a day, or NULL when one can; the message is the 400's. The
-- record's columns, so that it inlines and does not hold the table (its migrations drop it).
CREATE FUNCTION search.certificate_problem(
  p_id bigint, p_certificate_number text, p_status text, p_certificate_date date, p_face numeric, p_bid_rate numeric,
  p_interest_rate numeric, p_holder text, p_expires_on date, p_county_name text, p_as_of date) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
  WHEN p_certificate_date IS NULL OR p_face IS NULL
    THEN format('id: record %s has no tax certificate (status %s)', p_id, coalesce(p_status, 'unknown'))
  WHEN p_status = 'redeemed' THEN format('id: %s was redeemed', search.certificate_name(p_certificate_number, p_id))
  WHEN p_status IN ('cancelled', 'canceled', 'expired')
    THEN format('id: %s was cancelled', search.certificate_name(p_certificate_number, p_id))
  WHEN p_status = 'deeded' THEN format('id: %s ended in a tax deed', search.certificate_name(p_certificate_number, p_id))
  WHEN p_as_of < p_certificate_date
    THEN format('as_of: %s is before the date of %s (%s)', p_as_of, search.certificate_name(p_certificate_number, p_id),
                p_certificate_date)
  WHEN p_as_of > p_expires_on
    THEN format('as_of: %s was cancelled after %s, 7 years after its date (s. 197.482)',
                search.certificate_name(p_certificate_number, p_id), p_expires_on)
  WHEN coalesce(p_bid_rate, p_interest_rate) IS NULL
       AND NOT search.certificate_county_held(p_status, p_holder, p_county_name)
    THEN format('id: %s has no interest rate in the feed', search.certificate_name(p_certificate_number, p_id))
END;
COMMENT ON FUNCTION search.certificate_problem(bigint, text, text, date, numeric, numeric, numeric, text, date, text, date) IS
  'Why a record has no payoff on a day (no certificate, redeemed, cancelled or past 7 years, deeded, a day before '
  'its date, no rate and not county-held), worded as the 400 says it; NULL when it has one.';

-- The payoff of one record on a day with its county's reading, or NULL when it has none (certificate_problem). The
-- record's columns, so that a search's page passes them as they are.
CREATE FUNCTION search.certificate_payoff(
  p_id bigint, p_certificate_number text, p_status text, p_certificate_date date, p_face numeric, p_bid_rate numeric,
  p_interest_rate numeric, p_holder text, p_purchase_date date, p_expires_on date, p_county_name text,
  p_month_of_issue_counts boolean, p_as_of date) RETURNS search.certificate_amounts
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  rate numeric := coalesce(p_bid_rate, p_interest_rate);
  county_held boolean := search.certificate_county_held(p_status, p_holder, p_county_name);
BEGIN
  IF search.certificate_problem(p_id, p_certificate_number, p_status, p_certificate_date, p_face, p_bid_rate,
                                p_interest_rate, p_holder, p_expires_on, p_county_name, p_as_of) IS NOT NULL THEN
    RETURN NULL;
  END IF;
  RETURN search.certificate_amounts_of(p_face, rate, p_certificate_date, county_held, p_purchase_date, p_as_of,
                                       coalesce(p_month_of_issue_counts, true));
END $$;
COMMENT ON FUNCTION search.certificate_payoff(bigint, text, text, date, numeric, numeric, numeric, text, date, date, text, boolean, date) IS
  'certificate_amounts_of for a record''s columns (the bid rate, else the certificate''s rate; county-held from '
  'status or holder; month of issue counted unless the county''s setting says not), or NULL when it has no payoff '
  'that day.';

-- The CertificatePayoff of a record that has one on the day (search.certificate_problem is NULL). d is a
-- core.tax_delinquencies row, typed record so that this helper does not hold the table.
CREATE FUNCTION search.certificate_payoff_row(d record, p_county_slug text, p_county_name text,
                                               p_month_of_issue_counts boolean, p_as_of date)
RETURNS api.certificate_payoff_row
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  a search.certificate_amounts := search.certificate_payoff(d.id, d.certificate_number, d.status,
    d.certificate_sale_date, d.face_amount, d.bid_rate, d.certificate_interest_rate, d.certificate_holder,
    d.county_purchase_date, d.expires_on, p_county_name, p_month_of_issue_counts, p_as_of);
BEGIN
  RETURN ROW(d.id::text, p_county_slug, d.parcel_id, d.tax_year::integer, d.certificate_number, d.status,
    d.certificate_holder, a.holder_kind, to_char(p_as_of, 'YYYY-MM-DD'), to_char(d.certificate_sale_date, 'YYYY-MM-DD'),
    to_char(d.county_purchase_date, 'YYYY-MM-DD'), d.face_amount::float8, a.purchase_months, a.purchase_price::float8,
    a.face::float8, a.rate::float8, to_char(a.interest_from, 'YYYY-MM-DD'), a.months,
    coalesce(p_month_of_issue_counts, true), a.computed_interest::float8, a.minimum_interest::float8,
    a.minimum_applied, a.interest::float8, a.fee::float8, a.payer_pays::float8, a.holder_receives::float8,
    to_char(d.deed_application_from, 'YYYY-MM-DD'), p_as_of >= d.deed_application_from,
    to_char(nullif(d.expires_on, 'infinity'), 'YYYY-MM-DD'),
    -- the rule each number came from (docs/certificates.md); a purchase price is set only after a purchase
    jsonb_build_object(
      'face_amount', CASE WHEN a.purchase_price IS NOT NULL THEN 'FACE-OTC' ELSE 'FACE-ISSUE' END,
      'rate', CASE WHEN search.certificate_county_held(d.status, d.certificate_holder, p_county_name)
                   THEN 'RATE-COUNTY' ELSE 'RATE-BID' END,
      'months', CASE WHEN coalesce(p_month_of_issue_counts, true) THEN 'MONTHS-ISSUE-IN' ELSE 'MONTHS-ISSUE-OUT' END,
      'interest', CASE WHEN a.rate = 0 THEN 'INT-ZERO' WHEN a.minimum_applied THEN 'INT-MIN5' ELSE 'INT-RATE' END,
      'redemption_fee', 'FEE', 'payer_pays', 'PAY', 'holder_receives', 'RECEIVE',
      'deed_application_from', 'DEED-APR1',
      'expires_on', CASE WHEN NOT isfinite(d.expires_on) THEN 'EXP-STOPPED' ELSE 'EXP-7Y' END)::json
  )::api.certificate_payoff_row;
END $$;
COMMENT ON FUNCTION search.certificate_payoff_row(record, text, text, boolean, date) IS
  'The CertificatePayoff of a record on a day (the caller has checked search.certificate_problem).';
