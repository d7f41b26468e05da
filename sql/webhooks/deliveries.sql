-- Delivery (docs/webhooks.md): the workers (src/webhooks/worker.ts, as api_webhooks) turn queued events into one
-- delivery per subscribed endpoint (fan-out), then drain each endpoint's due deliveries in event order under a lease
-- on the endpoint (one worker per endpoint at a time), record every attempt, and sweep: wake-ups that were lost,
-- leases of workers that died, retention. SECURITY DEFINER: api_webhooks reaches the tables only through these.

-- Fans out one chunk of the oldest queued import: a delivery due now for every event of the chunk and every enabled
-- endpoint of an entitled client subscribed to its type and county and registered before it happened. Returns the
-- endpoints given deliveries and whether more is queued. Two workers never take the same import (SKIP LOCKED).
CREATE OR REPLACE FUNCTION webhooks.fan_out(p_max_events integer, OUT took boolean, OUT endpoint_ids uuid[],
  OUT more boolean)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  o webhooks.outbox;
  v_last bigint;
BEGIN
  endpoint_ids := '{}';
  SELECT * INTO o FROM webhooks.outbox ORDER BY load_id LIMIT 1 FOR UPDATE SKIP LOCKED;
  took := FOUND;
  IF NOT took THEN
    more := EXISTS (SELECT 1 FROM webhooks.outbox);
    RETURN;
  END IF;
  SELECT max(c.id) INTO v_last
    FROM (SELECT e.id FROM webhooks.events e
           WHERE e.load_id = o.load_id AND e.id >= o.next_event_id ORDER BY e.id LIMIT p_max_events) c;
  IF v_last IS NOT NULL THEN
    WITH subs AS (
      SELECT e.id, t.type, e.counties, e.created_at, e.value_change_threshold
        FROM webhooks.endpoints e
        JOIN accounts.clients c ON c.id = e.client_id
        JOIN accounts.plans p ON p.plan = c.plan
       CROSS JOIN unnest(e.events) AS t(type)
       WHERE e.deleted_at IS NULL AND e.status = 'enabled' AND c.status = 'active' AND p.webhooks <> 'no'
    ), made AS (
      INSERT INTO webhooks.deliveries (endpoint_id, event_id, next_attempt_at)
      SELECT x.endpoint_id, x.event_id, now()
        FROM (SELECT s.id AS endpoint_id, ev.id AS event_id
                FROM webhooks.events ev
                JOIN subs s ON s.type = ev.type
               WHERE ev.load_id = o.load_id AND ev.id BETWEEN o.next_event_id AND v_last
                 AND (s.counties IS NULL OR ev.county_id = ANY (s.counties))
                 AND s.created_at <= ev.created_at
                 -- each endpoint's own threshold (docs/history.md#webhooks)
                 AND (ev.type <> 'parcel.value_changed'
                      OR abs(webhooks.value_change_pct(ev.data, ev.previous)) > s.value_change_threshold)
              UNION ALL
              -- saved_search.matched: to the endpoints the event names (docs/saved-searches.md)
              SELECT s.id, ev.id
                FROM webhooks.events ev
                JOIN (SELECT DISTINCT subs.id FROM subs) s ON s.id = ANY (ev.endpoint_ids)
               WHERE ev.load_id = o.load_id AND ev.id BETWEEN o.next_event_id AND v_last
                 AND ev.endpoint_ids IS NOT NULL) x
       ORDER BY x.event_id
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING webhooks.deliveries.endpoint_id)
    SELECT coalesce(array_agg(DISTINCT made.endpoint_id), '{}') INTO endpoint_ids FROM made;
  END IF;
  IF v_last IS NULL OR NOT EXISTS (SELECT 1 FROM webhooks.events e WHERE e.load_id = o.load_id AND e.id > v_last) THEN
    DELETE FROM webhooks.outbox WHERE load_id = o.load_id;
  ELSE
    UPDATE webhooks.outbox SET next_event_id = v_last + 1 WHERE load_id = o.load_id;
  END IF;
  more := EXISTS (SELECT 1 FROM webhooks.outbox);
