// The exact-text tier in counties (search.parcel_exact_text_first reads each county's first parcels through the
// (county_id, hashtext(text), id) indexes): the same ids as the plain definition, and in-county search gives the same
// pages and totals as with the statewide reading it replaces. The file adds parcels of one owner text spread over
// three counties, ids interleaved, so that a county's first ids come after other counties' ones.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';

t.setTimeout(480_000); // a few hundred searches, twice, on a loaded machine

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;

const SLUGS = ['miami-dade', 'broward', 'palm-beach'];
await sql`
  INSERT INTO core.parcels (county_id, parcel_id, owner_name, site_address_full)
  SELECT (SELECT c.id FROM core.counties c WHERE c.slug = (${SLUGS}::text[])[1 + i % 3]), 'EXACT-' || i,
         CASE WHEN i % 5 = 0 THEN 'JOHN QUILLBANK' ELSE 'QUILLBANK JOHN' END,
         CASE WHEN i % 7 = 0 THEN 'QUILLBANK JOHN' ELSE i || ' QUILLBANK RD' END
    FROM generate_series(1, 90) AS i`;

/** The definition: the k smallest ids in the counties (NULL: all) whose owner or address is one of the texts. */
const plain = async (texts: string[], counties: number[] | null, k: number) =>
  (
    await sql<{ id: number }[]>`
      SELECT p.id::int AS id FROM core.parcels p
       WHERE (p.owner_search = ANY (${texts}::text[]) OR p.address_search = ANY (${texts}::text[]))
         AND (${counties}::smallint[] IS NULL OR p.county_id = ANY (${counties}::smallint[]))
       ORDER BY p.id LIMIT ${k}`
  ).map((r) => r.id);
const first = async (texts: string[], counties: number[] | null, k: number) =>
  (
    await sql<{ ids: number[] }[]>`
      SELECT search.parcel_exact_text_first(${texts}::text[], ${counties}::smallint[], ${k}) AS ids`
  )[0]!.ids;

t.test('the first ids of the exact texts, in counties and statewide, are those of the plain definition', async (t) => {
  const countyIds = (
    await sql<{ id: number }[]>`SELECT id FROM core.counties WHERE slug = ANY (${SLUGS}) ORDER BY slug`
  ).map((r) => r.id);
  const common = (
    await sql<{ text: string }[]>`
      SELECT owner_search AS text FROM core.parcels GROUP BY 1 HAVING count(*) > 2 ORDER BY count(*) DESC, 1 LIMIT 12`
  ).map((r) => r.text);
  const textSets = [
    ['QUILLBANK JOHN'],
    ['QUILLBANK JOHN', 'JOHN QUILLBANK'],
    ['NOBODY OWNS THIS'],
    ...common.map((c) => [c]),
    common.slice(0, 4),
  ];
  const countySets = [null, [], [countyIds[0]!], [countyIds[1]!, countyIds[2]!], countyIds];
  let checked = 0;
  let cut = 0;
  for (const texts of textSets)
    for (const counties of countySets)
      for (const k of [1, 3, 25]) {
        const want = await plain(texts, counties, k);
        t.same(await first(texts, counties, k), want, `${texts.join('|')} in ${JSON.stringify(counties)}, k ${k}`);
        checked++;
        if (want.length === k) cut++;
      }
  t.ok(cut > 50, `${cut} of ${checked} cases have more exact parcels than k`);
  const spread = await plain(['QUILLBANK JOHN', 'JOHN QUILLBANK'], [countyIds[2]!], 25);
  const before = await plain(['QUILLBANK JOHN', 'JOHN QUILLBANK'], null, 25);
  t.not(spread[0], before[0], "a county whose first exact parcel is not the state's first");
});

