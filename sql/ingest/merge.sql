-- Merge functions: staging (ingest.*_stage, filled by the importers with COPY) -> core. The importer calls them
-- for each county inside ONE transaction together with the county counters and the load_history row, so a
-- reader sees a county entirely before or entirely after a load. Each write compares with IS DISTINCT FROM, so
-- re-running a file updates nothing. plpgsql, not SQL-standard bodies: the staging tables can then be dropped and
-- recreated by migrations without dependency errors.

-- Serializes loads of one county (two imports of the same county would otherwise interleave their deletes).
CREATE OR REPLACE FUNCTION ingest.lock_county(p_county_id smallint) RETURNS void
  LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(7471, p_county_id); END $$;
COMMENT ON FUNCTION ingest.lock_county(smallint) IS
  'Transaction-level advisory lock (7471, county id): one merge per county at a time.';

-- Duplicates inside one file: the last line wins. The earlier lines are deleted from staging and returned with
-- the line that superseded them, so the importer can write them to the rejects file (nothing silently dropped).
CREATE OR REPLACE FUNCTION ingest.drop_duplicates(p_stage regclass, p_key text, p_load_id bigint)
  RETURNS TABLE (line_no bigint, kept_line_no bigint)
  LANGUAGE plpgsql AS $$
BEGIN
  -- p_key comes from the importer's code (a kind's natural key over the staging row x), never from a file
  RETURN QUERY EXECUTE format(
    'DELETE FROM %1$s s
      USING (SELECT d.line_no, d.kept FROM (
               SELECT x.line_no, max(x.line_no) OVER (PARTITION BY %2$s) AS kept
                 FROM %1$s x WHERE x.load_id = $1) d
              WHERE d.line_no < d.kept) dup
      WHERE s.load_id = $1 AND s.line_no = dup.line_no
     RETURNING s.line_no, dup.kept', p_stage, p_key)
  USING p_load_id;
END $$;
COMMENT ON FUNCTION ingest.drop_duplicates(regclass, text, bigint) IS
  'Removes all but the last line of each natural key (p_key, an expression list over the staging row x) of one load '
  'in the staging table p_stage; returns the removed lines and the line kept for each.';

-- A NAL file is the county's full roll: update what changed, insert what is new, delete what is gone. Updating
-- in place (never delete + insert) keeps core.parcels.id, the API's public id, stable across loads. A parcel's change
-- columns (ingest.roll_changes, from the history merged first) go in the same write: a second write of the county's
-- parcels would write each of their indexes again.
-- enable_nestloop = off: the joins below cover the whole county, and the planner's statistics cannot know it (a
-- county loaded for the first time has none, and rows inserted earlier in this transaction are not in them); a
-- nested loop over "1 estimated row" turned a 200k-row first load into hours. Hash joins read the county once.
CREATE OR REPLACE FUNCTION ingest.merge_nal(p_load_id bigint, p_county_id smallint,
  OUT inserted bigint, OUT updated bigint, OUT deleted bigint, OUT parcel_count integer)
  LANGUAGE plpgsql SET enable_nestloop = off AS $$
DECLARE
  v_year smallint;
  v_current smallint;
  v_rolls record;