END $$;
COMMENT ON FUNCTION webhooks.fan_out(integer) IS
  'Turns up to p_max_events queued events of the oldest queued import no other worker is fanning out into deliveries '
  '(due now) for the endpoints subscribed to them; returns whether it took an import, those endpoints, and whether '
  'anything is left to fan out.';

-- Takes the endpoint's lease for p_worker (unless another live worker holds it, or the endpoint is resting after
-- failures) and returns what signing and sending need, and the client (a worker gives each client a share of its
-- slots); no row when the lease was not taken.
DROP FUNCTION IF EXISTS webhooks.acquire_endpoint(uuid, text, integer);
CREATE FUNCTION webhooks.acquire_endpoint(p_endpoint_id uuid, p_worker text, p_lease_ms integer)
RETURNS TABLE (url text, secret_box bytea, old_secret_box bytea, lease_until timestamptz, client_id uuid)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
  UPDATE webhooks.endpoints e
     SET lease_owner = p_worker, lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond'
   WHERE e.id = p_endpoint_id
     AND (e.lease_until IS NULL OR e.lease_until < clock_timestamp() OR e.lease_owner = p_worker)
  RETURNING e.url, e.secret_box,
            CASE WHEN e.old_secret_until > clock_timestamp() THEN e.old_secret_box END,
            e.lease_until, e.client_id
$$;
COMMENT ON FUNCTION webhooks.acquire_endpoint(uuid, text, integer) IS
  'Gives p_worker the endpoint''s lease for p_lease_ms (the only worker sending to it, so its deliveries go out in '
  'order) and returns its URL, encrypted secrets (the previous one only while it still signs) and client; no row when '
  'another worker holds the lease or the endpoint rests after failures.';

CREATE OR REPLACE FUNCTION webhooks.renew_lease(p_endpoint_id uuid, p_worker text, p_lease_ms integer)
RETURNS timestamptz
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
  UPDATE webhooks.endpoints e SET lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond'
   WHERE e.id = p_endpoint_id AND e.lease_owner = p_worker
  RETURNING e.lease_until
$$;
COMMENT ON FUNCTION webhooks.renew_lease(uuid, text, integer) IS
  'Extends p_worker''s lease on the endpoint; NULL when the worker no longer holds it.';

-- Skips every pending delivery of an endpoint that may not receive (disabled, deleted, client not entitled).
CREATE OR REPLACE FUNCTION webhooks.skip_pending(p_endpoint_id uuid, p_reason text) RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
  UPDATE webhooks.deliveries d
     SET status = 'skipped', next_attempt_at = NULL, claimed_until = NULL, finished_at = now(), reason = p_reason
   WHERE d.endpoint_id = p_endpoint_id AND d.status = 'pending'
$$;
COMMENT ON FUNCTION webhooks.skip_pending(uuid, text) IS
  'Marks every pending delivery of the endpoint skipped with the reason (it will not be sent).';

-- Claims the next due deliveries of the endpoint, oldest event first, for the lease holder. A delivery still claimed
-- by a worker that stopped (its claim ran out) gets an attempt recorded as interrupted: the receiver may or may not
-- have received it, and it is sent again with the same webhook-id. Nothing is claimed (and everything pending is
-- skipped) when the endpoint may not receive any more.
CREATE OR REPLACE FUNCTION webhooks.claim_deliveries(p_endpoint_id uuid, p_worker text, p_limit integer,
  p_lease_ms integer, p_max_attempts integer)
RETURNS TABLE (delivery_id bigint, attempt integer, manual boolean, event_id text, type text, created_at text,
               data text, previous text)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  e webhooks.endpoints;
  v_until timestamptz := clock_timestamp() + p_lease_ms * interval '1 millisecond';
