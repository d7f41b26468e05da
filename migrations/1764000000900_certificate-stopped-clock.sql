-- Up Migration
-- A stopped clock is stored as expires_on 'infinity' rather than NULL, so that "not expired on a day" is the plain
-- range expires_on >= day, which an index serves; NULL stays for a record that holds no open certificate. Answers show
-- 'infinity' as null (docs/certificates.md). PostgreSQL 15 cannot change a generated column's expression, so the
-- column is made again, and the indexes on it with it.

ALTER TABLE core.tax_delinquencies DROP COLUMN expires_on;
ALTER TABLE core.tax_delinquencies ADD COLUMN expires_on date GENERATED ALWAYS AS (
  CASE WHEN certificate_sale_date IS NULL OR face_amount IS NULL
         OR coalesce(status, '') IN ('redeemed', 'cancelled', 'canceled', 'expired', 'deeded') THEN NULL
       WHEN status IN ('tda_filed', 'deed_applied', 'bankruptcy') THEN 'infinity'::date
       ELSE (certificate_sale_date + interval '7 years')::date END) STORED;
COMMENT ON COLUMN core.tax_delinquencies.expires_on IS
  'The last day of an open certificate''s life: 7 years after its date (s. 197.482); ''infinity'' when a deed '
  'application or proceeding of record (status tda_filed, deed_applied, bankruptcy) stopped the clock (shown as '
  'null); NULL when the record holds no open certificate.';

-- deed_eligible in a county (deed_application_from <= today AND expires_on >= today) counted from this index alone;
-- expires_soonest, with or without deed_eligible, pages from the second (stopped clocks sort after every date).
CREATE INDEX tax_delinquencies_county_deed_idx
  ON core.tax_delinquencies (county_id, deed_application_from, expires_on) WHERE deed_application_from IS NOT NULL;
CREATE INDEX tax_delinquencies_county_expires_idx
  ON core.tax_delinquencies (county_id, expires_on, id) WHERE expires_on IS NOT NULL;
CREATE INDEX tax_delinquencies_expires_idx ON core.tax_delinquencies (expires_on, id) WHERE expires_on IS NOT NULL;

-- Down Migration
ALTER TABLE core.tax_delinquencies DROP COLUMN expires_on;
ALTER TABLE core.tax_delinquencies ADD COLUMN expires_on date GENERATED ALWAYS AS (
  CASE WHEN certificate_sale_date IS NOT NULL AND face_amount IS NOT NULL
        AND coalesce(status, '') NOT IN ('redeemed', 'cancelled', 'canceled', 'expired', 'deeded',
                                         'tda_filed', 'deed_applied', 'bankruptcy')
       THEN (certificate_sale_date + interval '7 years')::date END) STORED;
COMMENT ON COLUMN core.tax_delinquencies.expires_on IS
  'The last day of an open certificate''s life: 7 years after its date (s. 197.482); NULL when the record holds no '
  'open certificate or a deed application or proceeding of record stopped the clock.';
CREATE INDEX tax_delinquencies_county_deed_idx
  ON core.tax_delinquencies (county_id, deed_application_from, expires_on) WHERE deed_application_from IS NOT NULL;
CREATE INDEX tax_delinquencies_county_expires_idx
  ON core.tax_delinquencies (county_id, expires_on, id) WHERE expires_on IS NOT NULL;
CREATE INDEX tax_delinquencies_expires_idx ON core.tax_delinquencies (expires_on, id) WHERE expires_on IS NOT NULL;
