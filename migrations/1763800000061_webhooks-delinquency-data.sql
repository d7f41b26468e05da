-- Up Migration
-- A delinquency event keeps the record as it was, as a typed row (the table's own values: numbers, dates), and is
-- written out as a DelinquencyHit (JSON) only when it is sent: the import, which writes up to one event per record of a
-- list, pays for the copy of the row and not for its JSON (bench/results/webhooks.md). Other events keep their data as
-- JSON in `data`.
CREATE TYPE webhooks.delinquency_snapshot AS (
  id                        bigint,
  parcel_id                 text,
  tax_year                  smallint,
  status                    text,
  delinquent_amount         numeric(14, 2),
  total_due                 numeric(14, 2),
  certificate_number        text,
  certificate_sale_date     date,
  owner_name                text,
  site_address_full         text,
  source_vendor             text,
  face_amount               numeric(14, 2),
  certificate_holder        text,
  certificate_interest_rate numeric(5, 2),
  bid_rate                  numeric(5, 2));
COMMENT ON TYPE webhooks.delinquency_snapshot IS
  'A core.tax_delinquencies record as a tax_delinquency.* event saw it; webhooks.delinquency_json writes it as a DelinquencyHit.';

ALTER TABLE webhooks.events ALTER COLUMN data DROP NOT NULL;
ALTER TABLE webhooks.events ADD COLUMN delinquency webhooks.delinquency_snapshot;
ALTER TABLE webhooks.events ADD CONSTRAINT events_data_check CHECK ((data IS NULL) <> (delinquency IS NULL));
COMMENT ON COLUMN webhooks.events.delinquency IS
  'tax_delinquency.* events: the record (data is NULL); webhooks.event_data gives the JSON sent.';

-- Down Migration
ALTER TABLE webhooks.events DROP CONSTRAINT events_data_check;
ALTER TABLE webhooks.events DROP COLUMN delinquency;
DELETE FROM webhooks.events WHERE data IS NULL;
ALTER TABLE webhooks.events ALTER COLUMN data SET NOT NULL;
-- CASCADE: the repeatable functions of sql/webhooks that use it (re-applied after every migration)
DROP TYPE webhooks.delinquency_snapshot CASCADE;