BEGIN
  UPDATE webhooks.endpoints x SET lease_until = v_until
   WHERE x.id = p_endpoint_id AND x.lease_owner = p_worker
  RETURNING x.* INTO e;
  IF NOT FOUND THEN RETURN; END IF;
  IF e.deleted_at IS NOT NULL THEN
    PERFORM webhooks.skip_pending(p_endpoint_id, 'the endpoint was deleted');
    RETURN;
  ELSIF e.status <> 'enabled' THEN
    PERFORM webhooks.skip_pending(p_endpoint_id, 'the endpoint is disabled');
    RETURN;
  ELSIF NOT webhooks.client_entitled(e.client_id) THEN
    PERFORM webhooks.skip_pending(p_endpoint_id, 'the client is suspended or its plan does not include webhooks');
    RETURN;
  END IF;
  RETURN QUERY
  WITH due AS (
    SELECT d.id, d.attempts, d.manual, d.claimed_until IS NOT NULL AS interrupted
      FROM webhooks.deliveries d
     WHERE d.endpoint_id = p_endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= clock_timestamp()
     ORDER BY d.event_id
     LIMIT p_limit
       FOR UPDATE),
  lost AS (
    INSERT INTO webhooks.attempts (delivery_id, attempt, attempted_at, duration_ms, error)
    SELECT due.id, due.attempts + 1, clock_timestamp(), 0,
           'interrupted: the worker stopped before the answer was recorded; sent again with the same webhook-id'
      FROM due WHERE due.interrupted),
  claimed AS (
    UPDATE webhooks.deliveries d
       SET attempts = d.attempts + due.interrupted::int,
           status = CASE WHEN d.attempts + due.interrupted::int >= p_max_attempts THEN 'failed' ELSE 'pending' END,
           next_attempt_at = CASE WHEN d.attempts + due.interrupted::int >= p_max_attempts THEN NULL ELSE d.next_attempt_at END,
           finished_at = CASE WHEN d.attempts + due.interrupted::int >= p_max_attempts THEN now() END,
           reason = CASE WHEN d.attempts + due.interrupted::int >= p_max_attempts THEN 'every attempt failed' END,
           claimed_until = CASE WHEN d.attempts + due.interrupted::int >= p_max_attempts THEN NULL ELSE v_until END
      FROM due WHERE d.id = due.id
    RETURNING d.id, d.attempts, d.manual, d.event_id, d.status)
  SELECT c.id, c.attempts + 1, c.manual, webhooks.public_id('evt_', ev.id), ev.type, webhooks.iso_ms(ev.created_at),
         webhooks.event_data(ev)::text, ev.previous::text
    FROM claimed c JOIN webhooks.events ev ON ev.id = c.event_id
   WHERE c.status = 'pending'
   ORDER BY c.event_id;
END $$;
COMMENT ON FUNCTION webhooks.claim_deliveries(uuid, text, integer, integer, integer) IS
  'For the lease holder: up to p_limit due deliveries of the endpoint, oldest event first, claimed for the lease, with '
  'the attempt number and the event (data and previous as JSON text). A claim left by a stopped worker is recorded as '
  'an interrupted attempt. No rows when the worker lost the lease; when the endpoint may not receive, its pending '
  'deliveries are skipped.';

-- Applies a batch of attempt results (p_results: [{ delivery_id, attempt, attempted_at, duration_ms, status_code,
-- error, ok, next_attempt_at }]; next_attempt_at null on a failure means no retry is left) and releases the claims
-- of p_unsent. The failure streak: p_success says whether any attempt succeeded, p_failing_since is the time of the
-- first failure after the last success (null if none). An endpoint failing for p_disable_after_ms is disabled with
-- the reason, and its pending deliveries skipped.
CREATE OR REPLACE FUNCTION webhooks.record_attempts(p_endpoint_id uuid, p_results jsonb, p_unsent bigint[],
  p_success boolean, p_failing_since timestamptz, p_disable_after_ms bigint) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  e webhooks.endpoints;
