// Autocomplete while typing the second word (sql/search/parcel_words.sql, search.autocomplete_words_reading): the
// last word's reading of 1 to 3 characters is read from core.typeahead_readings. Every stored reading equals the live
// search.autocomplete_prefix_reading, and no other 1-3 character prefix has one; every two-word query formed from the
// fixtures' most frequent first words and the 1-3 letter prefixes of the words that follow them gets, statewide and
// in each county, the suggestions computed from the live reading; an import keeps both true; a dry run and a
// rolled-back write leave the readings unchanged.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { importNal } from '../../src/importers/nal.ts';
import { fixture, rejectsPath } from '../importers/fixture.ts';

t.setTimeout(600_000);
const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const LIBERTY = 39;

/** The 1-3 character words whose stored reading (or its absence) differs from search.autocomplete_prefix_reading. */
async function readingDifferences() {
  return sql<{ word: string }[]>`
    WITH words AS (SELECT DISTINCT left(t.term, n) AS word
                     FROM core.parcel_terms t, generate_series(1, 3) AS n WHERE length(t.term) >= n
                   UNION SELECT word FROM core.typeahead_readings)
    SELECT w.word
      FROM words w
      LEFT JOIN core.typeahead_readings tr ON tr.word = w.word
      CROSS JOIN LATERAL search.autocomplete_prefix_reading(w.word) AS r
     WHERE (coalesce(tr.terms, '{}'), coalesce(tr.qualities, '{}')) IS DISTINCT FROM (r.terms, r.qualities)`;
}

/**
 * Two-word queries: the 8 most frequent first words of owner names and of addresses (in the parcels of `where`),
 * each with every 1-3 letter prefix of the words that follow it there.
 */
const twoWordQueries = (where: string) => `
  WITH sides AS (SELECT string_to_array(s, ' ') AS w
                   FROM core.parcels p, unnest(ARRAY[p.owner_search, p.address_search]) AS s
                  WHERE ${where} AND s IS NOT NULL),
       firsts AS (SELECT w[1] AS first FROM sides WHERE cardinality(w) > 1 GROUP BY w[1] ORDER BY count(*) DESC, w[1] LIMIT 16)
  SELECT DISTINCT f.first, left(s.w[2], n) AS prefix
    FROM firsts f JOIN sides s ON s.w[1] = f.first, generate_series(1, 3) AS n
   WHERE length(s.w[2]) >= n`;

/**
 * The (query, scope) cases whose suggestions differ from those computed from the live reading: the first word as
 * parcel search reads it, the last one's reading from search.autocomplete_prefix_reading (left out when it is one
 * character after a first word that has a reading). Scopes: statewide and every county with parcels.
 */
async function suggestionDifferences(where: string) {
  return sql.unsafe<{ q: string; scope: string }[]>(`
    WITH queries AS (${twoWordQueries(where)}),
         scopes AS (SELECT NULL::smallint[] AS cs UNION ALL SELECT ARRAY[id] FROM core.counties WHERE parcel_count > 0),
         cases AS (SELECT q.first || ' ' || q.prefix AS q, q.first, q.prefix, s.cs FROM queries q, scopes s
                    WHERE search.query_words(q.first || ' ' || q.prefix) = ARRAY[q.first, q.prefix]),
         live AS (SELECT c.*, r.first_reading, r.last_reading FROM cases c
                  CROSS JOIN LATERAL (SELECT (search.parcel_word_terms(c.first, ARRAY[c.first, c.prefix], false)).reading AS first_reading,
                                             search.autocomplete_prefix_reading(c.prefix) AS last_reading) r)
    SELECT l.q, coalesce(l.cs::text, 'statewide') AS scope
      FROM live l
     WHERE (SELECT array_agg(ROW(x.id, x.by_address)::text) FROM search.autocomplete_ranked(l.q, l.cs, 10) x)
           IS DISTINCT FROM
           (SELECT array_agg(ROW(x.id, x.by_address)::text)
              FROM search.autocomplete_of_reading(
                     CASE WHEN cardinality((l.first_reading).terms) > 0 THEN ARRAY[l.first_reading] ELSE '{}' END
                     || CASE WHEN cardinality((l.last_reading).terms) > 0
                                  AND (length(l.prefix) > 1 OR cardinality((l.first_reading).terms) = 0)
                             THEN ARRAY[l.last_reading] ELSE '{}' END,
                     l.cs, 10) x)`);
}

const readingsSnapshot = async () => {
  const [r] = await sql<{ readings: string }[]>`
    SELECT md5(string_agg(tr::text, '|' ORDER BY tr.word)) AS readings FROM core.typeahead_readings tr`;
  return r!.readings;
};

t.test('every stored reading of a 1-3 character word equals the live one', async (t) => {
  const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM core.typeahead_readings`;
  t.ok(n!.n > 300, `${n!.n} readings stored`);
  t.same(await readingDifferences(), [], 'no word differs');
});

t.test(
  'every two-word query of a frequent first word and a 1-3 letter prefix: suggestions from the live reading',
  async (t) => {
    const [n] = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM (${twoWordQueries('true')}) q`);
    t.ok(n!.n > 100, `${n!.n} queries checked`);
    t.same(await suggestionDifferences('true'), [], 'no query or scope differs');
    const [api] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM api.autocomplete_parcels('smith jo')`;
    t.ok(api!.n > 0, 'the entry point suggests parcels for a second word being typed');
  },
);

t.test("an import that changes a county's owners keeps them equal", async (t) => {
  const before = await readingsSnapshot();
  const summary = await importNal({
    file: fixture('nal/NAL49F202501.csv'),
    databaseUrl: db.ownerUrl,
    rejects: rejectsPath('second-word-liberty'),
    quiet: true,
  });
  t.equal(summary.status, 'succeeded');
  t.not(await readingsSnapshot(), before, 'the readings changed');
  t.same(await readingDifferences(), [], 'every stored reading still equals the live one');
  t.same(await suggestionDifferences(`p.county_id = ${LIBERTY}`), [], "Liberty's two-word queries still equal");
});

t.test('a dry run and a rolled-back write leave the readings unchanged', async (t) => {
  const before = await readingsSnapshot();
  const dry = await importNal({
    file: fixture('nal/NAL49F202501.csv'),
    databaseUrl: db.ownerUrl,
    rejects: rejectsPath('second-word-dry'),
    quiet: true,
    dryRun: true,
  });
  t.equal(dry.status, 'dry_run');
  t.equal(await readingsSnapshot(), before, 'a dry run changes nothing');
  await sql
    .begin(async (tx) => {
      await tx`UPDATE core.parcels SET owner_name = 'ZYXWV QUTRON' WHERE county_id = ${LIBERTY}`;
      const [r] = await tx<{ terms: string[] }[]>`
        SELECT r.terms FROM unnest(search.autocomplete_words_reading(ARRAY['SMITH', 'ZY'])) AS r WHERE r.word = 'ZY'`;
      t.same(r!.terms, ['ZYXWV'], 'inside the transaction, the new word completes the second word');
      throw new Error('roll back');
    })
    .catch((err: Error) => t.equal(err.message, 'roll back'));
  t.equal(await readingsSnapshot(), before, 'a rolled-back write changes nothing');
});
