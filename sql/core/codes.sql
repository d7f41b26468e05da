-- Helpers every surface shares: county slugs to ids, revenue-department use codes in the roll's form.

-- DOR use codes arrive as 1-4 digits ('1', '01', '001', '0100'); the roll keeps the 4-character form '0100'.
-- (Not STRICT, so that the planner inlines it; NULL still gives NULL.)
CREATE OR REPLACE FUNCTION core.normalize_dor_use_code(p_code text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN p_code ~ '^\d{4}$' THEN p_code
              WHEN p_code ~ '^\d{1,3}$' AND p_code::int < 100 THEN lpad(p_code::int::text, 2, '0') || '00'
              ELSE upper(p_code) END;
COMMENT ON FUNCTION core.normalize_dor_use_code(text) IS
  'A DOR use code in the 4-character form the roll stores: 1, 01 and 001 all mean 0100 (single family).';

-- County slugs to ids; an unknown slug is a 400 that names it (a typo should not look like "no data"). One query
-- reads the ids and finds what is wrong (called on most requests: each statement of a function costs its executor).
CREATE OR REPLACE FUNCTION core.county_ids(p_slugs text[]) RETURNS smallint[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v_ids smallint[];
  v_malformed boolean;
  v_unknown text;
BEGIN
  IF p_slugs IS NULL THEN RETURN NULL; END IF;
  SELECT array_agg(DISTINCT c.id ORDER BY c.id) FILTER (WHERE c.id IS NOT NULL),
         coalesce(bool_or(s IS NULL OR length(s) NOT BETWEEN 1 AND 40), false),
         (array_agg(s ORDER BY i) FILTER (WHERE c.id IS NULL))[1]
    INTO v_ids, v_malformed, v_unknown
    FROM unnest(p_slugs) WITH ORDINALITY AS u(s, i)
    LEFT JOIN core.counties c ON c.slug = lower(u.s);
  IF v_malformed THEN
    PERFORM core.bad_input('county: each county slug must be 1-40 characters');
  END IF;
  IF v_unknown IS NOT NULL THEN
    PERFORM core.bad_input(format('county: unknown county ''%s''; GET /v1/counties lists the slugs', v_unknown));
  END IF;
  RETURN v_ids;
END $$;
COMMENT ON FUNCTION core.county_ids(text[]) IS 'County ids for slugs (case-insensitive), NULL for NULL or no slugs; a slug outside 1-40 characters or unknown raises 22023 naming it. Used by every search-like surface.';
