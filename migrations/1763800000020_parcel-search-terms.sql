-- Up Migration
-- Parcel text search by vocabulary (statewide scale): each parcel stores the distinct words of its normalized owner
-- name and site address (search_terms, GIN indexed); core.parcel_terms is the vocabulary of those words with the
-- number of parcels holding each, kept exact by statement-level triggers. A query word is matched against the small
-- vocabulary (exactly, by edit distance, by prefix), then parcels are fetched by exact terms from the GIN index.
-- This replaces trigram word similarity over whole owner / address strings, whose candidate sets grow with the
-- table for common names (bench/results/access-paths.md).
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;

CREATE FUNCTION core.search_terms(p_owner text, p_address text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN ARRAY(
    SELECT DISTINCT w
      FROM unnest(string_to_array(coalesce(core.normalize_text(p_owner), '') || ' '
                                  || coalesce(core.normalize_text(p_address), ''), ' ')) AS w
     WHERE w <> ''
     ORDER BY w);
COMMENT ON FUNCTION core.search_terms(text, text) IS
  'The distinct words of a parcel''s normalized owner name and site address (core.normalize_text), sorted: what '
  'parcel text search matches query words against.';

ALTER TABLE core.parcels
  ADD COLUMN search_terms text[] NOT NULL GENERATED ALWAYS AS (core.search_terms(owner_name, site_address_full)) STORED;
CREATE INDEX parcels_search_terms_idx ON core.parcels USING gin (search_terms);
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
    SELECT t, count(*) FROM new_rows, unnest(search_terms) AS t GROUP BY t
    ON CONFLICT (term) DO UPDATE SET parcels = v.parcels + excluded.parcels;
    RETURN NULL;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE core.parcel_terms v SET parcels = v.parcels - d.n
      FROM (SELECT t, count(*) AS n FROM old_rows, unnest(search_terms) AS t GROUP BY t) d
     WHERE v.term = d.t;
  ELSE
    WITH delta AS (
      SELECT t, sum(d)::integer AS d FROM (
        SELECT t, 1 AS d FROM old_rows o JOIN new_rows n USING (id), unnest(n.search_terms) AS t
         WHERE o.search_terms IS DISTINCT FROM n.search_terms
        UNION ALL
        SELECT t, -1 FROM old_rows o JOIN new_rows n USING (id), unnest(o.search_terms) AS t
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
SELECT t, count(*) FROM core.parcels, unnest(search_terms) AS t GROUP BY t;

-- Down Migration
DROP TRIGGER parcel_terms_truncate ON core.parcels;
DROP TRIGGER parcel_terms_del ON core.parcels;
DROP TRIGGER parcel_terms_upd ON core.parcels;
DROP TRIGGER parcel_terms_ins ON core.parcels;
DROP FUNCTION core.parcel_terms_maintain();
DROP TABLE core.parcel_terms;
CREATE INDEX parcels_owner_trgm_idx ON core.parcels USING gin (owner_search gin_trgm_ops);
CREATE INDEX parcels_address_trgm_idx ON core.parcels USING gin (address_search gin_trgm_ops);
DROP INDEX core.parcels_search_terms_idx;
ALTER TABLE core.parcels DROP COLUMN search_terms;
DROP FUNCTION core.search_terms(text, text);
