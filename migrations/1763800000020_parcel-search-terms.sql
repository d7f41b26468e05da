-- Up Migration
-- Parcel text search by vocabulary (statewide scale): each parcel stores the distinct words of its normalized owner
-- name and site address (search_terms, GIN indexed); core.parcel_terms is the vocabulary of those words with the
-- number of parcels holding each, kept exact by statement-level triggers. A query word is matched against the small
-- vocabulary (exactly, by edit distance, by prefix), then parcels are fetched by exact terms from the GIN index.
-- This replaces trigram word similarity over whole owner / address strings, whose candidate sets grow with the
-- table for common names (bench/results/access-paths.md).
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;

-- Search text normalization, one regular expression and literal word swaps (4.7 us a value instead of 22 with the
-- thirteen regular expressions of the first version; identical output on every owner and address tested, and it
-- drops runs of unit designators that the first version kept): upper case, runs of anything but letters, digits and
-- & to one space, street suffixes to their USPS abbreviation, unit designators dropped.
CREATE OR REPLACE FUNCTION core.normalize_text(p_text text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN btrim(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(' ' || regexp_replace(upper(p_text), '[^A-Z0-9&]+', ' ', 'g') || ' ', ' DRIVE ', ' DR '), ' STREET ', ' ST '), ' AVENUE ', ' AVE '), ' BOULEVARD ', ' BLVD '), ' ROAD ', ' RD '), ' LANE ', ' LN '), ' COURT ', ' CT '), ' TERRACE ', ' TER '), ' PLACE ', ' PL '), ' HIGHWAY ', ' HWY '), ' UNIT ', ' '), ' APT ', ' '), ' APARTMENT ', ' '), ' STE ', ' '), ' SUITE ', ' '));
COMMENT ON FUNCTION core.normalize_text(text) IS
  'Search form of owner names and addresses: upper case, punctuation to spaces, street suffixes abbreviated (DRIVE -> DR), unit designators dropped, whitespace collapsed.';
-- Stored search columns computed by the first version are recomputed where the result differs.
UPDATE core.parcels SET owner_name = owner_name
 WHERE owner_search IS DISTINCT FROM core.normalize_text(owner_name)
    OR address_search IS DISTINCT FROM core.normalize_text(site_address_full);
UPDATE core.tax_delinquencies SET owner_name = owner_name
 WHERE owner_search IS DISTINCT FROM core.normalize_text(owner_name);


