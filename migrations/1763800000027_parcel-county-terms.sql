-- Up Migration
-- County-scoped search: each search word qualified by the parcel's county (SMITH@13), indexed, so that a search in
-- one county intersects that county's posting lists instead of the state's and filtering by county afterwards (EST
-- in Alachua: 2,000 parcels, not 186,003). The qualified words live only in this expression index: the stored
-- search terms and the vocabulary are unchanged. Search words are made of A-Z, 0-9 and &, so '@' cannot collide.
CREATE OR REPLACE FUNCTION core.county_terms(p_county_id smallint, p_terms text[]) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN ARRAY(SELECT t || '@' || p_county_id FROM unnest(p_terms) AS t);
COMMENT ON FUNCTION core.county_terms(smallint, text[]) IS
  'Search terms qualified by county (SMITH@13), the key of parcels_county_terms_idx for county-scoped search.';
CREATE INDEX IF NOT EXISTS parcels_county_terms_idx ON core.parcels USING gin (core.county_terms(county_id, search_terms));
-- County-scoped pages in id order (the tiers of a common word's search) walk one county's ids, not the state's.
CREATE INDEX IF NOT EXISTS parcels_county_id_idx ON core.parcels (county_id, id);

-- Down Migration
DROP INDEX core.parcels_county_id_idx;
DROP INDEX core.parcels_county_terms_idx;
DROP FUNCTION core.county_terms(smallint, text[]);
