-- Matching (docs/saved-searches.md#matching), in two steps of the import's transaction:
--  1. capture: during a merge, statement-level triggers on core.tax_delinquencies and core.parcels note the ids the
--     statement inserted or changed and, the first time a record changes in the import, its version from before
--     (the statement's transition tables, the rows the webhook capture turns into events), in temporary tables that
--     go with the transaction. Only when some entitled search of the resource can match in the merged county.
--  2. match (saved.match_load, from saved.deliver_load after the merges): the changed records' prefilter keys
--     (county, tax year, status, amount) go into a small indexed table; every entitled search is joined to it by an
--     index range scan per county it names (searches.county_ids, tax_year, status, amount_min/max), so a record is
--     never tested against a search that cannot match it. Searches whose filter is more than those columns
--     (searches.exact false) then have their pairs checked with the predicate their endpoint's builder writes. The
--     same over the versions from before; the pairs in the result now and not before are recorded once
--     (saved.matches is unique on them). Outside a merge nothing is captured.

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

-- The searches matching considers: those of clients entitled to saved searches (active, on a plan with webhooks).
CREATE OR REPLACE FUNCTION saved.entitled_searches(p_resource text) RETURNS SETOF saved.searches
  LANGUAGE sql STABLE
AS $$
  SELECT s.* FROM saved.searches s
    JOIN accounts.clients c ON c.id = s.client_id
    JOIN accounts.plans p ON p.plan = c.plan
   WHERE s.resource = p_resource AND c.status = 'active' AND p.webhooks <> 'no'
$$;
COMMENT ON FUNCTION saved.entitled_searches(text) IS
  'The saved searches of a resource that matching considers: their client is active on a plan with saved searches.';

-- Step 1's guard: true during a merge when an entitled search of the resource names the merged county or none; it
-- then makes the transaction's capture tables (pg_temp.saved_new_<resource>: the ids changed; saved_old_<resource>:
-- the versions from before, columns as the table's).
CREATE OR REPLACE FUNCTION saved.capturing(p_resource text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_county smallint := (webhooks.current_merge()).county_id;
  v_table text := CASE p_resource WHEN 'parcels' THEN 'core.parcels' ELSE 'core.tax_delinquencies' END;
BEGIN
  IF v_county IS NULL OR NOT EXISTS (
       SELECT 1 FROM saved.entitled_searches(p_resource) s
        WHERE s.county_ids IS NULL OR s.county_ids OPERATOR(pg_catalog.@>) ARRAY[v_county]) THEN
    RETURN false;
  END IF;
  IF to_regclass('pg_temp.saved_new_' || p_resource) IS NULL THEN
    EXECUTE format('CREATE TEMP TABLE %I (id bigint PRIMARY KEY) ON COMMIT DROP', 'saved_new_' || p_resource);
    EXECUTE format('CREATE TEMP TABLE %I (LIKE %s, PRIMARY KEY (id)) ON COMMIT DROP', 'saved_old_' || p_resource, v_table);
  END IF;
  RETURN true;
END $$;
COMMENT ON FUNCTION saved.capturing(text) IS
  'Helper of the saved.capture_* triggers: whether this merge statement''s rows must be noted for matching (and the '
  'transaction''s capture tables made).';

CREATE OR REPLACE FUNCTION saved.capture_delinquencies() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  -- an INSERT ... ON CONFLICT that only updated fires the insert trigger with no rows
  IF NOT EXISTS (SELECT 1 FROM new_rows) OR NOT saved.capturing('tax_delinquencies') THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO pg_temp.saved_old_tax_delinquencies
    SELECT o.* FROM old_rows o WHERE NOT EXISTS (SELECT 1 FROM pg_temp.saved_new_tax_delinquencies n WHERE n.id = o.id);
  END IF;
  INSERT INTO pg_temp.saved_new_tax_delinquencies
  SELECT n.id FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM pg_temp.saved_new_tax_delinquencies x WHERE x.id = n.id);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION saved.capture_delinquencies() IS
  'Trigger function (statement level) on core.tax_delinquencies: during an import merge, notes the inserted or '
  'changed records (and their versions from before the import) for saved.match_load.';

CREATE OR REPLACE FUNCTION saved.capture_parcels() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows) OR NOT saved.capturing('parcels') THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO pg_temp.saved_old_parcels
    SELECT o.* FROM old_rows o WHERE NOT EXISTS (SELECT 1 FROM pg_temp.saved_new_parcels n WHERE n.id = o.id);
  END IF;
  INSERT INTO pg_temp.saved_new_parcels
  SELECT n.id FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM pg_temp.saved_new_parcels x WHERE x.id = n.id);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION saved.capture_parcels() IS
  'Trigger function (statement level) on core.parcels: during an import merge, notes the inserted or changed parcels '
  '(and their versions from before the import) for saved.match_load.';

