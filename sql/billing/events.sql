-- Stripe's webhook events and their effects (docs/billing.md#events). billing.apply_event records the event's id and
-- makes its effect in one transaction: a replayed event finds its id and does nothing; a different event about the
-- same Checkout Session or invoice finds the natural key and does nothing; an event older than the subscription's
-- stored state changes nothing. Only verified events reach it (the route checks Stripe's signature first).

-- A Stripe subscription status as the metering knows it: active (overage on), past_due (overage off), canceled.
CREATE OR REPLACE FUNCTION billing.client_status(p_stripe_status text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN p_stripe_status IN ('active', 'trialing') THEN 'active'
            WHEN p_stripe_status = 'past_due' THEN 'past_due'
            WHEN p_stripe_status IN ('canceled', 'unpaid', 'incomplete_expired') THEN 'canceled' END;
COMMENT ON FUNCTION billing.client_status(text) IS
  'Maps a Stripe subscription status to accounts.clients.subscription_status (active, past_due, canceled); null for incomplete and paused, which change nothing.';

-- Makes the client's plan and status follow one subscription's stored state. Canceled: the Free plan's rules, with no
-- new trial grant and no trial cap (trial_capped_at set), packs and one-time credits kept.
CREATE OR REPLACE FUNCTION billing.follow_subscription(p_subscription_id text) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = billing, accounts, pg_temp
AS $$
DECLARE
  s billing.subscriptions;
  v_status text;
BEGIN
  SELECT * INTO s FROM billing.subscriptions WHERE subscription_id = p_subscription_id;
  v_status := billing.client_status(s.status);
  IF v_status IS NULL OR s.plan IS NULL THEN RETURN; END IF;
  -- an older subscription of the client (replaced by a newer checkout) never overrides the newest one
  IF EXISTS (SELECT FROM billing.subscriptions o WHERE o.client_id = s.client_id AND o.subscription_id <> s.subscription_id
               AND billing.client_status(o.status) IN ('active', 'past_due') AND o.event_at > s.event_at)
     AND v_status = 'canceled' THEN
    RETURN;
  END IF;
  UPDATE accounts.clients
     SET plan = CASE WHEN v_status = 'canceled' THEN 'free' ELSE s.plan END,
         subscription_status = v_status,
         trial_capped_at = CASE WHEN v_status = 'canceled' THEN coalesce(trial_capped_at, now()) ELSE trial_capped_at END,
         updated_at = now()
   WHERE id = s.client_id
     AND (plan, subscription_status) IS DISTINCT FROM (CASE WHEN v_status = 'canceled' THEN 'free' ELSE s.plan END, v_status);
END $$;

-- Stores a subscription's state from an event created at p_at, unless a newer event already stored a later one.
-- Returns whether it was stored.
CREATE OR REPLACE FUNCTION billing.store_subscription(p_subscription_id text, p_client_id uuid, p_plan text,
                                                      p_status text, p_cancel_at_period_end boolean, p_at timestamptz)
RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = billing, accounts, pg_temp
AS $$
BEGIN
  INSERT INTO billing.subscriptions AS s (subscription_id, client_id, plan, status, cancel_at_period_end, event_at)
  VALUES (p_subscription_id, p_client_id, p_plan, p_status, coalesce(p_cancel_at_period_end, false), p_at)
  ON CONFLICT (subscription_id) DO UPDATE
     SET plan = coalesce(excluded.plan, s.plan), status = excluded.status,
         cancel_at_period_end = excluded.cancel_at_period_end, event_at = excluded.event_at, updated_at = now()
   WHERE s.event_at < excluded.event_at;
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM billing.follow_subscription(p_subscription_id);
  RETURN true;
END $$;

-- The plan a subscription is on: its first item's price, by lookup key (plan:<plan>) or by our catalogue.
CREATE OR REPLACE FUNCTION billing.plan_of_subscription(p_sub jsonb) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = billing, accounts, pg_temp
AS $$
  SELECT coalesce(
    (SELECT substr(k, 6) FROM (SELECT p_sub #>> '{items,data,0,price,lookup_key}' AS k) x
      WHERE k ~ '^plan:' AND EXISTS (SELECT FROM accounts.plans WHERE plan = substr(k, 6))),
    (SELECT substr(lookup_key, 6) FROM billing.catalogue
      WHERE price_id = p_sub #>> '{items,data,0,price,id}' AND lookup_key ~ '^plan:'),
    (SELECT plan FROM accounts.plans WHERE plan = p_sub #>> '{metadata,plan}'))
$$;

-- One verified event (Stripe's JSON). Returns its client and the outcome recorded with it: applied, replay, duplicate, stale,
-- unknown client, ignored (a type or state with no effect) or waiting for payment.
DROP FUNCTION IF EXISTS billing.apply_event(jsonb);
CREATE FUNCTION billing.apply_event(p_event jsonb, OUT outcome text, OUT client_id uuid)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = billing, accounts, meter, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  o jsonb := p_event #> '{data,object}';
  v_type text := p_event ->> 'type';
  v_at timestamptz := to_timestamp((p_event ->> 'created')::bigint);
  v_client uuid;
  v_client_text text;
  v_outcome text;
  v_pack uuid;
  v_checkout billing.checkouts;
  v_void bigint;
BEGIN
  IF p_event ->> 'id' IS NULL OR v_type IS NULL OR p_event ->> 'created' IS NULL THEN
    RAISE EXCEPTION 'not a Stripe event' USING ERRCODE = '22023';
  END IF;
  -- first, so that the same event delivered twice at once waits here for the other's commit, then finds it
  INSERT INTO billing.events (event_id, type, created, object_id, outcome)
  VALUES (p_event ->> 'id', v_type, v_at, o ->> 'id', 'received')
  ON CONFLICT (event_id) DO NOTHING;
  IF NOT FOUND THEN
    outcome := 'replay';
    RETURN;
  END IF;

  -- which client: our id in the object's metadata or client_reference_id, else the customer we stored
  v_client_text := coalesce(o #>> '{metadata,client_id}', o ->> 'client_reference_id',
                            o #>> '{subscription_details,metadata,client_id}');
  IF v_client_text ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
    SELECT id INTO v_client FROM accounts.clients WHERE id = v_client_text::uuid;
  END IF;
  IF v_client IS NULL THEN
    SELECT client_id INTO v_client FROM billing.customers WHERE customer_id = o ->> 'customer';
  END IF;

  -- one event of a client at a time: two events about one session or subscription do not both pass its checks
  PERFORM 1 FROM accounts.clients WHERE id = v_client FOR UPDATE;

  IF v_type NOT IN ('checkout.session.completed', 'checkout.session.async_payment_succeeded',
                    'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted',
                    'invoice.paid', 'invoice.payment_failed', 'charge.refunded') THEN
    v_outcome := 'ignored';
  ELSIF v_client IS NULL THEN
    v_outcome := 'unknown client';
  ELSIF v_type LIKE 'checkout.session.%' THEN
    IF o ->> 'payment_status' NOT IN ('paid', 'no_payment_required') THEN
      v_outcome := 'waiting for payment';
    ELSIF EXISTS (SELECT FROM billing.checkouts WHERE session_id = o ->> 'id') THEN
      v_outcome := 'duplicate';
    ELSIF o #>> '{metadata,pack}' IS NOT NULL THEN
      INSERT INTO accounts.credit_packs (client_id, pack, credits, purchased_at, expires_at)
      SELECT v_client, t.pack, t.credits, v_at, v_at + interval '12 months'
        FROM accounts.pack_types t WHERE t.pack = o #>> '{metadata,pack}'
      RETURNING id INTO v_pack;
      IF v_pack IS NULL THEN
        v_outcome := 'ignored';
      ELSE
        INSERT INTO billing.checkouts (session_id, client_id, kind, item, payment_intent, amount_total, pack_id)
        VALUES (o ->> 'id', v_client, 'pack', o #>> '{metadata,pack}', o ->> 'payment_intent',
                (o ->> 'amount_total')::int, v_pack);
        v_outcome := 'applied';
      END IF;
    ELSIF o #>> '{metadata,plan}' IN (SELECT plan FROM accounts.plans WHERE price_cents > 0)
          AND o ->> 'subscription' IS NOT NULL THEN
      INSERT INTO billing.checkouts (session_id, client_id, kind, item, amount_total)
      VALUES (o ->> 'id', v_client, 'plan', o #>> '{metadata,plan}', (o ->> 'amount_total')::int);
      -- a subscription.updated that came first already stored a newer state: that one stays
      PERFORM billing.store_subscription(o ->> 'subscription', v_client, o #>> '{metadata,plan}', 'active', false, v_at);
      PERFORM billing.follow_subscription(o ->> 'subscription');
      v_outcome := 'applied';
    ELSE
      v_outcome := 'ignored';
    END IF;
  ELSIF v_type LIKE 'customer.subscription.%' THEN
    v_outcome := CASE WHEN billing.store_subscription(
                             o ->> 'id', v_client, billing.plan_of_subscription(o),
                             CASE WHEN v_type = 'customer.subscription.deleted' THEN 'canceled' ELSE o ->> 'status' END,
                             (o ->> 'cancel_at_period_end')::boolean, v_at)
                      THEN 'applied' ELSE 'stale' END;
  ELSIF v_type IN ('invoice.paid', 'invoice.payment_failed') THEN
    INSERT INTO billing.invoices AS i (invoice_id, client_id, status, amount_due, hosted_invoice_url, event_at)
    VALUES (o ->> 'id', v_client, CASE WHEN v_type = 'invoice.paid' THEN 'paid' ELSE 'payment_failed' END,
            coalesce((o ->> 'amount_due')::int, 0), o ->> 'hosted_invoice_url', v_at)
    ON CONFLICT (invoice_id) DO UPDATE
       SET status = excluded.status, amount_due = excluded.amount_due,
           hosted_invoice_url = excluded.hosted_invoice_url, event_at = excluded.event_at
     WHERE i.event_at < excluded.event_at AND i.status <> 'paid';
    v_outcome := CASE WHEN FOUND THEN 'applied' ELSE 'stale' END;
  ELSE -- charge.refunded: a pack's unspent credits are voided in the refunded share of its price
    SELECT * INTO v_checkout FROM billing.checkouts
     WHERE payment_intent = o ->> 'payment_intent' AND kind = 'pack' FOR UPDATE;
    IF NOT FOUND OR coalesce((o ->> 'amount')::int, 0) <= 0 THEN
      v_outcome := 'ignored';
    ELSE
      SELECT least(greatest(k.credits, 0),
                   greatest(0, ceil(cp.credits * least((o ->> 'amount_refunded')::numeric / (o ->> 'amount')::numeric, 1))::bigint
                               - v_checkout.credits_voided))
        INTO v_void
        FROM accounts.credit_packs cp
        LEFT JOIN meter.credits_left(v_client) k ON k.pack_id = cp.id
       WHERE cp.id = v_checkout.pack_id;
      v_void := coalesce(v_void, 0);
      IF v_void > 0 THEN
        INSERT INTO meter.ledger (client_id, bucket, pack_id, delta, reason)
        VALUES (v_client, 'pack', v_checkout.pack_id, -v_void, 'pack_refunded');
        UPDATE billing.checkouts SET credits_voided = credits_voided + v_void WHERE session_id = v_checkout.session_id;
      END IF;
      v_outcome := CASE WHEN v_void > 0 THEN 'applied' ELSE 'duplicate' END;
    END IF;
  END IF;

  UPDATE billing.events e SET client_id = v_client, outcome = v_outcome WHERE e.event_id = p_event ->> 'id';
  outcome := v_outcome;
  client_id := v_client;
END $$;
COMMENT ON FUNCTION billing.apply_event(jsonb) IS
  'Applies one verified Stripe event and records its id in the same transaction; returns the outcome (applied, replay, duplicate, stale, unknown client, ignored, waiting for payment). Executable by api_billing.';
