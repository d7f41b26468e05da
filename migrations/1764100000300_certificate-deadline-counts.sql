-- Up Migration
-- Open certificates per county, tax year, status and their two deadlines (deed_application_from, expires_on), kept
-- exact by statement-level triggers in the writing transaction, as core.tax_delinquency_status_counts is. A county's
-- certificates share a handful of dates (the certificate's date is the first day of its sale), so the exact total of
-- a deed_eligible or expires_before / expires_after search is a sum over a few dozen rows, not a count of every
-- matching certificate; the day it is asked about stays in the query (search.tax_delinquency_count).
CREATE TABLE core.tax_certificate_deadline_counts (
  county_id              smallint NOT NULL REFERENCES core.counties(id),
  tax_year               smallint,
  status                 text NOT NULL,
  deed_application_from  date NOT NULL,
  expires_on             date NOT NULL,
  records                bigint NOT NULL CHECK (records > 0),
  UNIQUE NULLS NOT DISTINCT (county_id, tax_year, status, deed_application_from, expires_on)
);
COMMENT ON TABLE core.tax_certificate_deadline_counts IS
  'Exact number of open certificates (core.tax_delinquencies rows with a deed_application_from) per county, tax '
  'year, status (NULL counted as unknown), deed_application_from and expires_on (''infinity'' for a stopped clock), '
  'maintained by triggers on core.tax_delinquencies.';

CREATE FUNCTION core.tax_certificate_deadline_counts_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.tax_certificate_deadline_counts;
    RETURN NULL;
  END IF;
  -- One aggregate per statement over the transition tables: a bulk merge costs one small upsert per group.
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO core.tax_certificate_deadline_counts AS s
           (county_id, tax_year, status, deed_application_from, expires_on, records)
    SELECT county_id, tax_year, coalesce(status, 'unknown'), deed_application_from, expires_on, count(*)
      FROM new_rows WHERE deed_application_from IS NOT NULL GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (county_id, tax_year, status, deed_application_from, expires_on)
    DO UPDATE SET records = s.records + excluded.records;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    WITH gone AS (
      SELECT county_id, tax_year, coalesce(status, 'unknown') AS status, deed_application_from, expires_on,
             count(*) AS n
        FROM old_rows WHERE deed_application_from IS NOT NULL GROUP BY 1, 2, 3, 4, 5
    ), lowered AS (
      UPDATE core.tax_certificate_deadline_counts s SET records = s.records - gone.n
        FROM gone
       WHERE s.county_id = gone.county_id AND s.tax_year IS NOT DISTINCT FROM gone.tax_year
         AND s.status = gone.status AND s.deed_application_from = gone.deed_application_from
         AND s.expires_on = gone.expires_on AND s.records > gone.n
      RETURNING 1
    )
    DELETE FROM core.tax_certificate_deadline_counts s
     USING gone
     WHERE s.county_id = gone.county_id AND s.tax_year IS NOT DISTINCT FROM gone.tax_year
       AND s.status = gone.status AND s.deed_application_from = gone.deed_application_from
       AND s.expires_on = gone.expires_on AND s.records = gone.n;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.tax_certificate_deadline_counts_maintain() IS
  'Trigger function: applies a statement''s inserted / deleted / updated open certificates to '
  'core.tax_certificate_deadline_counts.';

CREATE TRIGGER tax_certificate_deadline_counts_ins AFTER INSERT ON core.tax_delinquencies
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION core.tax_certificate_deadline_counts_maintain();
CREATE TRIGGER tax_certificate_deadline_counts_upd AFTER UPDATE ON core.tax_delinquencies
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION core.tax_certificate_deadline_counts_maintain();
CREATE TRIGGER tax_certificate_deadline_counts_del AFTER DELETE ON core.tax_delinquencies
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION core.tax_certificate_deadline_counts_maintain();
CREATE TRIGGER tax_certificate_deadline_counts_truncate AFTER TRUNCATE ON core.tax_delinquencies
  FOR EACH STATEMENT EXECUTE FUNCTION core.tax_certificate_deadline_counts_maintain();

INSERT INTO core.tax_certificate_deadline_counts (county_id, tax_year, status, deed_application_from, expires_on, records)
SELECT county_id, tax_year, coalesce(status, 'unknown'), deed_application_from, expires_on, count(*)
  FROM core.tax_delinquencies WHERE deed_application_from IS NOT NULL GROUP BY 1, 2, 3, 4, 5;

-- Down Migration
DROP TRIGGER tax_certificate_deadline_counts_truncate ON core.tax_delinquencies;
DROP TRIGGER tax_certificate_deadline_counts_del ON core.tax_delinquencies;
DROP TRIGGER tax_certificate_deadline_counts_upd ON core.tax_delinquencies;
DROP TRIGGER tax_certificate_deadline_counts_ins ON core.tax_delinquencies;
DROP FUNCTION core.tax_certificate_deadline_counts_maintain();
DROP TABLE core.tax_certificate_deadline_counts;
