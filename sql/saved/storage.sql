-- Reading the matches (docs/saved-searches.md#matching): saved.match_records holds one row per record an import
-- brought into some searches (search_ids) with the record as it was then; saved.search_matches lists each search's
-- match ids of an import, in cursor order. What reads a search's matches goes through saved.match_ids_after.

-- A match's record as the search endpoint returns it (DelinquencyHit, or ParcelHit), as it was when it matched.
CREATE OR REPLACE FUNCTION saved.match_hit(r saved.match_records) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT coalesce(r.hit, webhooks.delinquency_json(r.delinquency, (SELECT c.slug FROM core.counties c WHERE c.id = r.county_id)))
$$;
COMMENT ON FUNCTION saved.match_hit(saved.match_records) IS
  'The record of a match as the search endpoint returns it (DelinquencyHit or ParcelHit), as it was when it matched.';

-- Up to p_limit of a search's match ids above p_since, ascending. The search's rows are read in last_id order (the
-- primary key's range, no sort) and each one's ids are ascending and above the previous row's, so the ids come out
-- ascending as they are unnested and the limit stops the read: a page reads only the rows it shows, however many
-- matches the search has.
CREATE OR REPLACE FUNCTION saved.match_ids_after(p_search_id uuid, p_since bigint, p_limit integer)
RETURNS TABLE (id bigint)
  LANGUAGE sql STABLE
AS $$
  SELECT x.id
    FROM (SELECT unnest(s.match_ids) AS id FROM saved.search_matches s
           WHERE s.search_id = p_search_id AND s.last_id > p_since
           ORDER BY s.last_id) x
   WHERE x.id > p_since
   LIMIT p_limit
$$;
COMMENT ON FUNCTION saved.match_ids_after(uuid, bigint, integer) IS
  'The cursor: up to p_limit match ids of the search above p_since, ascending (ids of saved.match_records).';

CREATE OR REPLACE VIEW saved.matches AS
SELECT r.id, s.search_id, r.record_id, r.load_id, r.county_id, r.matched_at, saved.match_hit(r) AS hit
  FROM saved.search_matches s
 CROSS JOIN LATERAL unnest(s.match_ids) AS u(id)
  JOIN saved.match_records r ON r.id = u.id;
COMMENT ON VIEW saved.matches IS
  'Every (saved search, record) match, one row each, for analysts: id is the match''s cursor, hit the record as the '
  'search endpoint returned it when it matched.';

-- The data a saved_search.matched event is sent with: the search (p_head: saved_search_id, name, resource, as when
-- the event was made) and its matches' records, in cursor order.
CREATE OR REPLACE FUNCTION saved.matched_event_data(p_head json, p_match_ids bigint[]) RETURNS json
  LANGUAGE sql STABLE
AS $$
  SELECT json_build_object(
    'saved_search_id', p_head -> 'saved_search_id', 'name', p_head -> 'name', 'resource', p_head -> 'resource',
    'matches', coalesce(json_agg(json_build_object('cursor', r.id::text, 'record', saved.match_hit(r)) ORDER BY r.id),
                        '[]'))
    FROM saved.match_records r
   WHERE r.id = ANY (p_match_ids)
$$;
COMMENT ON FUNCTION saved.matched_event_data(json, bigint[]) IS
  'A saved_search.matched event''s data as sent (webhooks.event_data): the search and its matches'' records.';
