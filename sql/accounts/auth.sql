-- Authentication for the API role: one indexed lookup by key hash that also returns what metering needs,
-- and a batched last-used update. SECURITY DEFINER so that api_reader never touches accounts tables directly.
DROP FUNCTION IF EXISTS accounts.authenticate(bytea);
CREATE FUNCTION accounts.authenticate(p_key_hash bytea)
RETURNS TABLE (
  key_id uuid, client_id uuid, mode text, plan text, rest boolean, mcp boolean, csv boolean, webhooks text,
  monthly_credits bigint, rpm integer, overage boolean, credit_version bigint, trial_cap_due boolean
)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  SELECT k.id, c.id, k.mode, c.plan, p.rest, p.mcp, p.csv, p.webhooks,
         CASE WHEN c.plan = 'free' THEN 0 ELSE coalesce(c.custom_monthly_credits, p.monthly_credits) END,
         coalesce(c.custom_rpm, p.rpm),
         p.overage AND c.subscription_status = 'active',
         c.credit_version,
         c.plan = 'free' AND c.trial_capped_at IS NULL AND c.signup_at <= now() - interval '7 days'
    FROM accounts.api_keys k
    JOIN accounts.clients c ON c.id = k.client_id
    JOIN accounts.plans p ON p.plan = c.plan
   WHERE k.key_hash = p_key_hash AND k.status = 'active' AND c.status = 'active'
$$;
COMMENT ON FUNCTION accounts.authenticate(bytea) IS
  'The key (by HMAC-SHA256 hash), its client and the client''s limits, only while the key is active and the client is not suspended.';

CREATE OR REPLACE FUNCTION accounts.touch_keys(p_key_ids uuid[], p_used_at timestamptz) RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  UPDATE accounts.api_keys SET last_used_at = greatest(last_used_at, p_used_at) WHERE id = ANY (p_key_ids)
$$;
COMMENT ON FUNCTION accounts.touch_keys(uuid[], timestamptz) IS
  'Batched last_used_at update: the API flushes the keys it saw every few seconds instead of writing per request.';

REVOKE ALL ON FUNCTION accounts.authenticate(bytea), accounts.touch_keys(uuid[], timestamptz)
  FROM PUBLIC, api_reader, api_meter;
GRANT USAGE ON SCHEMA accounts TO api_reader, api_meter;
GRANT EXECUTE ON FUNCTION accounts.authenticate(bytea) TO api_reader;
GRANT EXECUTE ON FUNCTION accounts.touch_keys(uuid[], timestamptz) TO api_meter;
