-- Roll history (docs/history.md): the partitions of core.parcel_rolls, the NAL merge's history half, and what the
-- current parcel keeps of it for search (owner_changed_year, just_value_change_pct).

CREATE OR REPLACE FUNCTION ingest.roll_partition_name(p_roll_year smallint, p_county_id smallint) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN 'parcel_rolls_' || p_roll_year || '_' || p_county_id;
COMMENT ON FUNCTION ingest.roll_partition_name(smallint, smallint) IS
  'The leaf of core.parcel_rolls that holds one county''s roll year: parcel_rolls_<year>_<county id> (schema core).';

-- Creating a partition takes an ACCESS EXCLUSIVE lock on its parent until commit: the importer calls this in a
-- transaction of its own before the merge, so readers of the history wait for a moment, never for a whole load.
CREATE OR REPLACE FUNCTION ingest.ensure_roll_partition(p_roll_year smallint, p_county_id smallint) RETURNS regclass
  LANGUAGE plpgsql AS $$
DECLARE
  v_year text := 'parcel_rolls_' || p_roll_year;
  v_leaf text := ingest.roll_partition_name(p_roll_year, p_county_id);
BEGIN
  IF p_roll_year NOT BETWEEN 1900 AND 2200 OR p_county_id NOT BETWEEN 1 AND 67 THEN
    RAISE EXCEPTION 'roll year % or county % out of range', p_roll_year, p_county_id USING ERRCODE = '22023';
  END IF;
  -- Loads of two counties side by side may both need the year's partition: the lock lets one create it at a time,
  -- and the second, whose catalog snapshot may predate the first's commit, finds it when its CREATE says so.
  PERFORM pg_advisory_xact_lock(hashtext('core.parcel_rolls partitions'));
  IF to_regclass('core.' || v_year) IS NULL THEN
    BEGIN
      EXECUTE format('CREATE TABLE core.%I PARTITION OF core.parcel_rolls FOR VALUES IN (%s) PARTITION BY LIST (county_id)',
                     v_year, p_roll_year);
    EXCEPTION WHEN duplicate_table THEN NULL;
    END;
  END IF;
  IF to_regclass('core.' || v_leaf) IS NULL THEN
    BEGIN
      EXECUTE format('CREATE TABLE core.%I PARTITION OF core.%I FOR VALUES IN (%s)', v_leaf, v_year, p_county_id);
    EXCEPTION WHEN duplicate_table THEN NULL;
    END;
  END IF;
  RETURN ('core.' || v_leaf)::regclass;
END $$;
COMMENT ON FUNCTION ingest.ensure_roll_partition(smallint, smallint) IS
  'Creates (if missing) the year partition and the county leaf of core.parcel_rolls for one county''s roll year; returns the leaf. Callers are serialized by an advisory lock, so concurrent loads never both create one.';

CREATE OR REPLACE FUNCTION ingest.prepare_rolls(p_load_id bigint) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT DISTINCT x.roll_year, x.county_id
             FROM (SELECT s.county_id, coalesce(s.roll_year, max(s.roll_year) OVER (PARTITION BY s.county_id)) AS roll_year
                     FROM ingest.nal_stage s WHERE s.load_id = p_load_id) x
            WHERE x.roll_year IS NOT NULL LOOP
    PERFORM ingest.ensure_roll_partition(r.roll_year, r.county_id);
  END LOOP;
END $$;
COMMENT ON FUNCTION ingest.prepare_rolls(bigint) IS
  'Creates the core.parcel_rolls leaves a staged NAL load will write (one per county and roll year); run before the merge transaction.';

-- A dry run (docs/importing.md#dry-run) marks its transaction, which it rolls back: what it must not leave behind
-- it does not make (see ingest.merge_rolls).
CREATE OR REPLACE FUNCTION ingest.in_dry_run() RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN coalesce(current_setting('ingest.dry_run', true), '') = 'on';
COMMENT ON FUNCTION ingest.in_dry_run() IS
  'True inside an import''s dry run: its transaction set ingest.dry_run to on (set_config(..., true)) and rolls back.';

-- (plpgsql, as every function here that reads a table: an SQL-standard body would pin the table against migrations)
CREATE OR REPLACE FUNCTION ingest.staged_roll_year(p_load_id bigint, p_county_id smallint) RETURNS smallint
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT max(s.roll_year) FROM ingest.nal_stage s WHERE s.load_id = p_load_id AND s.county_id = p_county_id);
END $$;
COMMENT ON FUNCTION ingest.staged_roll_year(bigint, smallint) IS
  'The roll year of one county in a staged NAL load (its newest ASMNT_YR); rows without a year take it. NULL when no row has one.';