BEGIN
  PERFORM ingest.lock_county(p_county_id);
  PERFORM webhooks.begin_merge(p_load_id, p_county_id, 'nal');  -- webhook events of the writes below
  inserted := 0; updated := 0; deleted := 0;
  -- Every year goes into the history (sql/ingest/rolls.sql); only the county's newest year is its current roll, so
  -- a file of an older year than the county has leaves core.parcels as it is.
  v_year := ingest.staged_roll_year(p_load_id, p_county_id);
  v_current := ingest.current_roll_year(p_county_id);
  SELECT * INTO v_rolls FROM ingest.merge_rolls(p_load_id, p_county_id);
  IF v_year IS NULL OR v_current IS NULL OR v_year >= v_current THEN
  UPDATE core.parcels p
     SET roll_year = s.roll_year, owner_name = s.owner_name, owner_address1 = s.owner_address1,
         owner_address2 = s.owner_address2, owner_city = s.owner_city, owner_state = s.owner_state,
         owner_zip = s.owner_zip, site_address_full = s.site_address_full, site_city = s.site_city,
         site_state = s.site_state, site_zip = s.site_zip, dor_use_code = s.dor_use_code,
         property_use_code = s.property_use_code, land_use_description = s.land_use_description,
         just_value = s.just_value, assessed_value = s.assessed_value, taxable_value = s.taxable_value,
         land_value = s.land_value, year_built = s.year_built, effective_year_built = s.effective_year_built,
         living_area_sqft = s.living_area_sqft, land_area_sqft = s.land_area_sqft, building_count = s.building_count,
         residential_units = s.residential_units, legal_description = s.legal_description,
         state_parcel_id = s.state_parcel_id, alt_key = s.alt_key, last_sale_date = s.last_sale_date,
         last_sale_price = s.last_sale_price, owner_changed_year = ch.owner_changed_year,
         just_value_change_pct = ch.change_pct, updated_at = now()
    FROM ingest.nal_stage s
    LEFT JOIN ingest.roll_changes(p_county_id) ch ON ch.parcel_id = s.parcel_id AND ch.roll_year = s.roll_year
   WHERE s.load_id = p_load_id AND s.county_id = p_county_id
     AND p.county_id = p_county_id AND p.parcel_id = s.parcel_id
     AND NOT coalesce(s.roll_year < p.roll_year, false)  -- a row of an older year never overwrites a newer one
     AND (p.roll_year, p.owner_name, p.owner_address1, p.owner_address2, p.owner_city, p.owner_state, p.owner_zip,
          p.site_address_full, p.site_city, p.site_state, p.site_zip, p.dor_use_code, p.property_use_code,
          p.land_use_description, p.just_value, p.assessed_value, p.taxable_value, p.land_value, p.year_built,
          p.effective_year_built, p.living_area_sqft, p.land_area_sqft, p.building_count, p.residential_units,
          p.legal_description, p.state_parcel_id, p.alt_key, p.last_sale_date, p.last_sale_price,
          p.owner_changed_year, p.just_value_change_pct)
         IS DISTINCT FROM
         (s.roll_year, s.owner_name, s.owner_address1, s.owner_address2, s.owner_city, s.owner_state, s.owner_zip,
          s.site_address_full, s.site_city, s.site_state, s.site_zip, s.dor_use_code, s.property_use_code,
          s.land_use_description, s.just_value, s.assessed_value, s.taxable_value, s.land_value, s.year_built,
          s.effective_year_built, s.living_area_sqft, s.land_area_sqft, s.building_count, s.residential_units,
          s.legal_description, s.state_parcel_id, s.alt_key, s.last_sale_date, s.last_sale_price,
          ch.owner_changed_year, ch.change_pct);
  GET DIAGNOSTICS updated = ROW_COUNT;

  INSERT INTO core.parcels (county_id, parcel_id, roll_year, owner_name, owner_address1, owner_address2, owner_city,
         owner_state, owner_zip, site_address_full, site_city, site_state, site_zip, dor_use_code, property_use_code,
         land_use_description, just_value, assessed_value, taxable_value, land_value, year_built, effective_year_built,
         living_area_sqft, land_area_sqft, building_count, residential_units, legal_description, state_parcel_id,
         alt_key, last_sale_date, last_sale_price, owner_changed_year, just_value_change_pct)
  SELECT s.county_id, s.parcel_id, s.roll_year, s.owner_name, s.owner_address1, s.owner_address2, s.owner_city,
         s.owner_state, s.owner_zip, s.site_address_full, s.site_city, s.site_state, s.site_zip, s.dor_use_code,
         s.property_use_code, s.land_use_description, s.just_value, s.assessed_value, s.taxable_value, s.land_value,
         s.year_built, s.effective_year_built, s.living_area_sqft, s.land_area_sqft, s.building_count,
         s.residential_units, s.legal_description, s.state_parcel_id, s.alt_key, s.last_sale_date, s.last_sale_price,
         ch.owner_changed_year, ch.change_pct
    FROM ingest.nal_stage s
    LEFT JOIN ingest.roll_changes(p_county_id) ch ON ch.parcel_id = s.parcel_id AND ch.roll_year = s.roll_year
   WHERE s.load_id = p_load_id AND s.county_id = p_county_id
     AND NOT EXISTS (SELECT 1 FROM core.parcels p WHERE p.county_id = p_county_id AND p.parcel_id = s.parcel_id)
   ORDER BY s.line_no;  -- new ids follow the file's order
  GET DIAGNOSTICS inserted = ROW_COUNT;

  DELETE FROM core.parcels p
   WHERE p.county_id = p_county_id
     AND NOT EXISTS (SELECT 1 FROM ingest.nal_stage s
                      WHERE s.load_id = p_load_id AND s.county_id = p_county_id AND s.parcel_id = p.parcel_id);
  GET DIAGNOSTICS deleted = ROW_COUNT;
  ELSE
    -- an older year writes its history only: its counts, which the shrink guard and the summary report
    inserted := v_rolls.inserted; updated := v_rolls.updated; deleted := v_rolls.deleted;
  END IF;
  PERFORM ingest.refresh_roll_changes(p_county_id);

  SELECT count(*)::integer INTO parcel_count FROM core.parcels p WHERE p.county_id = p_county_id;
  UPDATE core.counties c SET parcel_count = merge_nal.parcel_count, last_import_at = now(), updated_at = now()
   WHERE c.id = p_county_id;
  PERFORM webhooks.end_merge(p_load_id, p_county_id, 'nal', inserted, updated, deleted);
