-- The daily overage invoice items (docs/billing.md#overage) and what the account site and the operator read.

-- Makes the pending row of every client with overage on p_day and a Stripe customer (meter.overage_invoice_lines:
-- $0.005 a credit, rounded up to $0.05 per day), then lists every row of that day not sent yet, with its customer.
CREATE OR REPLACE FUNCTION billing.overage_due(p_day date)
RETURNS TABLE (client_id uuid, day date, customer_id text, credits bigint, amount_cents integer, attempts integer,
               first_attempt_at timestamptz)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = billing, meter, pg_temp
AS $$
BEGIN
  INSERT INTO billing.overage_items (client_id, day, credits, amount_cents)
  SELECT l.client_id, l.day, l.credits, l.amount_cents
    FROM meter.overage_invoice_lines l JOIN billing.customers c USING (client_id)
   WHERE l.day = p_day AND l.credits > 0
  ON CONFLICT DO NOTHING;
  RETURN QUERY
    SELECT o.client_id, o.day, c.customer_id, o.credits, o.amount_cents, o.attempts, o.first_attempt_at
      FROM billing.overage_items o JOIN billing.customers c USING (client_id)
     WHERE o.day = p_day AND o.sent_at IS NULL
     ORDER BY o.client_id;
END $$;
COMMENT ON FUNCTION billing.overage_due(date) IS
  'Records the overage line of each Stripe-billed client for a UTC day (once: unique per client and day) and returns the lines not sent to Stripe yet.';

-- Counts an attempt before Stripe is asked, in its own commit: a later run knows an earlier one may have been answered.
CREATE OR REPLACE FUNCTION billing.begin_overage_attempt(p_client_id uuid, p_day date)
RETURNS TABLE (attempts integer, first_attempt_at timestamptz, sent boolean)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = billing, pg_temp
AS $$
  UPDATE billing.overage_items
     SET attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, now())
   WHERE client_id = p_client_id AND day = p_day
  RETURNING attempts, first_attempt_at, sent_at IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION billing.finish_overage(p_client_id uuid, p_day date, p_invoice_item_id text) RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = billing, pg_temp
AS $$
  UPDATE billing.overage_items SET invoice_item_id = p_invoice_item_id, sent_at = now()
   WHERE client_id = p_client_id AND day = p_day AND sent_at IS NULL
$$;

-- A client's Stripe customer, made once: the first stored wins and is returned.
CREATE OR REPLACE FUNCTION billing.save_customer(p_client_id uuid, p_customer_id text) RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = billing, pg_temp
AS $$
BEGIN
  INSERT INTO billing.customers (client_id, customer_id) VALUES (p_client_id, p_customer_id) ON CONFLICT DO NOTHING;
  RETURN (SELECT customer_id FROM billing.customers WHERE client_id = p_client_id);
END $$;

-- What making a Checkout Session or Portal session needs of a client.
CREATE OR REPLACE FUNCTION billing.client_for_checkout(p_client_id uuid)
RETURNS TABLE (name text, email text, plan text, subscription_status text, customer_id text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = billing, accounts, pg_temp
AS $$
  SELECT c.name, c.email, c.plan, c.subscription_status, b.customer_id
    FROM accounts.clients c LEFT JOIN billing.customers b ON b.client_id = c.id WHERE c.id = p_client_id
$$;

CREATE OR REPLACE FUNCTION billing.price_of(p_lookup_key text) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = billing, pg_temp
AS $$ SELECT price_id FROM billing.catalogue WHERE lookup_key = p_lookup_key $$;

-- The account page's billing block: the newest subscription, the newest unpaid invoice, the last 31 days' overage lines.
CREATE OR REPLACE FUNCTION billing.account_billing(p_client_id uuid)
RETURNS TABLE (subscription_status text, stripe_status text, cancel_at_period_end boolean, failed_invoice_url text,
               failed_amount_due integer, overage jsonb, checkouts bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = billing, accounts, meter, pg_temp
AS $$
  SELECT c.subscription_status, s.status, coalesce(s.cancel_at_period_end, false), i.hosted_invoice_url, i.amount_due,
         coalesce((SELECT jsonb_agg(jsonb_build_object('day', l.day, 'credits', l.credits, 'amount_cents', l.amount_cents,
                                                       'sent', o.sent_at IS NOT NULL) ORDER BY l.day DESC)
                     FROM meter.overage_invoice_lines l
                     LEFT JOIN billing.overage_items o ON o.client_id = l.client_id AND o.day = l.day
                    WHERE l.client_id = p_client_id AND l.day >= (now() AT TIME ZONE 'UTC')::date - 31), '[]'),
         (SELECT count(*) FROM billing.checkouts k WHERE k.client_id = p_client_id)
    FROM accounts.clients c
    LEFT JOIN LATERAL (SELECT * FROM billing.subscriptions s WHERE s.client_id = c.id ORDER BY s.event_at DESC LIMIT 1) s ON true
    LEFT JOIN LATERAL (SELECT * FROM billing.invoices i WHERE i.client_id = c.id AND i.status = 'payment_failed'
                        ORDER BY i.event_at DESC LIMIT 1) i ON true
   WHERE c.id = p_client_id
$$;
COMMENT ON FUNCTION billing.account_billing(uuid) IS
  'A client''s billing state for the account page: status, newest Stripe subscription, newest failed invoice, the last 31 days of overage lines and whether each was sent, and how many checkouts completed.';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA billing FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA billing FROM PUBLIC;
GRANT USAGE ON SCHEMA billing TO api_billing;
GRANT EXECUTE ON FUNCTION billing.apply_event(jsonb), billing.overage_due(date),
  billing.begin_overage_attempt(uuid, date), billing.finish_overage(uuid, date, text),
  billing.save_customer(uuid, text), billing.client_for_checkout(uuid), billing.price_of(text),
  billing.account_billing(uuid), billing.client_status(text)
TO api_billing;

-- Whether a Checkout Session of the client has been applied (the return page says "processing" until it has).
CREATE OR REPLACE FUNCTION billing.checkout_done(p_client_id uuid, p_session_id text) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = billing, pg_temp
AS $$ SELECT EXISTS (SELECT FROM billing.checkouts WHERE client_id = p_client_id AND session_id = p_session_id) $$;
GRANT EXECUTE ON FUNCTION billing.checkout_done(uuid, text) TO api_billing;
