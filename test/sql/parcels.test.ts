// The parcel and sale functions called directly, as an analyst in psql would, and their plans.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { buildTestApp } from '../helpers/app.ts';

const ctx = await buildTestApp(t);
const sql = ctx.db.sql;
const ids = async (query: Promise<{ id: number }[]>) => (await query).map((r) => r.id);

t.test('fuzzy search ranks exact, then whole-word, then fuzzy matches', async (t) => {
  const rows = await sql<
    { id: number; owner_name: string }[]
  >`SELECT id, owner_name FROM api.search_parcels(p_query => 'smith john', p_limit => 50)`;
  t.equal(rows[0]?.owner_name, 'SMITH JOHN', 'an exact match first');
  const firstWholeWordOnly = rows.findIndex((r) => r.owner_name !== 'SMITH JOHN');
  t.ok(
    rows.slice(0, firstWholeWordOnly).every((r) => r.owner_name === 'SMITH JOHN'),
    'every exact match before the rest',
  );
  t.ok(
    rows.some((r) => r.owner_name === 'JOHN SMITH'),
    'reversed order is found',
  );
  t.ok(
    rows.some((r) => r.owner_name === 'SMITH JOHN & MARY'),
    'a couple is found',
  );
  const typo = await sql<{ id: number }[]>`SELECT id FROM api.search_parcels(p_query => 'smyth jon', p_limit => 5)`;
  t.ok(
    typo.some((r) => r.id === 4),
    'typos are tolerated',
  );
});

t.test('addresses: suffix variants and unit designators are the same text', async (t) => {
  t.same(await ids(sql`SELECT id FROM api.search_parcels(p_query => '123 OAK DRIVE', p_limit => 1)`), [1]);
  t.same(await ids(sql`SELECT id FROM api.search_parcels(p_query => '125 oak dr', p_limit => 1)`), [2]);
  t.same(
    await ids(sql`SELECT id FROM api.search_parcels(p_query => '500 Brickell Avenue Apt 1203', p_limit => 1)`),
    [3],
  );
  const [norm] = await sql`SELECT core.normalize_text('3000 N. Ocean Boulevard, # 5') AS n`;
  t.equal(norm?.n, '3000 N OCEAN BLVD 5');
});

t.test('spatial: a point inside, a point on a shared edge, a bbox, multipolygons, near by distance', async (t) => {
  t.same(await ids(sql`SELECT id FROM api.search_parcels(p_point_lng => -80.19985, p_point_lat => 25.770135)`), [1]);
  t.same(
    await ids(sql`SELECT id FROM api.search_parcels(p_point_lng => -80.1997, p_point_lat => 25.770135)`),
    [1, 2],
    'both neighbours',
  );
  t.same(
    await ids(sql`SELECT id FROM api.search_parcels(p_bbox => '{-80.19997,25.770027,-80.19943,25.770243}')`),
    [1, 2],
  );
  const [multi] = await sql`SELECT geometry FROM api.get_parcel(5)`;
  t.equal(JSON.parse(multi?.geometry).type, 'MultiPolygon');
  const [single] = await sql`SELECT geometry FROM api.get_parcel(1)`;
  t.same(JSON.parse(single?.geometry), {
    type: 'Polygon',
    coordinates: [
      [
        [-80.2, 25.77],
        [-80.1997, 25.77],
        [-80.1997, 25.77027],
        [-80.2, 25.77027],
        [-80.2, 25.77],
      ],
    ],
  });
  const near = await ids(
    sql`SELECT id FROM api.search_parcels(p_near_lat => 25.770135, p_near_lng => -80.19985, p_radius_m => 20)`,
  );
  t.equal(near[0], 1, 'the parcel containing the centre is at distance 0, first');
  t.ok(near.includes(2), 'its neighbour 15 m away');
  const [{ n }] =
    (await sql`SELECT api.count_parcels(p_near_lat => 25.770135, p_near_lng => -80.19985, p_radius_m => 20) AS n`) as unknown as [
      { n: number },
    ];
  t.equal(n, near.length, 'count agrees with the rows');
  const [noGeom] = await sql`SELECT geometry, centroid_lat FROM api.get_parcel(15)`;
  t.same(noGeom, { geometry: null, centroid_lat: null }, 'an unmapped parcel has nulls, not zeros');
});

t.test('parcel ids are punctuation-insensitive, keep letters and leading zeros', async (t) => {
  for (const form of ['01-3132-035-0010', '0131320350010', '01 3132 035 0010']) {
    t.same(await ids(sql`SELECT id FROM api.get_parcel_by_parcel_id('miami-dade', ${form})`), [1], form);
  }
  t.same(await ids(sql`SELECT id FROM api.get_parcel_by_parcel_id('broward', '4942-13-BA-0140')`), [7]);
  t.same(
    await ids(sql`SELECT id FROM api.get_parcel_by_parcel_id('broward', '494213010140')`),
    [8],
    'digits never match the lettered folio',
  );
  t.same(
    await ids(sql`SELECT id FROM api.get_parcel_by_parcel_id('liberty', '011S07000000100000')`),
    [14],
    'stored with dashes',
  );
  t.same(
    await ids(sql`SELECT id FROM api.get_parcel_by_parcel_id('palm-beach', '424430000010010')`),
    [],
    'leading zeros are significant',
  );
  // an unknown county is an error whatever the plan, even one that looks for the parcel id first and finds none
  await t.rejects(sql`SELECT * FROM api.get_parcel_by_parcel_id('atlantis', '1')`, { code: '22023' });
  await t.rejects(
    sql`SELECT api.get_parcel_by_parcel_id('atlantis', '123')`,
    { code: '22023' },
    'called in a select list',
  );
  for (let i = 0; i < 8; i++) {
    // prepared with parameters: a generic plan after the fifth execution
    await t.rejects(sql`SELECT * FROM api.get_parcel_by_parcel_id(${'atlantis'}, ${`12${i}`})`, { code: '22023' });
  }
});

t.test('stable paging: pages never repeat or skip rows, for every sort', async (t) => {
  for (const sort of ['id', 'just_value_desc', 'last_sale_date_asc', 'year_built_desc']) {
    const all = await ids(
      sql`SELECT id FROM api.search_parcels(p_county => '{broward}', p_sort => ${sort}, p_limit => 500)`,
    );
    const paged: number[] = [];
    for (let offset = 0; offset < all.length; offset += 37) {
      paged.push(
        ...(await ids(
          sql`SELECT id FROM api.search_parcels(p_county => '{broward}', p_sort => ${sort}, p_limit => 37, p_offset => ${offset})`,
        )),
      );
    }
    t.same(paged, all, sort);
  }
});

