-- Up Migration
-- Roll history (docs/history.md): every roll year of every county's NAL is kept, one row per parcel and year.
-- Partitioned by roll year, each year by county, so one county's year is one table that can be loaded, swapped
-- (ingest.swap_roll_partition) or dropped (ingest.drop_roll_partition) on its own. Leaves are created on demand
-- by the NAL importer (ingest.prepare_rolls), before its merge transaction: creating a partition locks the parent.
CREATE TABLE core.parcel_rolls (
  roll_year          smallint NOT NULL,
  county_id          smallint NOT NULL,
  parcel_id          text NOT NULL,
  owner_name         text,
  owner_address1     text,
  owner_address2     text,
  owner_city         text,
  owner_state        text,
  owner_zip          text,
  site_address_full  text,
  dor_use_code       text,
  property_use_code  text,
  just_value         bigint,
  assessed_value     bigint,
  taxable_value      bigint,
  land_value         bigint,
  building_value     bigint,
  living_area_sqft   integer,
  exemptions         jsonb,
  load_id            bigint,
  PRIMARY KEY (county_id, parcel_id, roll_year)
) PARTITION BY LIST (roll_year);
COMMENT ON TABLE core.parcel_rolls IS
  'Every roll year of every parcel as its NAL file gave it (docs/history.md): partitioned by roll_year, then by '
  'county_id (leaf core.parcel_rolls_<year>_<county id>). building_value is just_value minus land_value; exemptions '
  'maps each EXMPT_nn code the file fills to its amount. core.parcels holds the latest year.';

-- One row per county and roll year loaded: what the history holds, and which year is a county's current roll.
CREATE TABLE core.parcel_roll_years (
  county_id     smallint NOT NULL REFERENCES core.counties(id),
  roll_year     smallint NOT NULL,
  parcel_count  integer NOT NULL,
  load_id       bigint,
  loaded_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (county_id, roll_year)
);
COMMENT ON TABLE core.parcel_roll_years IS
  'The roll years held for each county (one per loaded NAL year) with their parcel count and last load; the '
  'newest is the county''s current roll in core.parcels.';

-- What changed on the current parcel against the roll year before it, kept by the NAL merge for parcel search.
ALTER TABLE core.parcels
  ADD COLUMN owner_changed_year     smallint,
  ADD COLUMN just_value_change_pct  numeric(10, 2);
COMMENT ON COLUMN core.parcels.owner_changed_year IS
  'The latest roll year whose owner differs from the roll year before it (normalized names); NULL when no change is on file.';
COMMENT ON COLUMN core.parcels.just_value_change_pct IS
  'Just value change in percent from the previous roll year on file to the current one; NULL without a previous year or when it was 0.';
CREATE INDEX parcels_owner_changed_year_idx ON core.parcels (owner_changed_year, id) WHERE owner_changed_year IS NOT NULL;
CREATE INDEX parcels_just_value_change_idx ON core.parcels (just_value_change_pct, id) WHERE just_value_change_pct IS NOT NULL;

-- The exemptions of a NAL row travel through staging as one JSON object.
ALTER TABLE ingest.nal_stage ADD COLUMN exemptions jsonb;

-- A database loaded before this migration: its current parcels are the first year of their history.
DO $$
DECLARE
  y smallint;
  c smallint;
BEGIN
  FOR y, c IN SELECT DISTINCT roll_year, county_id FROM core.parcels WHERE roll_year IS NOT NULL LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS core.%I PARTITION OF core.parcel_rolls FOR VALUES IN (%s) PARTITION BY LIST (county_id)',
                   'parcel_rolls_' || y, y);
    EXECUTE format('CREATE TABLE IF NOT EXISTS core.%I PARTITION OF core.%I FOR VALUES IN (%s)',
                   'parcel_rolls_' || y || '_' || c, 'parcel_rolls_' || y, c);
  END LOOP;
  INSERT INTO core.parcel_rolls (roll_year, county_id, parcel_id, owner_name, owner_address1, owner_address2,
         owner_city, owner_state, owner_zip, site_address_full, dor_use_code, property_use_code, just_value,
         assessed_value, taxable_value, land_value, building_value, living_area_sqft)
  SELECT roll_year, county_id, parcel_id, owner_name, owner_address1, owner_address2, owner_city, owner_state,
         owner_zip, site_address_full, dor_use_code, property_use_code, just_value, assessed_value, taxable_value,
         land_value, just_value - land_value, living_area_sqft
    FROM core.parcels WHERE roll_year IS NOT NULL;
  INSERT INTO core.parcel_roll_years (county_id, roll_year, parcel_count)
  SELECT county_id, roll_year, count(*) FROM core.parcels WHERE roll_year IS NOT NULL GROUP BY 1, 2;
END $$;

-- Down Migration
ALTER TABLE ingest.nal_stage DROP COLUMN exemptions;
DROP INDEX core.parcels_just_value_change_idx;
DROP INDEX core.parcels_owner_changed_year_idx;
ALTER TABLE core.parcels DROP COLUMN just_value_change_pct, DROP COLUMN owner_changed_year;
DROP TABLE core.parcel_roll_years;
DROP TABLE core.parcel_rolls;
