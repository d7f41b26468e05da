-- Up Migration
-- One-time credit packs (Part 8.4): bought on any plan, spent after the monthly grant, expire after 12 months.
CREATE TABLE accounts.pack_types (
  pack         text PRIMARY KEY,
  display_name text NOT NULL,
  credits      bigint NOT NULL CHECK (credits > 0),
  price_cents  integer NOT NULL
);
INSERT INTO accounts.pack_types VALUES
  ('starter', 'Starter', 1000, 500),
  ('investigator', 'Investigator', 5000, 2300),
  ('bulk', 'Bulk', 25000, 9900),
  ('power', 'Power', 100000, 34900);

CREATE TABLE accounts.credit_packs (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id     uuid NOT NULL REFERENCES accounts.clients(id),
  pack          text NOT NULL REFERENCES accounts.pack_types(pack),
  credits       bigint NOT NULL CHECK (credits > 0),
  purchased_at  timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  CHECK (expires_at = purchased_at + interval '12 months')
);
CREATE INDEX credit_packs_client_idx ON accounts.credit_packs (client_id, expires_at);

-- Down Migration
DROP TABLE accounts.credit_packs;
DROP TABLE accounts.pack_types;