CREATE FUNCTION core.search_terms(p_owner text, p_address text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_remove(string_to_array(coalesce(core.normalize_text(p_owner), '') || ' '
                                      || coalesce(core.normalize_text(p_address), ''), ' '), '');
COMMENT ON FUNCTION core.search_terms(text, text) IS
  'The words of a parcel''s normalized owner name and site address (core.normalize_text), in order, a word that '
  'appears in both kept twice: what parcel text search matches query words against.';

ALTER TABLE core.parcels
  ADD COLUMN search_terms text[] NOT NULL GENERATED ALWAYS AS (core.search_terms(owner_name, site_address_full)) STORED;
CREATE INDEX parcels_search_terms_idx ON core.parcels USING gin (search_terms);
-- Equality only, for the first tier of large relevance results (an owner or address equal to the query): hash
-- indexes are a fraction of a btree's size on these long texts.
CREATE INDEX parcels_owner_search_idx ON core.parcels USING hash (owner_search);
CREATE INDEX parcels_address_search_idx ON core.parcels USING hash (address_search);
DROP INDEX core.parcels_owner_trgm_idx;
DROP INDEX core.parcels_address_trgm_idx;

CREATE TABLE core.parcel_terms (
  term     text PRIMARY KEY,
  parcels  integer NOT NULL CHECK (parcels >= 0)
);
CREATE INDEX parcel_terms_trgm_idx ON core.parcel_terms USING gin (term gin_trgm_ops);
CREATE INDEX parcel_terms_unused_idx ON core.parcel_terms (term) WHERE parcels = 0;
COMMENT ON TABLE core.parcel_terms IS
  'Vocabulary of parcel search: every word of any parcel''s search_terms with the number of parcels holding it, '
  'maintained by triggers on core.parcels.';

CREATE FUNCTION core.parcel_terms_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  -- One aggregate per statement over the transition tables; an update that leaves the words alone (a geometry or
  -- value import) changes nothing here.
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM core.parcel_terms;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO core.parcel_terms AS v (term, parcels)
    SELECT t, count(*) FROM new_rows, LATERAL (SELECT DISTINCT unnest(search_terms)) AS u(t) GROUP BY t
    ON CONFLICT (term) DO UPDATE SET parcels = v.parcels + excluded.parcels;
    RETURN NULL;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE core.parcel_terms v SET parcels = v.parcels - d.n
      FROM (SELECT t, count(*) AS n FROM old_rows, LATERAL (SELECT DISTINCT unnest(search_terms)) AS u(t) GROUP BY t) d
     WHERE v.term = d.t;
  ELSE
    WITH delta AS (
      SELECT t, sum(d)::integer AS d FROM (
        SELECT t, 1 AS d FROM old_rows o JOIN new_rows n USING (id), LATERAL (SELECT DISTINCT unnest(n.search_terms)) AS u(t)
         WHERE o.search_terms IS DISTINCT FROM n.search_terms
        UNION ALL
        SELECT t, -1 FROM old_rows o JOIN new_rows n USING (id), LATERAL (SELECT DISTINCT unnest(o.search_terms)) AS u(t)
         WHERE o.search_terms IS DISTINCT FROM n.search_terms) x
      GROUP BY t HAVING sum(d) <> 0
    ), gained AS (
      INSERT INTO core.parcel_terms AS v (term, parcels)
      SELECT t, d FROM delta WHERE d > 0
      ON CONFLICT (term) DO UPDATE SET parcels = v.parcels + excluded.parcels
    )
    UPDATE core.parcel_terms v SET parcels = v.parcels + delta.d FROM delta WHERE delta.d < 0 AND v.term = delta.t;
  END IF;
  DELETE FROM core.parcel_terms WHERE parcels = 0;  -- a small partial index finds them
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.parcel_terms_maintain() IS
  'Trigger function: applies a statement''s inserted / deleted / re-worded parcels to core.parcel_terms.';

CREATE TRIGGER parcel_terms_ins AFTER INSERT ON core.parcels
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_terms_maintain();
CREATE TRIGGER parcel_terms_upd AFTER UPDATE ON core.parcels
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_terms_maintain();
CREATE TRIGGER parcel_terms_del AFTER DELETE ON core.parcels
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_terms_maintain();
CREATE TRIGGER parcel_terms_truncate AFTER TRUNCATE ON core.parcels
  FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_terms_maintain();

INSERT INTO core.parcel_terms (term, parcels)
SELECT t, count(*) FROM core.parcels, LATERAL (SELECT DISTINCT unnest(search_terms)) AS u(t) GROUP BY t;

-- Down Migration
DROP TRIGGER parcel_terms_truncate ON core.parcels;
DROP TRIGGER parcel_terms_del ON core.parcels;
DROP TRIGGER parcel_terms_upd ON core.parcels;
DROP TRIGGER parcel_terms_ins ON core.parcels;
DROP FUNCTION core.parcel_terms_maintain();
DROP TABLE core.parcel_terms;
CREATE INDEX parcels_owner_trgm_idx ON core.parcels USING gin (owner_search gin_trgm_ops);
CREATE INDEX parcels_address_trgm_idx ON core.parcels USING gin (address_search gin_trgm_ops);
DROP INDEX core.parcels_address_search_idx;
DROP INDEX core.parcels_owner_search_idx;
DROP INDEX core.parcels_search_terms_idx;
ALTER TABLE core.parcels DROP COLUMN search_terms;
DROP FUNCTION core.search_terms(text, text);
CREATE OR REPLACE FUNCTION core.normalize_text(p_text text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN btrim(regexp_replace(
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(
      ' ' || regexp_replace(upper(p_text), '[^A-Z0-9&]+', ' ', 'g') || ' ',
      ' (UNIT|APT|APARTMENT|STE|SUITE) ', ' ', 'g'),
      ' DRIVE ', ' DR ', 'g'), ' STREET ', ' ST ', 'g'), ' AVENUE ', ' AVE ', 'g'), ' BOULEVARD ', ' BLVD ', 'g'),
      ' ROAD ', ' RD ', 'g'), ' LANE ', ' LN ', 'g'), ' COURT ', ' CT ', 'g'), ' TERRACE ', ' TER ', 'g'),
      ' PLACE ', ' PL ', 'g'), ' HIGHWAY ', ' HWY ', 'g'),
    '\s+', ' ', 'g'));
