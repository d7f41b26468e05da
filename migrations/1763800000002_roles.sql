-- Up Migration
-- The role the API process connects as: it reads data and executes api.* functions, nothing else.
-- Grants are (re)issued by sql/grants.sql after every apply, because schema api is rebuilt each time.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'api_reader') THEN
    CREATE ROLE api_reader LOGIN NOINHERIT;
  END IF;
END $$;

-- Down Migration
-- api_reader is cluster-wide and may serve other databases of the cluster: it is kept.
SELECT 1;
