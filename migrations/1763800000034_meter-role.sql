-- Up Migration
-- The role that records usage: the API process's usage flush, trial cap and last-used writes connect as api_meter,
-- on a connection of their own. The request path connects as api_reader, which can no longer execute a function
-- that writes money (meter.flush_usage, meter.apply_trial_cap) or key rows (accounts.touch_keys). Grants are issued
-- by sql/meter/metering.sql and sql/accounts/auth.sql after every apply.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'api_meter') THEN
    CREATE ROLE api_meter LOGIN NOINHERIT;
  END IF;
END $$;

-- Down Migration
-- api_meter is cluster-wide and may serve other databases of the cluster: it is kept.
SELECT 1;