t.test('facets count the whole filtered result', async (t) => {
  const [{ f }] =
    (await sql`SELECT api.facet_parcels('{county,dor_use_code}', p_county => '{miami-dade,liberty}') AS f`) as unknown as [
      { f: Record<string, { value: string; count: number }[]> },
    ];
  t.same(
    f.county?.map((c) => c.value),
    ['miami-dade', 'liberty'],
  );
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM core.parcels WHERE county_id IN (13, 39)`) as unknown as [
    { n: number },
  ];
  t.equal(
    f.dor_use_code?.reduce((s, c) => s + c.count, 0),
    n,
  );
});

t.test('sales: history newest first, counts, search sorts', async (t) => {
  const history = await sql`SELECT sale_date FROM api.list_parcel_sales(1)`;
  t.same(
    history.map((r) => r.sale_date),
    ['2021-03-01', '2017-11-01', '2012-02-01'],
  );
  const [counts] =
    await sql`SELECT api.count_parcel_sales(1) AS one, api.count_parcel_sales(4) AS none, api.count_parcel_sales(99999999) AS missing`;
  t.same(counts, { one: 3, none: 0, missing: null });
  const prices = (
    await sql`SELECT sale_price FROM api.search_sales(p_county => '{broward}', p_sort => 'price_desc', p_limit => 500)`
  ).map((r) => r.sale_price);
  t.same(
    prices,
    [...prices].sort((a, b) => b - a),
  );
  const [c] = await sql`SELECT api.count_sales(p_county => '{broward}') AS n`;
  t.equal(c?.n, prices.length);
});

t.test('bad input raises 22023 naming the parameter', async (t) => {
  const cases: [Promise<unknown>, RegExp][] = [
    [sql`SELECT * FROM api.search_parcels(p_radius_m => 10)`, /near/],
    [sql`SELECT * FROM api.search_parcels(p_near_lat => 95, p_near_lng => 0, p_radius_m => 10)`, /latitude/],
    [sql`SELECT * FROM api.search_parcels(p_near_lat => 25, p_near_lng => -80, p_radius_m => 60000)`, /radius_m/],
    [sql`SELECT * FROM api.search_parcels(p_bbox => '{2,0,1,1}')`, /bbox/],
    [sql`SELECT * FROM api.search_parcels(p_sort => 'nope')`, /sort/],
    [sql`SELECT * FROM api.search_parcels(p_sort => 'distance')`, /distance needs near/],
    [sql`SELECT * FROM api.search_parcels(p_limit => 0)`, /limit/],
    [sql`SELECT * FROM api.search_parcels(p_county => '{nowhere}')`, /unknown county 'nowhere'/],
    [sql`SELECT * FROM api.search_sales(p_from => '2025-01-02', p_to => '2025-01-01')`, /from/],
  ];
  for (const [query, message] of cases) await t.rejects(query, { code: '22023', message });
});

t.test('the hot paths use indexes (enable_seqscan off)', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const plan = async (q: string) =>
    db.sql.begin(async (tx) => {
      await tx`SET LOCAL enable_seqscan = off`;
      return (await tx.unsafe(`EXPLAIN ${q}`)).map((r) => (r as Record<string, string>)['QUERY PLAN']).join('\n');
    });
  t.match(
    await plan(`SELECT id FROM core.parcels p WHERE p.search_terms && '{SMITH,SMYTH}' AND p.search_terms && '{JOHN}'`),
    /parcels_search_terms_idx/,
    'query words: the GIN index over search terms',
  );
  t.match(
    await plan(
      `SELECT id FROM core.parcels p WHERE p.county_id = 13 AND core.county_terms(p.county_id, p.search_terms) && '{SMITH@13}'`,
    ),
    /parcels_county_terms_idx/,
    'query words in a county: the GIN index over county-qualified terms',
  );
  t.match(
    await plan(`SELECT id FROM core.parcels p WHERE p.county_id = 13 ORDER BY p.id LIMIT 25`),
    /parcels_county_id_idx/,
    "a county's parcels in id order",
  );
  t.match(
    await plan(
      `SELECT id FROM core.parcels p WHERE p.year_built IS NOT NULL ORDER BY year_built DESC, id DESC LIMIT 25`,
    ),
    /Scan Backward using parcels_year_built_idx/,
    'an unfiltered sorted page reads its partial index backward',
  );
  t.match(
    await plan(
      `SELECT id FROM core.parcels p WHERE hashtext(p.owner_search) = hashtext('SMITH JOHN') AND p.owner_search = 'SMITH JOHN' ORDER BY p.id LIMIT 25`,
    ),
    /Limit[\s\S]*Index Scan using parcels_owner_text_idx/,
    "an owner's parcels in id order, as far as a page (the exact-text tier)",
  );
  const [exactText] = await db.sql<
    { sql: string }[]
  >`SELECT search.parcel_exact_text_sql('{123 OAK DR,OAK DR 123}') AS sql`;
  t.match(
    await plan(`SELECT id FROM core.parcels p WHERE ${exactText!.sql}`),
    /parcels_owner_text_idx[\s\S]*parcels_address_text_idx/,
    'the exact-text tier of a filtered search: both text indexes',
  );
  t.match(
    await plan(`SELECT d.term FROM core.parcel_term_deletes d WHERE d.deletes && core.term_deletes('SMYTHE', 2)`),
    /parcel_term_deletes_idx/,
    "typo expansion: the deletion index, by the word's own deletions",
  );
  t.match(
    await plan(
      `SELECT t.term FROM core.parcel_terms t WHERE t.term > 'BRI' AND t.term < 'BRI~' AND left(t.term, 3) = 'BRI'`,
    ),
    /parcel_terms_pkey/,
    'completions: a range of the vocabulary by key',
  );
  t.match(
    await plan(`SELECT id FROM core.parcels p WHERE p.county_id = 13 AND p.parcel_key = '0131320350010'`),
    /parcels_(county_)?key_idx/,
  );
  t.match(
    await plan(`SELECT id FROM core.parcels p WHERE p.geom && ST_SetSRID(ST_MakePoint(-80.2, 25.77), 4326)`),
    /parcels_geom_idx/,
  );
  t.match(
    await plan(
      `SELECT id FROM core.parcels p WHERE p.county_id = 13 AND p.dor_use_code = '0100' ORDER BY just_value DESC, id DESC LIMIT 25`,
    ),
    /parcels_county_use_value_idx/,
  );
  t.match(
    await plan(`SELECT s.id FROM core.sales s WHERE s.county_id = 13 AND s.parcel_key = 'X' ORDER BY sale_date DESC`),
    /sales_parcel_idx/,
  );
});

t.test('the API and the SQL function return the same rows for the same inputs', async (t) => {
  const rest = (await ctx.get('/v1/parcels/search?query=smith%20john&county=miami-dade,broward&limit=10')).json();
  const rows =
    await sql`SELECT * FROM api.search_parcels(p_query => 'smith john', p_county => '{miami-dade,broward}', p_limit => 10)`;
  t.same(
    rest.data,
    rows.map((r) => ({ ...r })),
  );
  const [{ n }] =
    (await sql`SELECT api.count_parcels(p_query => 'smith john', p_county => '{miami-dade,broward}') AS n`) as unknown as [
      { n: number },
    ];
  t.equal(rest.pagination.total, n);
  const sales = (await ctx.get('/v1/parcels/1/sales')).json();
  t.same(
    sales.data,
    (await sql`SELECT * FROM api.list_parcel_sales(1)`).map((r) => ({ ...r })),
  );
});

t.test('query words: exact, typos for rare words, completions of the last word, unknown words left out', async (t) => {
  const words = async (q: string) =>
    (await sql<{ word: string; terms: string[] }[]>`SELECT word, terms FROM unnest(api.parcel_query_words(${q}))`).map(
      (w) => [w.word, w.terms],
    );
  const [smyth, jon] = await words('smyth jon');
  t.equal(smyth?.[0], 'SMYTH');
  t.ok((smyth?.[1] as string[]).includes('SMITH'), 'SMYTH also stands for SMITH (one edit)');
  t.ok((jon?.[1] as string[]).includes('JOHN'), 'JON stands for JOHN');
  t.same(await words('123'), [['123', ['123']]], 'numbers are never fuzzed');
  await sql`INSERT INTO core.parcel_terms (term, parcels) VALUES ('ABCDEFGHIJKLMNOPQRSTU', 1), ('ABCDEFGHIJKLMNOPQRSTUV', 1)`;
  t.teardown(() => sql`DELETE FROM core.parcel_terms WHERE term LIKE 'ABCDEFGHIJKLMNOPQRSTU%'`);
  await sql`INSERT INTO core.parcel_terms (term, parcels)
             SELECT 'ZAQW' || c, 1 FROM unnest(string_to_array('ABCDFGHIJKLMNOPQRSTU', NULL)) c
             UNION ALL SELECT 'YAQW' || c, 1000 FROM unnest(string_to_array('ABCDFGHIJKLMNOPQRSTU', NULL)) c`;
  t.teardown(() => sql`DELETE FROM core.parcel_terms WHERE term ~ '^[ZY]AQW.$'`);
  const [, rare] = await words('smith zaqwe');
  t.equal((rare?.[1] as string[]).length, 20, "a rare word's whole neighbourhood (20 terms held by 20 parcels)");
  const [common] = await words('yaqwe');
  t.equal((common?.[1] as string[]).length, 16, "a common neighbourhood's 16 most frequent (20,000 parcels in all)");
  t.same(
    (await words('smith abcdefghijklmnopqrstux')).map((w) => w[0]),
    ['SMITH'],
    'a word over 20 characters is not fuzzed (one edit from a term, it matches nothing and is left out)',
  );
  const [deletes] = await sql<[{ jon: number; abcd: number; aabb: number }]>`
    SELECT cardinality(core.term_deletes('JON', 1)) AS jon, cardinality(core.term_deletes('ABCD', 2)) AS abcd,
           cardinality(core.term_deletes('AABB', 2)) AS aabb`;
  t.same(
    deletes,
    { jon: 4, abcd: 1 + 4 + 6, aabb: 1 + 2 + 3 },
    'deletions: the word, then every string with one or two characters deleted, once each (AABB: ABB, AAB; AB, BB, AA)',
  );
  // the symmetric-delete guarantee, checked by brute force: every pair of vocabulary terms within two edits shares a
  // deletion, so each finds the other (when one has 4+ characters: the empty string is no deletion, and the words
  // searched at two edits have 6+)
  const [{ pairs, missed }] = await sql<[{ pairs: number; missed: number }]>`
    SELECT count(*)::int AS pairs, count(*) FILTER (WHERE NOT (a.deletes && b.deletes))::int AS missed
      FROM (SELECT * FROM core.parcel_term_deletes WHERE length(term) >= 4 ORDER BY term LIMIT 400) a
      JOIN core.parcel_term_deletes b ON a.term <> b.term AND levenshtein_less_equal(a.term, b.term, 2) <= 2`;
  t.ok(pairs > 0, `${pairs} pairs of terms within two edits`);
  t.equal(missed, 0, 'each pair shares a deletion');
  await sql`INSERT INTO core.parcel_terms (term, parcels) VALUES ('JN', 1), ('J0N', 1), ('XJON', 1)`;
  t.teardown(() => sql`DELETE FROM core.parcel_terms WHERE term IN ('JN', 'J0N', 'XJON')`);
  const [, jon2] = await words('smith jon');
  t.ok(
    ['JN', 'J0N', 'XJON'].every((v) => (jon2?.[1] as string[]).includes(v)),
    'short words find every one-edit term, even those sharing few trigrams',
  );
  await sql`INSERT INTO core.parcel_terms (term, parcels) VALUES ('QWERTZ', 1)`;
  t.teardown(() => sql`DELETE FROM core.parcel_terms WHERE term = 'QWERTZ'`);
  const [, qwarty] = await words('smith qwarty');
  t.same(
    qwarty,
    ['QWARTY', ['QWERTZ']],
    'a long word with no term one edit away finds those two edits away, even sharing few trigrams (2 of 12)',
  );
  const [garcia] = await words('garcia maria');
  t.notOk(
    (garcia?.[1] as string[]).includes('MARIA'),
    'a word of the query is no typo of another (MARIA is two edits from GARCIA): GARCIA MARIA does not find every MARIA',
  );
  t.ok(((await words('garcia'))[0]?.[1] as string[]).includes('MARIA'), 'while alone, GARCIA does stand for MARIA');
  const [, brick] = await words('500 brick');
  t.ok((brick?.[1] as string[]).includes('BRICKELL'), 'the last word is completed');
  t.same(await words('qqqqqq'), [], 'a word matching nothing is left out');
  t.same(await ids(sql`SELECT id FROM api.search_parcels(p_query => 'qqqqqq')`), [], 'and alone it matches nothing');
  t.equal((await sql`SELECT api.count_parcels(p_query => 'qqqqqq') AS n`)[0]?.n, 0);
});

t.test(
  'the vocabulary, its deletion index and the postings stay exact through inserts, re-wordings, moves, deletes and truncation',
  async (t) => {
    const db = await createTestDatabase();
    t.teardown(db.drop);
    const drift = () => db.sql`
    WITH truth AS (SELECT term, count(*)::int AS n FROM core.parcels, LATERAL (SELECT DISTINCT unnest(search_terms)) AS u(term) GROUP BY term)
    SELECT coalesce(v.term, truth.term) AS term FROM core.parcel_terms v FULL JOIN truth USING (term)
     WHERE v.parcels IS DISTINCT FROM truth.n
    UNION ALL
    (WITH truth AS (SELECT term, county_id, array_agg(id::int ORDER BY id) AS ids
                      FROM core.parcels, LATERAL (SELECT DISTINCT unnest(search_terms)) AS u(term) GROUP BY 1, 2)
     SELECT coalesce(pp.term, truth.term) || '@' || coalesce(pp.county_id, truth.county_id)
       FROM core.parcel_postings pp FULL JOIN truth USING (term, county_id) WHERE pp.ids IS DISTINCT FROM truth.ids)
    UNION ALL
    SELECT 'deletions of ' || coalesce(d.term, v.term) FROM core.parcel_term_deletes d FULL JOIN core.parcel_terms v USING (term)
     -- (sorted: rows stored before migration 32 hold the same hashes in another order)
     WHERE sort(d.deletes) IS DISTINCT FROM core.term_deletes(v.term, 2)`;
    t.same(await drift(), [], 'after the fixtures');
    await db.sql`INSERT INTO core.parcels (county_id, parcel_id, owner_name, site_address_full)
               VALUES (1, 'V-1', 'ZEBULON QUARTERMAIN', '1 NOWHERE LN'), (1, 'V-2', 'ZEBULON SMITH', NULL)`;
    t.equal((await db.sql`SELECT parcels FROM core.parcel_terms WHERE term = 'ZEBULON'`)[0]?.parcels, 2);
    await db.sql`UPDATE core.parcels SET owner_name = 'QUARTERMAIN ALLAN' WHERE parcel_id = 'V-1'`;
    await db.sql`UPDATE core.parcels SET just_value = 5 WHERE county_id = 1`;
    t.equal((await db.sql`SELECT parcels FROM core.parcel_terms WHERE term = 'ZEBULON'`)[0]?.parcels, 1);
    t.same(await drift(), [], 'after re-wording and a value-only update');
    await db.sql`UPDATE core.parcels SET county_id = 2 WHERE parcel_id = 'V-2'`;
    t.same(
      await db.sql`SELECT county_id, ids FROM core.parcel_postings WHERE term = 'ZEBULON'`,
      await db.sql`SELECT 2 AS county_id, ARRAY[id::int] AS ids FROM core.parcels WHERE parcel_id = 'V-2'`,
      'a parcel moved to another county moves its postings',
    );
    t.same(await drift(), [], 'after a move');
    await db.sql`DELETE FROM core.parcels WHERE parcel_id LIKE 'V-%'`;
    t.same(await db.sql`SELECT term FROM core.parcel_terms WHERE term IN ('ZEBULON', 'QUARTERMAIN', 'NOWHERE')`, []);
    t.same(await drift(), [], 'after deletes');
    await db.sql`TRUNCATE core.parcels CASCADE`;
    t.same(await db.sql`SELECT term FROM core.parcel_terms`, [], 'truncation empties it');
    t.same(await db.sql`SELECT term FROM core.parcel_postings`, [], 'and the postings');
    t.same(await db.sql`SELECT term FROM core.parcel_term_deletes`, [], 'and the deletion index');
  },
);

t.test('few matches: a query whose capped reading matches fewer than 25 parcels is read again wide', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  // QUARBLEX has 20 terms one edit away (QUARBLEA..QUARBLEU), so the capped reading leaves out those two edits away
  const oneEdit = 'ABCDFGHIJKLMNOPQRSTU'.split('').map((c) => `QUARBLE${c}`);
  await db.sql`
    INSERT INTO core.parcels (county_id, parcel_id, owner_name)
    SELECT 1, 'W1-' || v, 'LONER ' || v FROM unnest(${oneEdit}::text[]) AS v
    UNION ALL SELECT 1, 'W2-1', 'PARTNER QUARBLEA'
    UNION ALL SELECT 2, 'W3-' || i, 'PARTNER QUARBLYY' FROM generate_series(1, 30) AS i
    UNION ALL SELECT 1, 'W4-' || i, 'COMPANION QUARBLEB' FROM generate_series(1, 30) AS i
    UNION ALL SELECT 2, 'W5-' || i, 'COMPANION QUARBLYY' FROM generate_series(1, 3) AS i`;
  const terms = async (q: string) =>
    (await db.sql<{ terms: string[] }[]>`SELECT terms FROM unnest(api.parcel_query_words(${q}))`).map((w) => w.terms);
  const cut = async (word: string, words: string[], wide: boolean) =>
    (await db.sql<[{ cut: boolean }]>`SELECT cut FROM search.parcel_word_terms(${word}, ${words}, ${wide})`)[0].cut;
  t.equal(await cut('QUARBLEX', ['PARTNER', 'QUARBLEX'], false), true, 'capped, its two-edit terms are cut');
  t.equal(await cut('QUARBLEX', ['PARTNER', 'QUARBLEX'], true), false, 'wide, nothing within two edits is left out');
  t.equal(
    await cut('QUARBLYY', ['PARTNER', 'QUARBLYY'], false),
    false,
    'a word whose typos are all kept is not cut (its matches are then never counted: widening would change nothing)',
  );
  // the check stops counting once fewer than 25 parcels hold the words so far (the rarest first): it decides the same
  const counted = async (words: string[]) =>
    (
      await db.sql<[{ early: number; full: number }]>`
        WITH w AS (SELECT array_agg(ROW(x, ARRAY[x], '{1}')::api.query_word) AS w FROM unnest(${words}::text[]) AS x)
        SELECT search.parcel_postings_count(search.parcel_postings_match(w, NULL, 0, 25))::int AS early,
               search.parcel_postings_count(search.parcel_postings_match(w, NULL, 0))::int AS full FROM w`
    )[0];
  t.same(await counted(['PARTNER', 'LONER']), { early: 20, full: 0 }, 'LONER (20) is read first, and stops it');
  t.same(await counted(['COMPANION', 'QUARBLEB']), { early: 30, full: 30 }, '30 matches: counted to the end');
  const [, capped] = await terms('companion quarblex');
  t.notOk(capped?.includes('QUARBLYY'), 'with 30 matches (COMPANION QUARBLEB), the two-edit terms stay out');
  t.same(
    capped,
    ['QUARBLEB', 'QUARBLEA', ...oneEdit.slice(2)],
    'its 20 terms one edit away (QUARBLEX itself is in no parcel), most common first',
  );
  const [, wide] = await terms('partner quarblex');
  t.ok(wide?.includes('QUARBLYY'), 'with 1 match through the capped reading, the terms two edits away are searched');
  t.ok(
    oneEdit.every((v) => wide?.includes(v)),
    'and every term one edit away is kept',
  );
  const page = await db.sql<{ id: number; owner_name: string; county_slug: string }[]>`
    SELECT id, owner_name, county_slug FROM api.search_parcels(p_query => 'partner quarblex', p_limit => 25)`;
  t.same(
    page.map((r) => r.owner_name),
    ['PARTNER QUARBLEA', ...Array<string>(24).fill('PARTNER QUARBLYY')],
    'the one-edit match first, then the two-edit ones fill the page',
  );
  const [{ n }] = await db.sql<[{ n: number }]>`SELECT api.count_parcels(p_query => 'partner quarblex') AS n`;
  t.equal(n, 31, 'the total counts the same wide reading');
  const [{ inCounty }] = await db.sql<[{ inCounty: number }]>`
    SELECT api.count_parcels(p_query => 'partner quarblex', p_county => ${[page[1]!.county_slug]}) AS "inCounty"`;
  t.equal(inCounty, 30, 'the reading does not depend on the filters (statewide matches decide it)');
});

t.test('totals equal the rows search pages through, for every kind of query', async (t) => {
  for (const q of ['smith', 'smith john', 'smyth jon', 'garcia', '500 brick', 'oak dr', 'llc', 'revocable trust']) {
    const [{ n }] = (await sql`SELECT api.count_parcels(p_query => ${q}) AS n`) as unknown as [{ n: number }];
    const all = await ids(sql`SELECT id FROM api.search_parcels(p_query => ${q}, p_limit => 500)`);
    t.equal(all.length, Math.min(n, 500), `${q}: ${n}`);
    t.equal(new Set(all).size, all.length, `${q}: no row twice`);
  }
});

t.test(
  'value sorts: valued parcels in order (ties by id the same way), then those without a value; pages tile',
  async (t) => {
    for (const [column, dir] of [
      ['year_built', 'desc'],
      ['year_built', 'asc'],
      ['last_sale_price', 'desc'],
      ['just_value', 'asc'],
    ] as const) {
      const sort = `${column}_${dir}`;
      const expected = await ids(
        sql.unsafe(`SELECT id::int FROM core.parcels WHERE county_id = 39 OR county_id = 48
                   ORDER BY (${column} IS NULL), ${column} ${dir}, id ${dir}`) as unknown as Promise<{ id: number }[]>,
      );
      const paged: number[] = [];
      for (let offset = 0; offset < expected.length; offset += 40) {
        paged.push(
          ...(await ids(sql`SELECT id FROM api.search_parcels(p_county => '{liberty,orange}', p_sort => ${sort},
                                                              p_limit => 40, p_offset => ${offset})`)),
        );
      }
      t.same(paged, expected, `${sort}: every page in order, none repeated or skipped`);
    }
  },
);

t.test(
  'facet counts stay exact through writes; categorical totals and facets equal counts over the rows',
  async (t) => {
    const db = await createTestDatabase();
    t.teardown(db.drop);
    // EXCEPT compares NULLs as equal, as the counts' NULLS NOT DISTINCT key does
    const drift = () => db.sql`
    WITH truth AS (SELECT county_id, dor_use_code, property_use_code, site_city, site_zip, count(*)::int AS n
                     FROM core.parcels GROUP BY 1, 2, 3, 4, 5),
         kept AS (SELECT county_id, dor_use_code, property_use_code, site_city, site_zip, parcels AS n
                    FROM core.parcel_facet_counts)
    (SELECT * FROM truth EXCEPT SELECT * FROM kept) UNION ALL (SELECT * FROM kept EXCEPT SELECT * FROM truth)`;
    t.same(await drift(), [], 'after the fixtures');
    await db.sql`INSERT INTO core.parcels (county_id, parcel_id, dor_use_code, site_city, site_zip)
               VALUES (1, 'F-1', '0100', 'GAINESVILLE', '32601'), (1, 'F-2', '0100', 'GAINESVILLE', '32601'),
                      (1, 'F-3', NULL, NULL, NULL)`;
    await db.sql`UPDATE core.parcels SET site_zip = '32603' WHERE parcel_id = 'F-2'`;
    await db.sql`UPDATE core.parcels SET just_value = 1 WHERE county_id = 1`;
    await db.sql`DELETE FROM core.parcels WHERE parcel_id = 'F-3'`;
    t.same(await drift(), [], 'after inserts, a re-classification, a value-only update and a delete');
    const total = async (where: string, call: string) => {
      const [brute] = await db.sql.unsafe(`SELECT count(*)::int AS n FROM core.parcels p WHERE ${where}`);
      const [fast] = await db.sql.unsafe(`SELECT api.count_parcels(${call}) AS n`);
      t.equal(fast?.n, brute?.n, call);
    };
    await total('county_id = 13', `p_county => '{miami-dade}'`);
    await total(`county_id = 13 AND dor_use_code = '0100'`, `p_county => '{miami-dade}', p_dor_use_code => '{01}'`);
    await total(`upper(site_city) = 'GAINESVILLE' AND site_zip = '32601'`, `p_city => 'gainesville', p_zip => '32601'`);
    await total('true', '');
    const [facets] = await db.sql`SELECT api.facet_parcels('{county,zip}', p_dor_use_code => '{0100}') AS f`;
    const byCounty = await db.sql`
    SELECT c.slug AS value, count(*)::int AS count FROM core.parcels p JOIN core.counties c ON c.id = p.county_id
     WHERE p.dor_use_code = '0100' GROUP BY 1 ORDER BY 2 DESC, 1`;
    t.same(facets?.f.county, [...byCounty], 'county facet from the counts table');
    await db.sql`TRUNCATE core.parcels CASCADE`;
    t.same(await db.sql`SELECT 1 FROM core.parcel_facet_counts`, [], 'truncation empties it');
  },
);

t.test("the API's sessions start no parallel workers (a launch costs more than a query)", async (t) => {
  const [{ setting }] = await ctx.app.sql<
    [{ setting: string }]
  >`SELECT current_setting('max_parallel_workers_per_gather') AS setting`;
  t.equal(setting, '0');
  const [server] = await sql<
    [{ setting: string }]
  >`SELECT boot_val AS setting FROM pg_settings WHERE name = 'max_parallel_workers_per_gather'`;
  t.not(server.setting, '0', 'the server default would allow them');
});

t.test('p_words: a reading computed once gives the same page, total and facets', async (t) => {
  const q = 'smyth jon';
  const page = async (words: boolean) =>
    ids(sql`SELECT id FROM api.search_parcels(p_query => ${q}, p_limit => 50,
              p_words => CASE WHEN ${words} THEN api.parcel_query_words(${q}) END)`);
  t.same(await page(true), await page(false));
  t.ok((await page(true)).length > 0);
  const [counts] = await sql<[{ with: number; without: number }]>`
    SELECT api.count_parcels(p_query => ${q}, p_words => api.parcel_query_words(${q})) AS with,
           api.count_parcels(p_query => ${q}) AS without`;
  t.equal(counts.with, counts.without);
  const [facets] = await sql<[{ same: boolean }]>`
    SELECT api.facet_parcels('{county}', p_query => ${q}, p_words => api.parcel_query_words(${q}))
           = api.facet_parcels('{county}', p_query => ${q}) AS same`;
  t.ok(facets.same);
  const [other] = await sql<[{ n: number }]>`
    SELECT api.count_parcels(p_query => ${q}, p_words => api.parcel_query_words('qqqqqq')) AS n`;
  t.equal(other.n, 0, 'the reading given is the one used (no words: nothing matches)');
});

t.test(
  'beyond 5,000 matches: paged tier by tier (exact text, every word exact, the rest), empty tiers skipped',
  async (t) => {
    const db = await createTestDatabase();
    t.teardown(db.drop);
    await db.sql`
    INSERT INTO core.parcels (county_id, parcel_id, owner_name)
    SELECT 1, 'T-' || i, CASE WHEN i % 2500 = 7 THEN 'ZORBA QUILL' WHEN i % 8 = 0 THEN 'ZORBAS QUILL' ELSE 'ZORBA QUILL JR' END
      FROM generate_series(1, 6000) AS i`;
    const page = (query: string, offset: number, limit = 25) =>
      ids(db.sql`SELECT id FROM api.search_parcels(p_query => ${query}, p_limit => ${limit}, p_offset => ${offset})`);
    // brute force: the parcels holding one of `anyOf` (the query's terms), in tier order; `best`: the owner of the
    // query as best read, which holds each word's best term
    const expected = async (query: string, words: string[], anyOf: string[], offset: number, best = '') =>
      ids(db.sql`
      SELECT id::int FROM core.parcels p WHERE p.search_terms && ${anyOf}::text[]
       ORDER BY p.owner_search = core.normalize_text(${query}) DESC, p.search_terms @> ${words}::text[] DESC,
                p.owner_search = ${best} DESC, p.id
       LIMIT 25 OFFSET ${offset}`);
    for (const offset of [0, 5230, 5240]) {
      t.same(
        await page('zorba quill', offset),
        await expected('zorba quill', ['ZORBA', 'QUILL'], ['ZORBA', 'ZORBAS'], offset),
        `exact text, then every word exact, then typo matches, each by id (offset ${offset})`,
      );
    }
    t.equal((await db.sql`SELECT api.count_parcels(p_query => 'zorba quill') AS n`)[0]?.n, 6000);
    for (const offset of [0, 3]) {
      t.same(
        await page('zorbx quill', offset),
        await expected('zorbx quill', ['ZORBX', 'QUILL'], ['ZORBA'], offset, 'ZORBA QUILL'),
        `a word in no parcel as typed: the every-word-exact tier is skipped; the query as best read (ZORBA QUILL), then the rest by id (offset ${offset})`,
      );
    }
    const first = await page('zorbx quill', 0);
    t.same(
      (
        await db.sql`SELECT owner_name FROM core.parcels WHERE id = ANY (${first.slice(0, 4)}::bigint[]) ORDER BY id`
      ).map((r) => r.owner_name),
      ['ZORBA QUILL JR', 'ZORBA QUILL', 'ZORBA QUILL', 'ZORBA QUILL'],
      'the three owners equal to the best reading first, then the lowest id of the rest',
    );
    t.ok(first[0]! > first[3]!, 'though their ids are not the lowest');
    t.equal((await db.sql`SELECT api.count_parcels(p_query => 'zorbx quill') AS n`)[0]?.n, 5250);
    t.same(
      await page('quill', 5990),
      await expected('quill', ['QUILL'], ['QUILL'], 5990),
      'a lone common word stands only for itself: its last page ends with the exact tier',
    );
    t.equal((await page('quill', 5990)).length, 10);

    // a common word beside a misspelt rare one: its closest spelling (DAIRLEY, 1 edit of 7 letters) before a common
    // one (DAILY, 1 edit of 6), though the common one has the lower ids
    await db.sql`
      INSERT INTO core.parcels (county_id, parcel_id, owner_name)
      SELECT 1, 'M-' || i, CASE WHEN i > 5100 THEN 'MARGO DAIRLEY' ELSE 'MARGO DAILY' END FROM generate_series(1, 5120) AS i`;
    const [, dairly] = (
      await db.sql<{ terms: string[] }[]>`SELECT terms FROM unnest(api.parcel_query_words('margo dairly'))`
    ).map((w) => w.terms);
    t.same(dairly, ['DAIRLEY', 'DAILY'], 'both spellings stand for DAIRLY');
    // the scores kept from matching (term hits) are the GIN path's score expression, for the matches of every
    // quality level: at 0.85 DAIRLY keeps one of the two terms it is read as
    const [expr] = await db.sql<{ sql: string }[]>`
      SELECT search.parcel_query_score_sql(api.parcel_query_words('margo dairly')) AS sql`;
    for (const level of [0, 0.85]) {
      const [cmp] = await db.sql.unsafe<{ n: number; wrong: number }[]>(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE sc.score <> ${expr!.sql})::int AS wrong
           FROM api.parcel_query_words('margo dairly') AS w(words),
                search.parcel_postings_matches(w.words, NULL, ${level}, NULL, true) AS m,
                search.parcel_hits_scores(m.sets, m.hits, w.words) AS sc
           JOIN core.parcels p ON p.id = sc.id`,
      );
      t.ok(cmp!.n > 0, `level ${level}: ${cmp!.n} matches scored`);
      t.equal(cmp!.wrong, 0, `level ${level}: every score as the score expression gives it`);
    }
    const truth = (offset: number) =>
      ids(db.sql`
        SELECT id::int FROM core.parcels p WHERE p.owner_name LIKE 'MARGO %'
         ORDER BY p.owner_name = 'MARGO DAIRLEY' DESC, p.id LIMIT 25 OFFSET ${offset}`);
    for (const offset of [0, 10, 5100]) {
      t.same(
        await page('margo dairly', offset),
        await truth(offset),
        `ranked by score where it matters (offset ${offset})`,
      );
    }

    // A query with no filter but counties runs on the postings; with any other filter, on the GIN index. A filter
    // every parcel passes must change nothing: the same pages (every tier, up to 5,000 matches and beyond) and totals.
    await db.sql`UPDATE core.parcels SET just_value = 1`;
    await db.sql`INSERT INTO core.parcels (county_id, parcel_id, owner_name, just_value)
                 SELECT 2, 'B-' || i, CASE i % 3 WHEN 0 THEN 'ZORBA QUILL' WHEN 1 THEN 'MARGO DAILY' ELSE 'MARGO DAIRLEY' END, 1
                   FROM generate_series(1, 40) AS i`;
    for (const [query, county] of [
      ['zorba quill', null],
      ['zorbx quill', null],
      ['quill', null],
      ['margo dairly', null],
      ['dairly', null],
      ['zorba quill', '{alachua}'],
      ['zorba quill', '{}'],
      ['zorba quill', '{baker}'],
      ['margo dairly', '{alachua,baker}'],
      // few matches, each scored (MARGO, one term, counts without its postings): DAIRLEY before DAILY
      ['margo dairly', '{baker}'],
    ] as const) {
      for (const offset of [0, 20, 5100, 5240, 5260, 5990]) {
        const [both] = await db.sql<{ postings: number[]; gin: number[] }[]>`
          SELECT ARRAY(SELECT id FROM api.search_parcels(p_query => ${query}, p_county => ${county}, p_offset => ${offset})) AS postings,
                 ARRAY(SELECT id FROM api.search_parcels(p_query => ${query}, p_county => ${county}, p_offset => ${offset},
                                                         p_just_value_min => 0)) AS gin`;
        t.same(both?.postings, both?.gin, `${query} ${county ?? 'statewide'} at ${offset}: postings and GIN agree`);
        // the API's call: the same page, and the total counted from the page's own matches
        for (const filter of [null, 0]) {
          const [page] = await db.sql<{ ids: string[]; total: number; n: number; without: number | null }[]>`
            SELECT s.ids, s.total,
                   api.count_parcels(p_query => ${query}, p_county => ${county}, p_just_value_min => ${filter}) AS n,
                   (search.parcel_search_page(search.parcel_filter_of(p_query => ${query}, p_county => ${county},
                      p_just_value_min => ${filter}), p_offset => ${offset}, p_with_total => false)).total AS without
              FROM search.parcel_search_page(search.parcel_filter_of(p_query => ${query}, p_county => ${county},
                      p_just_value_min => ${filter}), p_offset => ${offset}) s`;
          const path = filter === null ? 'postings' : 'GIN';
          t.same(page?.ids.map(Number), both?.gin, `${query} at ${offset} (${path}): parcel_search_page's page`);
          t.equal(page?.total, page?.n, `${query} at ${offset} (${path}): its total is count_parcels'`);
          t.equal(page?.without, null, 'no total unless asked');
        }
      }
      const [n] = await db.sql<{ postings: number; gin: number }[]>`
        SELECT api.count_parcels(p_query => ${query}, p_county => ${county}) AS postings,
               api.count_parcels(p_query => ${query}, p_county => ${county}, p_just_value_min => 0) AS gin`;
      t.equal(n?.postings, n?.gin, `${query} ${county ?? 'statewide'}: the same total (${n?.gin})`);
    }
  },
);

