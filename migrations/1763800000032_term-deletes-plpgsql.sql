-- Up Migration
-- core.term_deletes in PL/pgSQL, with the same hashes. A LANGUAGE sql function the planner cannot inline (this one's
-- body is a sub-SELECT) is planned again at every call in PostgreSQL 15: 250-370 us per query word, against 12 us to
-- compute its deletions. PL/pgSQL keeps its statements' plans for the session. The hashes now come sorted (the order
-- was the plan's); the index compares them as sets, so the stored rows stay as they are.
CREATE OR REPLACE FUNCTION core.term_deletes(p_term text, p_depth integer) RETURNS integer[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
AS $$
DECLARE
  v_strings text[] := ARRAY[p_term];
  v_less_one text;
BEGIN
  IF p_depth >= 1 THEN
    FOR i IN 0 .. length(p_term) - 1 LOOP
      v_less_one := left(p_term, i) || substr(p_term, i + 2);
      v_strings := v_strings || v_less_one;
      IF p_depth >= 2 THEN
        -- the second deletion at or after the first: each pair of positions once
        FOR j IN i .. length(v_less_one) - 1 LOOP
          v_strings := v_strings || (left(v_less_one, j) || substr(v_less_one, j + 2));
        END LOOP;
      END IF;
    END LOOP;
  END IF;
  RETURN ARRAY(SELECT DISTINCT hashtext(s) FROM unnest(v_strings) AS s WHERE s <> '' ORDER BY 1);
END $$;
COMMENT ON FUNCTION core.term_deletes(text, integer) IS
  'The hashes (hashtext), sorted, of a string and of every non-empty string left after deleting up to p_depth (0-2) '
  'of its characters. Two strings within p_depth edits share at least one. Example: SELECT core.term_deletes(''JON'', 1); -- 4 hashes: JON, ON, JN, JO';

-- Down Migration
CREATE OR REPLACE FUNCTION core.term_deletes(p_term text, p_depth integer) RETURNS integer[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN ARRAY(
    SELECT DISTINCT hashtext(s) FROM (
      SELECT p_term
      UNION ALL
      SELECT left(p_term, i) || substr(p_term, i + 2)
        FROM generate_series(0, length(p_term) - 1) AS i WHERE p_depth >= 1
      UNION ALL
      SELECT left(p_term, i) || substr(p_term, i + 2, j - i - 1) || substr(p_term, j + 2)
        FROM generate_series(0, length(p_term) - 2) AS i, generate_series(i + 1, length(p_term) - 1) AS j
       WHERE p_depth >= 2) AS d(s)
     WHERE s <> '');