-- The county's current roll year: the newest in the history or on its parcels (loaded before the history existed).
CREATE OR REPLACE FUNCTION ingest.current_roll_year(p_county_id smallint) RETURNS smallint
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN greatest((SELECT max(y.roll_year) FROM core.parcel_roll_years y WHERE y.county_id = p_county_id),
                  (SELECT max(p.roll_year) FROM core.parcels p WHERE p.county_id = p_county_id));
END $$;
COMMENT ON FUNCTION ingest.current_roll_year(smallint) IS
  'The newest roll year a county has (history or current parcels); NULL before its first roll.';

-- A NAL file is the county's full roll of its year: that year's rows are updated where they changed, inserted where
-- new, deleted where the file no longer lists them. Other years are untouched.
CREATE OR REPLACE FUNCTION ingest.merge_rolls(p_load_id bigint, p_county_id smallint,
  OUT inserted bigint, OUT updated bigint, OUT deleted bigint)
  LANGUAGE plpgsql SET enable_nestloop = off AS $$  -- county-wide joins: see ingest.merge_nal
DECLARE
  v_year smallint := ingest.staged_roll_year(p_load_id, p_county_id);
  v_unmade smallint[];
BEGIN
  inserted := 0; updated := 0; deleted := 0;
  IF v_year IS NULL THEN RETURN; END IF;
  CREATE TEMP TABLE IF NOT EXISTS roll_stage (LIKE core.parcel_rolls) ON COMMIT DROP;
  TRUNCATE roll_stage;
  INSERT INTO roll_stage
  SELECT coalesce(s.roll_year, v_year), s.county_id, s.parcel_id, s.owner_name, s.owner_address1, s.owner_address2,
         s.owner_city, s.owner_state, s.owner_zip, s.site_address_full, s.dor_use_code, s.property_use_code,
         s.just_value, s.assessed_value, s.taxable_value, s.land_value, s.just_value - s.land_value,
         s.living_area_sqft, s.exemptions, p_load_id
    FROM ingest.nal_stage s
   WHERE s.load_id = p_load_id AND s.county_id = p_county_id;
  -- The years with no leaf yet. A real load made them before its transaction (ingest.prepare_rolls); a dry run makes
  -- none, since a table created in it would lock the history's readers out until it ends: such a year holds nothing
  -- of the county, so its rows are counted as inserted and not written.
  SELECT array_agg(y.roll_year) INTO v_unmade
    FROM (SELECT DISTINCT s.roll_year FROM roll_stage s) y
   WHERE to_regclass('core.' || ingest.roll_partition_name(y.roll_year, p_county_id)) IS NULL;
  IF v_unmade IS NOT NULL AND NOT ingest.in_dry_run() THEN
    RAISE EXCEPTION 'core.parcel_rolls has no partition for county % in roll year(s) %: call ingest.prepare_rolls '
                    'before the merge', p_county_id, v_unmade USING ERRCODE = '55000';
  END IF;
  v_unmade := coalesce(v_unmade, '{}');

  UPDATE core.parcel_rolls r
     SET owner_name = s.owner_name, owner_address1 = s.owner_address1, owner_address2 = s.owner_address2,
         owner_city = s.owner_city, owner_state = s.owner_state, owner_zip = s.owner_zip,
         site_address_full = s.site_address_full, dor_use_code = s.dor_use_code,
         property_use_code = s.property_use_code, just_value = s.just_value, assessed_value = s.assessed_value,
         taxable_value = s.taxable_value, land_value = s.land_value, building_value = s.building_value,
         living_area_sqft = s.living_area_sqft, exemptions = s.exemptions, load_id = s.load_id
    FROM roll_stage s
   WHERE r.county_id = p_county_id AND r.roll_year = s.roll_year AND r.parcel_id = s.parcel_id
     AND (r.owner_name, r.owner_address1, r.owner_address2, r.owner_city, r.owner_state, r.owner_zip,
          r.site_address_full, r.dor_use_code, r.property_use_code, r.just_value, r.assessed_value, r.taxable_value,
          r.land_value, r.living_area_sqft, r.exemptions)
         IS DISTINCT FROM
         (s.owner_name, s.owner_address1, s.owner_address2, s.owner_city, s.owner_state, s.owner_zip,
          s.site_address_full, s.dor_use_code, s.property_use_code, s.just_value, s.assessed_value, s.taxable_value,
          s.land_value, s.living_area_sqft, s.exemptions);
  GET DIAGNOSTICS updated = ROW_COUNT;

  INSERT INTO core.parcel_rolls
  SELECT s.* FROM roll_stage s
   WHERE s.roll_year <> ALL (v_unmade)
     AND NOT EXISTS (SELECT 1 FROM core.parcel_rolls r
                      WHERE r.county_id = p_county_id AND r.roll_year = s.roll_year AND r.parcel_id = s.parcel_id);
  GET DIAGNOSTICS inserted = ROW_COUNT;
  inserted := inserted + (SELECT count(*) FROM roll_stage s WHERE s.roll_year = ANY (v_unmade));

  DELETE FROM core.parcel_rolls r
   WHERE r.county_id = p_county_id AND r.roll_year IN (SELECT DISTINCT s.roll_year FROM roll_stage s)
     AND NOT EXISTS (SELECT 1 FROM roll_stage s WHERE s.roll_year = r.roll_year AND s.parcel_id = r.parcel_id);
  GET DIAGNOSTICS deleted = ROW_COUNT;

  INSERT INTO core.parcel_roll_years AS y (county_id, roll_year, parcel_count, load_id)
  SELECT p_county_id, s.roll_year, count(*), p_load_id FROM roll_stage s GROUP BY s.roll_year
  ON CONFLICT (county_id, roll_year) DO UPDATE
     SET parcel_count = EXCLUDED.parcel_count, load_id = EXCLUDED.load_id, loaded_at = now();
  DROP TABLE roll_stage;
