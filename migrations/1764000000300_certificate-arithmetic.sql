-- Up Migration
-- What a certificate's payoff and deadlines need (docs/certificates.md): the date a county-held certificate was
-- bought over the counter (s. 197.4725), the two dates chapter 197 fixes from the certificate's date, kept as columns
-- so a search can filter and sort on them through an index, and the county settings where practice differs.

ALTER TABLE core.tax_delinquencies ADD COLUMN county_purchase_date date;
COMMENT ON COLUMN core.tax_delinquencies.county_purchase_date IS
  'The day a county-held certificate was bought over the counter (s. 197.4725); NULL when it never was. face_amount '
  'stays the face at issue: the purchase price, the new face, is computed from it.';

-- A certificate is open when it has a date and a face and its status does not close it. Open certificates alone have
-- the two dates, so a record that has them is one a payoff can be asked for (until it expires).
ALTER TABLE core.tax_delinquencies ADD COLUMN deed_application_from date GENERATED ALWAYS AS (
  CASE WHEN certificate_sale_date IS NOT NULL AND face_amount IS NOT NULL
        AND coalesce(status, '') NOT IN ('redeemed', 'cancelled', 'canceled', 'expired', 'deeded')
       THEN make_date(extract(year FROM certificate_sale_date)::integer + 2, 4, 1) END) STORED;
COMMENT ON COLUMN core.tax_delinquencies.deed_application_from IS
  'April 1 of the second year after the certificate''s date: the first day its holder may apply for a tax deed '
  '(s. 197.502(1)); NULL unless the record holds an open certificate.';

-- A deed application or a proceeding of record (the statuses tda_filed, deed_applied, bankruptcy) stops the clock.
ALTER TABLE core.tax_delinquencies ADD COLUMN expires_on date GENERATED ALWAYS AS (
  CASE WHEN certificate_sale_date IS NOT NULL AND face_amount IS NOT NULL
        AND coalesce(status, '') NOT IN ('redeemed', 'cancelled', 'canceled', 'expired', 'deeded',
                                         'tda_filed', 'deed_applied', 'bankruptcy')
       THEN (certificate_sale_date + interval '7 years')::date END) STORED;
COMMENT ON COLUMN core.tax_delinquencies.expires_on IS
  'The last day of an open certificate''s life: 7 years after its date (s. 197.482); NULL when the record holds no '
  'open certificate or a deed application or proceeding of record stopped the clock.';

ALTER TABLE ingest.delinquency_stage ADD COLUMN county_purchase_date date;

-- deed_eligible in a county: the open certificates whose application date has passed, counted from this index alone;
-- its page in the default order (amount due) from the second; expires_soonest from the third.
CREATE INDEX tax_delinquencies_county_deed_idx
  ON core.tax_delinquencies (county_id, deed_application_from, expires_on) WHERE deed_application_from IS NOT NULL;
CREATE INDEX tax_delinquencies_county_open_due_idx
  ON core.tax_delinquencies (county_id, total_due DESC NULLS LAST, id) WHERE deed_application_from IS NOT NULL;
CREATE INDEX tax_delinquencies_county_expires_idx
  ON core.tax_delinquencies (county_id, expires_on, id) WHERE expires_on IS NOT NULL;
CREATE INDEX tax_delinquencies_expires_idx ON core.tax_delinquencies (expires_on, id) WHERE expires_on IS NOT NULL;

-- Where a county's practice differs from the statute's reading. A county without a row uses the defaults.
CREATE TABLE core.county_certificate_settings (
  county_id             smallint PRIMARY KEY REFERENCES core.counties(id),
  month_of_issue_counts boolean NOT NULL DEFAULT true,
  deed_application_fee  numeric(8, 2) NOT NULL DEFAULT 75.00 CHECK (deed_application_fee BETWEEN 0 AND 75),
  notes                 text NOT NULL DEFAULT '',
  updated_at            timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE core.county_certificate_settings IS
  'Per county, where its practice in certificate arithmetic differs from the statute''s reading '
  '(docs/certificates.md). '
  'month_of_issue_counts: whether the month a certificate is dated (or bought from the county) earns a month of '
  'interest (default true); deed_application_fee: the tax collector''s fee for a tax deed application (s. 197.502(1), '
  'at most 75.00, default 75.00). A county without a row uses the defaults.';

-- Down Migration
DROP TABLE core.county_certificate_settings;
DROP INDEX core.tax_delinquencies_expires_idx;
DROP INDEX core.tax_delinquencies_county_expires_idx;
DROP INDEX core.tax_delinquencies_county_open_due_idx;
DROP INDEX core.tax_delinquencies_county_deed_idx;
ALTER TABLE ingest.delinquency_stage DROP COLUMN county_purchase_date;
ALTER TABLE core.tax_delinquencies DROP COLUMN expires_on;
ALTER TABLE core.tax_delinquencies DROP COLUMN deed_application_from;
ALTER TABLE core.tax_delinquencies DROP COLUMN county_purchase_date;
