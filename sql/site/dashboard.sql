-- The account dashboard's reads and settings: the request log, usage per endpoint and key over a date range, key
-- names, and the low-credit email. Each read takes a client id (what an analyst in psql asks) and has a twin that
-- takes the site's session, which alone api_site may execute.
--   SELECT * FROM site.request_log('<client id>', p_status => '4xx');
--   SELECT * FROM site.endpoint_usage('<client id>', '2026-10-01', '2026-11-30');

-- p_status: null for every request; 2xx, 3xx, 4xx, 5xx; errors (400 and above); or one status code.
-- p_search: a piece of the path, the endpoint or the error code (any case). Newest first; total is the count of
-- matching rows, for paging.
CREATE OR REPLACE FUNCTION site.request_log(
  p_client_id uuid, p_status text DEFAULT NULL, p_search text DEFAULT NULL, p_limit integer DEFAULT 100,
  p_offset integer DEFAULT 0, p_now timestamptz DEFAULT now())
RETURNS TABLE (at timestamptz, key_id uuid, key_display text, key_name text, method text, path text, endpoint text,
               status smallint, error_code text, duration_ms real, total bigint)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_status text := nullif(lower(btrim(p_status)), '');
  v_search text := nullif(btrim(p_search), '');
  v_low int;
  v_high int;
BEGIN
  IF v_status IS NULL THEN v_low := 0; v_high := 999;
  ELSIF v_status = 'errors' THEN v_low := 400; v_high := 999;
  ELSIF v_status ~ '^[1-5]xx$' THEN v_low := left(v_status, 1)::int * 100; v_high := v_low + 99;
  ELSIF v_status ~ '^[1-5][0-9]{2}$' THEN v_low := v_status::int; v_high := v_low;
  ELSE PERFORM core.bad_input('status: 2xx, 3xx, 4xx, 5xx, errors, or a status code such as 429');
  END IF;
  IF length(v_search) > 100 THEN PERFORM core.bad_input('search: at most 100 characters'); END IF;
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND meter.request_log_cap() THEN
    PERFORM core.bad_input(format('limit: 1 to %s', meter.request_log_cap()));
  END IF;
  IF p_offset IS NULL OR p_offset NOT BETWEEN 0 AND meter.request_log_cap() THEN
    PERFORM core.bad_input(format('offset: 0 to %s', meter.request_log_cap()));
  END IF;
  RETURN QUERY
    SELECT l.at, l.key_id, k.display, k.name, l.method, l.path, l.endpoint, l.status, l.error_code, l.duration_ms,
           count(*) OVER ()
      FROM (SELECT * FROM meter.request_log x
             WHERE x.client_id = p_client_id AND x.at >= p_now - make_interval(days => meter.request_log_days())
             ORDER BY x.at DESC, x.id DESC LIMIT meter.request_log_cap()) l
      LEFT JOIN accounts.api_keys k ON k.id = l.key_id
     WHERE l.status BETWEEN v_low AND v_high
       AND (v_search IS NULL
            OR strpos(lower(l.path), lower(v_search)) > 0
            OR strpos(lower(coalesce(l.endpoint, '')), lower(v_search)) > 0
            OR strpos(lower(coalesce(l.error_code, '')), lower(v_search)) > 0)
     ORDER BY l.at DESC, l.id DESC
     LIMIT p_limit OFFSET p_offset;
END $$;
COMMENT ON FUNCTION site.request_log(uuid, text, text, integer, integer, timestamptz) IS
  'A client''s request log, newest first: its last 1,000 requests of the 30 days before p_now, filtered by status (2xx, 3xx, 4xx, 5xx, errors, or a code) and a piece of the path, endpoint or error code; total counts the matching rows. Example: SELECT * FROM site.request_log(''<client id>'', p_status => ''errors'');';

CREATE OR REPLACE FUNCTION site.account_request_log(
  p_session bytea, p_status text DEFAULT NULL, p_search text DEFAULT NULL, p_limit integer DEFAULT 100,
  p_offset integer DEFAULT 0)
