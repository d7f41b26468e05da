// Word-pair postings (core.parcel_pair_postings): exact through every kind of load, and search through them gives the
// same pages and totals as search without them. The fixtures are small, so the paired terms are chosen here with a
// threshold of 2 parcels (the default pairs only terms held by 1,000 parcels or more).
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';

t.setTimeout(480_000); // a few hundred searches, twice, on a loaded machine

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;

/** Every (pair, county) whose row differs from the intersection of the two terms' postings, either way. */
const drift = () => sql<{ pair: string }[]>`
  WITH truth AS (
    SELECT a.term AS term_a, b.term AS term_b, a.county_id, a.ids & b.ids AS ids
      FROM core.parcel_postings a
      JOIN core.parcel_postings b ON b.county_id = a.county_id AND a.term < b.term
     WHERE a.term IN (SELECT term FROM core.parcel_pair_terms) AND b.term IN (SELECT term FROM core.parcel_pair_terms)
       AND a.ids && b.ids)
  SELECT coalesce(pp.term_a, truth.term_a) || ' ' || coalesce(pp.term_b, truth.term_b) || '@'
         || coalesce(pp.county_id, truth.county_id) AS pair
    FROM core.parcel_pair_postings pp FULL JOIN truth USING (term_a, term_b, county_id)
   WHERE pp.ids IS DISTINCT FROM truth.ids`;