t.test('the exact-text tier reads only as far as the page, statewide and in a county', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  // the owner text in two counties, the first county's parcels first by id; in the second, a longer owner's parcels
  // come before the owner's by id, so only the exact-text tier puts the owner's first
  for (const [county, prefix, owner, n] of [
    [1, 'X-', 'YOLANDA QUIBBLE', 40],
    [2, 'Z-', 'QUIBBLE YOLANDA ANN', 5],
    [2, 'Y-', 'YOLANDA QUIBBLE', 30],
  ] as const) {
    await db.sql`INSERT INTO core.parcels (county_id, parcel_id, owner_name)
                 SELECT ${county}, ${prefix} || i, ${owner} FROM generate_series(1, ${n}) AS i ORDER BY i`;
  }
  const rows = await db.sql<{ id: string; county_id: number; owner_name: string }[]>`
    SELECT id, county_id, owner_name FROM core.parcels WHERE owner_name LIKE '%QUIBBLE%' ORDER BY id`;
  const [second] = await db.sql<{ slug: string }[]>`SELECT slug FROM core.counties WHERE id = 2`;
  const idsOf = (keep: (r: (typeof rows)[number]) => boolean) => rows.filter(keep).map((r) => Number(r.id));
  const exactFirst = (county: number | null) => [
    ...idsOf((r) => (county === null || r.county_id === county) && r.owner_name === 'YOLANDA QUIBBLE'),
    ...idsOf((r) => (county === null || r.county_id === county) && r.owner_name !== 'YOLANDA QUIBBLE'),
  ];
  for (const [county, expected] of [
    [null, exactFirst(null)],
    [[second!.slug], exactFirst(2)],
  ] as const) {
    for (const [offset, query] of [
      [0, 'yolanda quibble'],
      [25, 'yolanda quibble'],
      [50, 'yolanda quibble'],
      [0, 'quibble yolanda'],
    ] as const) {
      const [page] = await db.sql<{ ids: string[]; total: number }[]>`
        SELECT ids, total FROM search.parcel_search_page(
          search.parcel_filter_of(p_query => ${query}, p_county => ${county as never}), p_limit => 25, p_offset => ${offset})`;
      const where = `${query} ${county ? 'in the county' : 'statewide'} at ${offset}`;
      t.same(
        page?.ids.map(Number),
        expected.slice(offset, offset + 25),
        `${where}: the owner's parcels by id, then the rest`,
      );
      t.equal(page?.total, expected.length, `${where}: the total`);
    }
  }
});

