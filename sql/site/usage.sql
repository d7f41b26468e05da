-- Charged requests per UTC day, key and surface, from meter.usage_daily: what the account site's usage chart,
-- table and CSV show, and what an analyst in psql asks for a client:
--   SELECT * FROM site.usage_daily('<client id>', '2026-10-01', '2026-11-30');
-- Requests reach meter.usage_daily with the usage flush, about two seconds after they are answered.

CREATE OR REPLACE FUNCTION site.usage_daily(p_client_id uuid, p_from date, p_to date)
RETURNS TABLE (day date, key_id uuid, key_display text, mode text, surface text, requests bigint)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  IF p_from IS NULL OR p_to IS NULL OR p_to < p_from THEN
    PERFORM core.bad_input('p_from and p_to: a range of days, p_from first');
  END IF;
  IF p_to - p_from > 366 THEN
    PERFORM core.bad_input('p_from and p_to: at most 366 days apart');
  END IF;
  RETURN QUERY
    SELECT d.day, d.key_id, k.display, d.mode, d.surface, sum(d.requests)::bigint
      FROM meter.usage_daily d
      LEFT JOIN accounts.api_keys k ON k.id = d.key_id
     WHERE d.client_id = p_client_id AND d.day BETWEEN p_from AND p_to
     GROUP BY d.day, d.key_id, k.display, d.mode, d.surface
     ORDER BY d.day, k.display, d.key_id, d.surface;
END $$;
COMMENT ON FUNCTION site.usage_daily(uuid, date, date) IS
  'Charged requests of a client per UTC day (p_from to p_to, at most 366 days), key and surface (rest, mcp), live and test keys apart, all ledger buckets together. Example: SELECT * FROM site.usage_daily(''<client id>'', ''2026-10-01'', ''2026-11-30'');';

CREATE OR REPLACE FUNCTION site.account_usage_daily(p_session bytea, p_from date, p_to date)
RETURNS TABLE (day date, key_id uuid, key_display text, mode text, surface text, requests bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$ SELECT * FROM site.usage_daily(site.session_client(p_session), p_from, p_to) $$;
COMMENT ON FUNCTION site.account_usage_daily(bytea, date, date) IS
  'site.usage_daily for the signed-in client.';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA site FROM PUBLIC;
GRANT EXECUTE ON FUNCTION site.account_usage_daily(bytea, date, date) TO api_site;
