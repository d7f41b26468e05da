-- Certificate arithmetic (docs/certificates.md): one certificate's payoff on a day, and every open certificate of a
-- parcel with what a deed applicant must pay besides. The arithmetic is in sql/search/certificates.sql.

-- CertificatePayoff: one certificate on one day, each number with the rule code it came from.
CREATE TYPE api.certificate_payoff_row AS (
  id                     text,
  county_slug            text,
  county_parcel_id       text,
  tax_year               integer,
  certificate_number     text,
  status                 text,
  certificate_holder     text,
  holder_kind            text,
  as_of                  text,
  certificate_date       text,
  county_purchase_date   text,
  face_at_issue          float8,
  purchase_months        integer,
  purchase_price         float8,
  face_amount            float8,
  rate                   float8,
  interest_from          text,
  months                 integer,
  month_of_issue_counted boolean,
  computed_interest      float8,
  minimum_interest       float8,
  minimum_applied        boolean,
  interest               float8,
  redemption_fee         float8,
  payer_pays             float8,
  holder_receives        float8,
  deed_application_from  text,
  deed_eligible          boolean,
  expires_on             text,
  rules                  json);
COMMENT ON TYPE api.certificate_payoff_row IS
  'CertificatePayoff: a certificate''s payoff on as_of (dates YYYY-MM-DD, amounts in dollars as float8) and its '
  'deadlines; rules maps each number to its rule code (docs/certificates.md).';

CREATE FUNCTION api.certificate_payoff(p_id bigint, p_as_of date DEFAULT NULL)
RETURNS SETOF api.certificate_payoff_row
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_as_of date := coalesce(p_as_of, search.florida_today());
  d core.tax_delinquencies;
  c core.counties;
  v_counts boolean;
  v_problem text;
BEGIN
  SELECT * INTO d FROM core.tax_delinquencies t WHERE t.id = p_id;
  IF NOT FOUND THEN RETURN; END IF;
  SELECT * INTO c FROM core.counties k WHERE k.id = d.county_id;
  SELECT s.month_of_issue_counts INTO v_counts FROM core.county_certificate_settings s WHERE s.county_id = d.county_id;
  v_problem := search.certificate_problem(d.id, d.certificate_number, d.status, d.certificate_sale_date, d.face_amount,
    d.bid_rate, d.certificate_interest_rate, d.certificate_holder, d.expires_on, c.name, v_as_of);
  IF v_problem IS NOT NULL THEN PERFORM core.bad_input(v_problem); END IF;
  RETURN NEXT search.certificate_payoff_row(d, c.slug, c.name, v_counts, v_as_of);
END $$;
COMMENT ON FUNCTION api.certificate_payoff(bigint, date) IS
  'What redeeming one tax certificate costs on p_as_of (default today in Florida) and its deadlines: face (after an '
  'over-the-counter purchase from the county, the purchase price), rate, months counted, interest, whether the 5% '
  'minimum applied, the $6.25 fee, what the payer pays and the holder receives, the deed application date, whether '
  'it has come, the expiry, the county''s month-of-issue reading used, and the rule code of each number '
  '(docs/certificates.md). No row for an unknown id; 22023 (400) for a record without a certificate, a certificate '
  'redeemed, cancelled, deeded or past 7 years, or an as_of before its date. GET /v1/tax-delinquencies/{id}/payoff. '
  'Example: SELECT payer_pays, rules FROM api.certificate_payoff(p_id => 2, p_as_of => ''2026-05-20'');';

CREATE FUNCTION api.parcel_certificates(p_id bigint, p_as_of date DEFAULT NULL,
  OUT parcel_id text, OUT county_slug text, OUT county_parcel_id text, OUT as_of text, OUT certificates json,
  OUT certificates_total float8, OUT unsold_delinquencies json, OUT unsold_total float8,
  OUT deed_application_fee float8)
RETURNS SETOF record
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_as_of date := coalesce(p_as_of, search.florida_today());
  p record;
  v_payoffs api.certificate_payoff_row[];
  v_total numeric;
  v_unsold numeric;
BEGIN
  SELECT q.id, q.county_id, q.parcel_id, q.parcel_key, c.slug, c.name, s.month_of_issue_counts,
         coalesce(s.deed_application_fee, 75.00) AS fee
    INTO p
    FROM core.parcels q JOIN core.counties c ON c.id = q.county_id
    LEFT JOIN core.county_certificate_settings s ON s.county_id = q.county_id
   WHERE q.id = p_id;
  IF NOT FOUND THEN RETURN; END IF;
  SELECT coalesce(array_agg(search.certificate_payoff_row(d, p.slug, p.name, p.month_of_issue_counts, v_as_of)
                            ORDER BY d.certificate_sale_date, d.id), '{}')
    INTO v_payoffs
    FROM core.tax_delinquencies d
   WHERE d.parcel_key = p.parcel_key AND d.county_id = p.county_id
     AND d.deed_application_from IS NOT NULL
     AND search.certificate_problem(d.id, d.certificate_number, d.status, d.certificate_sale_date, d.face_amount,
           d.bid_rate, d.certificate_interest_rate, d.certificate_holder, d.expires_on, p.name, v_as_of) IS NULL;
  SELECT coalesce(sum(x.payer_pays), 0) INTO v_total FROM unnest(v_payoffs) x;
  SELECT coalesce(sum(coalesce(d.total_due, d.delinquent_amount)), 0),
         coalesce(json_agg(json_build_object('id', d.id::text, 'tax_year', d.tax_year::integer, 'status', d.status,
                                             'delinquent_amount', d.delinquent_amount::float8,
                                             'total_due', d.total_due::float8)
                           ORDER BY d.tax_year DESC NULLS LAST, d.id), '[]')
    INTO v_unsold, unsold_delinquencies
    FROM core.tax_delinquencies d
   WHERE d.parcel_key = p.parcel_key AND d.county_id = p.county_id
     AND d.certificate_sale_date IS NULL AND coalesce(d.status, '') NOT IN ('redeemed', 'cancelled', 'canceled');
  parcel_id := p.id::text;
  county_slug := p.slug;
  county_parcel_id := p.parcel_id;
  as_of := to_char(v_as_of, 'YYYY-MM-DD');
  -- each certificate's applicant redeems the others, pays the unsold taxes and the collector's fee
  SELECT coalesce(json_agg(to_jsonb(x)
           || jsonb_build_object('redeem_others', (v_total - x.payer_pays)::float8,
                                 'deed_application_cost', (v_total - x.payer_pays + v_unsold + p.fee)::float8)), '[]')
    INTO certificates
    FROM unnest(v_payoffs) x;
  certificates_total := v_total::float8;
  unsold_total := v_unsold::float8;
  deed_application_fee := p.fee::float8;
  RETURN NEXT;
END $$;
COMMENT ON FUNCTION api.parcel_certificates(bigint, date) IS
  'Every open tax certificate of one parcel (p_id, the parcel id of api.get_parcel) with its payoff on p_as_of '
  '(default today in Florida), oldest first; for each, redeem_others (what its holder must pay to redeem the other '
  'certificates when applying for a tax deed, s. 197.502) and deed_application_cost (redeem_others, the delinquent '
  'taxes not yet sold and the county''s deed application fee; current taxes, interest on the unsold taxes and clerk '
  'costs are not included); certificates_total; the delinquency records without a certificate (not redeemed) and '
  'their total_due sum. No row for an unknown parcel. GET /v1/parcels/{id}/certificates. '
  'Example: SELECT certificates_total, unsold_total FROM api.parcel_certificates(p_id => 1);';
