-- Up Migration
-- What the tax-delinquency endpoints need beyond the core schema, so that no filter, sort or count scans the table:
-- due_asc paging (NULLs last, id tie-break), the vendor filter (case-insensitive exact), a status-only filter,
-- freshness's max(ingested_at), and exact record counts per county, tax year and status.
CREATE INDEX tax_delinquencies_due_asc_idx ON core.tax_delinquencies (total_due ASC NULLS LAST, id);
CREATE INDEX tax_delinquencies_vendor_idx ON core.tax_delinquencies (lower(source_vendor));
CREATE INDEX tax_delinquencies_status_idx ON core.tax_delinquencies (status);
CREATE INDEX tax_delinquencies_ingested_idx ON core.tax_delinquencies (ingested_at);

-- Records per county, tax year and status (no status = 'unknown'), kept exact by statement-level triggers in the
-- writing transaction: status counts, statewide totals and freshness read a few hundred rows, never the table.
CREATE TABLE core.tax_delinquency_status_counts (
  county_id  smallint NOT NULL REFERENCES core.counties(id),
  tax_year   smallint,
  status     text NOT NULL,
  records    bigint NOT NULL CHECK (records > 0),
  UNIQUE NULLS NOT DISTINCT (county_id, tax_year, status)
);
COMMENT ON TABLE core.tax_delinquency_status_counts IS
  'Exact number of core.tax_delinquencies rows per county, tax year and status (NULL status counted as unknown), '
  'maintained by triggers on core.tax_delinquencies.';

CREATE FUNCTION core.tax_delinquency_status_counts_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.tax_delinquency_status_counts;
    RETURN NULL;
  END IF;
  -- One aggregate per statement over the transition tables: a bulk merge costs one small upsert per group.
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO core.tax_delinquency_status_counts AS s (county_id, tax_year, status, records)
    SELECT county_id, tax_year, coalesce(status, 'unknown'), count(*) FROM new_rows GROUP BY 1, 2, 3
    ON CONFLICT (county_id, tax_year, status) DO UPDATE SET records = s.records + excluded.records;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    WITH gone AS (
      SELECT county_id, tax_year, coalesce(status, 'unknown') AS status, count(*) AS n FROM old_rows GROUP BY 1, 2, 3
    ), lowered AS (
      UPDATE core.tax_delinquency_status_counts s SET records = s.records - gone.n
        FROM gone
       WHERE s.county_id = gone.county_id AND s.tax_year IS NOT DISTINCT FROM gone.tax_year
         AND s.status = gone.status AND s.records > gone.n
      RETURNING s.county_id, s.tax_year, s.status
    )
    DELETE FROM core.tax_delinquency_status_counts s
     USING gone
     WHERE s.county_id = gone.county_id AND s.tax_year IS NOT DISTINCT FROM gone.tax_year
       AND s.status = gone.status AND s.records = gone.n;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.tax_delinquency_status_counts_maintain() IS
  'Trigger function: applies a statement''s inserted / deleted / updated delinquency rows to '
  'core.tax_delinquency_status_counts.';

CREATE TRIGGER tax_delinquency_status_counts_ins AFTER INSERT ON core.tax_delinquencies
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.tax_delinquency_status_counts_maintain();
CREATE TRIGGER tax_delinquency_status_counts_upd AFTER UPDATE ON core.tax_delinquencies
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION core.tax_delinquency_status_counts_maintain();
CREATE TRIGGER tax_delinquency_status_counts_del AFTER DELETE ON core.tax_delinquencies
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core.tax_delinquency_status_counts_maintain();
CREATE TRIGGER tax_delinquency_status_counts_truncate AFTER TRUNCATE ON core.tax_delinquencies
  FOR EACH STATEMENT EXECUTE FUNCTION core.tax_delinquency_status_counts_maintain();

INSERT INTO core.tax_delinquency_status_counts (county_id, tax_year, status, records)
SELECT county_id, tax_year, coalesce(status, 'unknown'), count(*) FROM core.tax_delinquencies GROUP BY 1, 2, 3;

-- Down Migration
DROP TRIGGER tax_delinquency_status_counts_truncate ON core.tax_delinquencies;
DROP TRIGGER tax_delinquency_status_counts_del ON core.tax_delinquencies;
DROP TRIGGER tax_delinquency_status_counts_upd ON core.tax_delinquencies;
DROP TRIGGER tax_delinquency_status_counts_ins ON core.tax_delinquencies;
DROP FUNCTION core.tax_delinquency_status_counts_maintain();
DROP TABLE core.tax_delinquency_status_counts;
DROP INDEX core.tax_delinquencies_ingested_idx;
DROP INDEX core.tax_delinquencies_status_idx;
DROP INDEX core.tax_delinquencies_vendor_idx;
DROP INDEX core.tax_delinquencies_due_asc_idx;
