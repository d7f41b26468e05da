-- Up Migration
-- A first load into an empty database (`make load-data`, `make bench`) drops the non-unique indexes of the big tables,
-- loads every county, and builds them once at the end: a bulk index build costs a fraction of maintaining ~30
-- indexes row by row. The definitions wait here meanwhile, so a load that is killed half way loses none of them:
-- the next load (or `make db`) builds whatever is still listed.
CREATE TABLE ingest.deferred_indexes (
  index_name  text PRIMARY KEY,
  table_name  text NOT NULL,
  definition  text NOT NULL,
  deferred_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ingest.deferred_indexes IS
  'Indexes dropped by ingest.defer_indexes for a bulk first load, with their definitions (pg_get_indexdef); '
  'ingest.restore_index builds one back and removes its row.';

-- Down Migration
DROP TABLE ingest.deferred_indexes;