-- Step 2 for one resource: records the load's new matches; returns how many. The pairs are found in
-- pg_temp.saved_pairs (now: of the record's version after the import, else of the one from before).
CREATE OR REPLACE FUNCTION saved.match_resource(p_load_id bigint, p_resource text) RETURNS integer
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  parcels constant boolean := p_resource = 'parcels';
  v_table constant text := CASE WHEN parcels THEN 'core.parcels' ELSE 'core.tax_delinquencies' END;
  v_alias constant text := CASE WHEN parcels THEN 'p' ELSE 'd' END;  -- the alias the builders' predicates use
  -- tax year, status and amount (a NULL amount is NaN, above every number: only a search with neither bound takes it)
  v_keys constant text := CASE WHEN parcels THEN 'NULL::integer, NULL::text, coalesce(x.just_value::numeric, ''NaN'')'
                               ELSE 'x.tax_year::integer, x.status, coalesce(x.total_due, ''NaN'')' END;
  v_hit constant text := CASE WHEN parcels THEN 'webhooks.parcel_hit(p, c.slug, c.name)'
                              ELSE 'webhooks.delinquency_json(webhooks.delinquency_snapshot_of(d), c.slug)' END;
  v_new constant text := 'saved_new_' || p_resource;
  v_old constant text := 'saved_old_' || p_resource;
  v_counties smallint[];
  v_matches integer;
  v_search record;
BEGIN
  IF to_regclass('pg_temp.' || v_new) IS NULL THEN RETURN 0; END IF;
  -- the prefilter keys of both versions
  EXECUTE format($q$
    CREATE TEMP TABLE saved_keys (now, id, county_id, tax_year, status, amount) ON COMMIT DROP AS
    SELECT true, x.id, x.county_id, %1$s FROM %2$s x WHERE x.id IN (SELECT n.id FROM pg_temp.%3$I n)
    UNION ALL
    SELECT false, x.id, x.county_id, %1$s FROM pg_temp.%4$I x $q$,
    v_keys, v_table, v_new, v_old);
  CREATE INDEX ON pg_temp.saved_keys (county_id, amount);
  ANALYZE pg_temp.saved_keys;
  v_counties := ARRAY(SELECT DISTINCT k.county_id FROM pg_temp.saved_keys k);

  -- each search probes the keys of each county it names (or every county of the load) over its amount range
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  CREATE TEMP TABLE saved_pairs ON COMMIT DROP AS
  WITH probes AS MATERIALIZED (
    SELECT s.id, s.exact, s.tax_year, s.status, c.county_id, coalesce(s.amount_min, '-Infinity') AS low,
           coalesce(s.amount_max, CASE WHEN s.amount_min IS NULL THEN 'NaN' ELSE 'Infinity' END::numeric) AS high
      FROM saved.entitled_searches(p_resource) s
     CROSS JOIN LATERAL unnest(coalesce(s.county_ids, v_counties)) AS c(county_id)
     WHERE c.county_id = ANY (v_counties))
  SELECT k.now, x.id AS search_id, k.id AS record_id, x.exact
    FROM probes x
    JOIN pg_temp.saved_keys k ON k.county_id = x.county_id AND k.amount BETWEEN x.low AND x.high
   WHERE (x.tax_year IS NULL OR k.tax_year = x.tax_year) AND (x.status IS NULL OR k.status = x.status);
  RESET enable_hashjoin;
  RESET enable_mergejoin;

  -- the rest of the filter, where the prefilter is not all of it: the endpoint's own predicate on each pair
  FOR v_search IN SELECT x.id, saved.predicate(x.resource, x.args) AS predicate FROM saved.searches x
            WHERE x.id IN (SELECT q.search_id FROM pg_temp.saved_pairs q WHERE NOT q.exact) LOOP
    EXECUTE format($q$
      DELETE FROM pg_temp.saved_pairs q
       WHERE q.search_id = $1
         AND NOT CASE WHEN q.now THEN EXISTS (SELECT 1 FROM %1$s %3$s WHERE %3$s.id = q.record_id AND (%4$s))
                      ELSE EXISTS (SELECT 1 FROM pg_temp.%2$I %3$s WHERE %3$s.id = q.record_id AND (%4$s)) END $q$,
      v_table, v_old, v_alias, v_search.predicate) USING v_search.id;
  END LOOP;

  -- Ids in commit order (see saved.deliver_load): the lock is held to the end of the import's transaction. It also
  -- makes the pairs recorded before (read after taking it) final, so they are left out by a plain anti-join rather
  -- than by ON CONFLICT, which costs a speculative insertion a row; the unique index stays as the guarantee. And it
  -- orders the import with a search's deletion (saved.delete_matches): only searches that still exist get matches.
  PERFORM pg_advisory_xact_lock(hashtext('saved.matches'));
  EXECUTE format($q$
    WITH pairs AS MATERIALIZED (
      SELECT y.search_id, y.record_id
        FROM (SELECT q.search_id, q.record_id FROM pg_temp.saved_pairs q WHERE q.now
              EXCEPT
              SELECT q.search_id, q.record_id FROM pg_temp.saved_pairs q WHERE NOT q.now) y
       WHERE NOT EXISTS (SELECT 1 FROM saved.matches m WHERE m.search_id = y.search_id AND m.record_id = y.record_id)
         AND EXISTS (SELECT 1 FROM saved.searches s WHERE s.id = y.search_id)),
    hits AS MATERIALIZED (  -- each record's JSON once, however many searches it entered
      SELECT %2$s.id, %2$s.county_id, %3$s AS hit
        FROM %1$s %2$s JOIN core.counties c ON c.id = %2$s.county_id
       WHERE %2$s.id IN (SELECT x.record_id FROM pairs x))
    INSERT INTO saved.matches (search_id, record_id, load_id, county_id, hit)
    SELECT x.search_id, h.id, $1, h.county_id, h.hit
      FROM pairs x JOIN hits h ON h.id = x.record_id
     ORDER BY x.search_id, h.id $q$, v_table, v_alias, v_hit) USING p_load_id;
  GET DIAGNOSTICS v_matches = ROW_COUNT;
  DROP TABLE pg_temp.saved_keys, pg_temp.saved_pairs;
  EXECUTE format('TRUNCATE pg_temp.%I, pg_temp.%I', v_new, v_old);
  RETURN v_matches;
END $$;
COMMENT ON FUNCTION saved.match_resource(bigint, text) IS
  'Helper of saved.match_load: the new matches of one resource''s saved searches among the records the import''s '
  'merges noted (pg_temp.saved_new_<resource>, saved_old_<resource>).';

CREATE OR REPLACE FUNCTION saved.match_load(p_load_id bigint) RETURNS integer
  LANGUAGE sql VOLATILE
  RETURN saved.match_resource(p_load_id, 'tax_delinquencies') + saved.match_resource(p_load_id, 'parcels');
COMMENT ON FUNCTION saved.match_load(bigint) IS
  'Called by saved.deliver_load after the import''s merges, in its transaction: records each (saved search, record) '
  'pair that the import brought into the search''s result (in it now, not before, never recorded before); returns '
  'how many.';

-- After an import's merges (src/importers/pipeline.ts, in the import's transaction): its matches (saved.match_load) as
-- saved_search.matched webhook events, at most 100 records each, addressed to the search's endpoints, queued for
-- the webhook fan-out like the merge's own events.
CREATE OR REPLACE FUNCTION saved.deliver_load(p_load_id bigint) RETURNS integer
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_events integer;
BEGIN
  PERFORM saved.match_load(p_load_id);
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
  'Called by the importer after its merges, in the same transaction: records the load''s matches (saved.match_load), '
  'then makes one saved_search.matched event per search and 100 of them, for the search''s webhook endpoints (webhooks.fan_out sends it to those only).';
