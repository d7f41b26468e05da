-- Up Migration
-- Usage rows meter.flush_usage refuses (a row the metering never writes: a count that is not positive, a batch not
-- named as the metering names them, a key that is not the client's, ...) are kept here rather than failing the
-- flush: a refused row must neither be recorded nor block the rows and batches behind it.
CREATE TABLE meter.refused_usage (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  batch_id    text,
  usage       jsonb NOT NULL,
  reason      text NOT NULL,
  refused_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE meter.refused_usage IS
  'Usage rows meter.flush_usage refused, with the reason: never recorded, kept for the operator.';

-- Down Migration
DROP TABLE meter.refused_usage;
