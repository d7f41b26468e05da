-- Up Migration
-- The first tier of a relevance page in counties (search.parcel_exact_text_first): the parcels of a county whose
-- owner or address is the query's text, in id order and only as far as the page. The (hashtext, id) indexes hold no
-- county, so an in-county search read every parcel of the state whose owner is the query's text before its county's
-- first ones (JOHNSON JOHN: every JOHNSON JOHN of the state, read at random from the heap); these read only the
-- county's.
CREATE INDEX parcels_county_owner_text_idx ON core.parcels (county_id, hashtext(owner_search), id);
CREATE INDEX parcels_county_address_text_idx ON core.parcels (county_id, hashtext(address_search), id);

-- Down Migration
DROP INDEX core.parcels_county_address_text_idx;
DROP INDEX core.parcels_county_owner_text_idx;
