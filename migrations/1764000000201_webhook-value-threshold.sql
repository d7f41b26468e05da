-- Up Migration
-- parcel.value_changed (docs/history.md#webhooks): each endpoint chooses how far a new roll year must move a parcel's
-- just value, in percent, before it is told.
ALTER TABLE webhooks.endpoints
  ADD COLUMN value_change_threshold numeric(6, 2) NOT NULL DEFAULT 10
    CHECK (value_change_threshold BETWEEN 0 AND 1000);
COMMENT ON COLUMN webhooks.endpoints.value_change_threshold IS
  'parcel.value_changed: the endpoint receives the event only when a new roll year moves the just value by more than this many percent (either way).';

-- Down Migration
ALTER TABLE webhooks.endpoints DROP COLUMN value_change_threshold;
