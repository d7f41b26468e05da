-- Up Migration
-- Saved searches' prefilter (docs/saved-searches.md#matching): the filters that matching joins on, as columns kept
-- from the stored arguments, so that an import's changed records are matched to the searches by an index range
-- scan per (search, county) instead of evaluating every search's predicate on every record. county_ids was already
-- such a column. amount is the delinquency's total due or the parcel's just value. exact says the columns are the
-- whole filter; the other searches' pairs are then checked with the predicate their endpoint's builder writes.
ALTER TABLE saved.searches
  ADD COLUMN tax_year integer GENERATED ALWAYS AS (
    CASE WHEN resource = 'tax_delinquencies' THEN (args ->> 'p_tax_year')::integer END) STORED,
  ADD COLUMN status text GENERATED ALWAYS AS (
    CASE WHEN resource = 'tax_delinquencies' AND lower(btrim(args ->> 'p_status')) <> 'unknown'
         THEN lower(btrim(args ->> 'p_status')) END) STORED,
  ADD COLUMN amount_min numeric GENERATED ALWAYS AS (
    (args ->> CASE resource WHEN 'tax_delinquencies' THEN 'p_min_due' ELSE 'p_just_value_min' END)::numeric) STORED,
  ADD COLUMN amount_max numeric GENERATED ALWAYS AS (
    (args ->> CASE resource WHEN 'tax_delinquencies' THEN 'p_max_due' ELSE 'p_just_value_max' END)::numeric) STORED,
  ADD COLUMN exact boolean GENERATED ALWAYS AS (
    CASE resource
      WHEN 'tax_delinquencies' THEN (args - '{p_county,p_tax_year,p_status,p_min_due,p_max_due}'::text[]) = '{}'
                                    AND lower(btrim(args ->> 'p_status')) IS DISTINCT FROM 'unknown'
      ELSE (args - '{p_county,p_just_value_min,p_just_value_max}'::text[]) = '{}' END) STORED;
COMMENT ON COLUMN saved.searches.tax_year IS 'Prefilter: the delinquency search''s tax_year (NULL: any).';
COMMENT ON COLUMN saved.searches.status IS 'Prefilter: the delinquency search''s status, lower case (NULL: any, or unknown).';
COMMENT ON COLUMN saved.searches.amount_min IS 'Prefilter: min_due (delinquencies) or just_value_min (parcels).';
COMMENT ON COLUMN saved.searches.amount_max IS 'Prefilter: max_due (delinquencies) or just_value_max (parcels).';
COMMENT ON COLUMN saved.searches.exact IS
  'True when county_ids, tax_year, status and the amount range are the whole filter: its prefiltered pairs are matches.';

-- Matching moved to saved.match_load (sql/saved/capture.sql): the per-statement predicate arrays are gone.
DROP FUNCTION IF EXISTS saved.match_sql(text, text, text, boolean);
DROP FUNCTION IF EXISTS saved.merge_cases(text);
DROP FUNCTION IF EXISTS saved.candidates(text, smallint);

-- Down Migration
ALTER TABLE saved.searches DROP COLUMN exact, DROP COLUMN amount_max, DROP COLUMN amount_min, DROP COLUMN status,
  DROP COLUMN tax_year;