END $$;
COMMENT ON FUNCTION ingest.merge_nal(bigint, smallint) IS
  'Merges one county of a NAL load into the roll history (core.parcel_rolls, every year) and, when its year is the county''s newest, into core.parcels (update changed rows in place, insert new, delete parcels absent from the file; geometry untouched; a row never overwrites a newer year); the counts are of core.parcels, or of the history for an older year; refreshes the parcels'' change columns and sets the county''s parcel_count and last_import_at. Call inside the load''s transaction.';

-- SDF files hold the sales of a period, not a county's whole history: sales are upserted on their natural key and
-- never deleted.
CREATE OR REPLACE FUNCTION ingest.merge_sdf(p_load_id bigint, p_county_id smallint,
  OUT inserted bigint, OUT updated bigint)
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ingest.lock_county(p_county_id);
  PERFORM webhooks.begin_merge(p_load_id, p_county_id, 'sdf');
  WITH w AS (
    INSERT INTO core.sales AS t (county_id, parcel_id, sale_date, sale_price, book, page, instrument_number,
           qualification_code, vacant_improved, multi_parcel, sale_id_code, dor_use_code, source)
    SELECT s.county_id, s.parcel_id, s.sale_date, s.sale_price, s.book, s.page, s.instrument_number,
           s.qualification_code, s.vacant_improved, s.multi_parcel, s.sale_id_code, s.dor_use_code, 'sdf'
      FROM ingest.sdf_stage s
     WHERE s.load_id = p_load_id AND s.county_id = p_county_id
     ORDER BY s.line_no
    ON CONFLICT (county_id, parcel_id, sale_date, book, page, instrument_number, sale_price) DO UPDATE
       SET qualification_code = EXCLUDED.qualification_code, vacant_improved = EXCLUDED.vacant_improved,
           multi_parcel = EXCLUDED.multi_parcel, sale_id_code = EXCLUDED.sale_id_code,
           dor_use_code = EXCLUDED.dor_use_code
     WHERE (t.qualification_code, t.vacant_improved, t.multi_parcel, t.sale_id_code, t.dor_use_code)
           IS DISTINCT FROM
           (EXCLUDED.qualification_code, EXCLUDED.vacant_improved, EXCLUDED.multi_parcel, EXCLUDED.sale_id_code,
            EXCLUDED.dor_use_code)
    RETURNING (t.xmax = 0) AS is_insert)
  SELECT count(*) FILTER (WHERE is_insert), count(*) FILTER (WHERE NOT is_insert) INTO inserted, updated FROM w;
  PERFORM webhooks.end_merge(p_load_id, p_county_id, 'sdf', inserted, updated, 0);