t.test(
  'a point or a bbox alone (statements planned once): the same page and total as a scan of every parcel',
  async (t) => {
    const places: { name: string; args: string; where: string }[] = [];
    const point = (lng: number, lat: number) =>
      places.push({
        name: `point ${lng},${lat}`,
        args: `p_point_lng => ${lng}, p_point_lat => ${lat}`,
        where: `ST_Intersects(geom, ST_SetSRID(ST_MakePoint(${lng}, ${lat}), 4326))`,
      });
    const bbox = (b: number[]) =>
      places.push({
        name: `bbox ${b.join(',')}`,
        args: `p_bbox => '{${b.join(',')}}'`,
        where: `ST_Intersects(geom, ST_MakeEnvelope(${b.join(', ')}, 4326))`,
      });
    point(-80.19985, 25.770135); // inside parcel 1
    point(-80.1997, 25.770135); // on the edge parcels 1 and 2 share
    point(-70, 20); // over no parcel
    bbox([-80.19997, 25.770027, -80.19943, 25.770243]);
    bbox([-85, 25, -80, 31]); // every mapped parcel
    bbox([-80.1997, 25.77, -80.1997, 25.7701]); // zero width, on a shared edge: too thin to shrink
    bbox([-70, 20, -69, 21]);
    for (const place of places) {
      const expected = (
        await sql.unsafe<{ id: string }[]>(`SELECT id FROM core.parcels WHERE ${place.where} ORDER BY id`)
      ).map((r) => Number(r.id));
      t.ok(place.name.startsWith('bbox -70') || place.name.startsWith('point -70') || expected.length > 0, place.name);
      for (const [limit, offset] of [
        [25, 0],
        [2, 1],
        [500, 0],
        [10, expected.length],
        [5, expected.length + 3],
      ] as const) {
        const [page] = await sql.unsafe<{ ids: string[]; total: number }[]>(
          `SELECT ids, total FROM search.parcel_search_page(search.parcel_filter_of(${place.args}), p_limit => ${limit}, p_offset => ${offset})`,
        );
        t.same(
          page?.ids.map(Number),
          expected.slice(offset, offset + limit),
          `${place.name}, ${limit} at ${offset}: page`,
        );
        t.equal(page?.total, expected.length, `${place.name}, ${limit} at ${offset}: total`);
      }
      const [count] = await sql.unsafe<{ n: number }[]>(`SELECT api.count_parcels(${place.args}) AS n`);
      t.equal(count?.n, expected.length, `${place.name}: count_parcels agrees`);
      const [noTotal] = await sql.unsafe<{ ids: string[]; total: number | null }[]>(
        `SELECT ids, total FROM search.parcel_search_page(search.parcel_filter_of(${place.args}), p_with_total => false)`,
      );
      t.equal(noTotal?.total, null, `${place.name}: no total unless asked`);
    }
  },
);

