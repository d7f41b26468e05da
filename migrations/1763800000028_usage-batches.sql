-- Up Migration
-- Usage is flushed as counts, not as a row per charged request. meter.usage_daily and the ledger already hold every
-- figure that is read (balances, /account/usage, the operator's view, overage invoice lines); a row per request
-- (260 million a day at 3,000 requests a second) cost the database more than the request's own query. A flush stays
-- idempotent through the batches it records: a Redis stream entry (one process's settlements of one event-loop
-- turn) or a fail-open batch flushed before, whose acknowledgement was lost, is skipped when it comes again.
DROP VIEW IF EXISTS meter.overage_invoice_lines;
DROP FUNCTION IF EXISTS meter.flush_usage(jsonb); -- sql/ creates its new form (its parameter is renamed)
DROP TABLE meter.usage_events;
CREATE TABLE meter.usage_batches (
  batch_id    text PRIMARY KEY,
  flushed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_batches_flushed_at_idx ON meter.usage_batches (flushed_at);

-- Down Migration
DROP TABLE meter.usage_batches;
CREATE TABLE meter.usage_events (
  request_id  text PRIMARY KEY,
  client_id   uuid NOT NULL,
  key_id      uuid NOT NULL,
  mode        text NOT NULL CHECK (mode IN ('live', 'test')),
  surface     text NOT NULL CHECK (surface IN ('rest', 'mcp')),
  bucket      text NOT NULL CHECK (bucket IN ('monthly', 'pack', 'credits', 'overage', 'test', 'unmetered')),
  pack_id     uuid,
  period      text NOT NULL,
  used_at     timestamptz NOT NULL
);
CREATE INDEX usage_events_overage_idx ON meter.usage_events (client_id, used_at) WHERE bucket = 'overage';
