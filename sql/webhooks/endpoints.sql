-- The management API's reads and writes (GET/POST/PATCH/DELETE /v1/webhooks…, src/queries/webhooks.ts), as
-- api_webhooks. Every function takes the calling client's id and touches only that client's endpoints: another
-- client's endpoint is "not found". Bad input raises 22023 naming the field (HTTP 400). The URL's form and address
-- are checked by the API before it calls (src/webhooks/ssrf.ts); the secret arrives encrypted.

CREATE OR REPLACE FUNCTION webhooks.endpoint_public_id(p_id uuid) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 'ep_' || replace(p_id::text, '-', '');
COMMENT ON FUNCTION webhooks.endpoint_public_id(uuid) IS 'The public id of an endpoint: ep_ and 32 hex digits.';

CREATE OR REPLACE FUNCTION webhooks.endpoint_json(e webhooks.endpoints) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT json_build_object(
    'id', webhooks.endpoint_public_id(e.id), 'url', e.url, 'description', e.description,
    'events', to_json(e.events),
    'counties', (SELECT json_agg(c.slug ORDER BY c.slug) FROM core.counties c WHERE c.id = ANY (e.counties)),
    'status', e.status, 'disabled_reason', e.disabled_reason, 'value_change_threshold', e.value_change_threshold::float8,
    'previous_secret_expires_at', CASE WHEN e.old_secret_until > clock_timestamp() THEN webhooks.iso_ms(e.old_secret_until) END,
    'created_at', webhooks.iso_ms(e.created_at), 'updated_at', webhooks.iso_ms(e.updated_at))
$$;
COMMENT ON FUNCTION webhooks.endpoint_json(webhooks.endpoints) IS
  'An endpoint as the API shows it (never its secret): counties as slugs (null: every county).';

CREATE OR REPLACE FUNCTION webhooks.checked_events(p_events text[]) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
  v_unknown text;
BEGIN
  IF p_events IS NULL OR cardinality(p_events) = 0 THEN
    PERFORM core.bad_input('events: give at least one event type (' || array_to_string(webhooks.event_types(), ', ') || ')');
  END IF;
  SELECT t INTO v_unknown FROM unnest(p_events) t WHERE t IS NULL OR NOT t = ANY (webhooks.event_types()) LIMIT 1;
  IF FOUND THEN
    PERFORM core.bad_input(format('events: unknown event type %s; the types are %s',
                                  coalesce(quote_literal(v_unknown), 'null'), array_to_string(webhooks.event_types(), ', ')));
  END IF;
  RETURN ARRAY(SELECT DISTINCT t FROM unnest(p_events) t ORDER BY t);
END $$;
COMMENT ON FUNCTION webhooks.checked_events(text[]) IS 'The event types, de-duplicated and sorted; 22023 naming an unknown one.';

CREATE OR REPLACE FUNCTION webhooks.checked_counties(p_slugs text[]) RETURNS smallint[]
  LANGUAGE plpgsql STABLE
AS $$
DECLARE
  v_ids smallint[];
  v_unknown text;
BEGIN
  IF p_slugs IS NULL THEN RETURN NULL; END IF;
  IF cardinality(p_slugs) = 0 THEN
    PERFORM core.bad_input('counties: give at least one county slug, or leave counties out for every county');
  END IF;
  SELECT array_agg(DISTINCT c.id ORDER BY c.id), (array_agg(u.s ORDER BY u.i) FILTER (WHERE c.id IS NULL))[1]
    INTO v_ids, v_unknown
    FROM unnest(p_slugs) WITH ORDINALITY AS u(s, i)
    LEFT JOIN core.counties c ON c.slug = lower(u.s);
  IF v_unknown IS NOT NULL OR array_position(p_slugs, NULL) IS NOT NULL THEN
    PERFORM core.bad_input(format('counties: unknown county %s; GET /v1/counties lists the slugs',
                                  coalesce(quote_literal(v_unknown), 'null')));
  END IF;
  RETURN v_ids;
END $$;
COMMENT ON FUNCTION webhooks.checked_counties(text[]) IS
  'County ids for slugs (case-insensitive), NULL for NULL (every county); 22023 naming an unknown slug or an empty list.';

-- parcel.value_changed's threshold, checked once for create and update: NULL stays NULL (not given).
CREATE OR REPLACE FUNCTION webhooks.checked_value_change_threshold(p_threshold numeric) RETURNS numeric
  LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF p_threshold < 0 OR p_threshold > 1000 THEN
    PERFORM core.bad_input('value_change_threshold: must be a percentage from 0 to 1000');
  END IF;
  RETURN round(p_threshold, 2);
