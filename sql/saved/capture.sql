-- Matching (docs/saved-searches.md#matching), in two steps: the capture in the import's transaction, the match after
-- it commits.
--  1. capture: during a merge, statement-level triggers on core.tax_delinquencies and core.parcels note, from the
--     statement's transition tables (the rows the webhook capture turns into events), the prefilter keys (county,
--     tax year, status, amount) of each record it inserted or changed, as it is now and, the first time a record
--     changes in the import, as it was before; and that version whole where a search's filter is more than those
--     keys. A delinquency's snapshot as it is now (what a match keeps) is noted with its keys, so recording its
--     matches reads no record again. In temporary tables, only when some entitled search of the resource can match
--     in the merged county; after the merges saved.queue_load copies them into saved.queued_keys and
--     saved.queued_old with the import, which commits them.
--  2. match (saved.match_next, run by a webhook worker after the commit, one import at a time, oldest first): the
--     import's keys back in temporary tables, indexed on (county, amount); every entitled search is joined to them
--     by an index range scan per county it names (searches.county_ids, tax_year, status, amount_min/max), so a record
--     is never tested against a search that cannot match it, and the keys from before leave out a record that was
--     in the result already. Searches whose filter is more than those columns (searches.exact false) then have their
--     pairs checked with the predicate their endpoint's builder writes, now and before. The pairs never recorded
--     before are recorded: one saved.match_records row per record with the searches it entered, and one
--     saved.search_matches row per search with its match ids (sql/saved/storage.sql reads them); then the
--     saved_search.matched events (saved.deliver_load). Outside a merge nothing is captured.

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

CREATE OR REPLACE FUNCTION saved.record_table(p_resource text) RETURNS text
  LANGUAGE sql IMMUTABLE
  RETURN CASE p_resource WHEN 'parcels' THEN 'core.parcels' ELSE 'core.tax_delinquencies' END;
COMMENT ON FUNCTION saved.record_table(text) IS 'The table of a saved search''s resource.';

