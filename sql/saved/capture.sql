-- Matching (docs/saved-searches.md#matching), in two steps of the import's transaction:
--  1. capture: during a merge, statement-level triggers on core.tax_delinquencies and core.parcels note, from the
--     statement's transition tables (the rows the webhook capture turns into events), the prefilter keys (county,
--     tax year, status, amount) of each record it inserted or changed, as it is now and, the first time a record
--     changes in the import, as it was before; and that version whole where a search's filter is more than those
--     keys. A delinquency's snapshot as it is now (what a match keeps) is noted with its keys, so recording its
--     matches reads no record again. In temporary tables that go with the transaction; only when some entitled
--     search of the resource can match in the merged county.
--  2. match (saved.match_load, from saved.deliver_load after the merges): the keys table is indexed on (county,
--     amount); every entitled search is joined to it by an index range scan per county it names (searches.county_ids,
--     tax_year, status, amount_min/max), so a record is never tested against a search that cannot match it, and the
--     keys from before leave out a record that was in the result already. Searches whose filter is more than those
--     columns (searches.exact false) then have their pairs checked with the predicate their endpoint's builder
--     writes, now and before. The pairs never recorded before are recorded: one saved.match_records row per record
--     with the searches it entered, and one saved.search_matches row per search with its match ids
--     (sql/saved/storage.sql reads them). Outside a merge nothing is captured.

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
-- then makes the transaction's capture tables: pg_temp.saved_keys_<resource>, each changed record's prefilter keys
-- (county, tax year, status, amount: saved.match_resource) now and, when it existed before the import, then, and a
-- delinquency's snapshot now (webhooks.delinquency_snapshot_of; NULL for a parcel, read when matched); and
-- pg_temp.saved_old_<resource>, versions from before the import, whole (columns as the table's), for the searches
-- whose filter is more than those keys (saved.whole_rows).
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
  IF to_regclass('pg_temp.saved_keys_' || p_resource) IS NULL THEN
    EXECUTE format('CREATE TEMP TABLE %I (id bigint PRIMARY KEY, county_id smallint, tax_year integer, status text, '
                   'amount numeric, existed boolean, old_tax_year integer, old_status text, old_amount numeric, '
                   'snapshot webhooks.delinquency_snapshot) '
                   'ON COMMIT DROP', 'saved_keys_' || p_resource);
    EXECUTE format('CREATE TEMP TABLE %I (LIKE %s, PRIMARY KEY (id)) ON COMMIT DROP', 'saved_old_' || p_resource, v_table);
  END IF;
  RETURN true;
END $$;
COMMENT ON FUNCTION saved.capturing(text) IS
  'Helper of the saved.capture_* triggers: whether this merge statement''s rows must be noted for matching (and the '
  'transaction''s capture tables made).';

-- Whether the merged county's old versions must be kept whole: some entitled search of the resource that names it
-- or none has a filter beyond the prefilter keys (searches.exact false), checked on the version from before.
CREATE OR REPLACE FUNCTION saved.whole_rows(p_resource text) RETURNS boolean
  LANGUAGE sql STABLE
AS $$
  SELECT EXISTS (
    SELECT 1 FROM saved.entitled_searches(p_resource) s
     WHERE NOT s.exact
       AND (s.county_ids IS NULL OR s.county_ids OPERATOR(pg_catalog.@>) ARRAY[(webhooks.current_merge()).county_id]))
$$;
COMMENT ON FUNCTION saved.whole_rows(text) IS
  'Helper of the saved.capture_* triggers: whether the merged county''s versions from before the import are kept '
  'whole (a search there has a filter beyond the prefilter keys).';

-- The triggers note, per statement: the whole old versions first (records not noted yet: their version from before
-- the import), then the keys (a record's first old keys stay; its keys and snapshot now are the statement's).
CREATE OR REPLACE FUNCTION saved.capture_delinquencies() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  -- an INSERT ... ON CONFLICT that only updated fires the insert trigger with no rows
  IF NOT EXISTS (SELECT 1 FROM new_rows) OR NOT saved.capturing('tax_delinquencies') THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' THEN
    IF saved.whole_rows('tax_delinquencies') THEN
      INSERT INTO pg_temp.saved_old_tax_delinquencies
      SELECT o.* FROM old_rows o
       WHERE NOT EXISTS (SELECT 1 FROM pg_temp.saved_keys_tax_delinquencies k WHERE k.id = o.id);
    END IF;
    INSERT INTO pg_temp.saved_keys_tax_delinquencies AS k
    SELECT n.id, n.county_id, n.tax_year, n.status, coalesce(n.total_due, 'NaN'),
           true, o.tax_year, o.status, coalesce(o.total_due, 'NaN'), webhooks.delinquency_snapshot_of(n)
      FROM new_rows n JOIN old_rows o ON o.id = n.id
    ON CONFLICT (id) DO UPDATE SET tax_year = excluded.tax_year, status = excluded.status, amount = excluded.amount,
                                   snapshot = excluded.snapshot;
  ELSE
    INSERT INTO pg_temp.saved_keys_tax_delinquencies AS k
    SELECT n.id, n.county_id, n.tax_year, n.status, coalesce(n.total_due, 'NaN'), false, NULL, NULL, NULL,
           webhooks.delinquency_snapshot_of(n)
      FROM new_rows n
    ON CONFLICT (id) DO UPDATE SET tax_year = excluded.tax_year, status = excluded.status, amount = excluded.amount,
                                   snapshot = excluded.snapshot;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION saved.capture_delinquencies() IS
  'Trigger function (statement level) on core.tax_delinquencies: during an import merge, notes the inserted or '
  'changed records'' keys (and their versions from before the import) for saved.match_load.';

CREATE OR REPLACE FUNCTION saved.capture_parcels() RETURNS trigger
  LANGUAGE plpgsql
AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows) OR NOT saved.capturing('parcels') THEN RETURN NULL; END IF;
  IF TG_OP = 'UPDATE' THEN
    IF saved.whole_rows('parcels') THEN
      INSERT INTO pg_temp.saved_old_parcels
      SELECT o.* FROM old_rows o WHERE NOT EXISTS (SELECT 1 FROM pg_temp.saved_keys_parcels k WHERE k.id = o.id);
    END IF;
    INSERT INTO pg_temp.saved_keys_parcels AS k
    SELECT n.id, n.county_id, NULL, NULL, coalesce(n.just_value::numeric, 'NaN'),
           true, NULL, NULL, coalesce(o.just_value::numeric, 'NaN')
      FROM new_rows n JOIN old_rows o ON o.id = n.id
    ON CONFLICT (id) DO UPDATE SET amount = excluded.amount;
  ELSE
    INSERT INTO pg_temp.saved_keys_parcels AS k
    SELECT n.id, n.county_id, NULL, NULL, coalesce(n.just_value::numeric, 'NaN'), false FROM new_rows n
    ON CONFLICT (id) DO UPDATE SET amount = excluded.amount;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION saved.capture_parcels() IS
  'Trigger function (statement level) on core.parcels: during an import merge, notes the inserted or changed parcels'' '
  'keys (and their versions from before the import) for saved.match_load.';

