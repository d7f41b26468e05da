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
