-- The signed-in client's account on the site: the overview, credits left by bucket, keys, and the public price
-- list. Every function that touches an account takes the session (SHA-256 of its cookie token), not a client id, so
-- api_site can act on an account only while someone is signed in to it.

CREATE OR REPLACE FUNCTION site.max_active_keys() RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 20;
COMMENT ON FUNCTION site.max_active_keys() IS 'Active keys an account may hold at once.';

CREATE OR REPLACE FUNCTION site.keys_per_day() RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 50;
COMMENT ON FUNCTION site.keys_per_day() IS 'Keys an account may create in 24 hours (revoked ones included).';

-- p_pending / p_test_pending: the client's Redis hashes of requests charged but not flushed yet (pend:<client> and
-- pend:<client>:test), so the figures match /v1/account/usage, which counts them too.
CREATE OR REPLACE FUNCTION site.account(p_session bytea, p_pending jsonb DEFAULT '{}', p_test_pending jsonb DEFAULT '{}')
RETURNS TABLE (
  client_id uuid, name text, email text, client_status text, signup_at timestamptz, trial_capped_at timestamptz,
  plan text, plan_name text, subscription_status text, price_cents integer, rpm integer,
  rest boolean, mcp boolean, csv boolean, webhooks text, overage_allowed boolean,
  events_count bigint, monthly_quota bigint, percent_used float8, reset_date text,
  overage_credits bigint, overage_cents integer, test_events bigint, test_quota bigint
)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_client uuid := site.session_client(p_session);
  v_period text := meter.period_of(now());
  v_month date := date_trunc('month', now() AT TIME ZONE 'UTC')::date;
  v_today date := (now() AT TIME ZONE 'UTC')::date;
BEGIN
  RETURN QUERY
  WITH live AS (
    SELECT * FROM api.get_account_usage(v_client, 'live', coalesce((p_pending ->> ('n:' || v_period))::bigint, 0))
  ), test AS (
    SELECT * FROM api.get_account_usage(v_client, 'test', coalesce((p_test_pending ->> ('n:' || v_period))::bigint, 0))
  ), overage_days AS (
    -- as meter.overage_invoice_lines bills it: per UTC day, $0.005 a credit rounded up to $0.05
    SELECT x.day, sum(x.n) AS n
      FROM (SELECT d.day, d.requests AS n FROM meter.usage_daily d
             WHERE d.client_id = v_client AND d.bucket = 'overage' AND d.day >= v_month
            UNION ALL
            SELECT v_today, coalesce((p_pending ->> ('o:' || v_period))::bigint, 0)) x
     GROUP BY x.day HAVING sum(x.n) > 0
  ), overage AS (
    SELECT coalesce(sum(n), 0)::bigint AS credits, coalesce(sum(ceil(n / 10.0) * 5), 0)::int AS cents FROM overage_days
  )
  SELECT c.id, c.name, c.email, c.status, c.signup_at, c.trial_capped_at,
         c.plan, p.display_name, c.subscription_status, p.price_cents, coalesce(c.custom_rpm, p.rpm),
         p.rest, p.mcp, p.csv, p.webhooks, p.overage AND c.subscription_status = 'active',
         live.events_count, live.monthly_quota, live.percent_used, live.reset_date,
         overage.credits, overage.cents, test.events_count, test.monthly_quota
    FROM accounts.clients c JOIN accounts.plans p USING (plan), live, test, overage
   WHERE c.id = v_client;
END $$;
COMMENT ON FUNCTION site.account(bytea, jsonb, jsonb) IS
  'The signed-in client''s overview: plan and its features, per-minute limit, this month''s usage against the quota (as /v1/account/usage), overage so far in credits and cents (billed per day, rounded up to $0.05), the test keys'' pool.';

