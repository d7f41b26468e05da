-- Webhook events, written by the import merges in their own transaction (the outbox; docs/webhooks.md). A merge
-- names itself with webhooks.begin_merge; statement-level triggers on the tables it writes then turn the statement's
-- transition tables into events, and webhooks.end_merge adds the county's county.data_refreshed event and queues the
-- import for the fan-out. Outside a merge (fixtures, a fix made in psql) the triggers write nothing. Events are
-- written only while some enabled endpoint of a client entitled to webhooks subscribes to the type and county, so an
-- import nobody listens to pays one small query per statement.

CREATE OR REPLACE FUNCTION webhooks.event_types() RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN ARRAY['tax_delinquency.created', 'tax_delinquency.updated', 'tax_delinquency.removed',
               'parcel.sale_recorded', 'parcel.owner_changed', 'parcel.value_changed', 'county.data_refreshed',
               'webhook.test'];
COMMENT ON FUNCTION webhooks.event_types() IS 'Every event type an endpoint may subscribe to (docs/webhooks.md).';

CREATE OR REPLACE FUNCTION webhooks.public_id(p_prefix text, p_id bigint) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN p_prefix || lpad(to_hex(p_id), 16, '0');
COMMENT ON FUNCTION webhooks.public_id(text, bigint) IS
  'The public id of an event (evt_) or delivery (dlv_): the prefix and 16 hex digits, so ids sort as they were made.';

CREATE OR REPLACE FUNCTION webhooks.iso_ms(p_at timestamptz) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
COMMENT ON FUNCTION webhooks.iso_ms(timestamptz) IS 'ISO 8601 UTC with milliseconds: 2026-07-15T06:00:00.123Z.';

-- Whether a client may receive webhooks now: active (not suspended) on a plan that includes them (beta counts).
CREATE OR REPLACE FUNCTION webhooks.client_entitled(p_client_id uuid) RETURNS boolean
  LANGUAGE sql STABLE
AS $$
  SELECT EXISTS (SELECT 1 FROM accounts.clients c JOIN accounts.plans p ON p.plan = c.plan
                  WHERE c.id = p_client_id AND c.status = 'active' AND p.webhooks <> 'no')
$$;
COMMENT ON FUNCTION webhooks.client_entitled(uuid) IS
  'True while the client is active on a plan with webhooks (yes or beta); otherwise its endpoints receive nothing.';

CREATE OR REPLACE FUNCTION webhooks.wanted(p_type text, p_county_id smallint) RETURNS boolean
  LANGUAGE sql STABLE
AS $$
  SELECT EXISTS (
    SELECT 1 FROM webhooks.endpoints e
      JOIN accounts.clients c ON c.id = e.client_id
      JOIN accounts.plans p ON p.plan = c.plan
     WHERE e.deleted_at IS NULL AND e.status = 'enabled' AND p_type = ANY (e.events)
       AND (e.counties IS NULL OR p_county_id = ANY (e.counties))
       AND c.status = 'active' AND p.webhooks <> 'no')
$$;
COMMENT ON FUNCTION webhooks.wanted(text, smallint) IS
  'Whether an enabled endpoint of an entitled client subscribes to the event type in the county: events nobody '
  'could receive are not written.';

-- The merge in progress in this transaction, as set by begin_merge: NULLs outside one.
CREATE OR REPLACE FUNCTION webhooks.current_merge(OUT load_id bigint, OUT county_id smallint, OUT kind text)
  LANGUAGE plpgsql STABLE
AS $$
DECLARE
  v text[] := string_to_array(nullif(current_setting('webhooks.merge', true), ''), ':');
BEGIN
  IF v IS NOT NULL THEN
    load_id := v[1]::bigint;
    county_id := v[2]::smallint;
    kind := v[3];
  END IF;
END $$;
COMMENT ON FUNCTION webhooks.current_merge() IS
  'The import merge running in this transaction (load id, county id, kind), from the transaction-local setting '
  'webhooks.merge; NULLs outside a merge.';

CREATE OR REPLACE FUNCTION webhooks.begin_merge(p_load_id bigint, p_county_id smallint, p_kind text) RETURNS void
  LANGUAGE sql VOLATILE