END $$;
COMMENT ON FUNCTION ingest.merge_sdf(bigint, smallint) IS
  'Upserts one county of an SDF load into core.sales on the sale natural key; changed attributes are updated, nothing is deleted.';

-- Geometry arrives in EPSG:4326 from ogr2ogr. Made valid, polygonal parts only, always MultiPolygon. Lines with no
-- polygonal part, or whose PARCELNO matches no parcel of their county, leave staging and are returned as rejects.
CREATE OR REPLACE FUNCTION ingest.prepare_geometry(p_load_id bigint)
  RETURNS TABLE (line_no bigint, reason text)
  LANGUAGE plpgsql SET enable_nestloop = off AS $$  -- county-wide joins: see ingest.merge_nal
BEGIN
  UPDATE ingest.geometry_stage s
     SET geom = ST_Multi(ST_CollectionExtract(ST_MakeValid(ST_GeomFromText(s.wkt, 4326)), 3))
   WHERE s.load_id = p_load_id;
  RETURN QUERY
  DELETE FROM ingest.geometry_stage s
   WHERE s.load_id = p_load_id AND (s.geom IS NULL OR ST_IsEmpty(s.geom))
  RETURNING s.line_no, 'no polygonal part after ST_MakeValid'::text;
  RETURN QUERY
  DELETE FROM ingest.geometry_stage s
   WHERE s.load_id = p_load_id
     AND NOT EXISTS (SELECT 1 FROM core.parcels p
                      WHERE p.county_id = s.county_id AND p.parcel_key = core.normalize_parcel_id(s.parcel_id))
  RETURNING s.line_no, format('PARCELNO %s matches no parcel of county %s', s.parcel_id, s.county_id);
END $$;
COMMENT ON FUNCTION ingest.prepare_geometry(bigint) IS
  'Makes the staged polygons of one load valid MultiPolygons (ST_MakeValid, polygonal parts, ST_Multi) and removes, returning them as rejects, lines without a polygonal part or whose PARCELNO matches no parcel (punctuation-insensitive) of the county.';

CREATE OR REPLACE FUNCTION ingest.merge_geometry(p_load_id bigint, p_county_id smallint,
  OUT updated bigint, OUT cleared bigint)
  LANGUAGE plpgsql SET enable_nestloop = off AS $$  -- county-wide joins: see ingest.merge_nal
BEGIN
  PERFORM ingest.lock_county(p_county_id);
  PERFORM webhooks.begin_merge(p_load_id, p_county_id, 'parcel-geometry');
  WITH g AS (
    SELECT core.normalize_parcel_id(s.parcel_id) AS parcel_key,
           CASE WHEN count(*) = 1 THEN (array_agg(s.geom))[1]
                ELSE ST_Multi(ST_CollectionExtract(ST_Union(s.geom), 3)) END AS geom
      FROM ingest.geometry_stage s
     WHERE s.load_id = p_load_id AND s.county_id = p_county_id
     GROUP BY 1)
  UPDATE core.parcels p
     SET geom = g.geom, centroid = ST_PointOnSurface(g.geom), updated_at = now()
    FROM g
   WHERE p.county_id = p_county_id AND p.parcel_key = g.parcel_key AND p.geom IS DISTINCT FROM g.geom;
  GET DIAGNOSTICS updated = ROW_COUNT;

  UPDATE core.parcels p SET geom = NULL, centroid = NULL, updated_at = now()
   WHERE p.county_id = p_county_id AND (p.geom IS NOT NULL OR p.centroid IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM ingest.geometry_stage s
                      WHERE s.load_id = p_load_id AND s.county_id = p_county_id
                        AND core.normalize_parcel_id(s.parcel_id) = p.parcel_key);
  GET DIAGNOSTICS cleared = ROW_COUNT;
  UPDATE core.counties c SET last_import_at = now(), updated_at = now() WHERE c.id = p_county_id;
  IF updated + cleared > 0 THEN PERFORM ingest.refresh_county_shapes(ARRAY[p_county_id]); END IF;
  PERFORM webhooks.end_merge(p_load_id, p_county_id, 'parcel-geometry', 0, updated, cleared);
