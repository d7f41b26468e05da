-- One round of bench/saved-matches-write.sql: each shape in a rolled-back transaction, the time of its timed
-- statement(s) printed as "round | shape | ms"; odd rounds in the order below, even rounds in reverse.
\set t0 'CREATE TEMP TABLE t0 ON COMMIT DROP AS SELECT clock_timestamp() AS t;'
\set ms 'round(extract(epoch FROM clock_timestamp() - (SELECT t FROM t0)) * 1000)'
\set pairs_by_search 'FROM bench_pairs p JOIN h ON h.id = p.record_id ORDER BY p.search_id, p.record_id'
\set events 'INSERT INTO webhooks.events (type, county_id, load_id, data, endpoint_ids) SELECT ''saved_search.matched'', NULL, -1, json_build_object(''saved_search_id'', saved.public_id(s.id), ''name'', s.name, ''resource'', s.resource, ''matches'', json_agg(json_build_object(''cursor'', m.id::text, ''record'', m.hit) ORDER BY m.id)), ARRAY[s.id] FROM (SELECT x.*, (row_number() OVER (PARTITION BY x.search_id ORDER BY x.id) - 1) / 100 AS part FROM saved.matches x WHERE x.load_id = -1) m JOIN saved.searches s ON s.id = m.search_id GROUP BY s.id, m.part ORDER BY min(m.id);'
\set events_ids 'INSERT INTO webhooks.events (type, county_id, load_id, data, endpoint_ids) SELECT ''saved_search.matched'', NULL, -1, json_build_object(''saved_search_id'', saved.public_id(m.search_id), ''match_ids'', json_agg(m.id ORDER BY m.id)), ARRAY[m.search_id] FROM (SELECT x.*, (row_number() OVER (PARTITION BY x.search_id ORDER BY x.id) - 1) / 100 AS part FROM bench_w x) m GROUP BY m.search_id, m.part ORDER BY min(m.id);'

\set s_floor 'BEGIN; ' :t0 ' UPDATE core.tax_delinquencies d SET total_due = d.total_due + 1 WHERE d.id IN (SELECT id FROM bench_records); SELECT ' :round ', ''floor: the records updated'', ' :ms '; ROLLBACK;'
\set s_json 'BEGIN; ' :t0 :hits ' SELECT ' :round ', ''each record''''s JSON once'', ' :ms '; ROLLBACK;'
\set s_matches 'BEGIN; ' :hits :t0 ' INSERT INTO saved.matches (search_id, record_id, load_id, county_id, hit) SELECT p.search_id, p.record_id, -1, h.county_id, h.hit ' :pairs_by_search '; SELECT ' :round ', ''saved.matches as it is (JSON, FK, 4 indexes)'', ' :ms '; TRUNCATE t0; INSERT INTO t0 VALUES (clock_timestamp()); ' :events ' SELECT ' :round ', ''events from it, records inside (100 a search)'', ' :ms '; ROLLBACK;'
\set s_nojson 'BEGIN; ' :hits :t0 ' INSERT INTO saved.matches (search_id, record_id, load_id, county_id, hit) SELECT p.search_id, p.record_id, -1, h.county_id, ''{}'' ' :pairs_by_search '; SELECT ' :round ', ''saved.matches, no JSON'', ' :ms '; ROLLBACK;'
\set s_nofk 'BEGIN; ' :hits :nofk :t0 ' INSERT INTO bench_w (search_id, record_id, load_id, county_id, hit) SELECT p.search_id, p.record_id, -1, h.county_id, h.hit ' :pairs_by_search '; SELECT ' :round ', ''same, JSON, no FK'', ' :ms '; ROLLBACK;'
\set s_narrow 'BEGIN; ' :hits :narrow :t0 ' INSERT INTO bench_w (search_id, record_id, load_id) SELECT p.search_id, p.record_id, -1 ' :pairs_by_search '; SELECT ' :round ', ''narrow: (id, search, record, load), 3 indexes, no FK'', ' :ms '; TRUNCATE t0; INSERT INTO t0 VALUES (clock_timestamp()); ' :events_ids ' SELECT ' :round ', ''events from it, match ids only (100 a search)'', ' :ms '; ROLLBACK;'
\set s_heap 'BEGIN; ' :hits :heap :t0 ' INSERT INTO bench_w (search_id, record_id, load_id) SELECT p.search_id, p.record_id, -1 ' :pairs_by_search '; SELECT ' :round ', ''heap only: (search, record, load), no index'', ' :ms '; ROLLBACK;'
\set s_perrecord 'BEGIN; ' :perrecord :t0 ' INSERT INTO bench_w (record_id, load_id, county_id, search_ids) SELECT p.record_id, -1, 0, array_agg(p.search_id) FROM bench_pairs p GROUP BY p.record_id ORDER BY p.record_id; SELECT ' :round ', ''one row a record, search ids array, GIN + record index'', ' :ms '; ROLLBACK;'

SELECT (:round % 2 = 0) AS reverse \gset
\if :reverse
:s_perrecord
:s_heap
:s_narrow
:s_nofk
:s_nojson
:s_matches
:s_json
:s_floor
\else
:s_floor
:s_json
:s_matches
:s_nojson
:s_nofk
:s_narrow
:s_heap
:s_perrecord
\endif