t.test(
  'near by distance: page and total (one scan up to 1 km, else the nearest read first) as a scan of every parcel',
  async (t) => {
    const [lat, lng] = [25.770135, -80.19985];
    const pt = `ST_SetSRID(ST_MakePoint(${lng}, ${lat}), 4326)::geography`;
    for (const radius of [20, 400, 1000, 2000]) {
      const expected = (
        await sql.unsafe<{ id: string }[]>(
          `SELECT id FROM core.parcels WHERE ST_DWithin(geom::geography, ${pt}, ${radius}, false)
          ORDER BY ST_Distance(centroid::geography, ${pt}, false), id`,
        )
      ).map((r) => Number(r.id));
      t.ok(expected.length > 1, `${radius} m: ${expected.length} parcels`);
      const args = `p_near_lat => ${lat}, p_near_lng => ${lng}, p_radius_m => ${radius}`;
      for (const [limit, offset] of [
        [25, 0],
        [1, 1],
        [10, expected.length - 1],
        [5, expected.length + 3],
      ] as const) {
        const name = `${radius} m, ${limit} at ${offset}`;
        const [page] = await sql.unsafe<{ ids: string[]; total: number }[]>(
          `SELECT ids, total FROM search.parcel_search_page(search.parcel_filter_of(${args}), p_limit => ${limit}, p_offset => ${offset})`,
        );
        t.same(page?.ids.map(Number), expected.slice(offset, offset + limit), `${name}: page`);
        t.equal(page?.total, expected.length, `${name}: total`);
        const [noTotal] = await sql.unsafe<{ ids: string[] }[]>(
          `SELECT ids FROM search.parcel_search_page(search.parcel_filter_of(${args}), p_limit => ${limit}, p_offset => ${offset}, p_with_total => false)`,
        );
        t.same(noTotal?.ids.map(Number), expected.slice(offset, offset + limit), `${name}: the page without a total`);
      }
    }
  },
);

