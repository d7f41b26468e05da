-- Saved searches: what writing an import's matches costs, by the shape of the table they go to
-- (bench/results/saved-searches.md, "What writing the matches costs"). On a copy of a bench state with sql/ applied:
-- 10,000 saved searches, 50,000 delinquency records of the state, and 5.5 matches a record (275,000 pairs, the
-- bench's proportion), written to saved.matches as saved.match_resource writes them and to narrower shapes; the
-- floor is an update of the same 50,000 records (the records' own change). Every step is in a rolled-back
-- transaction, timed by psql, each shape twice in alternating order; the setup is removed at the end.
--   psql -h 127.0.0.1 -p 55432 -U postgres -d <copy> -v ON_ERROR_STOP=1 -f bench/saved-matches-write.sql
\set QUIET on
\pset tuples_only on
\pset format unaligned
SET client_min_messages = warning;

DROP TABLE IF EXISTS bench_records, bench_searches, bench_pairs;
DELETE FROM accounts.clients WHERE email = 'bench-writes@example.com';
INSERT INTO accounts.clients (name, email, plan) VALUES ('Bench writes', 'bench-writes@example.com', 'enterprise');
CREATE TABLE bench_searches AS
SELECT n, gen_random_uuid() AS id FROM generate_series(0, 9999) n;
INSERT INTO saved.searches (id, client_id, name, resource, params, args, unsubscribe_token)
SELECT b.id, c.id, 's' || b.n, 'tax_delinquencies', '{}', '{}', b.id::text
  FROM bench_searches b, accounts.clients c WHERE c.email = 'bench-writes@example.com';
CREATE TABLE bench_records AS
SELECT row_number() OVER (ORDER BY d.id) AS i, d.id FROM core.tax_delinquencies d ORDER BY d.id LIMIT 50000;
-- record i enters 5 or 6 searches (alternately), distinct
CREATE TABLE bench_pairs AS
SELECT s.id AS search_id, r.id AS record_id
  FROM bench_records r
 CROSS JOIN LATERAL generate_series(0, 4 + (r.i % 2)::int) j
  JOIN bench_searches s ON s.n = (r.i * 7 + j * 1931) % 10000;
ANALYZE bench_records, bench_searches, bench_pairs;
SELECT count(*) AS pairs, count(DISTINCT record_id) AS records FROM bench_pairs \gset
\echo pairs :pairs records :records

-- the shapes (logged tables like saved.matches), made empty inside each rolled-back transaction, before its clock starts
\set nofk 'CREATE TABLE bench_w (LIKE saved.matches INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING INDEXES);'
\set narrow 'CREATE TABLE bench_w (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, search_id uuid NOT NULL, record_id bigint NOT NULL, load_id bigint NOT NULL, UNIQUE (search_id, record_id)); CREATE INDEX ON bench_w (search_id, id);'
\set heap 'CREATE TABLE bench_w (search_id uuid NOT NULL, record_id bigint NOT NULL, load_id bigint NOT NULL);'
\set perrecord 'CREATE TABLE bench_w (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, record_id bigint NOT NULL, load_id bigint NOT NULL, county_id smallint NOT NULL, search_ids uuid[] NOT NULL); CREATE INDEX ON bench_w USING gin (search_ids); CREATE INDEX ON bench_w (record_id);'

-- each record's JSON once, as saved.match_resource makes it
\set hits 'CREATE TEMP TABLE h ON COMMIT DROP AS SELECT d.id, d.county_id, webhooks.delinquency_json(webhooks.delinquency_snapshot_of(d), c.slug) AS hit FROM core.tax_delinquencies d JOIN core.counties c ON c.id = d.county_id WHERE d.id IN (SELECT id FROM bench_records);'

\echo
\echo 'round | shape | ms'
SELECT 1 AS round \gset
\ir saved-matches-write-round.sql
SELECT 2 AS round \gset
\ir saved-matches-write-round.sql

-- leave the copy as it was
DELETE FROM accounts.clients WHERE email = 'bench-writes@example.com';
DROP TABLE bench_records, bench_searches, bench_pairs;
