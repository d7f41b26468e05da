-- Saved-search management and reads (docs/saved-searches.md), for the API (as api_webhooks, the role of the
-- webhooks' management writes) and the site. SECURITY DEFINER, each scoped to the client it is given; the filter
-- is checked by the search endpoint's own builder (saved.where_of), so its 22023 messages are the endpoint's.

CREATE OR REPLACE FUNCTION saved.public_id(p_id uuid) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 'ss_' || replace(p_id::text, '-', '');
COMMENT ON FUNCTION saved.public_id(uuid) IS 'The public id of a saved search: ss_ and 32 hex digits.';

-- Saved searches a client may keep on its plan: Pro (beta) 5, Growth 25, Lead Feed 250, Enterprise 1000, else none.
CREATE OR REPLACE FUNCTION saved.plan_limit(p_plan text) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE p_plan WHEN 'pro' THEN 5 WHEN 'growth' THEN 25 WHEN 'lead_feed' THEN 250 WHEN 'enterprise' THEN 1000
                     ELSE 0 END;
COMMENT ON FUNCTION saved.plan_limit(text) IS 'How many saved searches a client on the plan may keep.';

CREATE OR REPLACE FUNCTION saved.search_json(s saved.searches) RETURNS json
  LANGUAGE sql STABLE SET search_path = public, pg_temp
AS $$
  SELECT json_build_object(
    'id', saved.public_id(s.id), 'name', s.name, 'resource', s.resource, 'params', s.params,
    'deliver', json_build_object(
      'webhook_endpoints', ARRAY(SELECT webhooks.endpoint_public_id(e) FROM unnest(s.webhook_endpoint_ids) e ORDER BY 1),
      'email', s.email),
    'match_count', (SELECT coalesce(sum(cardinality(m.match_ids)), 0) FROM saved.search_matches m WHERE m.search_id = s.id),
    'last_matched_at', (SELECT webhooks.iso_ms(max(m.matched_at)) FROM saved.search_matches m WHERE m.search_id = s.id),
    'created_at', webhooks.iso_ms(s.created_at), 'updated_at', webhooks.iso_ms(s.updated_at))
$$;
COMMENT ON FUNCTION saved.search_json(saved.searches) IS 'A saved search as the API shows it.';

-- The endpoint ids, checked: each an endpoint of the client that is not deleted.
CREATE OR REPLACE FUNCTION saved.checked_endpoints(p_client_id uuid, p_ids uuid[]) RETURNS uuid[]
  LANGUAGE plpgsql STABLE SET search_path = public, pg_temp
AS $$
DECLARE
  v_missing uuid;
BEGIN
  IF p_ids IS NULL THEN RETURN '{}'; END IF;
  IF cardinality(p_ids) > 10 THEN PERFORM core.bad_input('deliver.webhook_endpoints: at most 10 endpoints'); END IF;
  SELECT i INTO v_missing FROM unnest(p_ids) i
   WHERE NOT EXISTS (SELECT 1 FROM webhooks.endpoints e WHERE e.id = i AND e.client_id = p_client_id AND e.deleted_at IS NULL)
   LIMIT 1;
  IF v_missing IS NOT NULL THEN
    PERFORM core.bad_input(format('deliver.webhook_endpoints: no webhook endpoint ''%s'' (GET /v1/webhooks lists yours)',
                                  webhooks.endpoint_public_id(v_missing)));
  END IF;
  RETURN ARRAY(SELECT DISTINCT i FROM unnest(p_ids) i ORDER BY i);
END $$;
COMMENT ON FUNCTION saved.checked_endpoints(uuid, uuid[]) IS
  'Helper of create/update_search: the client''s endpoint ids (22023 naming one that is not the client''s).';

CREATE OR REPLACE FUNCTION saved.create_search(p_client_id uuid, p_id uuid, p_name text, p_resource text,
  p_params jsonb, p_args jsonb, p_endpoint_ids uuid[], p_email text, p_token text) RETURNS json
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
  s saved.searches;
  v_limit integer := saved.plan_limit((SELECT c.plan FROM accounts.clients c WHERE c.id = p_client_id));
BEGIN
  PERFORM saved.where_of(p_resource, p_args);  -- the endpoint's own checks of the filter
  -- one creation per client at a time, so two concurrent requests cannot both pass the count
  PERFORM pg_advisory_xact_lock(7473, hashtext(p_client_id::text));
  IF (SELECT count(*) FROM saved.searches x WHERE x.client_id = p_client_id) >= v_limit THEN
    PERFORM core.bad_input(format('too many saved searches: your plan allows %s; delete one first', v_limit));
  END IF;
  INSERT INTO saved.searches (id, client_id, name, resource, params, args, county_ids, webhook_endpoint_ids, email,
                              unsubscribe_token)
  VALUES (p_id, p_client_id, p_name, p_resource, p_params, p_args, saved.county_ids_of(p_args),
          saved.checked_endpoints(p_client_id, p_endpoint_ids), p_email, p_token)
  RETURNING * INTO s;
  RETURN saved.search_json(s);
END $$;
COMMENT ON FUNCTION saved.create_search(uuid, uuid, text, text, jsonb, jsonb, uuid[], text, text) IS
  'POST /v1/saved-searches: saves a search for the client (at most saved.plan_limit of its plan), its filter checked '
  'by the search endpoint''s builder.';

CREATE OR REPLACE FUNCTION saved.list_searches(p_client_id uuid) RETURNS json
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT coalesce(json_agg(saved.search_json(s) ORDER BY s.created_at, s.id), '[]')
    FROM saved.searches s WHERE s.client_id = p_client_id
$$;
COMMENT ON FUNCTION saved.list_searches(uuid) IS 'GET /v1/saved-searches: the client''s saved searches, oldest first.';

CREATE OR REPLACE FUNCTION saved.get_search(p_client_id uuid, p_id uuid) RETURNS json
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT saved.search_json(s) FROM saved.searches s WHERE s.id = p_id AND s.client_id = p_client_id
$$;
COMMENT ON FUNCTION saved.get_search(uuid, uuid) IS 'GET /v1/saved-searches/{id}: one of the client''s; NULL if none.';

-- Fields left NULL stay (p_email_given: whether email was given, as null may set it). Matches found so far stay:
-- a record already recorded is not a new match under the changed filter either.
CREATE OR REPLACE FUNCTION saved.update_search(p_client_id uuid, p_id uuid, p_name text, p_params jsonb,
  p_args jsonb, p_endpoint_ids uuid[], p_email text, p_email_given boolean) RETURNS json
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
  s saved.searches;
BEGIN
  SELECT * INTO s FROM saved.searches x WHERE x.id = p_id AND x.client_id = p_client_id FOR UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF p_args IS NOT NULL THEN PERFORM saved.where_of(s.resource, p_args); END IF;
  UPDATE saved.searches x
     SET name = coalesce(p_name, x.name),
         params = coalesce(p_params, x.params),
         args = coalesce(p_args, x.args),
         county_ids = CASE WHEN p_args IS NULL THEN x.county_ids ELSE saved.county_ids_of(p_args) END,
         webhook_endpoint_ids = CASE WHEN p_endpoint_ids IS NULL THEN x.webhook_endpoint_ids
                                     ELSE saved.checked_endpoints(p_client_id, p_endpoint_ids) END,
         email = CASE WHEN p_email_given THEN p_email ELSE x.email END,
         updated_at = now()
   WHERE x.id = p_id
  RETURNING * INTO s;
  RETURN saved.search_json(s);
END $$;
COMMENT ON FUNCTION saved.update_search(uuid, uuid, text, jsonb, jsonb, uuid[], text, boolean) IS
  'PATCH /v1/saved-searches/{id}: changes the fields given; NULL when the client has no such search.';

CREATE OR REPLACE FUNCTION saved.delete_search(p_client_id uuid, p_id uuid) RETURNS boolean
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  WITH d AS (DELETE FROM saved.searches s WHERE s.id = p_id AND s.client_id = p_client_id RETURNING 1)
  SELECT EXISTS (SELECT 1 FROM d)
$$;
COMMENT ON FUNCTION saved.delete_search(uuid, uuid) IS
  'DELETE /v1/saved-searches/{id}: deletes the search and its matches; false when the client has no such search.';

-- A search's matches go with it (the match tables have no foreign key: an import writes many rows): its
-- saved.search_matches rows, and its id in the search_ids of its match records (a record no search is left in goes).
-- Its saved_search.matched events not yet sent go nowhere: the pending deliveries are skipped, and the events not yet
-- fanned out name no endpoint (an event is found by its import, as its search's matches name them).
-- The lock is the one an import holds from writing its matches to its commit: a search deleted before it takes the
-- lock gets no matches from the import, and one deleted after waits for its commit and then deletes what it wrote.
CREATE OR REPLACE FUNCTION saved.delete_matches() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('saved.matches'));
  WITH events AS (
    UPDATE webhooks.events e SET endpoint_ids = '{}'
      FROM saved.search_matches m JOIN old_rows o ON o.id = m.search_id
     WHERE e.load_id = m.load_id AND e.type = 'saved_search.matched' AND cardinality(e.endpoint_ids) > 0
       AND e.data ->> 'saved_search_id' = saved.public_id(o.id)
    RETURNING e.id)
  UPDATE webhooks.deliveries d
     SET status = 'skipped', next_attempt_at = NULL, claimed_until = NULL, finished_at = now(),
         reason = 'the saved search was deleted'
   WHERE d.event_id IN (SELECT events.id FROM events) AND d.status = 'pending';
  WITH segments AS (
    DELETE FROM saved.search_matches m WHERE m.search_id IN (SELECT o.id FROM old_rows o) RETURNING m.match_ids),
  ids AS (SELECT u.id FROM segments s CROSS JOIN LATERAL unnest(s.match_ids) AS u(id)),
  gone AS (  -- records of deleted searches only
    DELETE FROM saved.match_records r
     WHERE r.id IN (SELECT ids.id FROM ids) AND r.search_ids <@ ARRAY(SELECT o.id FROM old_rows o))
  UPDATE saved.match_records r
     SET search_ids = ARRAY(SELECT x FROM unnest(r.search_ids) x WHERE x NOT IN (SELECT o.id FROM old_rows o))
   WHERE r.id IN (SELECT ids.id FROM ids) AND NOT r.search_ids <@ ARRAY(SELECT o.id FROM old_rows o);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION saved.delete_matches() IS
  'Trigger function (statement level, after DELETE on saved.searches): deletes the deleted searches'' matches, and '
  'skips their saved_search.matched events not yet sent.';

-- One page of a search's matches after the cursor (a match id), in order: ids are handed out in commit order
-- (saved.match_resource), so a page never skips a match committed after an earlier page was read.
CREATE OR REPLACE FUNCTION saved.list_matches(p_client_id uuid, p_id uuid, p_since bigint, p_limit integer)
RETURNS TABLE (cursor text, matched_at text, record json)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
  IF p_limit NOT BETWEEN 1 AND 500 THEN PERFORM core.bad_input('limit: must be between 1 and 500'); END IF;
  IF p_since < 0 THEN PERFORM core.bad_input('since: must be a cursor from an earlier page (a whole number >= 0)'); END IF;
  RETURN QUERY
  SELECT r.id::text, webhooks.iso_ms(r.matched_at), saved.match_hit(r)
    FROM saved.searches s
   CROSS JOIN LATERAL saved.match_ids_after(s.id, coalesce(p_since, 0), p_limit) m
    JOIN saved.match_records r ON r.id = m.id
   WHERE s.id = p_id AND s.client_id = p_client_id
   ORDER BY r.id;
END $$;
COMMENT ON FUNCTION saved.list_matches(uuid, uuid, bigint, integer) IS
  'GET /v1/saved-searches/{id}/matches: up to p_limit matches with an id (cursor) above p_since, oldest first. '
  'Example: SELECT x.* FROM saved.searches s, saved.list_matches(s.client_id, s.id, 0, 10) x;';

-- The account site's list: each saved search of the client with its latest matches (newest first).
CREATE OR REPLACE FUNCTION saved.recent_matches(p_client_id uuid, p_per_search integer)
RETURNS TABLE (search_id text, cursor text, matched_at text, record json)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  SELECT saved.public_id(s.id), r.id::text, webhooks.iso_ms(r.matched_at), saved.match_hit(r)
    FROM saved.searches s
   CROSS JOIN LATERAL (SELECT u.id  -- from the search's latest imports (each gave at least one match)
                         FROM (SELECT x.match_ids FROM saved.search_matches x WHERE x.search_id = s.id
                                ORDER BY x.last_id DESC LIMIT p_per_search) x
                        CROSS JOIN LATERAL unnest(x.match_ids) AS u(id)
                        ORDER BY u.id DESC
                        LIMIT p_per_search) m
    JOIN saved.match_records r ON r.id = m.id
   WHERE s.client_id = p_client_id
   ORDER BY s.created_at, s.id, r.id DESC
$$;
COMMENT ON FUNCTION saved.recent_matches(uuid, integer) IS
  'The account site: up to p_per_search latest matches of each of the client''s saved searches, newest first.';
