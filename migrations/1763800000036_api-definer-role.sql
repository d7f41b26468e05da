-- Up Migration
-- The role the api entry points run as (SECURITY DEFINER): it alone reads the tables behind them and executes the
-- helpers in schema search, so api_reader reaches a helper only through an entry point. It cannot log in. Grants are
-- issued by sql/grants.sql after every apply.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'api_definer') THEN
    CREATE ROLE api_definer NOLOGIN;
  END IF;
END $$;

-- Down Migration
-- api_definer is cluster-wide and may serve other databases of the cluster: it is kept.
SELECT 1;