AS $$ SELECT set_config('webhooks.merge', format('%s:%s:%s', p_load_id, p_county_id, p_kind), true) $$;
COMMENT ON FUNCTION webhooks.begin_merge(bigint, smallint, text) IS
  'Called by each ingest.merge_* function before it writes: the writes that follow emit events for this load, '
  'county and kind (nal, sdf, parcel-geometry, delinquencies) until end_merge.';

CREATE OR REPLACE FUNCTION webhooks.end_merge(p_load_id bigint, p_county_id smallint, p_kind text,
  p_added bigint, p_changed bigint, p_removed bigint) RETURNS void
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM set_config('webhooks.merge', '', true);
  IF p_added + p_changed + p_removed > 0 AND webhooks.wanted('county.data_refreshed', p_county_id) THEN
    INSERT INTO webhooks.events (type, county_id, load_id, data)
    SELECT 'county.data_refreshed', c.id, p_load_id,
           json_build_object('county_slug', c.slug, 'county_name', c.name, 'kind', p_kind,
                             'rows_added', p_added, 'rows_changed', p_changed, 'rows_removed', p_removed)
      FROM core.counties c WHERE c.id = p_county_id;
  END IF;
  IF EXISTS (SELECT 1 FROM webhooks.events e WHERE e.load_id = p_load_id) THEN
    INSERT INTO webhooks.outbox (load_id) VALUES (p_load_id) ON CONFLICT DO NOTHING;
    -- delivered at commit only: a rolled-back import wakes nobody
    PERFORM pg_notify('webhooks_outbox', p_load_id::text);
  END IF;
END $$;
COMMENT ON FUNCTION webhooks.end_merge(bigint, smallint, text, bigint, bigint, bigint) IS
  'Called by each ingest.merge_* function after it wrote: adds county.data_refreshed (when rows were added, changed '
  'or removed and someone subscribes), queues the load for the fan-out (webhooks.outbox) and notifies the workers at '
  'commit (channel webhooks_outbox).';

-- The objects the REST API returns (DelinquencyHit, SaleHit, ParcelHit without geometry), built from a row of the
-- table, so an event's data parses like the REST answer (test/webhooks/ compares them).
CREATE OR REPLACE FUNCTION webhooks.delinquency_snapshot_of(d core.tax_delinquencies)
RETURNS webhooks.delinquency_snapshot
  LANGUAGE sql IMMUTABLE
AS $$
  SELECT ROW(d.id, d.parcel_id, d.tax_year, d.status, d.delinquent_amount, d.total_due, d.certificate_number,
             d.certificate_sale_date, d.owner_name, d.site_address_full, d.source_vendor, d.face_amount,
             d.certificate_holder, d.certificate_interest_rate, d.bid_rate)::webhooks.delinquency_snapshot
$$;
COMMENT ON FUNCTION webhooks.delinquency_snapshot_of(core.tax_delinquencies) IS
  'The fields of a record that a tax_delinquency.* event keeps (what its DelinquencyHit is made of).';

CREATE OR REPLACE FUNCTION webhooks.delinquency_json(d webhooks.delinquency_snapshot, p_slug text) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT json_build_object(
    'id', d.id::text, 'county_slug', p_slug, 'county_parcel_id', d.parcel_id, 'tax_year', d.tax_year::integer,
    'status', d.status, 'delinquent_amount', d.delinquent_amount::float8, 'total_due', d.total_due::float8,
    'certificate_number', d.certificate_number,
    'certificate_sale_date', to_char(d.certificate_sale_date, 'YYYY-MM-DD'),
    'owner_name', d.owner_name, 'site_address_full', d.site_address_full, 'source_vendor', d.source_vendor,
    'face_amount', d.face_amount::float8, 'certificate_holder', d.certificate_holder,
    'certificate_interest_rate', d.certificate_interest_rate::float8, 'bid_rate', d.bid_rate::float8)
$$;
COMMENT ON FUNCTION webhooks.delinquency_json(webhooks.delinquency_snapshot, text) IS
  'DelinquencyHit (as GET /v1/tax-delinquencies/search returns it) of a kept record, as JSON.';

