-- Matching (docs/saved-searches.md#matching): during an import merge, statement-level triggers on
-- core.tax_delinquencies and core.parcels test the rows the statement inserted or changed (its transition tables,
-- the same rows the webhook capture turns into events) against the saved searches that can match in the merged
-- county, in one statement: one pass over the changed rows evaluates every candidate search's predicate (made by
-- the search endpoint's own builder) and keeps the (search, record) pairs that are in the result now and were not
-- before the change. Each pair is recorded once (saved.matches is unique on it). Outside a merge nothing happens.

-- A search's predicate, or false when its builder now refuses its arguments: an import never fails for a search.
CREATE OR REPLACE FUNCTION saved.predicate(p_resource text, p_args jsonb) RETURNS text
  LANGUAGE plpgsql STABLE
AS $$
BEGIN
  RETURN saved.where_of(p_resource, p_args);
EXCEPTION WHEN invalid_parameter_value THEN
  RETURN 'false';
END $$;
COMMENT ON FUNCTION saved.predicate(text, jsonb) IS
  'saved.where_of, or false when the filter builder refuses the arguments (the search then matches nothing).';

-- The searches that can match a record of the resource in the county: an entitled client's (active, on a plan
-- with saved searches), naming that county or none.
CREATE OR REPLACE FUNCTION saved.candidates(p_resource text, p_county_id smallint)
RETURNS TABLE (search_id uuid, predicate text)
  LANGUAGE sql STABLE
AS $$
  SELECT s.id, saved.predicate(s.resource, s.args)
    FROM saved.searches s
    JOIN accounts.clients c ON c.id = s.client_id
    JOIN accounts.plans p ON p.plan = c.plan
   WHERE s.resource = p_resource AND (s.county_ids IS NULL OR s.county_ids OPERATOR(pg_catalog.@>) ARRAY[p_county_id])
     AND c.status = 'active' AND p.webhooks <> 'no'
   ORDER BY s.id
$$;
COMMENT ON FUNCTION saved.candidates(text, smallint) IS
  'The saved searches of a resource that can match in the county (they name it or no county; client active on a plan '
  'with saved searches), each with its predicate.';

-- The candidates' predicates of the running merge, as an array of CASE WHEN <predicate> THEN <search id> END, or
-- NULL when no search can match. Made once per merge (county, load and resource) and kept in a transaction-local
-- setting, so that a merge's statements (insert, update) share it.
CREATE OR REPLACE FUNCTION saved.merge_cases(p_resource text) RETURNS text
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  m record;
  v_key text := format('%s/%s/%s', txid_current(), current_setting('webhooks.merge', true), p_resource);
  v_cases text;
BEGIN
  IF current_setting('saved.cases_key', true) IS NOT DISTINCT FROM v_key THEN
    RETURN nullif(current_setting('saved.cases', true), '');
  END IF;
  SELECT * INTO m FROM webhooks.current_merge();
  IF m.load_id IS NULL THEN RETURN NULL; END IF;
  SELECT 'ARRAY[' || string_agg(format('CASE WHEN %s THEN %L::uuid END', x.predicate, x.search_id), ', ') || ']'
    INTO v_cases FROM saved.candidates(p_resource, m.county_id) x;
  PERFORM set_config('saved.cases', coalesce(v_cases, ''), true), set_config('saved.cases_key', v_key, true);
  RETURN v_cases;
END $$;
COMMENT ON FUNCTION saved.merge_cases(text) IS
  'Helper of saved.match_sql: the running merge''s candidate predicates as an ARRAY of CASE expressions giving the '
  'search id when the predicate holds; made once per merge and resource; NULL outside a merge or with no candidate.';

-- The matching statement of one trigger call (the trigger runs it: only its own statements see the transition
-- tables), or NULL when no search can match. p_alias is the alias the predicates use (p or d), p_hit the expression
-- of the record's hit over it and the county row c, made once per matched record. Rows matched by the old version
-- of a changed record were in the result already: they are not new.
CREATE OR REPLACE FUNCTION saved.match_sql(p_resource text, p_alias text, p_hit text, p_with_old boolean)
RETURNS text
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_cases text := saved.merge_cases(p_resource);
BEGIN
  IF v_cases IS NULL THEN RETURN NULL; END IF;
  RETURN format($q$
    WITH pairs AS (
      SELECT %1$s.id, s.search_id FROM new_rows %1$s, unnest(array_remove(%4$s, NULL)) AS s(search_id)
      %5$s),
    hits AS (
      SELECT %1$s.id, %1$s.county_id, %3$s AS hit
        FROM new_rows %1$s JOIN core.counties c ON c.id = %1$s.county_id
       WHERE %1$s.id IN (SELECT id FROM pairs))
    INSERT INTO saved.matches (search_id, record_id, load_id, county_id, hit)
    SELECT x.search_id, h.id, %2$s, h.county_id, h.hit
      FROM pairs x JOIN hits h ON h.id = x.id
     ORDER BY x.search_id, h.id
    ON CONFLICT (search_id, record_id) DO NOTHING $q$,
    p_alias, (webhooks.current_merge()).load_id, p_hit, v_cases,
    CASE WHEN p_with_old THEN format(
      'EXCEPT SELECT %1$s.id, s.search_id FROM old_rows %1$s, unnest(array_remove(%2$s, NULL)) AS s(search_id)',
      p_alias, v_cases) ELSE '' END);