END $$;
COMMENT ON FUNCTION ingest.merge_rolls(bigint, smallint) IS
  'Merges one county of a staged NAL load into its roll year(s) of core.parcel_rolls (update changed, insert new, '
  'delete parcels the file no longer lists; other years untouched) and records the year in core.parcel_roll_years. '
  'The leaves must exist (ingest.prepare_rolls), except in a dry run, which counts the rows of a missing one as new.';

-- What the current parcel keeps of its history, for every roll year of every parcel of the county: the latest year
-- whose owner differs from the year before it (normalized names), and the just value's change in percent from the
-- year before. The NAL merge writes it into the parcels it updates or inserts, in the same write
-- (ingest.merge_nal), and ingest.refresh_roll_changes into the others.
CREATE OR REPLACE FUNCTION ingest.roll_changes(p_county_id smallint)
RETURNS TABLE (parcel_id text, roll_year smallint, owner_changed_year smallint, change_pct numeric)
  LANGUAGE sql STABLE
AS $$
  SELECT h.parcel_id, h.roll_year,
         max(h.roll_year) FILTER (WHERE h.owner_changed) OVER (PARTITION BY h.parcel_id),
         round((h.just_value - h.prev_just_value) * 100.0 / nullif(h.prev_just_value, 0), 2)
    FROM (SELECT r.parcel_id, r.roll_year, r.just_value,
                 lag(r.just_value) OVER w AS prev_just_value,
                 core.normalize_text(r.owner_name) IS DISTINCT FROM core.normalize_text(lag(r.owner_name) OVER w)
                   AND lag(r.roll_year) OVER w IS NOT NULL AS owner_changed
            FROM core.parcel_rolls r
           WHERE r.county_id = p_county_id
          WINDOW w AS (PARTITION BY r.parcel_id ORDER BY r.roll_year)) h
$$;
COMMENT ON FUNCTION ingest.roll_changes(smallint) IS
  'Per parcel and roll year of one county in core.parcel_rolls: owner_changed_year (the latest year whose owner '
  'differs from the year before) and change_pct (just value against the year before, percent, 2 decimals).';

