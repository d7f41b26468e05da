-- Account usage: the calling key's client, this UTC month.
CREATE OR REPLACE FUNCTION api.get_account_usage(
  p_client_id uuid,
  p_mode text DEFAULT 'live',
  p_pending bigint DEFAULT 0,
  p_now timestamptz DEFAULT now()
)
RETURNS TABLE (events_count bigint, monthly_quota bigint, percent_used float8, reset_date text, plan text,
               plan_name text)
  -- PL/pgSQL, whose plan is kept for the session: a LANGUAGE sql function with SET (never inlined) was planned again
  -- at every call, about 1 ms
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH month AS (
    SELECT date_trunc('month', p_now AT TIME ZONE 'UTC') AS starts,
           date_trunc('month', p_now AT TIME ZONE 'UTC') + interval '1 month' AS ends
  ), used AS (
    SELECT coalesce(sum(d.requests), 0) + p_pending AS n
      FROM meter.usage_daily d, month m
     WHERE d.client_id = p_client_id AND d.mode = p_mode AND d.day >= m.starts::date AND d.day < m.ends::date
  ), quota AS (
    SELECT c.plan, p.display_name,
           CASE WHEN p_mode = 'test' THEN meter.test_key_monthly_credits()
                WHEN c.plan = 'free' THEN CASE WHEN c.trial_capped_at IS NULL THEN 500 ELSE 100 END
                ELSE coalesce(c.custom_monthly_credits, p.monthly_credits) END AS q
      FROM accounts.clients c JOIN accounts.plans p USING (plan) WHERE c.id = p_client_id
  )
  SELECT used.n::bigint,
         quota.q::bigint,
         CASE WHEN quota.q = 0 THEN 0 ELSE round(used.n * 100.0 / quota.q, 2) END::float8,
         to_char(month.ends, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
         quota.plan,
         quota.display_name
    FROM used, quota, month;
END $$;
COMMENT ON FUNCTION api.get_account_usage(uuid, text, bigint, timestamptz) IS
  'Usage of a client this UTC month: charged (2xx) requests, the monthly quota of its plan (test keys: 100), percent used (2 decimals), the start of next month, the plan''s id (free, developer …) and its name as the site shows it (Free Trial, Developer …). p_pending adds requests charged but not yet flushed from Redis.';