-- The data an event is sent with: its JSON, or for a delinquency event the DelinquencyHit of the record it kept, or
-- for a saved_search.matched event with match ids its search and the records of those matches.
CREATE OR REPLACE FUNCTION webhooks.event_data(e webhooks.events) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT CASE WHEN e.match_ids IS NOT NULL THEN saved.matched_event_data(e.data, e.match_ids)
              ELSE coalesce(e.data, webhooks.delinquency_json(e.delinquency, (SELECT c.slug FROM core.counties c WHERE c.id = e.county_id))) END
$$;
COMMENT ON FUNCTION webhooks.event_data(webhooks.events) IS
  'An event''s data as sent: the stored JSON, or the DelinquencyHit of a tax_delinquency.* event''s record, or a '
  'saved_search.matched event''s search and matched records (saved.matched_event_data). '
  'Example: SELECT id, type, webhooks.event_data(e) FROM webhooks.events e ORDER BY id DESC LIMIT 5;';

CREATE OR REPLACE FUNCTION webhooks.sale_hit(s core.sales, p_slug text) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT json_build_object(
    'id', s.id::text, 'county_slug', p_slug, 'county_parcel_id', s.parcel_id, 'sale_date', s.sale_date::text,
    'sale_price', s.sale_price::float8, 'book', s.book, 'page', s.page, 'instrument_number', s.instrument_number,
    'deed_code', s.deed_code, 'qualification_code', s.qualification_code, 'grantor', s.grantor,
    'grantee', s.grantee)
$$;
COMMENT ON FUNCTION webhooks.sale_hit(core.sales, text) IS 'SaleHit (as GET /v1/sales/search returns it) of one sale, as JSON.';

CREATE OR REPLACE FUNCTION webhooks.parcel_hit(p core.parcels, p_slug text, p_name text) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT json_build_object(
    'id', p.id::int, 'parcel_id', p.parcel_id, 'county_slug', p_slug, 'county_name', p_name,
    'owner_name', p.owner_name, 'site_address_full', p.site_address_full, 'site_city', p.site_city,
    'site_state', p.site_state, 'site_zip', p.site_zip, 'dor_use_code', p.dor_use_code,
    'property_use_code', p.property_use_code, 'land_use_description', p.land_use_description,
    'just_value', p.just_value::float8, 'assessed_value', p.assessed_value::float8,
    'taxable_value', p.taxable_value::float8, 'year_built', p.year_built::int,
    'last_sale_date', p.last_sale_date::text, 'last_sale_price', p.last_sale_price::float8,
    'centroid_lat', ST_Y(p.centroid), 'centroid_lng', ST_X(p.centroid), 'geometry', NULL)
$$;
COMMENT ON FUNCTION webhooks.parcel_hit(core.parcels, text, text) IS
  'ParcelHit (as GET /v1/parcels/search returns it: geometry null) of one parcel, as JSON.';

-- previous of tax_delinquency.updated: the old value of every DelinquencyHit field that changed, in the hit's field
-- order; NULL when none did. One expression (written as JSON text), so the planner inlines it into the trigger's
-- query: a per-row function call or sub-query would cost more than the rest of the event.
CREATE OR REPLACE FUNCTION webhooks.delinquency_changes(o core.tax_delinquencies, n core.tax_delinquencies) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT nullif('{' || concat_ws(',',
    CASE WHEN o.parcel_id IS DISTINCT FROM n.parcel_id THEN '"county_parcel_id":' || to_json(o.parcel_id) END,
    CASE WHEN o.tax_year IS DISTINCT FROM n.tax_year THEN '"tax_year":' || to_json(o.tax_year::integer) END,
    CASE WHEN o.status IS DISTINCT FROM n.status THEN '"status":' || to_json(o.status) END,
    CASE WHEN o.delinquent_amount IS DISTINCT FROM n.delinquent_amount
         THEN '"delinquent_amount":' || to_json(o.delinquent_amount::float8) END,
    CASE WHEN o.total_due IS DISTINCT FROM n.total_due THEN '"total_due":' || to_json(o.total_due::float8) END,
    CASE WHEN o.certificate_number IS DISTINCT FROM n.certificate_number
         THEN '"certificate_number":' || to_json(o.certificate_number) END,
    CASE WHEN o.certificate_sale_date IS DISTINCT FROM n.certificate_sale_date
         THEN '"certificate_sale_date":' || to_json(to_char(o.certificate_sale_date, 'YYYY-MM-DD')) END,
    CASE WHEN o.owner_name IS DISTINCT FROM n.owner_name THEN '"owner_name":' || to_json(o.owner_name) END,
    CASE WHEN o.site_address_full IS DISTINCT FROM n.site_address_full
         THEN '"site_address_full":' || to_json(o.site_address_full) END,
    CASE WHEN o.source_vendor IS DISTINCT FROM n.source_vendor THEN '"source_vendor":' || to_json(o.source_vendor) END,
    CASE WHEN o.face_amount IS DISTINCT FROM n.face_amount THEN '"face_amount":' || to_json(o.face_amount::float8) END,
    CASE WHEN o.certificate_holder IS DISTINCT FROM n.certificate_holder
         THEN '"certificate_holder":' || to_json(o.certificate_holder) END,
    CASE WHEN o.certificate_interest_rate IS DISTINCT FROM n.certificate_interest_rate
         THEN '"certificate_interest_rate":' || to_json(o.certificate_interest_rate::float8) END,
    CASE WHEN o.bid_rate IS DISTINCT FROM n.bid_rate THEN '"bid_rate":' || to_json(o.bid_rate::float8) END
  ) || '}', '{}')::json