END $$;
COMMENT ON FUNCTION webhooks.checked_value_change_threshold(numeric) IS
  'value_change_threshold of an endpoint (percent, 0-1000, 2 decimals); 22023 outside; NULL for NULL.';

DROP FUNCTION IF EXISTS webhooks.create_endpoint(uuid, uuid, text, text[], text[], text, bytea, integer);
CREATE OR REPLACE FUNCTION webhooks.create_endpoint(p_client_id uuid, p_id uuid, p_url text, p_events text[],
  p_counties text[], p_description text, p_secret_box bytea, p_max_endpoints integer,
  p_value_change_threshold numeric DEFAULT NULL) RETURNS json
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  e webhooks.endpoints;
  v_events text[] := webhooks.checked_events(p_events);
  v_counties smallint[] := webhooks.checked_counties(p_counties);
  v_threshold numeric := webhooks.checked_value_change_threshold(p_value_change_threshold);
BEGIN
  -- one creation per client at a time, so two concurrent requests cannot both pass the count
  PERFORM pg_advisory_xact_lock(7472, hashtext(p_client_id::text));
  IF (SELECT count(*) FROM webhooks.endpoints x WHERE x.client_id = p_client_id AND x.deleted_at IS NULL) >= p_max_endpoints THEN
    PERFORM core.bad_input(format('too many endpoints: a client may have at most %s; delete one first', p_max_endpoints));
  END IF;
  INSERT INTO webhooks.endpoints (id, client_id, url, description, events, counties, secret_box)
  VALUES (p_id, p_client_id, p_url, p_description, v_events, v_counties, p_secret_box)
  RETURNING * INTO e;
  IF v_threshold IS NOT NULL THEN  -- else the column's default
    UPDATE webhooks.endpoints x SET value_change_threshold = v_threshold WHERE x.id = e.id RETURNING * INTO e;
  END IF;
  RETURN webhooks.endpoint_json(e);
END $$;
COMMENT ON FUNCTION webhooks.create_endpoint(uuid, uuid, text, text[], text[], text, bytea, integer, numeric) IS
  'POST /v1/webhooks: registers an endpoint for the client (at most p_max_endpoints that are not deleted); '
  'p_value_change_threshold NULL: the default (10%).';

CREATE OR REPLACE FUNCTION webhooks.list_endpoints(p_client_id uuid) RETURNS json
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
  SELECT coalesce(json_agg(webhooks.endpoint_json(e) ORDER BY e.created_at, e.id), '[]')
    FROM webhooks.endpoints e WHERE e.client_id = p_client_id AND e.deleted_at IS NULL
$$;
COMMENT ON FUNCTION webhooks.list_endpoints(uuid) IS 'GET /v1/webhooks: the client''s endpoints, oldest first.';

CREATE OR REPLACE FUNCTION webhooks.get_endpoint(p_client_id uuid, p_id uuid) RETURNS json
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
  SELECT webhooks.endpoint_json(e) FROM webhooks.endpoints e
   WHERE e.id = p_id AND e.client_id = p_client_id AND e.deleted_at IS NULL
$$;
COMMENT ON FUNCTION webhooks.get_endpoint(uuid, uuid) IS 'GET /v1/webhooks/{id}: one endpoint of the client; NULL if none.';

DROP FUNCTION IF EXISTS webhooks.update_endpoint(uuid, uuid, text, text[], text[], boolean, text, boolean, text);
CREATE OR REPLACE FUNCTION webhooks.update_endpoint(p_client_id uuid, p_id uuid, p_url text, p_events text[],
  p_counties text[], p_counties_given boolean, p_description text, p_description_given boolean, p_status text,
  p_value_change_threshold numeric DEFAULT NULL)
