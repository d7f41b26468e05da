-- Metering: balances rebuilt from the ledger, batched usage flushes, the trial cap, overage invoice lines.
-- SECURITY DEFINER functions are the only way the API process writes, as api_meter (see docs/security.md).

CREATE OR REPLACE FUNCTION meter.test_key_monthly_credits() RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 100;
COMMENT ON FUNCTION meter.test_key_monthly_credits() IS
  'The reduced quota of test keys: 100 credits per client per UTC month, separate from the live pool, never overage.';

-- STABLE, as to_char is, so that the planner inlines it (see core.iso_utc)
CREATE OR REPLACE FUNCTION meter.period_of(p_at timestamptz) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE RETURN to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM');
COMMENT ON FUNCTION meter.period_of(timestamptz) IS 'The billing period (UTC calendar month) of a time, as YYYY-MM.';

-- A client's durable balances for one period, as the Redis admission script wants them.
CREATE OR REPLACE FUNCTION meter.client_balance(p_client_id uuid, p_mode text, p_period text, p_now timestamptz DEFAULT now())
RETURNS TABLE (monthly bigint, credits bigint, overage bigint, packs jsonb, version bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
  WITH c AS (
    SELECT cl.id, CASE WHEN cl.plan = 'free' THEN 0 ELSE coalesce(cl.custom_monthly_credits, p.monthly_credits) END AS grant_credits
      FROM accounts.clients cl JOIN accounts.plans p USING (plan) WHERE cl.id = p_client_id
  )
  SELECT CASE WHEN p_mode = 'test'
              THEN meter.test_key_monthly_credits() - coalesce((
                     SELECT sum(requests) FROM meter.usage_daily
                      WHERE client_id = p_client_id AND mode = 'test' AND meter.period_of(day::timestamp AT TIME ZONE 'UTC') = p_period), 0)
              ELSE c.grant_credits + coalesce((
                     SELECT sum(delta) FROM meter.ledger
                      WHERE client_id = p_client_id AND bucket = 'monthly' AND period = p_period), 0)
         END::bigint,
         CASE WHEN p_mode = 'test' THEN 0 ELSE coalesce((
           SELECT sum(delta) FROM meter.ledger WHERE client_id = p_client_id AND bucket = 'credits'), 0) END::bigint,
         coalesce((SELECT -sum(delta) FROM meter.ledger
                    WHERE client_id = p_client_id AND bucket = 'overage' AND period = p_period), 0)::bigint,
         CASE WHEN p_mode = 'test' THEN '[]'::jsonb ELSE coalesce((
           SELECT jsonb_agg(jsonb_build_object('id', k.id, 'remaining', k.remaining,
                                               'expires_ms', (extract(epoch FROM k.expires_at) * 1000)::bigint)
                            ORDER BY k.expires_at, k.id)
             FROM (SELECT cp.id, cp.expires_at,
                          cp.credits + coalesce((SELECT sum(delta) FROM meter.ledger l WHERE l.pack_id = cp.id), 0) AS remaining
                     FROM accounts.credit_packs cp
                    WHERE cp.client_id = p_client_id AND cp.expires_at > p_now) k
            WHERE k.remaining > 0), '[]'::jsonb) END,
         (SELECT credit_version FROM accounts.clients WHERE id = p_client_id)
    FROM c
$$;
COMMENT ON FUNCTION meter.client_balance(uuid, text, text, timestamptz) IS
  'Durable balances of a client for a period: monthly grant left, one-time credits, overage used, unexpired packs (oldest-expiring first).';

-- Which usage batches Postgres has recorded, among those named and those recorded in the last p_recent_s seconds
-- (batch names under one key prefix), as of the caller's snapshot. The API asks it together with a client's balances
-- when it rebuilds them in Redis: a batch recorded but still pending in Redis (its acknowledgement not sent yet, or
-- lost in a Redis failover) is then taken off once, not twice (src/metering/lua/init.lua).
CREATE OR REPLACE FUNCTION meter.recorded_batches(p_names text[], p_prefix text, p_recent_s double precision)
RETURNS text[]
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = meter, pg_temp
AS $$
  SELECT coalesce(array_agg(batch_id), '{}')
    FROM meter.usage_batches
   WHERE batch_id = ANY (p_names)
      OR (flushed_at > now() - make_interval(secs => p_recent_s) AND starts_with(batch_id, p_prefix || 'usage:batch:'))
$$;
COMMENT ON FUNCTION meter.recorded_batches(text[], text, double precision) IS
  'Usage batches recorded in Postgres among p_names and those of the key prefix p_prefix recorded in the last p_recent_s seconds: the Redis batches a balance rebuilt from Postgres must not count as pending.';

-- Records charged requests as counts. Each row: the batch it came in (a Redis usage batch, or a fail-open batch),
-- client, key, mode, surface, bucket, pack, period, UTC day and the number of requests. A batch recorded before is
-- skipped, so flushing again after a lost acknowledgement changes nothing. Batches are remembered for 7 days.
-- Only api_meter may call it, and it records only rows the metering writes: any other row (a count that is not
-- positive, a batch not named as the metering names them, a key that is not the client's or not of the row's mode,
-- a bucket that does not fit the mode, a pack that is not the client's) goes to meter.refused_usage with the reason,
-- so that it neither counts nor blocks the rows and batches behind it.
CREATE OR REPLACE FUNCTION meter.flush_usage(p_counts jsonb) RETURNS integer
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
  WITH counts AS (
    SELECT e.*,
           CASE WHEN e.n IS NULL OR e.n <= 0 THEN 'count not positive'
                WHEN e.batch_id IS NULL OR e.batch_id !~ '(usage:batch:\d+-|^unmetered:)' THEN 'not a metering batch'
                WHEN e.surface IS NULL OR e.surface NOT IN ('rest', 'mcp') THEN 'unknown surface'
                WHEN e.period IS NULL OR e.period !~ '^\d{4}-\d{2}$' OR e.day IS NULL THEN 'no period or day'
                WHEN e.bucket IS NULL OR e.bucket NOT IN ('monthly', 'pack', 'credits', 'overage', 'test', 'unmetered')
                  THEN 'unknown bucket'
                WHEN (e.bucket = 'test') IS DISTINCT FROM (e.mode = 'test') THEN 'bucket does not fit the mode'
                WHEN (e.bucket = 'pack') IS DISTINCT FROM (e.pack_id IS NOT NULL) THEN 'pack bucket without a pack'
                WHEN NOT EXISTS (SELECT FROM accounts.api_keys k
                                  WHERE k.id = e.key_id AND k.client_id = e.client_id AND k.mode = e.mode)
                  THEN 'key not the client''s, or not of this mode'
                WHEN e.pack_id IS NOT NULL AND NOT EXISTS (
                       SELECT FROM accounts.credit_packs cp WHERE cp.id = e.pack_id AND cp.client_id = e.client_id)
                  THEN 'pack not the client''s'
           END AS refused
      FROM jsonb_to_recordset(p_counts) AS e(batch_id text, client_id uuid, key_id uuid, mode text, surface text,
                                             bucket text, pack_id uuid, period text, day date, n bigint)
  ), fresh AS (
    INSERT INTO meter.usage_batches (batch_id) SELECT DISTINCT batch_id FROM counts WHERE batch_id IS NOT NULL
    ON CONFLICT (batch_id) DO NOTHING
    RETURNING batch_id
  ), refused AS (
    INSERT INTO meter.refused_usage (batch_id, usage, reason)
    SELECT c.batch_id, to_jsonb(c) - 'refused', c.refused
      FROM counts c LEFT JOIN fresh f USING (batch_id)
     WHERE c.refused IS NOT NULL AND (f.batch_id IS NOT NULL OR c.batch_id IS NULL)
  ), ins AS (
    SELECT counts.* FROM counts JOIN fresh USING (batch_id) WHERE counts.refused IS NULL
  ), daily AS (
    INSERT INTO meter.usage_daily AS d (client_id, key_id, day, mode, surface, bucket, requests)
    SELECT client_id, key_id, day, mode, surface, bucket, sum(n)
      FROM ins GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (client_id, day, key_id, mode, surface, bucket) DO UPDATE SET requests = d.requests + excluded.requests
  ), ledger AS (
    INSERT INTO meter.ledger (client_id, bucket, pack_id, period, delta, reason)
    SELECT client_id, CASE WHEN bucket = 'unmetered' THEN 'monthly' ELSE bucket END, pack_id, period, -sum(n), 'usage'
      FROM ins WHERE bucket <> 'test'
     GROUP BY 1, 2, 3, 4
  ), forgotten AS (
    DELETE FROM meter.usage_batches WHERE flushed_at < now() - interval '7 days'
  )
  SELECT coalesce(sum(n), 0)::int FROM ins
$$;
COMMENT ON FUNCTION meter.flush_usage(jsonb) IS
  'Records charged requests as counts per batch, client, key, mode, surface, bucket, pack, period and UTC day in usage_daily and the ledger; a batch recorded in the last 7 days is skipped; a row the metering never writes (count not positive, unknown batch name, a key not the client''s ...) goes to meter.refused_usage instead. Returns the requests recorded. Executable by api_meter only.';

-- The free trial's rule: on the first request after day 7, the balance is capped once at min(remaining, 100).
-- p_pending: credits the API has spent that are not flushed yet, so the cap sees the true remaining balance.
CREATE OR REPLACE FUNCTION meter.apply_trial_cap(p_client_id uuid, p_pending bigint DEFAULT 0) RETURNS bigint
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
DECLARE
  v_remaining bigint;
  v_delta bigint;
BEGIN
  PERFORM 1 FROM accounts.clients
   WHERE id = p_client_id AND plan = 'free' AND trial_capped_at IS NULL AND signup_at <= now() - interval '7 days'
     FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  -- a pending count below 0 is not a credit: it is read as 0, so the cap never leaves more than the ledger holds
  SELECT coalesce(sum(delta), 0) - greatest(coalesce(p_pending, 0), 0) INTO v_remaining
    FROM meter.ledger WHERE client_id = p_client_id AND bucket = 'credits';
  v_delta := least(0, 100 - v_remaining);
  INSERT INTO meter.ledger (client_id, bucket, delta, reason) VALUES (p_client_id, 'credits', v_delta, 'free_trial_expired_cap');
  UPDATE accounts.clients SET trial_capped_at = now() WHERE id = p_client_id;
  RETURN v_delta;
END $$;
COMMENT ON FUNCTION meter.apply_trial_cap(uuid, bigint) IS
  'Caps a free trial older than 7 days at min(remaining, 100), once, recorded with reason free_trial_expired_cap.';

-- Overage is billed per client per UTC day at $0.005 a credit, rounded up to the next $0.05.
CREATE OR REPLACE VIEW meter.overage_invoice_lines AS
SELECT client_id,
       day,
       sum(requests)::bigint AS credits,
       (ceil(sum(requests) / 10.0) * 5)::int AS amount_cents
  FROM meter.usage_daily
 WHERE bucket = 'overage'
 GROUP BY 1, 2;
COMMENT ON VIEW meter.overage_invoice_lines IS
  'One invoice line per client and UTC day of overage: credits used past the grant, $0.005 each, rounded up to $0.05.';

-- api_reader (the request path) reads balances; only api_meter (the usage flush's own connection) writes usage.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA meter FROM PUBLIC, api_reader, api_meter;
GRANT USAGE ON SCHEMA meter TO api_reader, api_meter;
GRANT EXECUTE ON FUNCTION meter.client_balance(uuid, text, text, timestamptz), meter.period_of(timestamptz),
  meter.test_key_monthly_credits(), meter.recorded_batches(text[], text, double precision) TO api_reader;
GRANT EXECUTE ON FUNCTION meter.flush_usage(jsonb), meter.apply_trial_cap(uuid, bigint) TO api_meter;
