-- Up Migration
-- Import progress the operator's metrics read (src/plugins/ops-metrics.ts): while a run reads its file, the importer
-- records every few seconds how far it got (rows_read, which the run's end overwrites with the final count, and the
-- bytes), and when it last did. A run still 'running' whose progress_at stopped moving belongs to a killed importer.
ALTER TABLE core.load_history
  ADD COLUMN bytes_read   bigint,
  ADD COLUMN bytes_total  bigint,
  ADD COLUMN progress_at  timestamptz;
COMMENT ON COLUMN core.load_history.bytes_read IS
  'Bytes of the input read so far (of the uncompressed entry for a zip); NULL before the first report.';
COMMENT ON COLUMN core.load_history.bytes_total IS
  'Size of the input in bytes (the uncompressed entry for a zip); NULL when unknown (ogr2ogr output).';
COMMENT ON COLUMN core.load_history.progress_at IS
  'When the importer last reported progress; it reports every few seconds until the run ends.';

-- Down Migration
ALTER TABLE core.load_history DROP COLUMN progress_at, DROP COLUMN bytes_total, DROP COLUMN bytes_read;
