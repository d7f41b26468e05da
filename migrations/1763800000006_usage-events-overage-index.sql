-- Up Migration
-- Reports read meter.usage_daily; only overage billing reads usage_events, and only its overage rows. A partial
-- index keeps the per-request insert cheap (one small index instead of one entry per charged request).
DROP INDEX meter.usage_events_client_idx;
CREATE INDEX usage_events_overage_idx ON meter.usage_events (client_id, used_at) WHERE bucket = 'overage';

-- Down Migration
DROP INDEX meter.usage_events_overage_idx;
CREATE INDEX usage_events_client_idx ON meter.usage_events (client_id, used_at);
