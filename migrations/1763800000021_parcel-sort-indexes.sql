-- Up Migration
-- Every parcel sort reads its page from an index, whatever the filters: one partial index per sort key over the
-- parcels that have a value, (value, id), read forward for _asc and backward for _desc (ties by id in the sort's
-- direction); parcels without a value follow by id, read only once the valued ones run out. The county + use-code
-- index gets the same column order so a county's homes sorted by value read in order both ways.
DROP INDEX core.parcels_just_value_idx;
DROP INDEX core.parcels_last_sale_idx;
DROP INDEX core.parcels_county_use_value_idx;
CREATE INDEX parcels_just_value_idx ON core.parcels (just_value, id) WHERE just_value IS NOT NULL;
CREATE INDEX parcels_assessed_value_idx ON core.parcels (assessed_value, id) WHERE assessed_value IS NOT NULL;
CREATE INDEX parcels_taxable_value_idx ON core.parcels (taxable_value, id) WHERE taxable_value IS NOT NULL;
CREATE INDEX parcels_last_sale_date_idx ON core.parcels (last_sale_date, id) WHERE last_sale_date IS NOT NULL;
CREATE INDEX parcels_last_sale_price_idx ON core.parcels (last_sale_price, id) WHERE last_sale_price IS NOT NULL;
CREATE INDEX parcels_year_built_idx ON core.parcels (year_built, id) WHERE year_built IS NOT NULL;
CREATE INDEX parcels_county_use_value_idx ON core.parcels (county_id, dor_use_code, just_value, id);

-- Down Migration
DROP INDEX core.parcels_county_use_value_idx;
DROP INDEX core.parcels_year_built_idx;
DROP INDEX core.parcels_last_sale_price_idx;
DROP INDEX core.parcels_last_sale_date_idx;
DROP INDEX core.parcels_taxable_value_idx;
DROP INDEX core.parcels_assessed_value_idx;
DROP INDEX core.parcels_just_value_idx;
CREATE INDEX parcels_county_use_value_idx ON core.parcels (county_id, dor_use_code, just_value DESC, id);
CREATE INDEX parcels_last_sale_idx ON core.parcels (last_sale_date DESC, id);
CREATE INDEX parcels_just_value_idx ON core.parcels (just_value DESC, id);
