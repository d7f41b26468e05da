-- Credits left by bucket, and the operator's adjustments. One definition of "what is left" serves the account site,
-- `admin client show` and the debit of a negative adjustment, so the three always agree; Redis's hot balance
-- (meter.client_balance, minus what is pending) is the same figure.

-- p_pending: the client's Redis hash of spent-but-unflushed credits (pend:<client>: m:<period>, p:<pack id>, c, ...),
-- as jsonb; {} reads Postgres alone.
CREATE OR REPLACE FUNCTION meter.credits_left(p_client_id uuid, p_pending jsonb DEFAULT '{}', p_now timestamptz DEFAULT now())
RETURNS TABLE (spend_order int, bucket text, pack_id uuid, pack text, expires_at timestamptz, credits bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
  WITH c AS (
    SELECT cl.id, meter.period_of(p_now) AS period,
           CASE WHEN cl.plan = 'free' THEN 0 ELSE coalesce(cl.custom_monthly_credits, p.monthly_credits) END AS grant_credits
      FROM accounts.clients cl JOIN accounts.plans p USING (plan) WHERE cl.id = p_client_id
  ), pend AS (
    SELECT coalesce(p_pending, '{}'::jsonb) AS j
  )
  SELECT 1, 'monthly', NULL::uuid, NULL::text, NULL::timestamptz,
         (c.grant_credits
          + coalesce((SELECT sum(l.delta) FROM meter.ledger l
                       WHERE l.client_id = c.id AND l.bucket = 'monthly' AND l.period = c.period), 0)
          - coalesce((pend.j ->> ('m:' || c.period))::bigint, 0))::bigint
    FROM c, pend
  UNION ALL
  SELECT 2 + (row_number() OVER (ORDER BY cp.expires_at, cp.id))::int, 'pack', cp.id, cp.pack, cp.expires_at,
         (cp.credits
          + coalesce((SELECT sum(l.delta) FROM meter.ledger l WHERE l.pack_id = cp.id), 0)
          - coalesce((pend.j ->> ('p:' || cp.id))::bigint, 0))::bigint
    FROM accounts.credit_packs cp, pend
   WHERE cp.client_id = p_client_id AND cp.expires_at > p_now
  UNION ALL
  SELECT 1000000, 'credits', NULL, NULL, NULL,
         (coalesce((SELECT sum(l.delta) FROM meter.ledger l WHERE l.client_id = c.id AND l.bucket = 'credits'), 0)
          - coalesce((pend.j ->> 'c')::bigint, 0))::bigint
    FROM c, pend
  ORDER BY 1
$$;
COMMENT ON FUNCTION meter.credits_left(uuid, jsonb, timestamptz) IS
  'Credits a client has left, one row per bucket in spending order: this month''s grant (0 on the free trial), each unexpired pack (oldest-expiring first, with its expiry), one-time credits (the trial''s and adjustments). p_pending: the Redis hash of credits spent but not flushed yet. Example: SELECT * FROM meter.credits_left(''<client id>'');';

-- What Postgres shows of a client while requests are in flight adds the counts Redis holds as pending (pend:<client>)
-- to the ledger. Those counts are read from Redis in one instant with the usage batches not yet acknowledged
-- (usage:batches): every pending count is in one of them. Once a flush has recorded one of those batches in Postgres,
-- its counts are in both; a reader calls this after its reads of the ledger and, refused with 40001
-- (serialization_failure), reads Redis and Postgres again.
CREATE OR REPLACE FUNCTION meter.refuse_recorded(p_batches text[]) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = meter, pg_temp
AS $$
BEGIN
  IF cardinality(meter.recorded_batches(p_batches, '', 0)) > 0 THEN
    RAISE EXCEPTION 'usage was recorded while the balance was read; try again' USING ERRCODE = '40001';
  END IF;
END $$;
COMMENT ON FUNCTION meter.refuse_recorded(text[]) IS
  'Raises 40001 when Postgres has recorded one of p_batches, the usage batches Redis listed with the pending counts a reader added to the ledger: its counts were taken twice, read again. Owner only (the operator CLI).';

-- An operator's adjustment. A positive one adds one-time credits. A negative one is debited as requests spend: this
-- month's grant first, then packs (oldest-expiring first), then one-time credits, so no bucket is left negative beside
-- a positive one; more than the client has left is refused. The client's row is locked, so two adjustments at once
-- debit one after the other. What is left is read once, with p_pending and then checked by meter.refuse_recorded
-- against p_batches, so that no pending count is taken twice.
DROP FUNCTION IF EXISTS meter.adjust_credits(uuid, bigint, text, jsonb);
CREATE OR REPLACE FUNCTION meter.adjust_credits(p_client_id uuid, p_credits bigint, p_reason text,
                                                p_pending jsonb DEFAULT '{}', p_batches text[] DEFAULT '{}')
RETURNS TABLE (id bigint, bucket text, pack_id uuid, period text, delta bigint, reason text, created_at timestamptz)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_owed bigint;
  v_left jsonb;
  v_total bigint;
  v_take bigint;
  b record;
BEGIN
  IF p_credits IS NULL OR p_credits = 0 THEN
    RAISE EXCEPTION 'credits must be a non-zero whole number' USING ERRCODE = '22023';
  END IF;
  IF p_reason IS NULL OR btrim(p_reason) = '' THEN
    RAISE EXCEPTION 'the reason must say why' USING ERRCODE = '22023';
  END IF;
  PERFORM 1 FROM accounts.clients WHERE accounts.clients.id = p_client_id FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'client % not found', p_client_id USING ERRCODE = 'P0002';
  END IF;
  IF p_credits > 0 THEN
    RETURN QUERY
      INSERT INTO meter.ledger AS l (client_id, bucket, delta, reason) VALUES (p_client_id, 'credits', p_credits, p_reason)
      RETURNING l.id, l.bucket, l.pack_id, l.period, l.delta, l.reason, l.created_at;
    RETURN;
  END IF;
  v_owed := -p_credits;
  SELECT jsonb_agg(to_jsonb(k) ORDER BY k.spend_order), coalesce(sum(greatest(k.credits, 0)), 0)
    INTO v_left, v_total FROM meter.credits_left(p_client_id, p_pending) k;
  PERFORM meter.refuse_recorded(p_batches); -- after what is left: a batch recorded before that read is seen here too
  IF v_total < v_owed THEN
    RAISE EXCEPTION 'the client has % credits left; a debit can take at most that many', v_total USING ERRCODE = '22023';
  END IF;
  FOR b IN SELECT * FROM jsonb_to_recordset(v_left) AS x(spend_order int, bucket text, pack_id uuid, credits bigint)
            ORDER BY x.spend_order LOOP
    EXIT WHEN v_owed = 0;
    v_take := least(greatest(b.credits, 0), v_owed);
    CONTINUE WHEN v_take = 0;
    RETURN QUERY
      INSERT INTO meter.ledger AS l (client_id, bucket, pack_id, period, delta, reason)
      VALUES (p_client_id, b.bucket, b.pack_id, CASE WHEN b.bucket = 'monthly' THEN meter.period_of(now()) END, -v_take, p_reason)
      RETURNING l.id, l.bucket, l.pack_id, l.period, l.delta, l.reason, l.created_at;
    v_owed := v_owed - v_take;
  END LOOP;
END $$;
COMMENT ON FUNCTION meter.adjust_credits(uuid, bigint, text, jsonb, text[]) IS
  'An operator''s credit adjustment, one ledger row per bucket touched: positive adds one-time credits; negative debits in spending order (monthly grant, packs oldest-expiring first, one-time credits) and is refused beyond what is left. p_pending: the Redis hash of credits spent but not flushed; p_batches: the usage batches Redis listed in the same instant (meter.refuse_recorded). Owner only (the operator CLI).';

REVOKE ALL ON FUNCTION meter.credits_left(uuid, jsonb, timestamptz), meter.refuse_recorded(text[]),
  meter.adjust_credits(uuid, bigint, text, jsonb, text[]) FROM PUBLIC;
