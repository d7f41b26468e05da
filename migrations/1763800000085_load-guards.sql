-- Up Migration
-- The import guards (docs/importing.md#guards). A load is also 'refused' (a check said the file or its effect looks
-- like a mistake; nothing was changed) or a 'dry_run' (staged, merged and checked, then rolled back). county_ids
-- names every county a load touched, so a guard can tell a county's first load of a kind from a replacement.
ALTER TABLE core.load_history DROP CONSTRAINT load_history_status_check;
ALTER TABLE core.load_history ADD CONSTRAINT load_history_status_check
  CHECK (status IN ('running', 'succeeded', 'failed', 'refused', 'dry_run'));
ALTER TABLE core.load_history ADD COLUMN county_ids smallint[];
COMMENT ON COLUMN core.load_history.county_ids IS
  'The counties whose rows the load merged (or, for a refused or dry run, would have): the guards read a county''s earlier loads from it.';
COMMENT ON COLUMN core.load_history.status IS
  'running; succeeded; failed (an error); refused (a check found a mistake, e.g. the wrong kind of file or too many deletes: nothing changed); dry_run (--dry-run: nothing changed).';

-- Earlier loads: their one county, or the counties named in their message ("liberty: 260 inserted, …; alachua: …").
UPDATE core.load_history h
   SET county_ids = coalesce(
         (SELECT array_agg(DISTINCT c.id ORDER BY c.id)
            FROM regexp_matches(h.message, '(?:^|; )([a-z-]+): ', 'g') AS m(slug)
            JOIN core.counties c ON c.slug = m.slug[1]),
         CASE WHEN h.county_id IS NOT NULL THEN ARRAY[h.county_id] END)
 WHERE h.status = 'succeeded';
COMMENT ON COLUMN core.load_history.bytes_total IS
  'Size of the input in bytes (the uncompressed entry for a zip; for polygons, the file ogr2ogr reads).';
COMMENT ON COLUMN core.load_history.bytes_read IS
  'Bytes of the input read so far (of the uncompressed entry for a zip; for polygons, ogr2ogr''s offset in the file); NULL before the first report.';


-- Down Migration
ALTER TABLE core.load_history DROP COLUMN county_ids;
DELETE FROM core.load_history WHERE status IN ('refused', 'dry_run');
ALTER TABLE core.load_history DROP CONSTRAINT load_history_status_check;
ALTER TABLE core.load_history ADD CONSTRAINT load_history_status_check
  CHECK (status IN ('running', 'succeeded', 'failed'));