CREATE OR REPLACE FUNCTION site.account_credits(p_session bytea, p_pending jsonb DEFAULT '{}')
RETURNS TABLE (spend_order int, bucket text, pack_id uuid, pack text, expires_at timestamptz, credits bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$ SELECT * FROM meter.credits_left(site.session_client(p_session), p_pending) $$;
COMMENT ON FUNCTION site.account_credits(bytea, jsonb) IS
  'The signed-in client''s credits left by bucket in spending order (meter.credits_left): the figures `admin client show` prints.';

CREATE OR REPLACE FUNCTION site.list_keys(p_session bytea)
RETURNS TABLE (id uuid, mode text, display text, status text, created_at timestamptz, revoked_at timestamptz,
               last_used_at timestamptz, name text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  SELECT id, mode, display, status, created_at, revoked_at, last_used_at, name
    FROM accounts.api_keys
   WHERE client_id = site.session_client(p_session)
   ORDER BY status = 'revoked', created_at DESC, id
   LIMIT 200
$$;
COMMENT ON FUNCTION site.list_keys(bytea) IS
  'The signed-in client''s keys (display form only), active first, newest first; at most 200.';

-- The site makes the key and its HMAC (the secret stays in the API process); only the hash and the display form
-- come here, as with `admin key create`. The name is optional (site.key_name).
CREATE OR REPLACE FUNCTION site.create_key(p_session bytea, p_mode text, p_key_hash bytea, p_display text,
                                           p_name text DEFAULT NULL)
RETURNS TABLE (id uuid, mode text, display text, status text, created_at timestamptz, name text)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_client uuid := site.session_client(p_session);
  v_status text;
BEGIN
  IF p_mode IS NULL OR p_mode NOT IN ('live', 'test') THEN PERFORM core.bad_input('mode: live or test'); END IF;
  IF p_display IS NULL OR p_display !~ ('^flprop_' || p_mode || '_…[0-9A-Za-z]{4}$') THEN
    PERFORM core.bad_input('display: the key''s prefix, mode and last four characters');
  END IF;
  SELECT c.status INTO v_status FROM accounts.clients c WHERE c.id = v_client FOR UPDATE;
  IF v_status <> 'active' THEN
    PERFORM core.bad_input('This account is suspended: no key can be created. Write to us to reopen it.');
  END IF;
  IF (SELECT count(*) FROM accounts.api_keys k WHERE k.client_id = v_client AND k.status = 'active') >= site.max_active_keys() THEN
    PERFORM core.bad_input(format('You have %s active keys, the most an account may hold: revoke one first.', site.max_active_keys()));
  END IF;
  IF (SELECT count(*) FROM accounts.api_keys k WHERE k.client_id = v_client AND k.created_at > now() - interval '1 day')
       >= site.keys_per_day() THEN
    PERFORM core.bad_input(format('You have created %s keys in the last 24 hours, the most allowed: try again later.', site.keys_per_day()));
  END IF;
  RETURN QUERY
    INSERT INTO accounts.api_keys AS k (client_id, mode, key_hash, display, name)
    VALUES (v_client, p_mode, p_key_hash, p_display, site.key_name(p_name))
    RETURNING k.id, k.mode, k.display, k.status, k.created_at, k.name;
END $$;
COMMENT ON FUNCTION site.create_key(bytea, text, bytea, text, text) IS
  'Creates a key for the signed-in client from its HMAC, display form and optional name; refused for a suspended client, beyond site.max_active_keys() active keys or site.keys_per_day() a day.';

CREATE OR REPLACE FUNCTION site.get_key(p_session bytea, p_key_id uuid)
RETURNS TABLE (id uuid, mode text, display text, status text, created_at timestamptz, revoked_at timestamptz,
               last_used_at timestamptz, name text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  SELECT id, mode, display, status, created_at, revoked_at, last_used_at, name
    FROM accounts.api_keys WHERE id = p_key_id AND client_id = site.session_client(p_session)
$$;
COMMENT ON FUNCTION site.get_key(bytea, uuid) IS 'One of the signed-in client''s keys; no row for another client''s.';

-- Revocation reaches every API process at commit (NOTIFY accounts_changed, migration 33); the site also drops the
-- client's Redis balance, as `admin key revoke` does, so the key's next request is refused.
CREATE OR REPLACE FUNCTION site.revoke_key(p_session bytea, p_key_id uuid)
RETURNS TABLE (id uuid, client_id uuid, display text, status text, revoked_at timestamptz)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_client uuid := site.session_client(p_session);
BEGIN
  RETURN QUERY
    UPDATE accounts.api_keys k SET status = 'revoked', revoked_at = coalesce(k.revoked_at, now())
     WHERE k.id = p_key_id AND k.client_id = v_client
    RETURNING k.id, k.client_id, k.display, k.status, k.revoked_at;
END $$;
COMMENT ON FUNCTION site.revoke_key(bytea, uuid) IS
  'Revokes one of the signed-in client''s keys (no row for another client''s); its next request is refused.';

CREATE OR REPLACE FUNCTION site.plans()
RETURNS TABLE (plan text, display_name text, monthly_credits bigint, rpm integer, rest boolean, mcp boolean,
               csv boolean, webhooks text, overage boolean, price_cents integer)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  SELECT plan, display_name, monthly_credits, rpm, rest, mcp, csv, webhooks, overage, price_cents
    FROM accounts.plans ORDER BY price_cents NULLS LAST, plan
$$;
COMMENT ON FUNCTION site.plans() IS 'The plans and their prices (cents a month; null: custom), cheapest first.';

CREATE OR REPLACE FUNCTION site.packs() RETURNS TABLE (pack text, display_name text, credits bigint, price_cents integer)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$ SELECT pack, display_name, credits, price_cents FROM accounts.pack_types ORDER BY credits $$;
COMMENT ON FUNCTION site.packs() IS 'The one-time credit packs and their prices (cents), smallest first.';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA site FROM PUBLIC;
GRANT EXECUTE ON FUNCTION site.account(bytea, jsonb, jsonb), site.account_credits(bytea, jsonb), site.list_keys(bytea),
  site.create_key(bytea, text, bytea, text, text), site.get_key(bytea, uuid), site.revoke_key(bytea, uuid), site.plans(),
  site.packs()
  TO api_site;
