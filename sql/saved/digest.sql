-- Email digests (docs/saved-searches.md#email-digest): a search with email 'daily' or 'weekly' gets, once its period
-- has passed since the last digest, one message with the matches found since: their count, the first 20, a link
-- to the rest. The sender (src/saved-searches/digest.ts) claims one due search in a transaction, sends, marks it
-- sent and commits: two senders never take the same search, and one stopped before the commit sends it again.

CREATE OR REPLACE FUNCTION saved.claim_digest(p_now timestamptz)
RETURNS TABLE (search_id uuid, public_id text, name text, resource text, email text, period text, token text,
               match_count integer, through_match_id bigint, first_matches json)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  WITH due AS (
    SELECT s.* FROM saved.searches s
      JOIN accounts.clients c ON c.id = s.client_id
      JOIN accounts.plans p ON p.plan = c.plan
     WHERE s.email IS NOT NULL AND c.status = 'active' AND p.webhooks <> 'no'
       AND (s.digest_sent_at IS NULL
            OR s.digest_sent_at <= p_now - CASE s.email WHEN 'daily' THEN interval '1 day' ELSE interval '7 days' END)
       AND EXISTS (SELECT 1 FROM saved.search_matches m WHERE m.search_id = s.id AND m.last_id > s.digested_match_id)
     ORDER BY s.digest_sent_at NULLS FIRST, s.id
     LIMIT 1
       FOR UPDATE OF s SKIP LOCKED)
  SELECT d.id, saved.public_id(d.id), d.name, d.resource, c.email, d.email, d.unsubscribe_token,
         n.match_count, n.through_match_id, f.first_matches
    FROM due d
    JOIN accounts.clients c ON c.id = d.client_id
   CROSS JOIN LATERAL (SELECT count(*)::int AS match_count, max(u.id) AS through_match_id
                         FROM saved.search_matches m CROSS JOIN LATERAL unnest(m.match_ids) AS u(id)
                        WHERE m.search_id = d.id AND m.last_id > d.digested_match_id AND u.id > d.digested_match_id) n
   CROSS JOIN LATERAL (SELECT json_agg(saved.match_hit(r) ORDER BY r.id) AS first_matches
                         FROM saved.match_ids_after(d.id, d.digested_match_id, 20) x
                         JOIN saved.match_records r ON r.id = x.id) f
$$;
COMMENT ON FUNCTION saved.claim_digest(timestamptz) IS
  'The digest sender: locks one saved search whose digest is due at p_now and has matches since the last one, and '
  'returns the message''s content (count, the first 20 records, the last match id it covers, the address).';

CREATE OR REPLACE FUNCTION saved.mark_digest_sent(p_search_id uuid, p_through_match_id bigint, p_now timestamptz)
RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  UPDATE saved.searches s SET digested_match_id = greatest(s.digested_match_id, p_through_match_id), digest_sent_at = p_now
   WHERE s.id = p_search_id
$$;
COMMENT ON FUNCTION saved.mark_digest_sent(uuid, bigint, timestamptz) IS
  'Records that a digest covering the search''s matches through p_through_match_id was sent at p_now.';

CREATE OR REPLACE FUNCTION saved.unsubscribe(p_token text) RETURNS text
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
  UPDATE saved.searches s SET email = NULL, updated_at = now()
   WHERE s.unsubscribe_token = p_token
  RETURNING s.name
$$;
COMMENT ON FUNCTION saved.unsubscribe(text) IS
  'One-click unsubscribe (RFC 8058): stops the digest of the search whose token it is; its name, or NULL for an '
  'unknown token.';