RETURNS json
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  e webhooks.endpoints;
BEGIN
  IF p_status IS NOT NULL AND p_status NOT IN ('enabled', 'disabled') THEN
    PERFORM core.bad_input('status: must be enabled or disabled');
  END IF;
  UPDATE webhooks.endpoints x
     SET url = coalesce(p_url, x.url),
         events = CASE WHEN p_events IS NULL THEN x.events ELSE webhooks.checked_events(p_events) END,
         counties = CASE WHEN p_counties_given THEN webhooks.checked_counties(p_counties) ELSE x.counties END,
         description = CASE WHEN p_description_given THEN p_description ELSE x.description END,
         status = coalesce(p_status, x.status),
         value_change_threshold = coalesce(webhooks.checked_value_change_threshold(p_value_change_threshold),
                                           x.value_change_threshold),
         disabled_reason = CASE WHEN p_status = 'enabled' THEN NULL
                                WHEN p_status = 'disabled' AND x.status = 'enabled' THEN 'disabled by the client'
                                ELSE x.disabled_reason END,
         -- enabling starts afresh: no failure streak, no rest after failures
         failing_since = CASE WHEN p_status = 'enabled' THEN NULL ELSE x.failing_since END,
         lease_until = CASE WHEN p_status = 'enabled' AND x.lease_owner IS NULL THEN NULL ELSE x.lease_until END,
         updated_at = now()
   WHERE x.id = p_id AND x.client_id = p_client_id AND x.deleted_at IS NULL
  RETURNING x.* INTO e;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF e.status = 'disabled' THEN
    PERFORM webhooks.skip_pending(p_id, 'the endpoint is disabled');
  END IF;
  RETURN webhooks.endpoint_json(e);
END $$;
COMMENT ON FUNCTION webhooks.update_endpoint(uuid, uuid, text, text[], text[], boolean, text, boolean, text, numeric) IS
  'PATCH /v1/webhooks/{id}: changes what is given (NULL: unchanged; counties and description say whether they were '
  'given, since null is a value for them). Disabling skips the pending deliveries; enabling clears the reason and the '
  'failure streak. NULL when the client has no such endpoint.';

CREATE OR REPLACE FUNCTION webhooks.delete_endpoint(p_client_id uuid, p_id uuid) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
BEGIN
  UPDATE webhooks.endpoints x SET deleted_at = now(), status = 'disabled', disabled_reason = 'deleted', updated_at = now()
   WHERE x.id = p_id AND x.client_id = p_client_id AND x.deleted_at IS NULL;
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM webhooks.skip_pending(p_id, 'the endpoint was deleted');
  RETURN true;
END $$;
COMMENT ON FUNCTION webhooks.delete_endpoint(uuid, uuid) IS
  'DELETE /v1/webhooks/{id}: the endpoint stops receiving at once (pending deliveries skipped); its rows are purged '
  'by the sweep. False when the client has no such endpoint.';

CREATE OR REPLACE FUNCTION webhooks.rotate_secret(p_client_id uuid, p_id uuid, p_secret_box bytea, p_overlap_ms bigint)
RETURNS json
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  e webhooks.endpoints;
BEGIN
  UPDATE webhooks.endpoints x
     SET old_secret_box = x.secret_box, old_secret_until = clock_timestamp() + p_overlap_ms * interval '1 millisecond',
         secret_box = p_secret_box, updated_at = now()
   WHERE x.id = p_id AND x.client_id = p_client_id AND x.deleted_at IS NULL
  RETURNING x.* INTO e;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN webhooks.endpoint_json(e);
END $$;
COMMENT ON FUNCTION webhooks.rotate_secret(uuid, uuid, bytea, bigint) IS
  'POST /v1/webhooks/{id}/rotate-secret: the new secret signs from now on; the one it replaces signs alongside for '
  'p_overlap_ms (a second rotation within that time ends the first one''s overlap).';

-- A client's request (a test, a retry) is sent now even if the endpoint rests after failures.
CREATE OR REPLACE FUNCTION webhooks.end_rest(p_id uuid) RETURNS void
  LANGUAGE sql VOLATILE
AS $$ UPDATE webhooks.endpoints SET lease_until = NULL WHERE id = p_id AND lease_owner IS NULL $$;
COMMENT ON FUNCTION webhooks.end_rest(uuid) IS
  'Ends the rest an endpoint takes after repeated failures (unless a worker is sending to it now).';

CREATE OR REPLACE FUNCTION webhooks.send_test(p_client_id uuid, p_id uuid, OUT delivery_id text, OUT event_id text)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  e webhooks.endpoints;
  v_event bigint;
  v_delivery bigint;
BEGIN
  SELECT * INTO e FROM webhooks.endpoints x WHERE x.id = p_id AND x.client_id = p_client_id AND x.deleted_at IS NULL;
  IF NOT FOUND THEN RETURN; END IF;
  IF e.status <> 'enabled' THEN
    PERFORM core.bad_input('status: the endpoint is disabled; enable it (PATCH status enabled) before sending a test');
  END IF;
  INSERT INTO webhooks.events (type, data)
  VALUES ('webhook.test', json_build_object('endpoint_id', webhooks.endpoint_public_id(e.id),
                                            'message', 'A test event, sent because you asked for one.'))
  RETURNING id INTO v_event;
  INSERT INTO webhooks.deliveries (endpoint_id, event_id, next_attempt_at, manual)
  VALUES (e.id, v_event, now(), true)
  RETURNING id INTO v_delivery;
  PERFORM webhooks.end_rest(e.id);
  delivery_id := webhooks.public_id('dlv_', v_delivery);
  event_id := webhooks.public_id('evt_', v_event);