BEGIN
  WITH r AS (
    SELECT * FROM jsonb_to_recordset(p_results) AS x(delivery_id bigint, attempt integer, attempted_at timestamptz,
           duration_ms integer, status_code integer, error text, ok boolean, next_attempt_at timestamptz)),
  logged AS (
    INSERT INTO webhooks.attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, error)
    SELECT r.delivery_id, r.attempt, r.attempted_at, r.duration_ms, r.status_code, left(r.error, 500) FROM r
    ON CONFLICT (delivery_id, attempt) DO NOTHING)
  UPDATE webhooks.deliveries d
     SET attempts = greatest(d.attempts, r.attempt),
         status = CASE WHEN r.ok THEN 'delivered' WHEN r.next_attempt_at IS NULL THEN 'failed' ELSE 'pending' END,
         next_attempt_at = CASE WHEN r.ok THEN NULL ELSE r.next_attempt_at END,
         finished_at = CASE WHEN r.ok OR r.next_attempt_at IS NULL THEN now() END,
         reason = CASE WHEN r.ok THEN NULL WHEN r.next_attempt_at IS NULL THEN
                    CASE WHEN d.manual THEN 'the retry asked for failed' ELSE 'every attempt failed' END END,
         manual = CASE WHEN r.ok OR r.next_attempt_at IS NULL THEN false ELSE d.manual END,
         claimed_until = NULL
    FROM r
   WHERE d.id = r.delivery_id AND d.endpoint_id = p_endpoint_id AND d.status = 'pending';

  UPDATE webhooks.deliveries d SET claimed_until = NULL
   WHERE d.id = ANY (p_unsent) AND d.endpoint_id = p_endpoint_id AND d.status = 'pending';

  UPDATE webhooks.endpoints x
     SET failing_since = CASE WHEN p_success THEN p_failing_since ELSE coalesce(x.failing_since, p_failing_since) END
   WHERE x.id = p_endpoint_id
  RETURNING x.* INTO e;
  IF e.status = 'enabled' AND e.failing_since <= clock_timestamp() - p_disable_after_ms * interval '1 millisecond' THEN
    UPDATE webhooks.endpoints x
       SET status = 'disabled', updated_at = now(),
           disabled_reason = format('disabled automatically: every delivery attempt since %s failed (the last: %s)',
                                    webhooks.iso_ms(e.failing_since),
                                    coalesce((SELECT coalesce(r.error, 'HTTP ' || r.status_code)
                                                FROM jsonb_to_recordset(p_results) AS r(error text, status_code integer, ok boolean)
                                               WHERE NOT r.ok LIMIT 1), 'a failure'))
     WHERE x.id = p_endpoint_id;
    PERFORM webhooks.skip_pending(p_endpoint_id, 'the endpoint was disabled after failing');
    RETURN false;
  END IF;
  RETURN true;
END $$;
COMMENT ON FUNCTION webhooks.record_attempts(uuid, jsonb, bigint[], boolean, timestamptz, bigint) IS
  'Records a batch of attempts (delivered, retry at next_attempt_at, or failed when none is left), releases unsent '
  'claims, keeps the endpoint''s failure streak and disables it (with the reason) once the streak is older than '
  'p_disable_after_ms. Returns false when the endpoint was disabled.';

-- Gives up the lease (or keeps the endpoint resting until p_rest_until after repeated failures) and says what is
-- left: whether a delivery is due now, and when the next one is.
CREATE OR REPLACE FUNCTION webhooks.release_endpoint(p_endpoint_id uuid, p_worker text, p_rest_until timestamptz,
  OUT due_now boolean, OUT next_at timestamptz)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
