-- Up Migration
-- Webhooks (docs/webhooks.md): endpoints registered by clients, the events the import merges write (a transactional
-- outbox: the events are rows written in the same transaction as the data they describe), one delivery per event and
-- endpoint, and every attempt. The functions live in sql/webhooks/ (re-applied after every migration); the trigger
-- functions are created here as placeholders only because a trigger needs its function to exist.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'api_webhooks') THEN
    CREATE ROLE api_webhooks LOGIN NOINHERIT;
  END IF;
END $$;

CREATE SCHEMA webhooks;
COMMENT ON SCHEMA webhooks IS
  'Webhook endpoints, events, deliveries and attempts; written only through SECURITY DEFINER functions (api_webhooks) '
  'and the import merges.';

CREATE TABLE webhooks.endpoints (
  id                  uuid PRIMARY KEY,
  client_id           uuid NOT NULL REFERENCES accounts.clients(id) ON DELETE CASCADE,
  url                 text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  description         text CHECK (length(description) <= 500),
  events              text[] NOT NULL CHECK (cardinality(events) >= 1),
  counties            smallint[] CHECK (cardinality(counties) >= 1),  -- NULL: every county
  status              text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  disabled_reason     text,
  -- The signing secret, AES-256-GCM under the service's WEBHOOK_SECRET_KEY (never in the database in clear), and
  -- the previous one while it still signs alongside after a rotation.
  secret_box          bytea NOT NULL,
  old_secret_box      bytea,
  old_secret_until    timestamptz,
  -- Set by the first failed attempt after a success, cleared by a success: the endpoint is disabled once it is
  -- older than the configured span.
  failing_since       timestamptz,
  -- The one worker draining this endpoint's deliveries (its lease), so that they go out in order.
  lease_owner         text,
  lease_until         timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  deleted_at          timestamptz,
  CHECK ((old_secret_box IS NULL) = (old_secret_until IS NULL))
);
CREATE INDEX endpoints_client_idx ON webhooks.endpoints (client_id, created_at) WHERE deleted_at IS NULL;
COMMENT ON TABLE webhooks.endpoints IS
  'A client''s webhook endpoints: URL, subscribed event types and counties (NULL: all), status, the encrypted signing '
  'secret(s), the failure streak and the draining worker''s lease. Deleted endpoints keep a deleted_at until purged.';

CREATE TABLE webhooks.events (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type        text NOT NULL,
  county_id   smallint,
  load_id     bigint,            -- the import (core.load_history) that wrote it; NULL for webhook.test
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  data        json NOT NULL,     -- the object the REST API returns for it (DelinquencyHit, ParcelHit, SaleHit ...)
  previous    json               -- the old values of what changed (updates only)
);
CREATE INDEX events_load_idx ON webhooks.events (load_id, id) WHERE load_id IS NOT NULL;
COMMENT ON TABLE webhooks.events IS
  'Events (the outbox): written by the import merges in the same transaction as the data, so a rolled-back import '
  'leaves none; written only while some enabled endpoint subscribes to the type and county.';

-- Imports whose events are not yet turned into deliveries; the fan-out works through each in id order.
CREATE TABLE webhooks.outbox (
  load_id        bigint PRIMARY KEY,
  next_event_id  bigint NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE webhooks.outbox IS
  'Imports with events not yet fanned out to endpoints, and how far the fan-out got (the next event id).';

CREATE TABLE webhooks.deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id      uuid NOT NULL REFERENCES webhooks.endpoints(id) ON DELETE CASCADE,
  event_id         bigint NOT NULL REFERENCES webhooks.events(id) ON DELETE CASCADE,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,       -- pending: when it is due
  claimed_until    timestamptz,       -- a worker is sending it (until then)
  manual           boolean NOT NULL DEFAULT false,  -- one attempt asked for by the client; no automatic retries
  created_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  reason           text,              -- why it failed or was skipped
  UNIQUE (endpoint_id, event_id),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX deliveries_due_idx ON webhooks.deliveries (endpoint_id, event_id) WHERE status = 'pending';
CREATE INDEX deliveries_next_idx ON webhooks.deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_endpoint_idx ON webhooks.deliveries (endpoint_id, id);
CREATE INDEX deliveries_event_idx ON webhooks.deliveries (event_id);
CREATE INDEX deliveries_finished_idx ON webhooks.deliveries (finished_at) WHERE status <> 'pending';
COMMENT ON TABLE webhooks.deliveries IS
  'One event to one endpoint: pending (due at next_attempt_at), delivered, failed (retries exhausted) or skipped '
  '(the endpoint was disabled or deleted, or its client lost webhooks).';

CREATE TABLE webhooks.attempts (
  delivery_id   bigint NOT NULL REFERENCES webhooks.deliveries(id) ON DELETE CASCADE,
  attempt       integer NOT NULL,
  attempted_at  timestamptz NOT NULL,
  duration_ms   integer NOT NULL,
  status_code   integer,
  error         text,
  PRIMARY KEY (delivery_id, attempt)
);
COMMENT ON TABLE webhooks.attempts IS
  'Every attempt of a delivery: when, how long, the receiver''s status code or the error.';

-- Placeholders (see the header): sql/webhooks/capture.sql replaces their bodies.
CREATE FUNCTION webhooks.capture_delinquencies() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE FUNCTION webhooks.capture_sales() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE FUNCTION webhooks.capture_parcels() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;

-- Statement-level, over the transition tables the count triggers already make the executor keep: an import that
-- nobody subscribed to pays one function call per statement.
CREATE TRIGGER webhooks_capture_ins AFTER INSERT ON core.tax_delinquencies
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhooks.capture_delinquencies();
CREATE TRIGGER webhooks_capture_upd AFTER UPDATE ON core.tax_delinquencies
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhooks.capture_delinquencies();
CREATE TRIGGER webhooks_capture_del AFTER DELETE ON core.tax_delinquencies
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION webhooks.capture_delinquencies();
CREATE TRIGGER webhooks_capture_ins AFTER INSERT ON core.sales
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhooks.capture_sales();
CREATE TRIGGER webhooks_capture_upd AFTER UPDATE ON core.parcels
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhooks.capture_parcels();

-- The job queue of the delivery workers (graphile-worker, schema option `webhooks_jobs`), owned by api_webhooks so
-- that the workers install and upgrade it themselves without any right outside it. graphile-worker bootstraps with
-- CREATE SCHEMA, which needs CREATE on the database; the schema and its bookkeeping table are made here instead, in
-- the shape graphile-worker 0.17 makes them, and its own migrations then run inside the schema.
CREATE SCHEMA webhooks_jobs AUTHORIZATION api_webhooks;
CREATE TABLE webhooks_jobs.migrations (
  id        int PRIMARY KEY,
  ts        timestamptz DEFAULT now() NOT NULL,
  breaking  boolean NOT NULL DEFAULT false
);
ALTER TABLE webhooks_jobs.migrations OWNER TO api_webhooks;

-- Down Migration
DROP SCHEMA webhooks_jobs CASCADE;
DROP TRIGGER webhooks_capture_upd ON core.parcels;
DROP TRIGGER webhooks_capture_ins ON core.sales;
DROP TRIGGER webhooks_capture_del ON core.tax_delinquencies;
DROP TRIGGER webhooks_capture_upd ON core.tax_delinquencies;
DROP TRIGGER webhooks_capture_ins ON core.tax_delinquencies;
-- CASCADE: the repeatable functions of sql/webhooks live in this schema too. api_webhooks is cluster-wide and may
-- serve other databases of the cluster: it is kept.
DROP SCHEMA webhooks CASCADE;
