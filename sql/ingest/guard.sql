-- The import guards' view of a county (docs/importing.md#guards): how many rows a replace-style load may take away,
-- read before and after the merge inside the load's transaction, so the importer can refuse, and roll back, a load
-- that deletes or empties more of a county than a correct file would.

DROP FUNCTION IF EXISTS ingest.county_scope(text, bigint, smallint);  -- its OUT columns grew: replaced, not altered
CREATE FUNCTION ingest.county_scope(p_kind text, p_load_id bigint, p_county_id smallint,
  OUT scope_rows bigint, OUT filled jsonb, OUT loaded_before boolean, OUT roll_year smallint)
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_year smallint;
BEGIN
  loaded_before := EXISTS (SELECT 1 FROM core.load_history h
                            WHERE h.status = 'succeeded' AND h.kind = p_kind AND p_county_id = ANY (h.county_ids));
  CASE p_kind
    WHEN 'nal' THEN
      -- a roll year older than the county's current one replaces that year of its history (sql/ingest/rolls.sql)
      v_year := ingest.staged_roll_year(p_load_id, p_county_id);
      IF v_year < ingest.current_roll_year(p_county_id) THEN
        roll_year := v_year;
        SELECT count(*), jsonb_build_object('owner_name', count(r.owner_name), 'just_value', count(r.just_value))
          INTO scope_rows, filled
          FROM core.parcel_rolls r WHERE r.county_id = p_county_id AND r.roll_year = v_year;
      ELSE
        SELECT count(*), jsonb_build_object('owner_name', count(p.owner_name), 'just_value', count(p.just_value))
          INTO scope_rows, filled
          FROM core.parcels p WHERE p.county_id = p_county_id;
      END IF;
    WHEN 'parcel-geometry' THEN
      SELECT count(*), '{}'::jsonb INTO scope_rows, filled
        FROM core.parcels p WHERE p.county_id = p_county_id AND p.geom IS NOT NULL;
    WHEN 'delinquencies' THEN
      -- the years first, so the count is a range scan per year whatever the statistics say (a first load's county
      -- looks empty to the planner, which would otherwise read the stage once per record)
      SELECT count(*), '{}'::jsonb INTO scope_rows, filled
        FROM core.tax_delinquencies d
       WHERE d.county_id = p_county_id
         AND d.tax_year = ANY (ARRAY(SELECT DISTINCT s.tax_year FROM ingest.delinquency_stage s
                                      WHERE s.load_id = p_load_id AND s.county_id = p_county_id));
    ELSE
      RAISE EXCEPTION 'ingest.county_scope: % loads replace nothing', p_kind USING ERRCODE = '22023';
  END CASE;
END $$;
COMMENT ON FUNCTION ingest.county_scope(text, bigint, smallint) IS
  'What a replace-style load of kind p_kind (nal, parcel-geometry, delinquencies) replaces in one county: scope_rows '
  '(nal: the county''s parcels, or for a roll year older than its current one that year''s rows in '
  'core.parcel_rolls, whose year is then roll_year; parcel-geometry: its parcels with a polygon; delinquencies: its records of the tax '
  'years the load holds), filled (nal: how many of them have owner_name and just_value), and loaded_before (whether a '
  'succeeded load of this kind already wrote the county: the guards do not limit a first load).';