-- The transaction's capture tables of a resource, made once: pg_temp.saved_keys_<resource>, each noted record's
-- prefilter keys (county, tax year, status, amount: saved.match_resource) now and, when it existed before the import,
-- then, and a delinquency's snapshot now (webhooks.delinquency_snapshot_of; NULL for a parcel, read when matched);
-- and pg_temp.saved_old_<resource>, versions from before the import, whole (columns as the table's), for the
-- searches whose filter is more than those keys (saved.whole_rows).
CREATE OR REPLACE FUNCTION saved.capture_tables(p_resource text) RETURNS void
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  IF to_regclass('pg_temp.saved_keys_' || p_resource) IS NULL THEN
    EXECUTE format('CREATE TEMP TABLE %I (id bigint PRIMARY KEY, county_id smallint, tax_year integer, status text, '
                   'amount numeric, existed boolean, old_tax_year integer, old_status text, old_amount numeric, '
                   'snapshot webhooks.delinquency_snapshot) '
                   'ON COMMIT DROP', 'saved_keys_' || p_resource);
    EXECUTE format('CREATE TEMP TABLE %I (LIKE %s, PRIMARY KEY (id)) ON COMMIT DROP', 'saved_old_' || p_resource,
                   saved.record_table(p_resource));
  END IF;
END $$;
COMMENT ON FUNCTION saved.capture_tables(text) IS
  'Makes the transaction''s capture tables of a resource (pg_temp.saved_keys_<resource>, saved_old_<resource>) '
  'unless they exist: the triggers fill them during a merge, saved.match_next from the queue.';

-- Step 1's guard: true during a merge when an entitled search of the resource names the merged county or none; it
-- then makes the transaction's capture tables (saved.capture_tables).
CREATE OR REPLACE FUNCTION saved.capturing(p_resource text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_county smallint := (webhooks.current_merge()).county_id;
BEGIN
  IF v_county IS NULL OR NOT EXISTS (
       SELECT 1 FROM saved.entitled_searches(p_resource) s
        WHERE s.county_ids IS NULL OR s.county_ids OPERATOR(pg_catalog.@>) ARRAY[v_county]) THEN
    RETURN false;
  END IF;
  PERFORM saved.capture_tables(p_resource);
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
  v_table constant text := saved.record_table(p_resource);
  v_alias constant text := CASE WHEN parcels THEN 'p' ELSE 'd' END;  -- the alias the builders' predicates use
  -- the record as it is kept (saved.match_records): a delinquency as the snapshot the capture noted (k.snapshot), a
  -- parcel as its JSON, read by id when it matches (none when a later import has removed it: no match).
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

  -- Ids in commit order: the lock is held to the end of the matching transaction (saved.match_next takes it first).
  -- It also makes the matches recorded before (read after taking it) final, so they are left out without a conflict
  -- check. And it orders the matching with a search's deletion (saved.delete_matches): only searches that still
  -- exist get matches.
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
      SELECT $2, k.id, $1, k.county_id, f.search_ids, k.snapshot, h.hit
        FROM news f JOIN pg_temp.%1$I k ON k.id = f.record_id CROSS JOIN LATERAL (SELECT %2$s::json AS hit) h
       WHERE $2 = 'tax_delinquencies' OR h.hit IS NOT NULL
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
  'Called by saved.deliver_load, in saved.match_next''s transaction: records each (saved search, record) pair that '
  'the import brought into the search''s result (in it now, not before, never recorded before); returns how many.';

-- The import's matches (saved.match_load) as saved_search.matched webhook events, at most 100 records each,
-- addressed to the search's endpoints, queued for the webhook fan-out like the merge's own events (from the first
-- of them on: the merge's events may have been fanned out already).
CREATE OR REPLACE FUNCTION saved.deliver_load(p_load_id bigint) RETURNS integer
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_events integer;
  v_first bigint;
BEGIN
  PERFORM saved.match_load(p_load_id);
  -- the events hold their search and match ids; their records are written when they are sent (webhooks.event_data)
  WITH made AS (
    INSERT INTO webhooks.events (type, county_id, load_id, data, endpoint_ids, match_ids)
    SELECT 'saved_search.matched', NULL, p_load_id,
           json_build_object('saved_search_id', saved.public_id(s.id), 'name', s.name, 'resource', s.resource),
           s.webhook_endpoint_ids, m.match_ids[p.part * 100 + 1 : p.part * 100 + 100]
      FROM saved.search_matches m
      JOIN saved.searches s ON s.id = m.search_id
     CROSS JOIN LATERAL generate_series(0, (cardinality(m.match_ids) - 1) / 100) AS p(part)
     WHERE m.load_id = p_load_id AND cardinality(s.webhook_endpoint_ids) > 0
     ORDER BY m.match_ids[p.part * 100 + 1]
    RETURNING id)
  SELECT count(*), min(id) INTO v_events, v_first FROM made;
  IF v_events > 0 THEN
    INSERT INTO webhooks.outbox (load_id, next_event_id) VALUES (p_load_id, v_first) ON CONFLICT DO NOTHING;
    PERFORM pg_notify('webhooks_outbox', p_load_id::text);
  END IF;
  RETURN v_events;
END $$;
COMMENT ON FUNCTION saved.deliver_load(bigint) IS
  'Called by saved.match_next: records the load''s matches (saved.match_load), then makes one saved_search.matched '
  'event per search and 100 of them, for the search''s webhook endpoints (webhooks.fan_out sends it to those only).';

-- After an import's merges (src/importers/pipeline.ts, in the import's transaction): what they noted, queued for
-- matching after the commit; false when they noted nothing (no search could match in the merged counties).
CREATE OR REPLACE FUNCTION saved.queue_load(p_load_id bigint) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_resource text;
  v_queued boolean := false;
BEGIN
  FOREACH v_resource IN ARRAY ARRAY['tax_delinquencies', 'parcels'] LOOP
    CONTINUE WHEN to_regclass('pg_temp.saved_keys_' || v_resource) IS NULL;
    EXECUTE format($q$
      INSERT INTO saved.queued_keys (load_id, resource, id, county_id, tax_year, status, amount, existed,
                                     old_tax_year, old_status, old_amount, snapshot)
      SELECT $1, $2, k.id, k.county_id, k.tax_year, k.status, k.amount, k.existed, k.old_tax_year, k.old_status,
             k.old_amount, k.snapshot
        FROM pg_temp.%I k $q$, 'saved_keys_' || v_resource) USING p_load_id, v_resource;
    EXECUTE format('INSERT INTO saved.queued_old (load_id, resource, id, record) SELECT $1, $2, o.id, o::text '
                   'FROM pg_temp.%I o', 'saved_old_' || v_resource) USING p_load_id, v_resource;
    EXECUTE format('DROP TABLE pg_temp.%I, pg_temp.%I', 'saved_keys_' || v_resource, 'saved_old_' || v_resource);
    v_queued := true;
  END LOOP;
  IF v_queued THEN
    INSERT INTO saved.queued_loads (load_id) VALUES (p_load_id);
    PERFORM pg_notify('webhooks_outbox', p_load_id::text);  -- wakes a webhook worker (src/webhooks/worker.ts)
  END IF;
  RETURN v_queued;
END $$;
COMMENT ON FUNCTION saved.queue_load(bigint) IS
  'Called by the importer after its merges, in the same transaction: queues what the merges noted for the saved '
  'searches (saved.queued_loads, queued_keys, queued_old), committed with the import and matched after it by '
  'saved.match_next; returns whether anything was queued.';

-- Run by the webhook workers (src/webhooks/worker.ts) until it returns no load: matches the oldest queued import and
-- makes its events, in the caller's transaction (one per import), then forgets what it noted. One import at a time:
-- a second worker waits for the first one's commit, then takes the next import. A worker that dies before its commit
-- leaves the import queued; the sweep wakes another.
CREATE OR REPLACE FUNCTION saved.match_next(OUT load_id bigint, OUT events integer)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
  v_load bigint;
  v_resource text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('saved.matches'));
  SELECT q.load_id INTO v_load FROM saved.queued_loads q ORDER BY q.load_id LIMIT 1;
  IF v_load IS NULL THEN RETURN; END IF;
  FOREACH v_resource IN ARRAY ARRAY['tax_delinquencies', 'parcels'] LOOP
    CONTINUE WHEN NOT EXISTS (SELECT 1 FROM saved.queued_keys k
                               WHERE k.load_id = v_load AND k.resource = v_resource);
    PERFORM saved.capture_tables(v_resource);
    EXECUTE format($q$
      INSERT INTO pg_temp.%I
      SELECT k.id, k.county_id, k.tax_year, k.status, k.amount, k.existed, k.old_tax_year, k.old_status, k.old_amount,
             k.snapshot
        FROM saved.queued_keys k WHERE k.load_id = $1 AND k.resource = $2 $q$, 'saved_keys_' || v_resource)
      USING v_load, v_resource;
    EXECUTE format('INSERT INTO pg_temp.%I SELECT (o.record::%s).* FROM saved.queued_old o '
                   'WHERE o.load_id = $1 AND o.resource = $2', 'saved_old_' || v_resource,
                   saved.record_table(v_resource))
      USING v_load, v_resource;
  END LOOP;
  events := saved.deliver_load(v_load);
  DELETE FROM saved.queued_keys k WHERE k.load_id = v_load;
  DELETE FROM saved.queued_old o WHERE o.load_id = v_load;
  DELETE FROM saved.queued_loads q WHERE q.load_id = v_load;
  load_id := v_load;
END $$;
COMMENT ON FUNCTION saved.match_next() IS
  'Matches the oldest queued import against the saved searches (saved.deliver_load) and removes it from the queue; '
  'returns its load id and how many saved_search.matched events it made, or NULL when nothing is queued.';
