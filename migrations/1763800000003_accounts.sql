-- Up Migration
-- Clients (workspaces), their API keys, and the plans of Part 8.2 as data.
CREATE SCHEMA IF NOT EXISTS accounts;

CREATE TABLE accounts.plans (
  plan             text PRIMARY KEY,
  display_name     text NOT NULL,
  monthly_credits  bigint NOT NULL,
  rpm              integer NOT NULL,
  rest             boolean NOT NULL,
  mcp              boolean NOT NULL,
  csv              boolean NOT NULL,
  webhooks         text NOT NULL CHECK (webhooks IN ('no', 'beta', 'yes')),
  overage          boolean NOT NULL,   -- paid Developer..Lead Feed: keep serving past the grant, billed per credit
  price_cents      integer             -- monthly price; null for custom (enterprise) and the trial
);
INSERT INTO accounts.plans VALUES
  ('free',        'Free Trial',    500,        30,  true,  false, false, 'no',   false, 0),
  ('developer',   'Developer',     10000,      60,  true,  true,  false, 'no',   true,  1900),
  ('pro',         'Pro',           50000,      150, true,  true,  true,  'beta', true,  4900),
  ('growth',      'Growth',        250000,     300, true,  true,  true,  'yes',  true,  14900),
  ('lead_feed',   'Lead Feed',     750000,     600, true,  true,  true,  'yes',  true,  29900),
  ('enterprise',  'Enterprise',    2000000000, 1200, true, true,  true,  'yes',  false, NULL),
  ('mcp_starter', 'MCP Starter',   1000,       30,  false, true,  false, 'no',   false, 500);

CREATE TABLE accounts.clients (
  id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name                    text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  email                   text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+$'),
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  plan                    text NOT NULL REFERENCES accounts.plans(plan),
  subscription_status     text NOT NULL DEFAULT 'active' CHECK (subscription_status IN ('active', 'past_due', 'canceled')),
  custom_monthly_credits  bigint CHECK (custom_monthly_credits >= 0),   -- an enterprise contract's own numbers
  custom_rpm              integer CHECK (custom_rpm > 0),
  signup_at               timestamptz NOT NULL DEFAULT now(),
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE accounts.api_keys (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id     uuid NOT NULL REFERENCES accounts.clients(id),
  mode          text NOT NULL CHECK (mode IN ('live', 'test')),
  key_hash      bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),  -- HMAC-SHA256(server secret, raw key)
  display       text NOT NULL,   -- prefix and last four characters, e.g. flprop_live_…a1B2
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz,
  last_used_at  timestamptz,
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX api_keys_client_idx ON accounts.api_keys (client_id);

-- Down Migration
DROP SCHEMA accounts CASCADE;