BEGIN
  UPDATE webhooks.endpoints e SET lease_owner = NULL, lease_until = p_rest_until
   WHERE e.id = p_endpoint_id AND e.lease_owner = p_worker;
  SELECT min(d.next_attempt_at) INTO next_at
    FROM webhooks.deliveries d WHERE d.endpoint_id = p_endpoint_id AND d.status = 'pending';
  next_at := greatest(next_at, p_rest_until);
  due_now := next_at <= clock_timestamp();
END $$;
COMMENT ON FUNCTION webhooks.release_endpoint(uuid, text, timestamptz) IS
  'Ends the worker''s lease on the endpoint (keeping it resting until p_rest_until when given); returns whether a '
  'pending delivery is due now and when the earliest is due (not before the rest ends).';

-- The periodic sweep: whether imports wait for the fan-out, which endpoints have due deliveries and no live lease
-- (a lost wake-up, or a worker that died holding one), and a bounded purge: deliveries and events older than the
-- retention, deleted endpoints' deliveries, then the endpoints themselves.
CREATE OR REPLACE FUNCTION webhooks.sweep(p_retention_ms bigint, p_purge_limit integer,
  OUT outbox_pending boolean, OUT due_endpoints uuid[], OUT purged integer)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  v_cutoff timestamptz := now() - p_retention_ms * interval '1 millisecond';
  n integer;
BEGIN
  -- imports with events to fan out, or not yet matched against the saved searches (saved.match_next)
  outbox_pending := EXISTS (SELECT 1 FROM webhooks.outbox) OR EXISTS (SELECT 1 FROM saved.queued_loads);
  SELECT coalesce(array_agg(e.id), '{}') INTO due_endpoints
    FROM webhooks.endpoints e
   WHERE (e.lease_until IS NULL OR e.lease_until < clock_timestamp())
     AND EXISTS (SELECT 1 FROM webhooks.deliveries d
                  WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= clock_timestamp());
  purged := 0;
  DELETE FROM webhooks.deliveries d
   WHERE d.id IN (SELECT x.id FROM webhooks.deliveries x
                   WHERE x.status <> 'pending' AND x.finished_at < v_cutoff LIMIT p_purge_limit);
  GET DIAGNOSTICS n = ROW_COUNT;
  purged := purged + n;
  DELETE FROM webhooks.deliveries d
   WHERE d.id IN (SELECT x.id FROM webhooks.deliveries x JOIN webhooks.endpoints e ON e.id = x.endpoint_id
                   WHERE e.deleted_at IS NOT NULL LIMIT p_purge_limit);
  GET DIAGNOSTICS n = ROW_COUNT;
  purged := purged + n;
  DELETE FROM webhooks.endpoints e
   WHERE e.deleted_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhooks.deliveries d WHERE d.endpoint_id = e.id);
  -- the oldest events first (ids follow time), so no index on created_at is needed (the imports write none)
  DELETE FROM webhooks.events ev
   WHERE ev.id IN (SELECT x.id FROM (SELECT * FROM webhooks.events ORDER BY id LIMIT p_purge_limit) x
                    WHERE x.created_at < v_cutoff
                      AND NOT EXISTS (SELECT 1 FROM webhooks.deliveries d WHERE d.event_id = x.id)
                      AND NOT EXISTS (SELECT 1 FROM webhooks.outbox o WHERE o.load_id = x.load_id));
  GET DIAGNOSTICS n = ROW_COUNT;
  purged := purged + n;
  UPDATE webhooks.endpoints e SET old_secret_box = NULL, old_secret_until = NULL
   WHERE e.old_secret_until < clock_timestamp();
END $$;
COMMENT ON FUNCTION webhooks.sweep(bigint, integer) IS
  'Run every few seconds by a worker: reports queued imports (events to fan out or saved searches to match) and '
  'endpoints with due deliveries but no live lease, purges up to p_purge_limit deliveries and events older than the '
  'retention (and deleted endpoints), and forgets previous secrets past their overlap.';