END $$;
COMMENT ON FUNCTION saved.match_sql(text, text, text, boolean) IS
  'Helper of the saved.capture_* triggers: the statement that records the (search, record) pairs the triggering '
  'statement made new (in new_rows and the search''s result, and not in it as old_rows had the record); NULL when no '
  'search can match in the merged county.';

-- Runs a trigger's matching statement. Match ids are handed out in commit order (the lock is held to the end of the
-- import's transaction), so that a cursor over them never skips one committed later.
CREATE OR REPLACE FUNCTION saved.capture_delinquencies() RETURNS trigger
  LANGUAGE plpgsql
AS $$
DECLARE
  v_sql text;
BEGIN
  -- an INSERT ... ON CONFLICT that only updated fires the insert trigger with no rows
  IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
  v_sql := saved.match_sql('tax_delinquencies', 'd',
    'webhooks.delinquency_json(webhooks.delinquency_snapshot_of(d), c.slug)', TG_OP = 'UPDATE');
  IF v_sql IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtext('saved.matches'));
    EXECUTE v_sql;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION saved.capture_delinquencies() IS
  'Trigger function (statement level) on core.tax_delinquencies: during an import merge, records the new matches of '
  'the delinquency saved searches among the inserted or changed records.';

CREATE OR REPLACE FUNCTION saved.capture_parcels() RETURNS trigger
  LANGUAGE plpgsql
AS $$
DECLARE
  v_sql text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
  v_sql := saved.match_sql('parcels', 'p', 'webhooks.parcel_hit(p, c.slug, c.name)', TG_OP = 'UPDATE');
  IF v_sql IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtext('saved.matches'));
    EXECUTE v_sql;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION saved.capture_parcels() IS
  'Trigger function (statement level) on core.parcels: during an import merge, records the new matches of the parcel '
  'saved searches among the inserted or changed parcels.';

-- After an import's merges (src/importers/pipeline.ts, in the import's transaction): its matches as
-- saved_search.matched webhook events, at most 100 records each, addressed to the search's endpoints, queued for
-- the webhook fan-out like the merge's own events.
CREATE OR REPLACE FUNCTION saved.deliver_load(p_load_id bigint) RETURNS integer
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_events integer;
BEGIN
  INSERT INTO webhooks.events (type, county_id, load_id, data, endpoint_ids)
  SELECT 'saved_search.matched', NULL, p_load_id,
         json_build_object('saved_search_id', saved.public_id(s.id), 'name', s.name, 'resource', s.resource,
                           'matches', json_agg(json_build_object('cursor', m.id::text, 'record', m.hit) ORDER BY m.id)),
         s.webhook_endpoint_ids
    FROM (SELECT x.*, (row_number() OVER (PARTITION BY x.search_id ORDER BY x.id) - 1) / 100 AS part
            FROM saved.matches x WHERE x.load_id = p_load_id) m
    JOIN saved.searches s ON s.id = m.search_id
   WHERE cardinality(s.webhook_endpoint_ids) > 0
   GROUP BY s.id, m.part
   ORDER BY min(m.id);
  GET DIAGNOSTICS v_events = ROW_COUNT;
  IF v_events > 0 THEN
    INSERT INTO webhooks.outbox (load_id) VALUES (p_load_id) ON CONFLICT DO NOTHING;
    PERFORM pg_notify('webhooks_outbox', p_load_id::text);
  END IF;
  RETURN v_events;
END $$;
COMMENT ON FUNCTION saved.deliver_load(bigint) IS
  'Called by the importer after its merges, in the same transaction: one saved_search.matched event per search and '
  '100 of the load''s matches, for the search''s webhook endpoints (webhooks.fan_out sends it to those only).';
