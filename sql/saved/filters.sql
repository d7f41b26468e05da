-- A saved search's filter, made by the search endpoints' own builders (search.parcel_filter_of / parcel_where,
-- search.tax_delinquency_filter_of / tax_delinquency_where) from its stored named arguments: the builder's parameter
-- list is read from the catalog, so a filter added to a builder works in saved searches as it is, with the same
-- checks and messages.

CREATE OR REPLACE FUNCTION saved.builder(p_resource text) RETURNS regprocedure
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT p.oid::regprocedure FROM pg_proc p
   WHERE p.pronamespace = 'search'::regnamespace
     AND p.proname = CASE p_resource WHEN 'parcels' THEN 'parcel_filter_of' WHEN 'tax_delinquencies' THEN 'tax_delinquency_filter_of' END
   ORDER BY p.pronargs DESC LIMIT 1
$$;
COMMENT ON FUNCTION saved.builder(text) IS
  'The filter builder of a resource: search.parcel_filter_of (parcels) or search.tax_delinquency_filter_of.';

-- A JSON value as the text of a SQL literal: strings and numbers as they are, arrays as array literals.
CREATE OR REPLACE FUNCTION saved.literal_text(v jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE jsonb_typeof(v)
           WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text(v))::text
           WHEN 'null' THEN NULL
           ELSE v #>> '{}' END
$$;
COMMENT ON FUNCTION saved.literal_text(jsonb) IS 'A JSON value as SQL literal text (arrays as {a,b}).';

-- The call of the resource's builder with the stored arguments, in named notation, each typed as the builder's
-- parameter; 22023 for an argument the builder does not take.
CREATE OR REPLACE FUNCTION saved.builder_call(p_resource text, p_args jsonb) RETURNS text
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  b regprocedure := saved.builder(p_resource);
  v_unknown text;
  v_call text;
BEGIN
  IF b IS NULL THEN PERFORM core.bad_input('resource: must be parcels or tax_delinquencies'); END IF;
  SELECT k INTO v_unknown FROM jsonb_object_keys(p_args) k
   WHERE k <> ALL ((SELECT proargnames FROM pg_proc WHERE oid = b)::text[]) LIMIT 1;
  IF v_unknown IS NOT NULL THEN
    PERFORM core.bad_input(format('params: unknown parameter ''%s''', substr(v_unknown, 3)));
  END IF;
  SELECT string_agg(format('%I => %L::%s', a.name, saved.literal_text(p_args -> a.name), a.type::regtype), ', ')
    INTO v_call
    FROM pg_proc p, unnest(p.proargnames, p.proargtypes::oid[]) AS a(name, type)
   WHERE p.oid = b AND jsonb_typeof(p_args -> a.name) IS DISTINCT FROM 'null' AND p_args ? a.name;
  RETURN format('%s(%s)', b::regproc, coalesce(v_call, ''));
END $$;
COMMENT ON FUNCTION saved.builder_call(text, jsonb) IS
  'SQL text calling the resource''s filter builder with the stored named arguments (p_county => ''{broward}''::text[], ...).';

-- The WHERE clause (over core.parcels p or core.tax_delinquencies d) of a saved search's filter; raises the
-- builder's 22023 for arguments it refuses.
CREATE OR REPLACE FUNCTION saved.where_of(p_resource text, p_args jsonb) RETURNS text
  LANGUAGE plpgsql STABLE
AS $$
DECLARE
  v_where text;
BEGIN
  IF p_resource = 'parcels' THEN
    EXECUTE format('SELECT search.parcel_where(f, CASE WHEN f.query IS NOT NULL THEN api.parcel_query_words(f.query) END)'
                   ' FROM %s AS f', saved.builder_call(p_resource, p_args)) INTO v_where;
  ELSE
    EXECUTE format('SELECT search.tax_delinquency_where(f) FROM %s AS f', saved.builder_call(p_resource, p_args))
      INTO v_where;
  END IF;
  RETURN v_where;
END $$;
COMMENT ON FUNCTION saved.where_of(text, jsonb) IS
  'The predicate the search endpoint would use for these arguments (alias p for parcels, d for delinquencies). '
  'Example: SELECT saved.where_of(resource, args) FROM saved.searches LIMIT 1;';

-- The counties a filter names (NULL: every county), for the matching's prefilter.
CREATE OR REPLACE FUNCTION saved.county_ids_of(p_args jsonb) RETURNS smallint[]
  LANGUAGE sql STABLE
AS $$
  SELECT CASE WHEN jsonb_typeof(p_args -> 'p_county') = 'array'
              THEN core.county_ids(ARRAY(SELECT jsonb_array_elements_text(p_args -> 'p_county'))) END
$$;
COMMENT ON FUNCTION saved.county_ids_of(jsonb) IS 'County ids of a saved search''s p_county argument; NULL for every county.';
