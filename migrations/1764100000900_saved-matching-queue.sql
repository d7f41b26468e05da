-- Up Migration
-- Saved searches are matched after the import commits (docs/saved-searches.md#matching): the import's transaction
-- queues what its merges noted, and a webhook worker matches the queued imports one at a time, oldest first
-- (saved.match_next), in a transaction of its own. What the import noted is committed with it, so a crash of the
-- worker, or of the import before its commit, loses no match and makes none twice.
CREATE TABLE saved.queued_loads (
  load_id    bigint PRIMARY KEY,  -- core.load_history.id
  queued_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE saved.queued_loads IS
  'Imports whose noted records have not been matched against the saved searches yet (saved.match_next takes the '
  'oldest).';

-- The keys each merge noted (pg_temp.saved_keys_<resource> of sql/saved/capture.sql), per queued import.
CREATE TABLE saved.queued_keys (
  load_id       bigint NOT NULL,
  resource      text NOT NULL CHECK (resource IN ('parcels', 'tax_delinquencies')),
  id            bigint NOT NULL,   -- the record's id
  county_id     smallint,
  tax_year      integer,
  status        text,
  amount        numeric,
  existed       boolean,
  old_tax_year  integer,
  old_status    text,
  old_amount    numeric,
  snapshot      webhooks.delinquency_snapshot
);
-- rows arrive in load order and leave a load at a time: a BRIN index finds a load's rows at almost no cost to the
-- import that writes them (a record is noted once per import by construction: the capture's own primary key)
CREATE INDEX queued_keys_load_idx ON saved.queued_keys USING brin (load_id);
COMMENT ON TABLE saved.queued_keys IS
  'The matching keys of each record a queued import inserted or changed, now and before the import (and a '
  'delinquency''s snapshot now), as its merges noted them.';

-- Versions from before the import, whole, where a search's filter is more than the keys (pg_temp.saved_old_<resource>).
CREATE TABLE saved.queued_old (
  load_id   bigint NOT NULL,
  resource  text NOT NULL CHECK (resource IN ('parcels', 'tax_delinquencies')),
  id        bigint NOT NULL,
  record    text NOT NULL        -- the row of core.parcels or core.tax_delinquencies in its text form (row::text)
);
CREATE INDEX queued_old_load_idx ON saved.queued_old USING brin (load_id);
COMMENT ON TABLE saved.queued_old IS
  'A queued import''s records as they were before it, whole, for the searches whose filter is more than the keys.';

-- Down Migration
DROP TABLE saved.queued_old;
DROP TABLE saved.queued_keys;
DROP TABLE saved.queued_loads;