CREATE OR REPLACE FUNCTION ingest.refresh_roll_changes(p_county_id smallint) RETURNS bigint
  LANGUAGE plpgsql SET enable_nestloop = off AS $$
DECLARE
  n bigint;
BEGIN
  -- the parcels the merge did not write (all of them after a load of an older year, or a partition swapped)
  UPDATE core.parcels p
     SET owner_changed_year = x.owner_changed_year, just_value_change_pct = x.change_pct
    FROM (SELECT q.id, c.owner_changed_year, c.change_pct
            FROM core.parcels q
            LEFT JOIN ingest.roll_changes(p_county_id) c ON c.parcel_id = q.parcel_id AND c.roll_year = q.roll_year
           WHERE q.county_id = p_county_id) x
   WHERE p.county_id = p_county_id AND p.id = x.id  -- the county's rows only: no scan of the whole state
     AND (p.owner_changed_year, p.just_value_change_pct) IS DISTINCT FROM (x.owner_changed_year, x.change_pct);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
COMMENT ON FUNCTION ingest.refresh_roll_changes(smallint) IS
  'Sets owner_changed_year and just_value_change_pct of one county''s current parcels from core.parcel_rolls '
  '(against the previous roll year on file); returns the parcels changed.';

-- Swapping and dropping one county's roll year: the partition is the unit (docs/history.md#partitions).
CREATE OR REPLACE FUNCTION ingest.swap_roll_partition(p_roll_year smallint, p_county_id smallint, p_table regclass)
  RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  v_leaf text := ingest.roll_partition_name(p_roll_year, p_county_id);
  v_old text := v_leaf || '_old';
BEGIN
  PERFORM ingest.lock_county(p_county_id);
  PERFORM ingest.ensure_roll_partition(p_roll_year, p_county_id);
  EXECUTE format('ALTER TABLE core.%I DETACH PARTITION core.%I', 'parcel_rolls_' || p_roll_year, v_leaf);
  EXECUTE format('ALTER TABLE core.%I RENAME TO %I', v_leaf, v_old);
  EXECUTE format('ALTER TABLE %s SET SCHEMA core', p_table);
  EXECUTE format('ALTER TABLE core.%I RENAME TO %I', (SELECT c.relname FROM pg_class c WHERE c.oid = p_table), v_leaf);
  EXECUTE format('ALTER TABLE core.%I ATTACH PARTITION core.%I FOR VALUES IN (%s)',
                 'parcel_rolls_' || p_roll_year, v_leaf, p_county_id);
  EXECUTE format('DROP TABLE core.%I', v_old);
  DELETE FROM core.parcel_roll_years y WHERE y.county_id = p_county_id AND y.roll_year = p_roll_year;
  EXECUTE format('INSERT INTO core.parcel_roll_years (county_id, roll_year, parcel_count) '
                 'SELECT %s, %s, count(*) FROM core.%I HAVING count(*) > 0', p_county_id, p_roll_year, v_leaf);
  PERFORM ingest.refresh_roll_changes(p_county_id);
END $$;
COMMENT ON FUNCTION ingest.swap_roll_partition(smallint, smallint, regclass) IS
  'Replaces one county''s roll year with a table built beside it (same columns as core.parcel_rolls, rows of that '
  'county and year only: ATTACH checks it): the old leaf is detached and dropped, the new one attached in its place.';

CREATE OR REPLACE FUNCTION ingest.drop_roll_partition(p_roll_year smallint, p_county_id smallint) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ingest.lock_county(p_county_id);
  EXECUTE format('DROP TABLE IF EXISTS core.%I', ingest.roll_partition_name(p_roll_year, p_county_id));
  DELETE FROM core.parcel_roll_years y WHERE y.county_id = p_county_id AND y.roll_year = p_roll_year;
  PERFORM ingest.refresh_roll_changes(p_county_id);
END $$;
COMMENT ON FUNCTION ingest.drop_roll_partition(smallint, smallint) IS
  'Drops one county''s roll year from the history (its leaf partition); the current parcels are not touched, their change columns are recomputed.';