t.test('in-county pages and totals are the same as with the statewide reading of the exact texts', async (t) => {
  // owner names as written (common ones among them), reordered, with a letter dropped or two swapped, three words,
  // addresses; in the parcel's county, in two counties; pages of 25 at offsets 0 and 25, and of 2
  const queries = await sql<{ query: string; counties: string[] }[]>`
    WITH s AS (SELECT p.owner_name AS o, p.site_address_full AS a, c.slug FROM core.parcels p
                 JOIN core.counties c ON c.id = p.county_id WHERE p.owner_name ~ '^[A-Z]+ [A-Z]+')
    SELECT d.query, d.counties FROM (SELECT DISTINCT x.query, x.counties FROM (
      SELECT o AS query, ARRAY[slug] AS counties FROM s
      UNION ALL SELECT o, ARRAY[slug, CASE WHEN slug = 'broward' THEN 'miami-dade' ELSE 'broward' END] FROM s
      UNION ALL SELECT split_part(o, ' ', 2) || ' ' || split_part(o, ' ', 1), ARRAY[slug] FROM s
      UNION ALL SELECT left(o, 2) || substr(o, 4), ARRAY[slug] FROM s
      UNION ALL SELECT left(o, 1) || substr(o, 3, 1) || substr(o, 2, 1) || substr(o, 4), ARRAY[slug] FROM s
      UNION ALL SELECT split_part(o, ' ', 1) || ' ' || split_part(o, ' ', 2) || ' ' || split_part(a, ' ', 2), ARRAY[slug] FROM s
      UNION ALL SELECT a, ARRAY[slug] FROM s WHERE a IS NOT NULL) x) d
     ORDER BY md5(d.query || array_to_string(d.counties, ',')) LIMIT 220`;
  queries.push(
    { query: 'QUILLBANK JOHN', counties: ['palm-beach'] },
    { query: 'john quillbank', counties: ['broward', 'palm-beach'] },
    { query: 'QUILBANK JOHN', counties: ['miami-dade'] },
  );
  const pages = async () =>
    (
      await sql<{ page: string }[]>`
        SELECT h.total || ' ' || h.hits::text AS page
          FROM unnest(${queries.map((q) => q.query)}::text[], ${queries.map((q) => `{${q.counties.join(',')}}`)}::text[])
                 AS q(query, counties),
               (VALUES (25, 0), (25, 25), (2, 0)) AS o(lim, off),
               LATERAL api.parcel_search_hits(p_query => q.query, p_county => q.counties::text[], p_limit => o.lim,
                                              p_offset => o.off) AS h
         ORDER BY q.query, q.counties, o.lim, o.off`
    ).map((r) => r.page);
  const now = await pages();
  // the definition before the county indexes: every parcel of the text statewide, in id order, filtered by county
  await sql.unsafe(`
    CREATE OR REPLACE FUNCTION search.parcel_exact_text_first(p_texts text[], p_counties smallint[], p_k integer)
    RETURNS integer[] LANGUAGE plpgsql STABLE PARALLEL SAFE SET enable_bitmapscan = off
      SET plan_cache_mode = force_generic_plan
    AS $$
    BEGIN
      RETURN ARRAY(
        SELECT e.id FROM unnest(p_texts) AS x(q),
               LATERAL ((SELECT p.id::integer FROM core.parcels p
                          WHERE hashtext(p.owner_search) = hashtext(x.q) AND p.owner_search = x.q
                            AND (p_counties IS NULL OR p.county_id = ANY (p_counties)) ORDER BY p.id LIMIT p_k)
                        UNION
                        (SELECT p.id::integer FROM core.parcels p
                          WHERE hashtext(p.address_search) = hashtext(x.q) AND p.address_search = x.q
                            AND (p_counties IS NULL OR p.county_id = ANY (p_counties)) ORDER BY p.id LIMIT p_k)) e(id)
         GROUP BY e.id ORDER BY e.id LIMIT p_k);
    END $$`);
  const before = await pages();
  t.equal(now.length, queries.length * 3);
  t.ok(now.filter((p) => !p.startsWith('0 ')).length > queries.length * 2, 'most pages hold matches');
  const quill = now.filter((p) => p.includes('QUILLBANK JOHN')).length;
  t.ok(quill >= 6, `${quill} pages hold the added parcels`);
  const differ = now.map((p, i) => (p === before[i] ? null : `${queries[Math.floor(i / 3)]!.query}`));
  t.same(
    differ.filter((d) => d !== null),
    [],
    'every page and total is the same',
  );
});