RETURNS TABLE (at timestamptz, key_id uuid, key_display text, key_name text, method text, path text, endpoint text,
               status smallint, error_code text, duration_ms real, total bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$ SELECT * FROM site.request_log(site.session_client(p_session), p_status, p_search, p_limit, p_offset) $$;
COMMENT ON FUNCTION site.account_request_log(bytea, text, text, integer, integer) IS
  'site.request_log for the signed-in client.';

-- Requests per endpoint and key from p_from to p_to (UTC days, at most 366 apart): ok answered 2xx (charged), failed
-- any other status. Busiest endpoint first.
CREATE OR REPLACE FUNCTION site.endpoint_usage(p_client_id uuid, p_from date, p_to date)
RETURNS TABLE (endpoint text, key_id uuid, key_display text, key_name text, mode text, ok bigint, failed bigint)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  IF p_from IS NULL OR p_to IS NULL OR p_to < p_from THEN
    PERFORM core.bad_input('from and to: a range of days, from first');
  END IF;
  IF p_to - p_from > 366 THEN PERFORM core.bad_input('from and to: at most 366 days apart'); END IF;
  RETURN QUERY
    SELECT d.endpoint, d.key_id, k.display, k.name, k.mode, sum(d.ok)::bigint, sum(d.failed)::bigint
      FROM meter.endpoint_usage_daily d
      LEFT JOIN accounts.api_keys k ON k.id = d.key_id
     WHERE d.client_id = p_client_id AND d.day BETWEEN p_from AND p_to
     GROUP BY d.endpoint, d.key_id, k.display, k.name, k.mode
     ORDER BY sum(sum(d.ok + d.failed)) OVER (PARTITION BY d.endpoint) DESC, d.endpoint, sum(d.ok + d.failed) DESC, k.display;
END $$;
COMMENT ON FUNCTION site.endpoint_usage(uuid, date, date) IS
  'A client''s requests per endpoint (the route matched) and key from p_from to p_to (UTC days, at most 366 apart): ok answered 2xx (charged), failed any other status. Example: SELECT * FROM site.endpoint_usage(''<client id>'', ''2026-10-01'', ''2026-11-30'');';

CREATE OR REPLACE FUNCTION site.account_endpoint_usage(p_session bytea, p_from date, p_to date)
RETURNS TABLE (endpoint text, key_id uuid, key_display text, key_name text, mode text, ok bigint, failed bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$ SELECT * FROM site.endpoint_usage(site.session_client(p_session), p_from, p_to) $$;
COMMENT ON FUNCTION site.account_endpoint_usage(bytea, date, date) IS 'site.endpoint_usage for the signed-in client.';

-- A key's name: 1 to 60 characters, no control characters; an empty name removes it.
CREATE OR REPLACE FUNCTION site.key_name(p_name text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
  v_name text := nullif(regexp_replace(btrim(p_name), '\s+', ' ', 'g'), '');
BEGIN
  IF length(v_name) > 60 THEN PERFORM core.bad_input('name: at most 60 characters'); END IF;
  IF v_name ~ '[[:cntrl:]]' THEN PERFORM core.bad_input('name: letters, digits, spaces and punctuation only'); END IF;
  RETURN v_name;
END $$;
COMMENT ON FUNCTION site.key_name(text) IS 'A key name as stored: trimmed, spaces collapsed, null when empty; 22023 beyond 60 characters.';

CREATE OR REPLACE FUNCTION site.rename_key(p_session bytea, p_key_id uuid, p_name text)
RETURNS TABLE (id uuid, display text, name text)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  UPDATE accounts.api_keys k SET name = site.key_name(p_name)
   WHERE k.id = p_key_id AND k.client_id = site.session_client(p_session)
  RETURNING k.id, k.display, k.name
$$;
COMMENT ON FUNCTION site.rename_key(bytea, uuid, text) IS
  'Names (or, with an empty name, unnames) one of the signed-in client''s keys, revoked ones too; no row for another client''s.';

-- The low-credit email: the threshold the customer set (no row: none set) and the period it was last sent in.
CREATE OR REPLACE FUNCTION site.credit_alert(p_session bytea)
RETURNS TABLE (threshold bigint, last_sent_period text, last_sent_at timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  SELECT threshold, last_sent_period, last_sent_at FROM accounts.credit_alerts
   WHERE client_id = site.session_client(p_session)
$$;
COMMENT ON FUNCTION site.credit_alert(bytea) IS 'The signed-in client''s low-credit threshold and when the email was last sent.';

-- A null threshold turns the email off. A changed threshold may send again this period: it is a new question.
CREATE OR REPLACE FUNCTION site.set_credit_alert(p_session bytea, p_threshold bigint)
RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
DECLARE
  v_client uuid := site.session_client(p_session);
BEGIN
  IF p_threshold IS NULL THEN
    DELETE FROM accounts.credit_alerts WHERE client_id = v_client;
    RETURN;
  END IF;
  IF p_threshold NOT BETWEEN 1 AND 1000000000 THEN
    PERFORM core.bad_input('threshold: a whole number of credits from 1 to 1,000,000,000');
  END IF;
  INSERT INTO accounts.credit_alerts AS a (client_id, threshold) VALUES (v_client, p_threshold)
  ON CONFLICT (client_id) DO UPDATE SET threshold = excluded.threshold,
    last_sent_period = CASE WHEN a.threshold = excluded.threshold THEN a.last_sent_period END,
    last_sent_at = CASE WHEN a.threshold = excluded.threshold THEN a.last_sent_at END;
END $$;
COMMENT ON FUNCTION site.set_credit_alert(bytea, bigint) IS
  'Sets the signed-in client''s low-credit threshold (1 to 1e9 credits), or turns the email off with null.';

GRANT EXECUTE ON FUNCTION site.account_request_log(bytea, text, text, integer, integer),
  site.account_endpoint_usage(bytea, date, date), site.rename_key(bytea, uuid, text), site.credit_alert(bytea),
  site.set_credit_alert(bytea, bigint) TO api_site;
