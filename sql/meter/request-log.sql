-- The request log's writer: the API processes collect their answered requests in memory and record them here once a
-- second, in one call per process (src/request-log/), as api_meter. An analyst reads the log with
--   SELECT * FROM site.request_log('<client id>');
-- and usage per endpoint with site.endpoint_usage (sql/site/dashboard.sql).

CREATE OR REPLACE FUNCTION meter.request_log_cap() RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 1000;
COMMENT ON FUNCTION meter.request_log_cap() IS 'Requests the log keeps per client: the newest 1,000.';

CREATE OR REPLACE FUNCTION meter.request_log_days() RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 30;
COMMENT ON FUNCTION meter.request_log_days() IS 'Days the log keeps a request.';

-- p_rows: [{client_id, key_id, at_ms, method, path, endpoint, status, error_code, duration_ms}, ...]. A row whose key
-- is not the client's is left out; of a client's rows only its newest request_log_cap() are inserted (the others are
-- counted per endpoint all the same). Then each client written to keeps its newest request_log_cap() rows, and every
-- row older than request_log_days() before p_now goes (one index range at the old end: cheap when there is none).
CREATE OR REPLACE FUNCTION meter.record_requests(p_rows jsonb, p_now timestamptz DEFAULT now()) RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = meter, accounts, pg_temp
AS $$
DECLARE
  v_clients uuid[];
  v_n integer;
BEGIN
  WITH r AS (
    SELECT e.client_id, e.key_id, to_timestamp(e.at_ms / 1000.0) AS at, left(e.method, 16) AS method,
           left(e.path, 1024) AS path, left(e.endpoint, 200) AS endpoint, e.status, left(e.error_code, 64) AS error_code,
           greatest(e.duration_ms, 0) AS duration_ms,
           row_number() OVER (PARTITION BY e.client_id ORDER BY e.at_ms DESC) AS newest
      FROM jsonb_to_recordset(p_rows) AS e(client_id uuid, key_id uuid, at_ms float8, method text, path text,
                                           endpoint text, status smallint, error_code text, duration_ms real)
     WHERE e.at_ms IS NOT NULL AND e.method IS NOT NULL AND e.path IS NOT NULL AND e.status IS NOT NULL
       AND EXISTS (SELECT FROM accounts.api_keys k WHERE k.id = e.key_id AND k.client_id = e.client_id)
  ), logged AS (
    INSERT INTO meter.request_log (client_id, key_id, at, method, path, endpoint, status, error_code, duration_ms)
    SELECT client_id, key_id, at, method, path, endpoint, status, error_code, coalesce(duration_ms, 0) FROM r
     WHERE newest <= meter.request_log_cap()
  ), counted AS (
    INSERT INTO meter.endpoint_usage_daily AS d (client_id, day, key_id, endpoint, ok, failed)
    SELECT client_id, (at AT TIME ZONE 'UTC')::date, key_id, coalesce(endpoint, method || ' (no route)'),
           count(*) FILTER (WHERE status BETWEEN 200 AND 299), count(*) FILTER (WHERE status NOT BETWEEN 200 AND 299)
      FROM r GROUP BY 1, 2, 3, 4
    ON CONFLICT (client_id, day, key_id, endpoint) DO UPDATE SET ok = d.ok + excluded.ok, failed = d.failed + excluded.failed
  )
  SELECT array_agg(DISTINCT client_id), count(*) INTO v_clients, v_n FROM r;

  DELETE FROM meter.request_log l
   USING (SELECT c.client_id, cut.at, cut.id
            FROM unnest(v_clients) AS c(client_id)
            CROSS JOIN LATERAL (SELECT x.at, x.id FROM meter.request_log x WHERE x.client_id = c.client_id
                                 ORDER BY x.at DESC, x.id DESC OFFSET meter.request_log_cap() - 1 LIMIT 1) cut) k
   WHERE l.client_id = k.client_id AND (l.at, l.id) < (k.at, k.id);
  DELETE FROM meter.request_log WHERE at < p_now - make_interval(days => meter.request_log_days());
  RETURN v_n;
END $$;
COMMENT ON FUNCTION meter.record_requests(jsonb, timestamptz) IS
  'Records answered requests in the request log and the per-endpoint daily counts, then keeps each client''s newest request_log_cap() rows and none older than request_log_days() before p_now. Returns the rows recorded. Executable by api_meter only.';

REVOKE ALL ON FUNCTION meter.record_requests(jsonb, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION meter.record_requests(jsonb, timestamptz) TO api_meter;
