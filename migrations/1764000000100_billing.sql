-- Up Migration
-- Payments through Stripe (docs/billing.md). Our ledger stays the truth about credits; these tables remember what
-- Stripe holds for each client and every event it sent, so that each effect happens once. Written only through the
-- SECURITY DEFINER functions of sql/billing, as the role api_billing (the webhook route, the checkout buttons, the
-- daily overage job); the operator CLI connects as the owner.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'api_billing') THEN
    CREATE ROLE api_billing LOGIN NOINHERIT;
  END IF;
END $$;

CREATE SCHEMA billing;
COMMENT ON SCHEMA billing IS 'Stripe customers, catalogue, subscriptions, received events and daily overage invoice items.';

-- One Stripe customer per client, made once.
CREATE TABLE billing.customers (
  client_id    uuid PRIMARY KEY REFERENCES accounts.clients(id),
  customer_id  text NOT NULL UNIQUE CHECK (customer_id ~ '^cus_'),
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- The Stripe price of each paid plan and pack, found or made by `admin billing sync-catalog` (lookup key plan:<plan>
-- or pack:<pack>).
CREATE TABLE billing.catalogue (
  lookup_key   text PRIMARY KEY CHECK (lookup_key ~ '^(plan|pack):[a-z_]+$'),
  product_id   text NOT NULL,
  price_id     text NOT NULL UNIQUE,
  unit_amount  integer NOT NULL CHECK (unit_amount > 0),
  synced_at    timestamptz NOT NULL DEFAULT now()
);

-- Each Stripe subscription as the newest event about it left it; `event_at` is that event's creation time, so an
-- older event arriving later never moves it backwards.
CREATE TABLE billing.subscriptions (
  subscription_id       text PRIMARY KEY CHECK (subscription_id ~ '^sub_'),
  client_id             uuid NOT NULL REFERENCES accounts.clients(id),
  plan                  text REFERENCES accounts.plans(plan),
  status                text NOT NULL,
  cancel_at_period_end  boolean NOT NULL DEFAULT false,
  event_at              timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscriptions_client_idx ON billing.subscriptions (client_id, event_at DESC);

-- Every event received with a valid signature, recorded in the transaction of its effect: a replay finds its id.
CREATE TABLE billing.events (
  event_id     text PRIMARY KEY CHECK (event_id ~ '^evt_'),
  type         text NOT NULL,
  created      timestamptz NOT NULL,
  object_id    text,
  client_id    uuid,
  outcome      text NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_client_idx ON billing.events (client_id, received_at DESC);

-- Completed Checkout Sessions: the natural key of a plan's or pack's grant, so a second event about the same session
-- grants nothing. A pack's session keeps its payment intent and pack, for refunds.
CREATE TABLE billing.checkouts (
  session_id      text PRIMARY KEY CHECK (session_id ~ '^cs_'),
  client_id       uuid NOT NULL REFERENCES accounts.clients(id),
  kind            text NOT NULL CHECK (kind IN ('plan', 'pack')),
  item            text NOT NULL,
  payment_intent  text,
  amount_total    integer,
  pack_id         uuid REFERENCES accounts.credit_packs(id),
  credits_voided  bigint NOT NULL DEFAULT 0,
  completed_at    timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'pack') = (pack_id IS NOT NULL))
);
CREATE INDEX checkouts_payment_intent_idx ON billing.checkouts (payment_intent) WHERE payment_intent IS NOT NULL;

-- The last state of each invoice (paid, payment failed), shown on the account page.
CREATE TABLE billing.invoices (
  invoice_id          text PRIMARY KEY CHECK (invoice_id ~ '^in_'),
  client_id           uuid NOT NULL REFERENCES accounts.clients(id),
  status              text NOT NULL CHECK (status IN ('paid', 'payment_failed')),
  amount_due          integer NOT NULL,
  hosted_invoice_url  text,
  event_at            timestamptz NOT NULL
);
CREATE INDEX invoices_client_idx ON billing.invoices (client_id, event_at DESC);

-- One row per client and UTC day of overage, made before Stripe is asked, so a crash between Stripe's answer and the
-- commit leaves it pending and the next run finds Stripe's item (idempotency key ovg:<client>:<day>) instead of
-- making a second one.
CREATE TABLE billing.overage_items (
  client_id          uuid NOT NULL REFERENCES accounts.clients(id),
  day                date NOT NULL,
  credits            bigint NOT NULL CHECK (credits > 0),
  amount_cents       integer NOT NULL CHECK (amount_cents > 0),
  attempts           integer NOT NULL DEFAULT 0,
  first_attempt_at   timestamptz,
  invoice_item_id    text UNIQUE CHECK (invoice_item_id ~ '^ii_'),
  sent_at            timestamptz,
  PRIMARY KEY (client_id, day),
  CHECK ((sent_at IS NULL) = (invoice_item_id IS NULL))
);
CREATE INDEX overage_items_pending_idx ON billing.overage_items (day) WHERE sent_at IS NULL;

-- The daily overage job's queue (graphile-worker, schema option billing_jobs), made here as for webhooks_jobs: the
-- worker installs its tables inside it without CREATE on the database.
CREATE SCHEMA billing_jobs AUTHORIZATION api_billing;
CREATE TABLE billing_jobs.migrations (
  id        int PRIMARY KEY,
  ts        timestamptz DEFAULT now() NOT NULL,
  breaking  boolean NOT NULL DEFAULT false
);
ALTER TABLE billing_jobs.migrations OWNER TO api_billing;

-- Down Migration
DROP SCHEMA billing_jobs CASCADE;
-- CASCADE: the repeatable functions of sql/billing live in this schema too. api_billing is cluster-wide: kept.
DROP SCHEMA billing CASCADE;