$$;
COMMENT ON FUNCTION webhooks.delinquency_changes(core.tax_delinquencies, core.tax_delinquencies) IS
  'previous of a tax_delinquency.updated event: the old value of each DelinquencyHit field that changed (as the hit '
  'shows it), in the hit''s field order; NULL when no field of the hit changed.';

CREATE OR REPLACE FUNCTION webhooks.capture_delinquencies() RETURNS trigger
  LANGUAGE plpgsql
AS $$
DECLARE
  m record;
BEGIN
  SELECT * INTO m FROM webhooks.current_merge();
  IF m.kind IS DISTINCT FROM 'delinquencies' THEN RETURN NULL; END IF;
  -- the records are kept as rows; their JSON is written when they are sent (webhooks.event_data)
  IF TG_OP = 'INSERT' AND webhooks.wanted('tax_delinquency.created', m.county_id) THEN
    INSERT INTO webhooks.events (type, county_id, load_id, delinquency)
    SELECT 'tax_delinquency.created', m.county_id, m.load_id, webhooks.delinquency_snapshot_of(n)
      FROM new_rows n
     ORDER BY n.id;
  ELSIF TG_OP = 'UPDATE' AND webhooks.wanted('tax_delinquency.updated', m.county_id) THEN
    -- In record order (the merge join on id gives it without a sort of its own); the changes are computed once
    -- per row (the sub-query is not flattened into the filter).
    INSERT INTO webhooks.events (type, county_id, load_id, delinquency, previous)
    SELECT 'tax_delinquency.updated', m.county_id, m.load_id, x.delinquency, x.previous
      FROM (SELECT webhooks.delinquency_snapshot_of(n) AS delinquency, webhooks.delinquency_changes(o, n) AS previous
              FROM new_rows n JOIN old_rows o ON o.id = n.id
             ORDER BY n.id OFFSET 0) x
     WHERE x.previous IS NOT NULL;
  ELSIF TG_OP = 'DELETE' AND webhooks.wanted('tax_delinquency.removed', m.county_id) THEN
    INSERT INTO webhooks.events (type, county_id, load_id, delinquency)
    SELECT 'tax_delinquency.removed', m.county_id, m.load_id, webhooks.delinquency_snapshot_of(o)
      FROM old_rows o
     ORDER BY o.id;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION webhooks.capture_delinquencies() IS
  'Trigger function (statement level) on core.tax_delinquencies: during a delinquencies merge, one '
  'tax_delinquency.created / updated (with previous) / removed event per inserted / changed / deleted record.';

CREATE OR REPLACE FUNCTION webhooks.capture_sales() RETURNS trigger
  LANGUAGE plpgsql
AS $$
DECLARE
  m record;