t.test(
  'parcel_search_hits: the rows of search_parcels in order, as JSON, and the total of count_parcels',
  async (t) => {
    for (const args of [
      `p_query => 'smith john'`,
      `p_query => 'smyth jon', p_county => '{miami-dade,broward}', p_limit => 3, p_offset => 1`,
      `p_point_lng => -80.1997, p_point_lat => 25.770135`,
      `p_bbox => '{-85,25,-80,31}', p_limit => 7, p_offset => 4`,
      `p_near_lat => 25.770135, p_near_lng => -80.19985, p_radius_m => 2000`,
      `p_county => '{liberty,orange}', p_sort => 'just_value_desc', p_limit => 40`,
      `p_query => 'zzzzqqqq'`,
    ]) {
      const filters = args.replace(/, p_(sort|limit|offset) => [^,]+/g, '');
      const [hits] = await sql.unsafe<{ total: number; hits: Record<string, unknown>[] }[]>(
        `SELECT total, hits FROM api.parcel_search_hits(${args})`,
      );
      const rows = await sql.unsafe(`SELECT * FROM api.search_parcels(${args})`);
      const [count] = await sql.unsafe<{ n: number }[]>(`SELECT api.count_parcels(${filters}) AS n`);
      t.same(
        hits?.hits,
        rows.map((r) => ({ ...r })),
        `${args}: the same rows, in order`,
      );
      t.equal(hits?.total, count?.n, `${args}: the total`);
    }
  },
);