END $$;
COMMENT ON FUNCTION webhooks.send_test(uuid, uuid) IS
  'POST /v1/webhooks/{id}/test: a webhook.test event and its delivery (one attempt, due now) for the endpoint; '
  'NULLs when the client has no such endpoint, 22023 when it is disabled.';

CREATE OR REPLACE FUNCTION webhooks.delivery_json(d webhooks.deliveries) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT json_build_object(
    'id', webhooks.public_id('dlv_', d.id), 'event_id', webhooks.public_id('evt_', ev.id), 'event_type', ev.type,
    'event_created_at', webhooks.iso_ms(ev.created_at), 'status', d.status,
    'next_retry_at', CASE WHEN d.status = 'pending' THEN webhooks.iso_ms(d.next_attempt_at) END,
    'reason', d.reason, 'created_at', webhooks.iso_ms(d.created_at), 'finished_at', webhooks.iso_ms(d.finished_at),
    'attempts', coalesce((SELECT json_agg(json_build_object('number', a.attempt, 'at', webhooks.iso_ms(a.attempted_at),
                                                            'duration_ms', a.duration_ms, 'status_code', a.status_code,
                                                            'error', a.error) ORDER BY a.attempt)
                            FROM webhooks.attempts a WHERE a.delivery_id = d.id), '[]'))
    FROM webhooks.events ev WHERE ev.id = d.event_id
$$;
COMMENT ON FUNCTION webhooks.delivery_json(webhooks.deliveries) IS
  'A delivery as the API shows it: the event (id, type, time), its status, the next retry, and every attempt.';

CREATE OR REPLACE FUNCTION webhooks.list_deliveries(p_client_id uuid, p_id uuid, p_status text, p_limit integer,
  p_offset integer, OUT total integer, OUT items json)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks.endpoints x WHERE x.id = p_id AND x.client_id = p_client_id AND x.deleted_at IS NULL) THEN
    RETURN;
  END IF;
  SELECT count(*)::int INTO total FROM webhooks.deliveries d
   WHERE d.endpoint_id = p_id AND (p_status IS NULL OR d.status = p_status);
  SELECT coalesce(json_agg(webhooks.delivery_json(d) ORDER BY d.id DESC), '[]') INTO items
    FROM (SELECT * FROM webhooks.deliveries d
           WHERE d.endpoint_id = p_id AND (p_status IS NULL OR d.status = p_status)
           ORDER BY d.id DESC LIMIT p_limit OFFSET p_offset) d;
END $$;
COMMENT ON FUNCTION webhooks.list_deliveries(uuid, uuid, text, integer, integer) IS
  'GET /v1/webhooks/{id}/deliveries: the exact total and one page of the endpoint''s deliveries, newest first, each '
  'with its attempts; NULLs when the client has no such endpoint.';

CREATE OR REPLACE FUNCTION webhooks.retry_delivery(p_client_id uuid, p_id uuid, p_delivery_id bigint) RETURNS json
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = webhooks, pg_temp
AS $$
DECLARE
  e webhooks.endpoints;
  d webhooks.deliveries;
BEGIN
  SELECT * INTO e FROM webhooks.endpoints x WHERE x.id = p_id AND x.client_id = p_client_id AND x.deleted_at IS NULL;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF e.status <> 'enabled' THEN
    PERFORM core.bad_input('status: the endpoint is disabled; enable it (PATCH status enabled) before retrying');
  END IF;
  UPDATE webhooks.deliveries x
     SET status = 'pending', next_attempt_at = now(), manual = (x.status <> 'pending'), finished_at = NULL,
         reason = NULL
   WHERE x.id = p_delivery_id AND x.endpoint_id = p_id
  RETURNING x.* INTO d;
  IF NOT FOUND THEN RETURN NULL; END IF;
  PERFORM webhooks.end_rest(e.id);
  RETURN webhooks.delivery_json(d);
END $$;
COMMENT ON FUNCTION webhooks.retry_delivery(uuid, uuid, bigint) IS
  'POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry: the delivery is due now (a finished one gets one more '
  'attempt, with the same webhook-id; a pending one is brought forward). NULL when there is no such delivery.';