BEGIN
  SELECT * INTO m FROM webhooks.current_merge();
  IF m.kind IS DISTINCT FROM 'sdf' OR NOT webhooks.wanted('parcel.sale_recorded', m.county_id) THEN RETURN NULL; END IF;
  -- new_rows of INSERT ... ON CONFLICT DO UPDATE holds the inserted rows only: an updated sale is not new
  INSERT INTO webhooks.events (type, county_id, load_id, data)
  SELECT 'parcel.sale_recorded', n.county_id, m.load_id, webhooks.sale_hit(n, c.slug)
    FROM new_rows n JOIN core.counties c ON c.id = m.county_id
   ORDER BY n.id;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION webhooks.capture_sales() IS
  'Trigger function (statement level) on core.sales: during an SDF merge, one parcel.sale_recorded event per new sale.';

-- parcel.value_changed: the smallest threshold (percent) of the endpoints that would receive it in the county, so
-- a change nobody asked for is not written; NULL when nobody subscribes. The fan-out applies each endpoint's own.
CREATE OR REPLACE FUNCTION webhooks.value_change_floor(p_county_id smallint) RETURNS numeric
  LANGUAGE sql STABLE
AS $$
  SELECT min(e.value_change_threshold) FROM webhooks.endpoints e
    JOIN accounts.clients c ON c.id = e.client_id
    JOIN accounts.plans p ON p.plan = c.plan
   WHERE e.deleted_at IS NULL AND e.status = 'enabled' AND 'parcel.value_changed' = ANY (e.events)
     AND (e.counties IS NULL OR p_county_id = ANY (e.counties))
     AND c.status = 'active' AND p.webhooks <> 'no'
$$;
COMMENT ON FUNCTION webhooks.value_change_floor(smallint) IS
  'The smallest value_change_threshold of the endpoints that would receive parcel.value_changed in the county; NULL when none.';

-- The just value change of a parcel.value_changed event, in percent (2 decimals), from its data and previous.
CREATE OR REPLACE FUNCTION webhooks.value_change_pct(p_data json, p_previous json) RETURNS numeric
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN round(((p_data->>'just_value')::numeric - (p_previous->>'just_value')::numeric) * 100
               / nullif((p_previous->>'just_value')::numeric, 0), 2);
COMMENT ON FUNCTION webhooks.value_change_pct(json, json) IS
  'parcel.value_changed: (data.just_value - previous.just_value) / previous.just_value in percent, 2 decimals.';

CREATE OR REPLACE FUNCTION webhooks.capture_parcels() RETURNS trigger
  LANGUAGE plpgsql
AS $$
DECLARE
  m record;
  v_floor numeric;
BEGIN
  SELECT * INTO m FROM webhooks.current_merge();
  IF m.kind IS DISTINCT FROM 'nal' THEN RETURN NULL; END IF;
  v_floor := webhooks.value_change_floor(m.county_id);
  -- a new roll year whose just value moved by more than some endpoint's threshold
  IF v_floor IS NOT NULL THEN
    INSERT INTO webhooks.events (type, county_id, load_id, data, previous)
    SELECT 'parcel.value_changed', n.county_id, m.load_id, webhooks.parcel_hit(n, c.slug, c.name),
           json_build_object('roll_year', o.roll_year, 'just_value', o.just_value::float8)
      FROM new_rows n
      JOIN old_rows o ON o.id = n.id
      JOIN core.counties c ON c.id = m.county_id
     WHERE n.roll_year > o.roll_year AND o.just_value > 0
       AND abs(n.just_value - o.just_value) * 100.0 / o.just_value > v_floor
     ORDER BY n.id;
  END IF;
  IF NOT webhooks.wanted('parcel.owner_changed', m.county_id) THEN RETURN NULL; END IF;
  INSERT INTO webhooks.events (type, county_id, load_id, data, previous)
  SELECT 'parcel.owner_changed', n.county_id, m.load_id, webhooks.parcel_hit(n, c.slug, c.name),
         json_build_object('owner_name', o.owner_name)
    FROM new_rows n
    JOIN old_rows o ON o.id = n.id
    JOIN core.counties c ON c.id = m.county_id
   WHERE n.owner_name IS DISTINCT FROM o.owner_name
   ORDER BY n.id;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION webhooks.capture_parcels() IS
  'Trigger function (statement level) on core.parcels: during a NAL merge, one parcel.owner_changed event (previous: '
  'the old owner_name) per parcel whose owner name changed, and one parcel.value_changed event (previous: the old '
  'roll_year and just_value) per parcel whose new roll year moved its just value by more than the smallest threshold '
  'of the endpoints subscribed (webhooks.value_change_floor).';
