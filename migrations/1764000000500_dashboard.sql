-- Up Migration
-- The account dashboard: names for keys, the request log (the last 1,000 requests of each client, 30 days at most),
-- requests per endpoint and key per UTC day, and the low-credit email's threshold. The request log and the endpoint
-- counts are written by the API processes in batches (src/request-log/), through meter.record_requests as api_meter.

-- A name the customer gives a key ("production", "staging laptop"); null for a key made without one.
ALTER TABLE accounts.api_keys
  ADD COLUMN name text CHECK (name IS NULL OR (length(name) BETWEEN 1 AND 60 AND name !~ '[[:cntrl:]]'));

-- One row per answered request of a known key. No foreign keys: a row is written once, in a batch, and read only by
-- its client; the trimming in meter.record_requests keeps at most 1,000 rows a client, none older than 30 days.
CREATE TABLE meter.request_log (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id    uuid NOT NULL,
  key_id       uuid NOT NULL,
  at           timestamptz NOT NULL,
  method       text NOT NULL,
  path         text NOT NULL,
  endpoint     text,
  status       smallint NOT NULL,
  error_code   text,
  duration_ms  real NOT NULL
);
CREATE INDEX request_log_client_idx ON meter.request_log (client_id, at DESC, id DESC);
CREATE INDEX request_log_at_idx ON meter.request_log (at);
COMMENT ON TABLE meter.request_log IS
  'The last 1,000 requests of each client (30 days at most): when, which key, method, path (query secrets removed), the route matched, status, error code and duration. Written in batches by the API processes.';

-- Requests per client, UTC day, key and endpoint (the route matched, e.g. "GET /v1/parcels/:id"): those answered 2xx
-- (charged) and the others, so that usage per endpoint outlives the request log.
CREATE TABLE meter.endpoint_usage_daily (
  client_id  uuid NOT NULL,
  day        date NOT NULL,
  key_id     uuid NOT NULL,
  endpoint   text NOT NULL,
  ok         bigint NOT NULL DEFAULT 0,
  failed     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (client_id, day, key_id, endpoint)
);
COMMENT ON TABLE meter.endpoint_usage_daily IS
  'Requests per client, UTC day, key and endpoint: ok (answered 2xx, charged) and failed (any other status).';

-- The customer's threshold for the low-credit email, and the billing period (YYYY-MM) it was last sent in: at most
-- one email a period.
CREATE TABLE accounts.credit_alerts (
  client_id         uuid PRIMARY KEY REFERENCES accounts.clients(id),
  threshold         bigint NOT NULL CHECK (threshold BETWEEN 1 AND 1000000000),
  last_sent_period  text,
  last_sent_at      timestamptz
);
COMMENT ON TABLE accounts.credit_alerts IS
  'Low-credit email: sent when the credits left fall below threshold, at most once per billing period (last_sent_period).';

-- Down Migration
DROP TABLE accounts.credit_alerts;
DROP TABLE meter.endpoint_usage_daily;
DROP TABLE meter.request_log;
ALTER TABLE accounts.api_keys DROP COLUMN name;