-- Step 2 for one resource: records the load's new matches; returns how many. The candidate pairs go into
-- pg_temp.saved_pairs: the record is in the search's result now and, by the prefilter, was not before the import
-- (was_in: it was by the prefilter, for a search whose filter is more than that, checked whole below).
CREATE OR REPLACE FUNCTION saved.match_resource(p_load_id bigint, p_resource text) RETURNS integer
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  parcels constant boolean := p_resource = 'parcels';
  v_table constant text := CASE WHEN parcels THEN 'core.parcels' ELSE 'core.tax_delinquencies' END;
  v_alias constant text := CASE WHEN parcels THEN 'p' ELSE 'd' END;  -- the alias the builders' predicates use
  -- the record as it is kept (saved.match_records): a delinquency as the snapshot the capture noted (k.snapshot), a
  -- parcel as its JSON, read by id. A noted record is still there: an import's merge deletes only the records its
  -- list no longer holds, which it did not write.
  v_hit constant text := CASE WHEN parcels
    THEN '(SELECT webhooks.parcel_hit(p, c.slug, c.name) FROM core.parcels p JOIN core.counties c ON c.id = p.county_id
            WHERE p.id = k.id)'
    ELSE 'NULL' END;
  -- the keys the triggers noted: tax year, status and amount (a NULL amount is NaN, above every number: only a
  -- search with neither bound takes it), now and before
  v_keys constant text := 'saved_keys_' || p_resource;
  v_old constant text := 'saved_old_' || p_resource;
  v_counties smallint[];
  v_matches integer;
  v_search record;
  v_work_mem constant text := current_setting('work_mem');
