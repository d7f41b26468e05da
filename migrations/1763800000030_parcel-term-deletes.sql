-- Up Migration
-- A deletion index of the search vocabulary (the "symmetric delete" method): for every term, the hashes of the
-- strings left after deleting up to two of its characters. Two strings are within two edits of each other only if
-- their deletion sets meet, so a query word's typos are the terms found in the GIN index by the word's own deletions
-- (12 keys for an 11-letter word and one edit, 67 for two), then checked with levenshtein. It replaces the ~840 key
-- probes of every one-edit variant and the trigram scan for two-edit terms (64 ms for VOUNDUSTEIN), and finds every
-- two-edit term, not only those sharing 30% of their trigrams. Hash collisions only add candidates, which the check
-- removes.
CREATE FUNCTION core.term_deletes(p_term text, p_depth integer) RETURNS integer[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN ARRAY(
    SELECT DISTINCT hashtext(s) FROM (
      SELECT p_term
      UNION ALL
      SELECT left(p_term, i) || substr(p_term, i + 2)
        FROM generate_series(0, length(p_term) - 1) AS i WHERE p_depth >= 1
      UNION ALL
      SELECT left(p_term, i) || substr(p_term, i + 2, j - i - 1) || substr(p_term, j + 2)
        FROM generate_series(0, length(p_term) - 2) AS i, generate_series(i + 1, length(p_term) - 1) AS j
       WHERE p_depth >= 2) AS d(s)
     WHERE s <> '');
COMMENT ON FUNCTION core.term_deletes(text, integer) IS
  'The hashes (hashtext) of a string and of every non-empty string left after deleting up to p_depth (0-2) of its '
  'characters. Two strings within p_depth edits share at least one. Example: SELECT core.term_deletes(''JON'', 1); -- 4 hashes: JON, ON, JN, JO';

CREATE TABLE core.parcel_term_deletes (
  term     text      PRIMARY KEY,
  deletes  integer[] NOT NULL
);
COMMENT ON TABLE core.parcel_term_deletes IS
  'The deletion index of core.parcel_terms: each term with core.term_deletes(term, 2). Maintained by triggers on '
  'core.parcel_terms (a row per term, written when a term appears and removed when it disappears; a change of a '
  'term''s parcel count does not touch it). Searched through its GIN index with intarray''s && operator.';

CREATE FUNCTION core.parcel_term_deletes_maintain() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO core.parcel_term_deletes (term, deletes)
    SELECT n.term, core.term_deletes(n.term, 2) FROM new_rows n ORDER BY n.term
    ON CONFLICT (term) DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM core.parcel_term_deletes d USING old_rows o WHERE d.term = o.term;
  ELSE
    DELETE FROM core.parcel_term_deletes;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION core.parcel_term_deletes_maintain() IS
  'Trigger function: adds the deletions of terms new to core.parcel_terms and drops those of terms it lost.';

CREATE TRIGGER parcel_term_deletes_ins AFTER INSERT ON core.parcel_terms
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_term_deletes_maintain();
CREATE TRIGGER parcel_term_deletes_del AFTER DELETE ON core.parcel_terms
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_term_deletes_maintain();
CREATE TRIGGER parcel_term_deletes_truncate AFTER TRUNCATE ON core.parcel_terms
  FOR EACH STATEMENT EXECUTE FUNCTION core.parcel_term_deletes_maintain();

INSERT INTO core.parcel_term_deletes (term, deletes) SELECT term, core.term_deletes(term, 2) FROM core.parcel_terms;
CREATE INDEX parcel_term_deletes_idx ON core.parcel_term_deletes USING gin (deletes gin__int_ops);
-- Each hash is held by few terms: with the default statistics (100 most common elements) the planner takes a word's
-- 67 hashes for 10% of the table and joins it to core.parcel_terms by a full scan; 2,000 keep the estimate near.
ALTER TABLE core.parcel_term_deletes ALTER COLUMN deletes SET STATISTICS 2000;
-- Typos no longer scan the vocabulary by trigram, and completions read a range of its primary key: the trigram index
-- only slowed every change of a term's parcel count.
DROP INDEX core.parcel_terms_trgm_idx;

-- Down Migration
CREATE INDEX parcel_terms_trgm_idx ON core.parcel_terms USING gin (term gin_trgm_ops);
DROP TRIGGER parcel_term_deletes_truncate ON core.parcel_terms;
DROP TRIGGER parcel_term_deletes_del ON core.parcel_terms;
DROP TRIGGER parcel_term_deletes_ins ON core.parcel_terms;
DROP FUNCTION core.parcel_term_deletes_maintain();
DROP TABLE core.parcel_term_deletes;
DROP FUNCTION core.term_deletes(text, integer) CASCADE;  -- with the api functions that use it (sql/api re-creates them)
