-- Bulk first loads: see the ingest.deferred_indexes table. Unique indexes and constraints stay (the merges' ON
-- CONFLICT and the county/parcel identity rely on them); every other index of the given tables is dropped and its
-- definition kept, in one transaction.
CREATE OR REPLACE FUNCTION ingest.defer_indexes(p_tables regclass[]) RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  r record;
  n integer := 0;
BEGIN
  FOR r IN
    SELECT i.indexrelid::regclass::text AS index_name, i.indrelid::regclass::text AS table_name,
           pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i
     WHERE i.indrelid = ANY (p_tables) AND NOT i.indisunique
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
     ORDER BY 1
  LOOP
    INSERT INTO ingest.deferred_indexes (index_name, table_name, definition)
    VALUES (r.index_name, r.table_name, r.definition);
    EXECUTE format('DROP INDEX %s', r.index_name);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
COMMENT ON FUNCTION ingest.defer_indexes(regclass[]) IS
  'Drops every non-unique, non-constraint index of the given tables, recording each definition in ingest.deferred_indexes; returns how many. For a bulk first load only: queries on those tables are slow until ingest.restore_index has rebuilt them.';

CREATE OR REPLACE FUNCTION ingest.restore_index(p_index_name text) RETURNS boolean
  LANGUAGE plpgsql AS $$
DECLARE
  def text;
BEGIN
  DELETE FROM ingest.deferred_indexes WHERE index_name = p_index_name RETURNING definition INTO def;
  IF def IS NULL THEN
    RETURN false;
  END IF;
  EXECUTE replace(def, 'CREATE INDEX ', 'CREATE INDEX IF NOT EXISTS ');
  RETURN true;
END $$;
COMMENT ON FUNCTION ingest.restore_index(text) IS
  'Builds one index listed in ingest.deferred_indexes from its recorded definition and removes the row (false when it was not listed). Run each in its own transaction, with a large maintenance_work_mem.';
