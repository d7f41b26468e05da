-- Up Migration
-- The first tier of a relevance page, the parcels whose owner or address is the query's text, read in id order and
-- only as far as the page: btree indexes on (hashtext of the text, id) replace the hash indexes, which return a
-- text's every parcel unordered (SFR FLORIDA BORROWER LLC: 16,640 heap rows, 43-73 ms, for a page of 25). The hash of
-- the text keeps an entry 12 bytes whatever the text's length (a btree on the text itself has an entry size limit).
-- A query compares the hashes and then the texts.
CREATE INDEX parcels_owner_text_idx ON core.parcels (hashtext(owner_search), id);
CREATE INDEX parcels_address_text_idx ON core.parcels (hashtext(address_search), id);
DROP INDEX core.parcels_owner_search_idx;
DROP INDEX core.parcels_address_search_idx;

-- Down Migration
CREATE INDEX parcels_owner_search_idx ON core.parcels USING hash (owner_search);
CREATE INDEX parcels_address_search_idx ON core.parcels USING hash (address_search);
DROP INDEX core.parcels_address_text_idx;
DROP INDEX core.parcels_owner_text_idx;