END $$;
COMMENT ON FUNCTION ingest.merge_geometry(bigint, smallint) IS
  'Sets geom and centroid (ST_PointOnSurface) of one county''s parcels from a geometry load, polygons of one PARCELNO unioned; parcels of the county absent from the file get NULL geom and centroid; the county''s base-map shape is redrawn when any changed.';

-- A delinquency file is the full list of each (county, tax year) it contains: records of those years absent from
-- the file are deleted. ingested_at moves only for inserted or changed records (re-running a file updates
-- nothing); the source row's last_success_at records that an unchanged list was checked.
CREATE OR REPLACE FUNCTION ingest.merge_delinquencies(p_load_id bigint, p_county_id smallint,
  OUT inserted bigint, OUT updated bigint, OUT deleted bigint)
  LANGUAGE plpgsql SET enable_nestloop = off AS $$  -- county-wide joins: see ingest.merge_nal
BEGIN
  PERFORM ingest.lock_county(p_county_id);
  PERFORM webhooks.begin_merge(p_load_id, p_county_id, 'delinquencies');
  WITH w AS (
    INSERT INTO core.tax_delinquencies AS t (county_id, parcel_id, tax_year, status, delinquent_amount, total_due,
           certificate_number, certificate_sale_date, owner_name, site_address_full, source_vendor, face_amount,
           certificate_holder, certificate_interest_rate, bid_rate, county_purchase_date)
    SELECT s.county_id, s.parcel_id, s.tax_year, s.status, s.delinquent_amount, s.total_due, s.certificate_number,
           s.certificate_sale_date, s.owner_name, s.site_address_full, s.source_vendor, s.face_amount,
           s.certificate_holder, s.certificate_interest_rate, s.bid_rate, s.county_purchase_date
      FROM ingest.delinquency_stage s
     WHERE s.load_id = p_load_id AND s.county_id = p_county_id
     ORDER BY s.line_no
    ON CONFLICT (county_id, tax_year, parcel_key, certificate_number) DO UPDATE
       SET parcel_id = EXCLUDED.parcel_id, status = EXCLUDED.status, delinquent_amount = EXCLUDED.delinquent_amount,
           total_due = EXCLUDED.total_due, certificate_sale_date = EXCLUDED.certificate_sale_date,
           owner_name = EXCLUDED.owner_name, site_address_full = EXCLUDED.site_address_full,
           source_vendor = EXCLUDED.source_vendor, face_amount = EXCLUDED.face_amount,
           certificate_holder = EXCLUDED.certificate_holder,
           certificate_interest_rate = EXCLUDED.certificate_interest_rate, bid_rate = EXCLUDED.bid_rate,
           county_purchase_date = EXCLUDED.county_purchase_date, ingested_at = now(), updated_at = now()
     WHERE (t.parcel_id, t.status, t.delinquent_amount, t.total_due, t.certificate_sale_date, t.owner_name,
            t.site_address_full, t.source_vendor, t.face_amount, t.certificate_holder, t.certificate_interest_rate,
            t.bid_rate, t.county_purchase_date)
           IS DISTINCT FROM
           (EXCLUDED.parcel_id, EXCLUDED.status, EXCLUDED.delinquent_amount, EXCLUDED.total_due,
            EXCLUDED.certificate_sale_date, EXCLUDED.owner_name, EXCLUDED.site_address_full, EXCLUDED.source_vendor,
            EXCLUDED.face_amount, EXCLUDED.certificate_holder, EXCLUDED.certificate_interest_rate, EXCLUDED.bid_rate,
            EXCLUDED.county_purchase_date)
    RETURNING (t.xmax = 0) AS is_insert)
  SELECT count(*) FILTER (WHERE is_insert), count(*) FILTER (WHERE NOT is_insert) INTO inserted, updated FROM w;

  -- Equality on coalesced keys (hashable, unlike IS NOT DISTINCT FROM): staged tax years are never NULL and blank
  -- certificate numbers arrive as NULL, never ''.
  DELETE FROM core.tax_delinquencies d
   WHERE d.county_id = p_county_id
     AND d.tax_year IN (SELECT s.tax_year FROM ingest.delinquency_stage s
                         WHERE s.load_id = p_load_id AND s.county_id = p_county_id)
     AND NOT EXISTS (SELECT 1 FROM ingest.delinquency_stage s
                      WHERE s.load_id = p_load_id AND s.county_id = p_county_id
                        AND s.tax_year = d.tax_year
                        AND core.normalize_parcel_id(s.parcel_id) = d.parcel_key
                        AND coalesce(s.certificate_number, '') = coalesce(d.certificate_number, ''));
  GET DIAGNOSTICS deleted = ROW_COUNT;
  PERFORM webhooks.end_merge(p_load_id, p_county_id, 'delinquencies', inserted, updated, deleted);
