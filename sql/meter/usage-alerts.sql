-- The low-credit email's check (src/site/dashboard-alerts.ts). It reads every client with a threshold, so it is the
-- metering's (api_meter, which already records usage for any client), not the site's: api_site acts on an account
-- only through its session. The threshold itself is set through site.set_credit_alert (sql/site/dashboard.sql).

-- Once a minute per API process, on the metering's connection: every active client whose credits left
-- (meter.credits_left, every bucket, as of p_now) are below its threshold and who has had no email this billing
-- period (nor a later one: a clock set back sends nothing again), marked sent in the same statement.
-- Two processes asking at once each get a disjoint set: the row lock and the re-checked WHERE let one claim a client.
CREATE OR REPLACE FUNCTION meter.claim_low_credit_alerts(p_now timestamptz DEFAULT now())
RETURNS TABLE (client_id uuid, email text, name text, threshold bigint, credits_left bigint, period text)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
  WITH low AS (
    SELECT a.client_id, l.credits
      FROM accounts.credit_alerts a
      JOIN accounts.clients c ON c.id = a.client_id AND c.status = 'active'
     CROSS JOIN LATERAL (SELECT coalesce(sum(greatest(x.credits, 0)), 0)::bigint AS credits
                           FROM meter.credits_left(a.client_id, '{}', p_now) x) l
     WHERE coalesce(a.last_sent_period < meter.period_of(p_now), true) AND l.credits < a.threshold
  )
  UPDATE accounts.credit_alerts a SET last_sent_period = meter.period_of(p_now), last_sent_at = p_now
    FROM low, accounts.clients c
   WHERE a.client_id = low.client_id AND c.id = a.client_id
     AND coalesce(a.last_sent_period < meter.period_of(p_now), true)
  RETURNING a.client_id, coalesce((SELECT u.email FROM accounts.site_users u WHERE u.client_id = a.client_id), c.email),
            c.name, a.threshold, low.credits, a.last_sent_period
$$;
COMMENT ON FUNCTION meter.claim_low_credit_alerts(timestamptz) IS
  'Active clients whose credits left are below their low-credit threshold and who have had no email this billing period, marked as sent: the site mails each one. At most one email per client and period. Executable by api_meter only.';

REVOKE ALL ON FUNCTION meter.claim_low_credit_alerts(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION meter.claim_low_credit_alerts(timestamptz) TO api_meter;