BEGIN
  IF to_regclass('pg_temp.' || v_keys) IS NULL THEN RETURN 0; END IF;
  EXECUTE format('CREATE INDEX ON pg_temp.%I (county_id, amount); ANALYZE pg_temp.%1$I', v_keys);
  EXECUTE format('SELECT ARRAY(SELECT DISTINCT k.county_id FROM pg_temp.%I k)', v_keys) INTO v_counties;

  -- each search probes the keys of each county it names (or every county of the load) over its amount range; the
  -- record's keys from before (same county) say whether it was in the search's result by the prefilter
  SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off;
  EXECUTE format($q$
    CREATE TEMP TABLE saved_pairs ON COMMIT DROP AS
    WITH probes AS MATERIALIZED (
      SELECT s.id, s.exact, s.tax_year, s.status, c.county_id, coalesce(s.amount_min, '-Infinity') AS low,
             coalesce(s.amount_max, CASE WHEN s.amount_min IS NULL THEN 'NaN' ELSE 'Infinity' END::numeric) AS high
        FROM saved.entitled_searches($1) s
       CROSS JOIN LATERAL unnest(coalesce(s.county_ids, $2)) AS c(county_id)
       WHERE c.county_id = ANY ($2))
    SELECT y.search_id, y.record_id, y.existed, y.exact, y.was_in
      FROM (SELECT x.id AS search_id, k.id AS record_id, k.existed, x.exact,
                   coalesce(k.existed AND k.old_amount BETWEEN x.low AND x.high
                            AND (x.tax_year IS NULL OR k.old_tax_year = x.tax_year)
                            AND (x.status IS NULL OR k.old_status = x.status), false) AS was_in
              FROM probes x
              JOIN pg_temp.%1$I k ON k.county_id = x.county_id AND k.amount BETWEEN x.low AND x.high
             WHERE (x.tax_year IS NULL OR k.tax_year = x.tax_year) AND (x.status IS NULL OR k.status = x.status)) y
     WHERE NOT (y.exact AND y.was_in) $q$, v_keys) USING p_resource, v_counties;
  RESET enable_hashjoin;
  RESET enable_mergejoin;
  CREATE INDEX ON pg_temp.saved_pairs (search_id) WHERE NOT exact;  -- each search below reads its own pairs only

  -- the rest of the filter, where the prefilter is not all of it: the endpoint's own predicate on the record now
  -- and, where the prefilter says it was in before, on its version from before (one missing, because the search
  -- was saved during the import, counts as in: no match rather than a repeated one)
  FOR v_search IN SELECT x.id, saved.predicate(x.resource, x.args) AS predicate FROM saved.searches x
            WHERE x.id IN (SELECT q.search_id FROM pg_temp.saved_pairs q WHERE NOT q.exact) LOOP
    EXECUTE format($q$
      DELETE FROM pg_temp.saved_pairs q
       WHERE q.search_id = $1 AND NOT q.exact
         AND (NOT EXISTS (SELECT 1 FROM %1$s %3$s WHERE %3$s.id = q.record_id AND (%4$s))
              OR q.was_in AND NOT EXISTS (SELECT 1 FROM pg_temp.%2$I %3$s
                                           WHERE %3$s.id = q.record_id AND NOT coalesce((%4$s), false))) $q$,
      v_table, v_old, v_alias, v_search.predicate) USING v_search.id;
  END LOOP;

  -- Ids in commit order (see saved.deliver_load): the lock is held to the end of the import's transaction. It also
  -- makes the matches recorded before (read after taking it) final, so they are left out without a conflict check.
  -- And it orders the import with a search's deletion (saved.delete_matches): only searches that still exist get
  -- matches.
  -- One row per record with the searches it entered (its record once), then one row per search with its match ids.
  PERFORM pg_advisory_xact_lock(hashtext('saved.matches'));
  PERFORM set_config('work_mem', '64MB', true);  -- the pairs grouped by record and by search, in memory
  EXECUTE format($q$
    WITH earlier AS MATERIALIZED (  -- recorded by earlier imports (only a record that existed before can have been)
      SELECT r.record_id, u.search_id
        FROM saved.match_records r CROSS JOIN LATERAL unnest(r.search_ids) AS u(search_id)
       WHERE r.record_id IN (SELECT q.record_id FROM pg_temp.saved_pairs q WHERE q.existed) AND r.resource = $2),
    news AS (
      SELECT q.record_id, array_agg(q.search_id) AS search_ids
        FROM pg_temp.saved_pairs q
       WHERE q.search_id IN (SELECT s.id FROM saved.searches s)
         AND NOT EXISTS (SELECT 1 FROM earlier e WHERE e.record_id = q.record_id AND e.search_id = q.search_id)
       GROUP BY q.record_id),
    records AS (
      INSERT INTO saved.match_records (resource, record_id, load_id, county_id, search_ids, delinquency, hit)
      SELECT $2, k.id, $1, k.county_id, f.search_ids, k.snapshot, %2$s
        FROM news f JOIN pg_temp.%1$I k ON k.id = f.record_id
       ORDER BY k.id
      RETURNING id, search_ids),
    segments AS (
      INSERT INTO saved.search_matches (last_id, search_id, load_id, match_ids)
      SELECT g.ids[cardinality(g.ids)], g.search_id, $1, g.ids
        FROM (SELECT u.search_id, ARRAY(SELECT x FROM unnest(array_agg(r.id)) AS x ORDER BY x) AS ids
                FROM records r CROSS JOIN LATERAL unnest(r.search_ids) AS u(search_id)
               GROUP BY u.search_id) g
      RETURNING cardinality(match_ids) AS n)
    SELECT coalesce(sum(n), 0)::integer FROM segments $q$, v_keys, v_hit)
    INTO v_matches USING p_load_id, p_resource;
  PERFORM set_config('work_mem', v_work_mem, true);
  DROP TABLE pg_temp.saved_pairs;
  EXECUTE format('DROP TABLE pg_temp.%I, pg_temp.%I', v_keys, v_old);
  RETURN v_matches;
END $$;
COMMENT ON FUNCTION saved.match_resource(bigint, text) IS
  'Helper of saved.match_load: the new matches of one resource''s saved searches among the records the import''s '
  'merges noted (pg_temp.saved_keys_<resource>, saved_old_<resource>).';

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
  -- the events hold their search and match ids; their records are written when they are sent (webhooks.event_data)
  INSERT INTO webhooks.events (type, county_id, load_id, data, endpoint_ids, match_ids)
  SELECT 'saved_search.matched', NULL, p_load_id,
         json_build_object('saved_search_id', saved.public_id(s.id), 'name', s.name, 'resource', s.resource),
         s.webhook_endpoint_ids, m.match_ids[p.part * 100 + 1 : p.part * 100 + 100]
    FROM saved.search_matches m
    JOIN saved.searches s ON s.id = m.search_id
   CROSS JOIN LATERAL generate_series(0, (cardinality(m.match_ids) - 1) / 100) AS p(part)
   WHERE m.load_id = p_load_id AND cardinality(s.webhook_endpoint_ids) > 0
   ORDER BY m.match_ids[p.part * 100 + 1];
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
