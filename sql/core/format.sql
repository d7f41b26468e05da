-- Output formatting shared by every api.* function, so the SQL returns the interface's exact shapes.
-- STABLE, as to_char is: the planner inlines it only then (an IMMUTABLE function calling a STABLE one is planned
-- again at every call instead).
CREATE OR REPLACE FUNCTION core.iso_utc(p_at timestamptz) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE STRICT
  RETURN to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
COMMENT ON FUNCTION core.iso_utc(timestamptz) IS 'ISO 8601 UTC text of a timestamp, second precision: 2026-07-15T06:00:00Z.';

-- Raises SQLSTATE 22023 (invalid_parameter_value), which the API answers as 400 bad_request.
CREATE OR REPLACE FUNCTION core.bad_input(p_message text) RETURNS void
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = p_message; END $$;
COMMENT ON FUNCTION core.bad_input(text) IS 'Raise invalid_parameter_value (22023) with a message naming the parameter; mapped to HTTP 400.';

-- Every list read pages the same way: limit 1 to core.page_limit_max(), offset 0 or more.
CREATE OR REPLACE FUNCTION core.page_limit_max() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 500;
COMMENT ON FUNCTION core.page_limit_max() IS 'The largest page of every list read (the HTTP schemas state the same bound).';

CREATE OR REPLACE FUNCTION core.check_page(p_limit integer, p_offset integer) RETURNS void
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND core.page_limit_max() THEN
    PERFORM core.bad_input(format('limit: must be between 1 and %s', core.page_limit_max()));
  END IF;
  IF p_offset IS NULL OR p_offset < 0 THEN PERFORM core.bad_input('offset: must be 0 or more'); END IF;
END $$;
COMMENT ON FUNCTION core.check_page(integer, integer) IS 'Raises 22023 unless limit is 1 to core.page_limit_max() and offset is 0 or more.';

-- An unknown sort value, worded the same for every list read.
CREATE OR REPLACE FUNCTION core.bad_sort(p_sort text, p_known text[]) RETURNS void
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$ BEGIN PERFORM core.bad_input(format('sort: unknown sort ''%s'' (%s)', p_sort, array_to_string(p_known, ', '))); END $$;
COMMENT ON FUNCTION core.bad_sort(text, text[]) IS 'Raises 22023 naming the unknown sort value and the known ones.';