t.test('a swap of neighbouring letters is one edit, on both search paths, in any word', async (t) => {
  const [swaps] = await sql<{ s: string[] }[]>`SELECT search.adjacent_swaps('OKA') AS s`;
  t.same(swaps!.s, ['KOA', 'OAK'], 'the swaps of a word');
  for (const [query, expected, why] of [
    ['simth', 'SMITH', 'a 5-letter word (one edit allowed) with two letters swapped'],
    ['123 oka dr', 'OAK', 'a 3-letter word of an address'],
    ['johnsno', 'JOHNSON', 'a 7-letter word: one edit, not two'],
    ['simth john', 'SMITH', 'the first word'],
    ['john simth', 'SMITH', 'the last word'],
  ] as const) {
    const words = await sql<{ word: string; terms: string[]; qualities: number[] }[]>`
      SELECT word, terms, qualities FROM unnest(api.parcel_query_words(${query}))`;
    const word = words.find((w) => w.terms.includes(expected));
    t.ok(word, `${query}: reads ${expected} (${why})`);
    const q = word!.qualities[word!.terms.indexOf(expected)]!;
    t.equal(q, 1 - 1 / Math.max(word!.word.length, expected.length), `${query}: ${expected} counts one edit`);
    // postings (no other filter) and GIN (a filter that keeps every parcel) give the same rows and total
    const [postings] = await sql<{ total: number; hits: { id: number }[] }[]>`
      SELECT total, hits FROM api.parcel_search_hits(p_query => ${query}, p_limit => 50)`;
    const [gin] = await sql<{ total: number; hits: { id: number }[] }[]>`
      SELECT total, hits FROM api.parcel_search_hits(p_query => ${query}, p_just_value_min => -1, p_limit => 50)`;
    t.ok(postings!.total > 0, `${query}: matches`);
    t.equal(gin!.total, postings!.total, `${query}: the same total on both paths`);
    t.same(
      gin!.hits.map((h) => h.id),
      postings!.hits.map((h) => h.id),
      `${query}: the same rows on both paths`,
    );
  }
  const [far] = await sql<{ terms: string[] }[]>`SELECT terms FROM unnest(api.parcel_query_words('mitsh')) LIMIT 1`;
  t.notOk(far?.terms.includes('SMITH'), 'a swap and another edit are two edits: too many for a 5-letter word');
});
