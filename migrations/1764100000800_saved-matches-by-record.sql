-- Up Migration
-- Saved-search matches stored by record (docs/saved-searches.md#matching): an import writes one row per record that
-- entered some search, with the ids of the searches it entered, instead of one row per (search, record) pair; and
-- one row per (search, import) with the ids of that search's match rows, which the pull cursor pages through. A
-- delinquency is kept as a typed row (its JSON is written when read, as webhook events keep theirs), a parcel as its
-- JSON. saved_search.matched events hold the ids of their matches; their records are written when they are sent.
CREATE TABLE saved.match_records (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- the match's cursor, for every search it entered
  resource    text NOT NULL CHECK (resource IN ('parcels', 'tax_delinquencies')),
  record_id   bigint NOT NULL,     -- core.parcels.id or core.tax_delinquencies.id
  load_id     bigint NOT NULL,     -- the import that made it a match
  county_id   smallint NOT NULL,
  matched_at  timestamptz NOT NULL DEFAULT now(),
  search_ids  uuid[] NOT NULL,     -- the searches the record entered in that import (none twice for one record)
  delinquency webhooks.delinquency_snapshot,  -- a delinquency as it was when it matched (else NULL)
  hit         json,                -- a parcel's ParcelHit as it was when it matched (delinquency is NULL)
  CHECK ((hit IS NULL) <> (delinquency IS NULL))
);
CREATE INDEX match_records_record_idx ON saved.match_records (record_id);
COMMENT ON TABLE saved.match_records IS
  'Saved-search matches, one row per record an import brought into some searches'' results, with those searches; '
  'ids are handed out in commit order (the pull cursor). saved.matches shows them one row per (search, record).';

CREATE TABLE saved.search_matches (
  search_id   uuid NOT NULL,
  last_id     bigint NOT NULL,     -- the largest of match_ids (the import's ids follow every earlier import's)
  load_id     bigint NOT NULL,
  matched_at  timestamptz NOT NULL DEFAULT now(),
  match_ids   bigint[] NOT NULL,   -- saved.match_records ids, ascending
  PRIMARY KEY (search_id, last_id)
);
CREATE INDEX search_matches_load_idx ON saved.search_matches (load_id);
COMMENT ON TABLE saved.search_matches IS
  'Each saved search''s matches of one import: the saved.match_records ids, ascending; a search''s rows in last_id '
  'order list its matches in cursor order.';

-- The matches recorded so far, each pair its own row with its own id (the cursors clients hold stay valid).
INSERT INTO saved.match_records (id, resource, record_id, load_id, county_id, matched_at, search_ids, hit)
OVERRIDING SYSTEM VALUE
SELECT m.id, s.resource, m.record_id, m.load_id, m.county_id, m.matched_at, ARRAY[m.search_id], m.hit
  FROM saved.matches m JOIN saved.searches s ON s.id = m.search_id;
INSERT INTO saved.search_matches (search_id, last_id, load_id, matched_at, match_ids)
SELECT m.search_id, max(m.id), m.load_id, max(m.matched_at), array_agg(m.id ORDER BY m.id)
  FROM saved.matches m JOIN saved.searches s ON s.id = m.search_id
 GROUP BY m.search_id, m.load_id;
SELECT setval(pg_get_serial_sequence('saved.match_records', 'id'),
              greatest((SELECT max(id) FROM saved.matches), 1), (SELECT max(id) FROM saved.matches) IS NOT NULL);
-- sql/saved/storage.sql makes saved.matches again, as a view of the two tables
DROP TABLE saved.matches;

ALTER TABLE webhooks.events ADD COLUMN match_ids bigint[];
COMMENT ON COLUMN webhooks.events.match_ids IS
  'saved_search.matched: the saved.match_records ids of its matches (data holds the search); webhooks.event_data '
  'writes the records when it is sent.';

-- Down Migration
-- saved_search.matched events hold their records again
UPDATE webhooks.events e
   SET data = json_build_object(
         'saved_search_id', e.data -> 'saved_search_id', 'name', e.data -> 'name', 'resource', e.data -> 'resource',
         'matches', coalesce((SELECT json_agg(json_build_object('cursor', r.id::text, 'record',
                                   coalesce(r.hit, webhooks.delinquency_json(r.delinquency,
                                                     (SELECT c.slug FROM core.counties c WHERE c.id = r.county_id))))
                                   ORDER BY r.id)
                                FROM saved.match_records r WHERE r.id = ANY (e.match_ids)), '[]'))
 WHERE e.match_ids IS NOT NULL;
ALTER TABLE webhooks.events DROP COLUMN match_ids;
DROP VIEW IF EXISTS saved.matches;
CREATE TABLE saved.matches (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  search_id   uuid NOT NULL,
  record_id   bigint NOT NULL,
  load_id     bigint NOT NULL,
  county_id   smallint NOT NULL,
  matched_at  timestamptz NOT NULL DEFAULT now(),
  hit         json NOT NULL,
  UNIQUE (search_id, record_id)
);
CREATE INDEX matches_search_idx ON saved.matches (search_id, id);
CREATE INDEX matches_load_idx ON saved.matches (load_id, search_id, id);
-- each pair gets an id of its own, in the order of its record's id and above every id handed out so far, so a cursor
-- or digest position held then repeats matches and never skips one
SELECT setval(pg_get_serial_sequence('saved.matches', 'id'),
              (SELECT coalesce(max(r.id), 0) + 1 FROM saved.match_records r), false);
INSERT INTO saved.matches (search_id, record_id, load_id, county_id, matched_at, hit)
SELECT s.search_id, r.record_id, r.load_id, r.county_id, r.matched_at,
       coalesce(r.hit, webhooks.delinquency_json(r.delinquency, (SELECT c.slug FROM core.counties c WHERE c.id = r.county_id)))
  FROM saved.search_matches s CROSS JOIN unnest(s.match_ids) AS u(id) JOIN saved.match_records r ON r.id = u.id
 ORDER BY r.id, s.search_id;
DROP TABLE saved.search_matches;
DROP FUNCTION IF EXISTS saved.match_hit(saved.match_records);  -- (sql/saved/storage.sql: it takes the row type)
DROP TABLE saved.match_records;