const pairRows = async () =>
  (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM core.parcel_pair_postings`)[0]!.n;

t.test('the default threshold pairs nothing on the small fixtures', async (t) => {
  t.equal((await sql<{ n: number }[]>`SELECT core.choose_parcel_pairs() AS n`)[0]?.n, 0);
  t.equal(await pairRows(), 0);
});

t.test('a pair posting equals the intersection of its words postings through every kind of load', async (t) => {
  const [chosen] = await sql<{ n: number }[]>`SELECT core.choose_parcel_pairs(2) AS n`;
  t.ok(chosen!.n > 10, `terms held by 2 parcels or more are paired (${chosen!.n})`);
  t.ok((await pairRows()) > 100, 'and their pairs built');
  t.same(await drift(), [], 'after choosing');
  t.same(
    await sql`SELECT ids FROM core.parcel_pair_postings WHERE term_a = 'JOHN' AND term_b = 'SMITH' AND county_id = 13`,
    await sql`SELECT array_agg(id::int ORDER BY id) AS ids FROM core.parcels
               WHERE county_id = 13 AND search_terms @> '{SMITH,JOHN}'`,
    'SMITH JOHN in Miami-Dade: the parcels holding both',
  );

  await sql`INSERT INTO core.parcels (county_id, parcel_id, owner_name, site_address_full)
            VALUES (1, 'PAIR-1', 'SMITH JOHN', '1 MAIN ST'), (1, 'PAIR-2', 'JOHN SMITH & MARY', '2 MAIN ST'),
                   (2, 'PAIR-3', 'GARCIA MARIA', '3 OCEAN DR')`;
  t.same(await drift(), [], 'after inserts');
  await sql`UPDATE core.parcels SET owner_name = 'GARCIA JOHN' WHERE parcel_id = 'PAIR-1'`;
  await sql`UPDATE core.parcels SET just_value = 7 WHERE parcel_id LIKE 'PAIR-%'`;
  t.same(await drift(), [], 'after re-wording and a value-only update');
  await sql`UPDATE core.parcels SET county_id = 3 WHERE parcel_id = 'PAIR-2'`;
  t.same(
    await sql`SELECT county_id FROM core.parcel_pair_postings
               WHERE term_a = 'JOHN' AND term_b = 'SMITH'
                 AND ids @> ARRAY[(SELECT id::int FROM core.parcels WHERE parcel_id = 'PAIR-2')]`,
    [{ county_id: 3 }],
    'a moved parcel moves its pairs',
  );
  t.same(await drift(), [], 'after a move');
  const before = await sql`SELECT * FROM core.parcel_pair_postings ORDER BY term_a, term_b, county_id`;
  await t.rejects(
    sql.begin(async (tx) => {
      await tx`INSERT INTO core.parcels (county_id, parcel_id, owner_name) VALUES (1, 'PAIR-4', 'SMITH MARY')`;
      await tx`UPDATE core.parcels SET owner_name = 'SMITH MARY' WHERE parcel_id = 'PAIR-3'`;
      await tx`DELETE FROM core.parcels WHERE parcel_id = 'PAIR-1'`;
      await tx`SELECT 1 / 0`;
    }),
    'a load that fails half way',
  );
  t.same(
    await sql`SELECT * FROM core.parcel_pair_postings ORDER BY term_a, term_b, county_id`,
    before,
    'is rolled back',
  );
  await sql`DELETE FROM core.parcels WHERE parcel_id LIKE 'PAIR-%'`;
  t.same(await drift(), [], 'after deletes');
  await sql`DELETE FROM core.parcels WHERE county_id = 13 AND search_terms @> '{SMITH}'`;
  t.same(await drift(), [], 'after deleting every SMITH of a county (its emptied pairs go)');
});

t.test('search through the pairs gives the same pages and totals as without them', async (t) => {
  // owner names and addresses as written, reordered, with a letter dropped, and three words; statewide and in the
  // parcel's county; two pages each
  const queries = await sql<{ query: string; county: string | null }[]>`
    WITH s AS (SELECT p.owner_name AS o, p.site_address_full AS a, c.slug FROM core.parcels p
                 JOIN core.counties c ON c.id = p.county_id WHERE p.owner_name ~ '^[A-Z]+ [A-Z]+')
    SELECT d.query, d.county FROM (SELECT DISTINCT x.query, x.county FROM (
      SELECT o AS query, NULL AS county FROM s UNION ALL SELECT o, slug FROM s
      UNION ALL SELECT split_part(o, ' ', 2) || ' ' || split_part(o, ' ', 1), NULL FROM s
      UNION ALL SELECT left(o, 2) || substr(o, 4), slug FROM s
      UNION ALL SELECT split_part(o, ' ', 1) || ' ' || split_part(o, ' ', 2) || ' ' || split_part(a, ' ', 2), NULL FROM s
      UNION ALL SELECT a, slug FROM s WHERE a IS NOT NULL) x) d
     ORDER BY md5(d.query || coalesce(d.county, '')) LIMIT 250`;
  const pages = async () =>
    (
      await sql<{ page: string }[]>`
        SELECT h.total || ' ' || h.hits::text AS page
          FROM unnest(${queries.map((q) => q.query)}::text[], ${queries.map((q) => q.county)}::text[]) AS q(query, county),
               (VALUES (0), (25)) AS o(n),
               LATERAL api.parcel_search_hits(p_query => q.query, p_county => CASE WHEN q.county IS NOT NULL THEN ARRAY[q.county] END,
                                              p_limit => 25, p_offset => o.n) AS h
         ORDER BY q.query, q.county, o.n`
    ).map((r) => r.page);
  await sql`SELECT core.choose_parcel_pairs(1000000)`;
  const without = await pages();
  await sql`SELECT core.choose_parcel_pairs(2)`;
  const [paired] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM unnest(${queries.map((q) => q.query)}::text[]) AS q(query)
     WHERE (SELECT count(*) FROM unnest(api.parcel_query_words(q.query)) AS w
             WHERE w.terms && ARRAY(SELECT term FROM core.parcel_pair_terms)) >= 2`;
  t.ok(paired!.n > 100, `${paired!.n} of the ${queries.length} queries hold two words with paired terms`);
  const withPairs = await pages();
  t.equal(withPairs.length, queries.length * 2);
  t.ok(without.filter((p) => !p.startsWith('0 ')).length > queries.length, 'most pages hold matches');
  const differ = withPairs.map((p, i) => (p === without[i] ? null : i)).filter((i) => i !== null);
  t.same(differ, [], 'every page and total is the same with the pairs as without');
});
