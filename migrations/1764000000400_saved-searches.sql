-- Up Migration
-- Saved searches (docs/saved-searches.md): a client's parcel or delinquency searches, stored with the parameters of
-- their GET endpoint, and the records that newly entered each one's result in an import (each pair once). The
-- functions live in sql/saved/ (re-applied after every migration); the trigger functions are created here as
-- placeholders only because a trigger needs its function to exist.
CREATE SCHEMA saved;
COMMENT ON SCHEMA saved IS
  'Saved searches and their matches; written by the import merges (matching) and, for management, only through '
  'SECURITY DEFINER functions that api_webhooks executes.';

CREATE TABLE saved.searches (
  id                    uuid PRIMARY KEY,
  client_id             uuid NOT NULL REFERENCES accounts.clients(id) ON DELETE CASCADE,
  name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  resource              text NOT NULL CHECK (resource IN ('parcels', 'tax_delinquencies')),
  params                jsonb NOT NULL,   -- the query parameters as the client gave them (shown back)
  args                  jsonb NOT NULL,   -- the filter builder's named arguments made of them ({"p_county": [...], ...})
  county_ids            smallint[],       -- the counties the filter names (NULL: every county): the matching's prefilter
  webhook_endpoint_ids  uuid[] NOT NULL DEFAULT '{}',
  email                 text CHECK (email IN ('daily', 'weekly')),
  unsubscribe_token     text NOT NULL UNIQUE,  -- random, in the digest's one-click unsubscribe link
  digested_match_id     bigint NOT NULL DEFAULT 0,  -- the last match a digest has included
  digest_sent_at        timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX searches_client_idx ON saved.searches (client_id, created_at);
CREATE INDEX searches_counties_idx ON saved.searches USING gin (county_ids);
CREATE INDEX searches_statewide_idx ON saved.searches (resource) WHERE county_ids IS NULL;
COMMENT ON TABLE saved.searches IS
  'A client''s saved searches: resource, parameters (params as given, args for the filter builder), the counties '
  'that prefilter matching, and where matches go (webhook endpoints, a daily or weekly email digest).';

CREATE TABLE saved.matches (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  search_id   uuid NOT NULL REFERENCES saved.searches(id) ON DELETE CASCADE,
  record_id   bigint NOT NULL,     -- core.parcels.id or core.tax_delinquencies.id
  load_id     bigint NOT NULL,     -- the import that made it a match
  county_id   smallint NOT NULL,
  matched_at  timestamptz NOT NULL DEFAULT now(),
  hit         json NOT NULL,       -- the record as the search endpoint returns it (ParcelHit or DelinquencyHit), then
  UNIQUE (search_id, record_id)
);
CREATE INDEX matches_search_idx ON saved.matches (search_id, id);
CREATE INDEX matches_load_idx ON saved.matches (load_id, search_id, id);
COMMENT ON TABLE saved.matches IS
  'Each record that newly entered a saved search''s result in an import, once per (search, record), with the record '
  'as it was then; ids ascend in the order matches were committed per search (the pull cursor).';

-- Placeholders (see the header): sql/saved/capture.sql replaces their bodies.
CREATE FUNCTION saved.capture_delinquencies() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE FUNCTION saved.capture_parcels() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;

CREATE TRIGGER saved_match_ins AFTER INSERT ON core.tax_delinquencies
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION saved.capture_delinquencies();
CREATE TRIGGER saved_match_upd AFTER UPDATE ON core.tax_delinquencies
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION saved.capture_delinquencies();
CREATE TRIGGER saved_match_ins AFTER INSERT ON core.parcels
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION saved.capture_parcels();
CREATE TRIGGER saved_match_upd AFTER UPDATE ON core.parcels
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION saved.capture_parcels();

-- saved_search.matched events go to the endpoints the search names, fixed when the event is made.
ALTER TABLE webhooks.events ADD COLUMN endpoint_ids uuid[];
COMMENT ON COLUMN webhooks.events.endpoint_ids IS
  'saved_search.matched: the endpoints it is sent to (the search''s, when it was made); NULL for subscribed types.';

-- Down Migration
ALTER TABLE webhooks.events DROP COLUMN endpoint_ids;
DROP TRIGGER saved_match_upd ON core.parcels;
DROP TRIGGER saved_match_ins ON core.parcels;
DROP TRIGGER saved_match_upd ON core.tax_delinquencies;
DROP TRIGGER saved_match_ins ON core.tax_delinquencies;
DROP SCHEMA saved CASCADE;
