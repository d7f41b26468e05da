-- The delivery queue as the operator's metrics see it (src/plugins/ops-metrics.ts reads it at scrape time, through
-- the API process's api_webhooks connection): how much is waiting, and how late the oldest due delivery is.
CREATE OR REPLACE FUNCTION webhooks.queue_depth(OUT due bigint, OUT scheduled bigint, OUT outbox bigint,
  OUT oldest_due_seconds double precision)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
BEGIN
  SELECT count(*) FILTER (WHERE d.next_attempt_at <= now()),
         count(*) FILTER (WHERE d.next_attempt_at > now()),
         coalesce(extract(epoch FROM now() - min(d.next_attempt_at) FILTER (WHERE d.next_attempt_at <= now())), 0)
    INTO due, scheduled, oldest_due_seconds
    FROM webhooks.deliveries d
   WHERE d.status = 'pending';
  SELECT count(*) INTO outbox FROM webhooks.outbox;
END $$;
COMMENT ON FUNCTION webhooks.queue_depth() IS
  'The delivery queue now: pending deliveries due (due), pending ones waiting for a later retry (scheduled), imports '
  'whose events are not fanned out yet (outbox), and how many seconds the oldest due delivery has waited.';
REVOKE ALL ON FUNCTION webhooks.queue_depth() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhooks.queue_depth() TO api_webhooks;
