// Precomputed autocomplete (core.typeahead_prefixes, sql/search/autocomplete.sql): for every 1-3 letter prefix of
// every owner and street word of the fixtures, statewide, in each county and in two counties, the stored candidates
// and the suggestions equal the live computation's; an import that changes a county's owners changes them (and they
// still equal it); a dry run or a rolled-back write leaves them unchanged; bad input is still a 400.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { importNal } from '../../src/importers/nal.ts';
import { fixture, rejectsPath } from '../importers/fixture.ts';

// every prefix against the live computation: about two minutes on a loaded machine
t.setTimeout(600_000);
const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const LIBERTY = 39;

/** Every word of 1-3 characters that is a prefix of an owner or street word of the given parcels, as the query reads it. */
const prefixesOf = (where: string) => `
  SELECT DISTINCT left(w, n) AS word
    FROM core.parcels p, unnest(string_to_array(p.owner_search || ' ' || coalesce(p.address_search, ''), ' ')) AS w,
         generate_series(1, 3) AS n
   WHERE ${where} AND w <> '' AND length(w) >= n`;

/**
 * The (word, scope) cases where the precomputed answer differs from the live one: the stored candidates (ids, their
 * best term's rank, score, shown by address) against search.autocomplete_candidates scored, and the suggestions at
 * limits 1, 10 and 20 against search.autocomplete_live. Scopes: statewide, every county with parcels, two counties.
 */
async function differences(where: string) {
  return sql.unsafe<{ word: string; scope: string; what: string }[]>(`
    WITH words AS (${prefixesOf(where)}),
         scopes AS (SELECT NULL::smallint[] AS cs UNION ALL SELECT ARRAY[id] FROM core.counties WHERE parcel_count > 0
                    UNION ALL SELECT ARRAY(SELECT id FROM core.counties WHERE parcel_count > 0 ORDER BY id LIMIT 2)),
         cases AS (SELECT w.word, s.cs FROM words w, scopes s WHERE search.query_words(w.word) = ARRAY[w.word])
    SELECT c.word, coalesce(c.cs::text, 'statewide') AS scope, d.what
      FROM cases c
     CROSS JOIN LATERAL (
       SELECT 'candidates' AS what
        WHERE (c.cs IS NULL OR cardinality(c.cs) = 1)
          AND (SELECT array_agg(ROW(x.id, x.rank, x.score, x.by_address)::text ORDER BY x.n)
                 FROM core.typeahead_prefixes tp, unnest(tp.ids, tp.ranks, tp.scores, tp.by_address) WITH ORDINALITY AS x(id, rank, score, by_address, n)
                WHERE tp.word = c.word AND tp.county_id = coalesce(c.cs[1], 0))
              IS DISTINCT FROM
              (SELECT array_agg(ROW(s.id, (SELECT min(u.i) FROM unnest((r.w[1]).terms) WITH ORDINALITY AS u(term, i)
                                            JOIN core.parcels p ON p.id = s.id WHERE u.term = ANY (p.search_terms)),
                                    s.score, s.by_address)::text ORDER BY s.ord)
                 FROM (SELECT search.autocomplete_reading(c.word) AS w) r,
                      search.autocomplete_scored(search.autocomplete_candidates(r.w, c.cs, 3 * search.autocomplete_limit_max()), r.w) AS s)
       UNION ALL
       SELECT 'limit ' || l
         FROM unnest('{1,10,20}'::int[]) AS l
        WHERE (SELECT array_agg(ROW(x.id, x.by_address)::text) FROM search.autocomplete_precomputed(c.word, c.cs, l) x)
              IS DISTINCT FROM
              (SELECT array_agg(ROW(x.id, x.by_address)::text) FROM search.autocomplete_live(c.word, c.cs, l) x)) d`);
}

const snapshot = async () => {
  const [r] = await sql<{ prefixes: string; readings: string; n: number }[]>`
    SELECT (SELECT md5(string_agg(tp::text, '|' ORDER BY tp.word, tp.county_id)) FROM core.typeahead_prefixes tp) AS prefixes,
           (SELECT md5(string_agg(tr::text, '|' ORDER BY tr.word)) FROM core.typeahead_readings tr) AS readings,
           (SELECT count(*)::int FROM core.typeahead_prefixes) AS n`;
  return r!;
};

t.test('every 1-3 letter prefix of every owner and street word: precomputed equals live', async (t) => {
  const [counts] = await sql.unsafe<{ words: number }[]>(
    `SELECT count(*)::int AS words FROM (${prefixesOf('true')}) w`,
  );
  t.ok(counts!.words > 500, `${counts!.words} prefixes checked`);
  const [stored] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM core.typeahead_prefixes WHERE county_id = 0`;
  t.ok(stored!.n > 500, 'statewide rows stored');
  t.same(await differences('true'), [], 'no prefix, scope or limit differs');
  const [api] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM api.autocomplete_parcels('jo')`;
  t.equal(api!.n, 10, 'the entry point answers a short prefix from them');
});

t.test("an import that changes a county's owners changes its completions", async (t) => {
  const before = await sql<{ word: string; ids: number[] }[]>`
    SELECT word, ids FROM core.typeahead_prefixes WHERE county_id = ${LIBERTY} ORDER BY word`;
  const summary = await importNal({
    file: fixture('nal/NAL49F202501.csv'),
    databaseUrl: db.ownerUrl,
    rejects: rejectsPath('typeahead-liberty'),
    quiet: true,
  });
  t.equal(summary.status, 'succeeded');
  const after = await sql<{ word: string; ids: number[] }[]>`
    SELECT word, ids FROM core.typeahead_prefixes WHERE county_id = ${LIBERTY} ORDER BY word`;
  t.notSame(after, before, "Liberty's completions changed");
  t.same(await differences(`p.county_id = ${LIBERTY}`), [], "Liberty's prefixes still equal the live computation");
});

t.test('a dry run and a rolled-back write leave them unchanged', async (t) => {
  const before = await snapshot();
  const dry = await importNal({
    file: fixture('nal/NAL49F202501.csv'),
    databaseUrl: db.ownerUrl,
    rejects: rejectsPath('typeahead-dry'),
    quiet: true,
    dryRun: true,
  });
  t.equal(dry.status, 'dry_run');
  t.same(await snapshot(), before, 'a dry run changes nothing');
  await sql
    .begin(async (tx) => {
      await tx`UPDATE core.parcels SET owner_name = 'ZYXWV QUTRON' WHERE county_id = ${LIBERTY}`;
      const [n] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM core.typeahead_prefixes WHERE word = 'ZYX'`;
      t.ok(n!.n > 0, 'inside the transaction, the new owners are suggested');
      throw new Error('roll back');
    })
    .catch((err: Error) => t.equal(err.message, 'roll back'));
  t.same(await snapshot(), before, 'a rolled-back write changes nothing');
});

t.test('bad input is still a 400 on the precomputed path', async (t) => {
  for (const [call, message] of [
    [sql`SELECT * FROM api.autocomplete_parcels('jo', p_limit => 0)`, /limit: must be between 1 and 20/],
    [sql`SELECT * FROM api.autocomplete_parcels('jo', p_limit => 21)`, /limit: must be between 1 and 20/],
    [sql`SELECT * FROM api.autocomplete_parcels('jo', p_county => '{atlantis}')`, /unknown county 'atlantis'/],
    [sql`SELECT * FROM api.autocomplete_parcels(NULL)`, /q: is required/],
  ] as const) {
    const err = await call.then(
      () => null,
      (e: { code: string; message: string }) => e,
    );
    t.equal(err?.code, '22023', String(message));
    t.match(err?.message, message);
  }
});
