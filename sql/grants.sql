-- Privileges of the API's role, applied last: read data, execute api.*; writes only through SECURITY DEFINER
-- functions that own them. A stray write from the API fails with permission denied.
REVOKE ALL ON SCHEMA core, ingest FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA core, api TO api_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA core TO api_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA api TO api_reader;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA api FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA api TO api_reader;
-- search holds the helpers behind api's entry points, which run with the caller's rights.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA search FROM PUBLIC;
GRANT USAGE ON SCHEMA search TO api_reader;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA search TO api_reader;