END $$;
COMMENT ON FUNCTION ingest.merge_delinquencies(bigint, smallint) IS
  'Upserts one county of a delinquency load into core.tax_delinquencies on (county, tax year, parcel key, certificate number) and deletes records of the same county and tax years that the file no longer lists.';

-- The feed's health, written on success and on failure (in its own statement on failure, so it survives the
-- rolled-back load). Creates the source row for a county and tax year seen for the first time.
CREATE OR REPLACE FUNCTION ingest.record_delinquency_source(p_county_id smallint, p_tax_year smallint,
  p_vendor text, p_error text) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO core.tax_delinquency_sources AS t (county_id, tax_year, vendor, sale_url, source_kind,
         last_checked_at, last_success_at, last_error)
  SELECT c.id, p_tax_year, coalesce(p_vendor, c.tax_certificate_vendor, 'unknown'),
         coalesce(c.tax_certificate_sale_url, ''), 'bulk_download', now(),
         CASE WHEN p_error IS NULL THEN now() END, p_error
    FROM core.counties c WHERE c.id = p_county_id
  ON CONFLICT (county_id, tax_year) DO UPDATE
     SET last_checked_at = now(),
         last_success_at = CASE WHEN p_error IS NULL THEN now() ELSE t.last_success_at END,
         last_error = p_error,
         updated_at = now();
END $$;
COMMENT ON FUNCTION ingest.record_delinquency_source(smallint, smallint, text, text) IS
  'Records a delinquency import attempt on core.tax_delinquency_sources (last_checked_at; last_success_at and a NULL last_error on success, last_error on failure), creating the county''s row for the tax year if missing (vendor from the argument or the county, sale_url from the county or '''', source_kind bulk_download).';

CREATE OR REPLACE FUNCTION ingest.clear_stage(p_load_id bigint) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ingest.nal_stage WHERE load_id = p_load_id;
  DELETE FROM ingest.sdf_stage WHERE load_id = p_load_id;
  DELETE FROM ingest.geometry_stage WHERE load_id = p_load_id;
  DELETE FROM ingest.delinquency_stage WHERE load_id = p_load_id;
END $$;
COMMENT ON FUNCTION ingest.clear_stage(bigint) IS 'Removes one load''s rows from every staging table (after its merge, or after it failed).';
