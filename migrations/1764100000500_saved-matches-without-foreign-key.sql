-- Up Migration
-- saved.matches without a foreign key to saved.searches: a foreign key is checked by one query for each row inserted,
-- and an import inserts a row for every (search, record) pair it matches. A search's matches still go with it: the
-- statement trigger below deletes them (saved.delete_matches, sql/saved/manage.sql), and it takes the lock under
-- which an import writes matches (saved.match_resource), so an import never leaves matches of a deleted search.
ALTER TABLE saved.matches DROP CONSTRAINT matches_search_id_fkey;

-- Placeholder: sql/saved/manage.sql replaces its body (a trigger needs its function to exist).
CREATE FUNCTION saved.delete_matches() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER saved_matches_delete AFTER DELETE ON saved.searches
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION saved.delete_matches();

-- Down Migration
DROP TRIGGER saved_matches_delete ON saved.searches;
DROP FUNCTION saved.delete_matches();
DELETE FROM saved.matches m WHERE NOT EXISTS (SELECT 1 FROM saved.searches s WHERE s.id = m.search_id);
ALTER TABLE saved.matches ADD CONSTRAINT matches_search_id_fkey
  FOREIGN KEY (search_id) REFERENCES saved.searches(id) ON DELETE CASCADE;
