-- Up Migration
-- Durable metering truth. Redis holds the hot counters; this holds what they are rebuilt from.
CREATE SCHEMA IF NOT EXISTS meter;

-- Bumped by anything that changes a client's credits other than usage (plan, limits, packs, adjustments,
-- the trial cap), so every API process reloads that client's balance on its next request.
ALTER TABLE accounts.clients ADD COLUMN credit_version bigint NOT NULL DEFAULT 0;
-- Set once, on the first request after the seventh day of a free trial (Part 3).
ALTER TABLE accounts.clients ADD COLUMN trial_capped_at timestamptz;

-- Every credit movement. Buckets: monthly (the plan's grant, per UTC month), pack (one pack), credits (one-time:
-- the trial grant and adjustments), overage (credits used past the grant on paid plans, billed).
CREATE TABLE meter.ledger (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id   uuid NOT NULL REFERENCES accounts.clients(id),
  bucket      text NOT NULL CHECK (bucket IN ('monthly', 'pack', 'credits', 'overage')),
  pack_id     uuid REFERENCES accounts.credit_packs(id),
  period      text CHECK (period ~ '^\d{4}-\d{2}$'),
  delta       bigint NOT NULL,
  reason      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK ((bucket = 'pack') = (pack_id IS NOT NULL))
);
CREATE INDEX ledger_client_idx ON meter.ledger (client_id, bucket, period);
CREATE UNIQUE INDEX ledger_trial_cap_once_idx ON meter.ledger (client_id) WHERE reason = 'free_trial_expired_cap';

-- One row per charged request (2xx), written in batches; the request id makes a re-flush a no-op.
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
CREATE INDEX usage_events_client_idx ON meter.usage_events (client_id, used_at);

-- Per client, key, UTC day and surface: what /account/usage and the operator read without counting events.
CREATE TABLE meter.usage_daily (
  client_id  uuid NOT NULL,
  key_id     uuid NOT NULL,
  day        date NOT NULL,
  mode       text NOT NULL,
  surface    text NOT NULL,
  bucket     text NOT NULL,
  requests   bigint NOT NULL,
  PRIMARY KEY (client_id, day, key_id, mode, surface, bucket)
);

CREATE FUNCTION meter.bump_credit_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE accounts.clients SET credit_version = credit_version + 1 WHERE id = NEW.client_id;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_bumps_version AFTER INSERT ON meter.ledger
  FOR EACH ROW WHEN (NEW.reason <> 'usage') EXECUTE FUNCTION meter.bump_credit_version();
CREATE TRIGGER packs_bump_version AFTER INSERT ON accounts.credit_packs
  FOR EACH ROW EXECUTE FUNCTION meter.bump_credit_version();

CREATE FUNCTION meter.bump_own_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.credit_version := OLD.credit_version + 1;
  RETURN NEW;
END $$;
CREATE TRIGGER clients_bump_version BEFORE UPDATE OF plan, subscription_status, custom_monthly_credits, custom_rpm, status
  ON accounts.clients FOR EACH ROW EXECUTE FUNCTION meter.bump_own_version();

-- The free trial's 500 credits are granted at signup, in the ledger like every other movement.
CREATE FUNCTION meter.grant_trial() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.plan = 'free' THEN
    INSERT INTO meter.ledger (client_id, bucket, delta, reason, created_at)
    VALUES (NEW.id, 'credits', 500, 'free_trial_grant', NEW.signup_at);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER clients_grant_trial AFTER INSERT ON accounts.clients FOR EACH ROW EXECUTE FUNCTION meter.grant_trial();

-- Down Migration
DROP TRIGGER clients_grant_trial ON accounts.clients;
DROP TRIGGER clients_bump_version ON accounts.clients;
DROP TRIGGER packs_bump_version ON accounts.credit_packs;
DROP SCHEMA meter CASCADE;
ALTER TABLE accounts.clients DROP COLUMN credit_version, DROP COLUMN trial_capped_at;
