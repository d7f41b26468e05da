-- Privileges of the API's role, applied last: read data, execute api.*; writes only through SECURITY DEFINER
-- functions that own them. A stray write from the API fails with permission denied.
REVOKE ALL ON SCHEMA core, ingest FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA core, api TO api_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA core TO api_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA api TO api_reader;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA api FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA api TO api_reader;
-- search holds the helpers behind api's entry points. The entry points run as api_definer (SECURITY DEFINER, with
-- a fixed search_path: PostGIS and pg_trgm live in public, where nobody else may create), which alone executes the
-- helpers: api_reader reaches a helper only through an entry point. Entry points that are SECURITY DEFINER already
-- (reads of metering and accounts) keep their own owner and path.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA search FROM PUBLIC;
REVOKE ALL ON SCHEMA search FROM api_reader;
GRANT USAGE ON SCHEMA core, api, search TO api_definer;
GRANT SELECT ON ALL TABLES IN SCHEMA core TO api_definer;
GRANT SELECT ON ALL TABLES IN SCHEMA api TO api_definer;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA search TO api_definer;
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace = 'api'::regnamespace AND NOT p.prosecdef LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO api_definer', f);
    EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = public, pg_temp', f);
  END LOOP;
END $$;
-- Saved searches (docs/saved-searches.md): managed, read and matched (the webhook workers) through sql/saved's
-- SECURITY DEFINER functions, as api_webhooks (the role of the webhooks' management writes); nothing of the tables.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA saved FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA saved FROM PUBLIC;
GRANT USAGE ON SCHEMA saved TO api_webhooks;
GRANT EXECUTE ON FUNCTION
  saved.create_search(uuid, uuid, text, text, jsonb, jsonb, uuid[], text, text),
  saved.list_searches(uuid),
  saved.get_search(uuid, uuid),
  saved.update_search(uuid, uuid, text, jsonb, jsonb, uuid[], text, boolean),
  saved.delete_search(uuid, uuid),
  saved.list_matches(uuid, uuid, bigint, integer),
  saved.recent_matches(uuid, integer),
  saved.claim_digest(timestamptz),
  saved.mark_digest_sent(uuid, bigint, timestamptz),
  saved.unsubscribe(text),
  saved.match_next()
TO api_webhooks;
