// Owner-name and address variants (core.search_word_rules): each family found from either spelling, on both search
// paths; optional words never match on their own. The parcels are this file's own, in Suwannee (fixtures load
// nothing there), so the assertions do not move with the fixtures.
import t, { type Test } from 'tap';
import { createTestDatabase } from '../helpers/db.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;

const OWNERS = [
  'MC DONALD JOHN',
  'MCDONALD MARY',
  'DE LA CRUZ MARIA',
  'DELACRUZ JOSE',
  'VAN DYKE PETER',
  'VANDYKE ANNA',
  "O'BRIEN KEVIN",
  'OBRIEN SEAN',
  'ST JOHN PAUL',
  'SAINT JOHN LUKE',
  'QUILLFEATHER JOHN TR',
  'QUILLFEATHER ROBERT TRUSTEE',
  'MARBLEWOOD EST',
  'ESTATE OF MARBLEWOOD ALICE',
  'THISTLEDOWN JAMES L/E',
  'THISTLEDOWN ANN LIFE ESTATE',
  'BRAMBLECOTE TOM ETAL',
  'BRAMBLECOTE SUE ET AL',
  'ZEPHYRINE HOLDINGS LLC',
  'ZEPHYRINE PARTNERS L L C',
  'GLIMMERSTONE INC',
  'GLIMMERSTONE INCORPORATED',
  'FERNWHISTLE JOHN & MARY',
  'FERNWHISTLE PAUL AND JANE',
];

const [county] = await sql<{ id: number }[]>`SELECT id FROM core.counties WHERE slug = 'suwannee'`;
const ids = new Map<string, number>();
for (const [i, owner] of OWNERS.entries()) {
  const [row] = await sql<{ id: number }[]>`
    INSERT INTO core.parcels (county_id, parcel_id, owner_name, site_address_full, site_city, just_value)
    VALUES (${county!.id}, ${`VAR-${i}`}, ${owner}, ${`${100 + i} CEDARBROOK LN`}, 'LIVE OAK', 1000)
    RETURNING id::int`;
  ids.set(owner, row!.id);
}

/** The owners a query finds among this file's parcels, on the postings path and on the GIN path alike. */
async function found(t: Test, query: string): Promise<string[]> {
  const [postings] = await sql<{ total: number; hits: { id: number; owner_name: string }[] }[]>`
    SELECT total, hits FROM api.parcel_search_hits(p_query => ${query}, p_county => '{suwannee}', p_limit => 100)`;
  const [gin] = await sql<{ total: number; hits: { id: number }[] }[]>`
    SELECT total, hits FROM api.parcel_search_hits(p_query => ${query}, p_county => '{suwannee}',
                                                   p_just_value_min => 0, p_limit => 100)`;
  t.same(
    gin!.hits.map((h) => h.id),
    postings!.hits.map((h) => h.id),
    `${query}: the same rows on both paths`,
  );
  t.equal(gin!.total, postings!.total, `${query}: the same total on both paths`);
  return postings!.hits.map((h) => h.owner_name).sort();
}

for (const [family, spellings, expected] of [
  ['joined and split particles (MC)', ['McDonald', 'Mc Donald'], ['MC DONALD JOHN', 'MCDONALD MARY']],
  ['joined and split particles (DE LA)', ['Delacruz', 'De La Cruz'], ['DE LA CRUZ MARIA', 'DELACRUZ JOSE']],
  ['joined and split particles (VAN)', ['Vandyke', 'Van Dyke'], ['VAN DYKE PETER', 'VANDYKE ANNA']],
  ["an apostrophe (O'BRIEN)", ["O'Brien", 'OBrien'], ["O'BRIEN KEVIN", 'OBRIEN SEAN']],
  ['ST and SAINT', ['Saint John Paul', 'St John Paul'], ['ST JOHN PAUL']],
  ['SAINT and ST', ['St. John Luke', 'Saint John Luke'], ['SAINT JOHN LUKE']],
  [
    'trusts',
    ['Quillfeather Trust', 'Quillfeather Trustee', 'Quillfeather TR'],
    ['QUILLFEATHER JOHN TR', 'QUILLFEATHER ROBERT TRUSTEE'],
  ],
  ['estates', ['Estate of Marblewood', 'Marblewood Est'], ['ESTATE OF MARBLEWOOD ALICE', 'MARBLEWOOD EST']],
  [
    'life estates',
    ['Thistledown Life Estate', 'Thistledown L/E'],
    ['THISTLEDOWN ANN LIFE ESTATE', 'THISTLEDOWN JAMES L/E'],
  ],
  ['et al', ['Bramblecote et al', 'Bramblecote ETAL'], ['BRAMBLECOTE SUE ET AL', 'BRAMBLECOTE TOM ETAL']],
  ['LLC', ['Zephyrine L.L.C.', 'Zephyrine LLC'], ['ZEPHYRINE HOLDINGS LLC', 'ZEPHYRINE PARTNERS L L C']],
  ['INC', ['Glimmerstone Incorporated', 'Glimmerstone Inc'], ['GLIMMERSTONE INC', 'GLIMMERSTONE INCORPORATED']],
  ['& and AND', ['Fernwhistle & Mary', 'Fernwhistle and Mary'], ['FERNWHISTLE JOHN & MARY']],
] as const) {
  t.test(`${family}: every spelling finds every variant`, async (t) => {
    for (const spelling of spellings) t.same(await found(t, spelling), [...expected].sort(), spelling);
  });
}

t.test('a query word that is only a suffix or a particle does not make every LLC a match', async (t) => {
  const llc = await found(t, 'Zephyrine Holdings LLC');
  t.same(llc, ['ZEPHYRINE HOLDINGS LLC'], 'the other words still decide');
  const [alone] = await sql<{ words: string[] }[]>`SELECT search.query_words('LLC') AS words`;
  t.same(alone!.words, ['LLC'], 'a query of only optional words keeps them');
  const [withName] = await sql<
    { words: string[] }[]
  >`SELECT search.query_words('Acme Holdings LLC Inc Trust') AS words`;
  t.same(withName!.words, ['ACME', 'HOLDINGS'], 'beside a name, optional words are left out');
  const [particle] = await sql<{ words: string[] }[]>`SELECT search.query_words('John O Smith') AS words`;
  t.same(particle!.words, ['JOHN', 'O', 'SMITH'], 'a particle whose joined form no parcel holds stays apart');
});

t.test(
  'the rules are data: normalization, particles and optional words come from core.search_word_rules',
  async (t) => {
    const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM core.search_word_rules`;
    t.ok(n!.n > 60, `${n!.n} rules`);
    const mismatched = await sql`
    SELECT written, reads_as FROM core.search_word_rules
     WHERE kind = 'same' AND core.normalize_text('X ' || written || ' Y') <> btrim('X ' || reads_as || ' Y')
       AND reads_as <> ''`;
    t.same(mismatched, [], 'normalization applies every same-spelling rule');
    const [lists] = await sql<{ particles: string[]; optional: string[] }[]>`
    SELECT core.search_particles() AS particles, core.search_optional_words() AS optional`;
    t.ok(lists!.particles.includes('MC') && lists!.optional.includes('LLC'), 'particles and optional words');
    const [terms] = await sql<{ terms: string[] }[]>`
    SELECT search_terms AS terms FROM core.parcels WHERE id = ${ids.get('DE LA CRUZ MARIA')!}`;
    t.ok(terms!.terms.includes('DELACRUZ') && terms!.terms.includes('CRUZ'), 'a split name holds its joined form too');
  },
);

t.test(
  'a rule added later: core.apply_search_word_rules() rewrites the normalization and recomputes the rows',
  async (t) => {
    const [row] = await sql<{ id: number }[]>`
    INSERT INTO core.parcels (county_id, parcel_id, owner_name, site_address_full)
    VALUES (${county!.id}, 'VAR-RULE', 'HOLLOWAY GRACE', '7 WINDSOR CROSSING')
    RETURNING id::int`;
    await sql`INSERT INTO core.search_word_rules (kind, written, reads_as, why) VALUES ('same', 'CROSSING', 'XING', 'test')`;
    await sql`CALL core.apply_search_word_rules()`;
    const [after] = await sql<{ address: string; terms: string[] }[]>`
    SELECT address_search AS address, search_terms AS terms FROM core.parcels WHERE id = ${row!.id}`;
    t.equal(after!.address, '7 WINDSOR XING', 'the address column is recomputed');
    t.ok(after!.terms.includes('XING') && !after!.terms.includes('CROSSING'), 'and the search terms');
    const [hit] = await sql<{ total: number }[]>`
    SELECT total FROM api.parcel_search_hits(p_query => '7 windsor crossing', p_county => '{suwannee}')`;
    t.equal(hit!.total, 1, 'a query spelled the old way finds it');
  },
);

t.test('a query with its particles apart ranks the owner written with them joined as its exact text', async (t) => {
  // the longer owner has the lower id: only the exact-text rule puts MCDONALD WILHELMINA first
  for (const [i, owner] of ['MCDONALD WILHELMINA ROSE', 'MCDONALD WILHELMINA'].entries())
    await sql`INSERT INTO core.parcels (county_id, parcel_id, owner_name, just_value)
              VALUES (${county!.id}, ${`VAR-JOIN-${i}`}, ${owner}, 1000)`;
  const [texts] = await sql<{ texts: string[] }[]>`
    SELECT search.exact_texts('Mc Donald Wilhelmina', api.parcel_query_words('Mc Donald Wilhelmina')) AS texts`;
  t.ok(texts!.texts.includes('MCDONALD WILHELMINA'), 'the joined text is one of the query texts');
  t.ok(texts!.texts.includes('MC DONALD WILHELMINA'), 'beside the text as typed');
  const joined = await sql<{ words: string[] }[]>`
    SELECT search.particles_joined(string_to_array(x, ' ')) AS words
      FROM unnest(ARRAY['SMITH DE LA CRUZ', 'DE LA 5', 'JOHN DE', 'AMC DONALD']) WITH ORDINALITY AS u(x, i) ORDER BY i`;
  t.same(
    joined.map((r) => r.words.join(' ')),
    ['SMITH DELACRUZ', 'DE LA 5', 'JOHN DE', 'AMC DONALD'],
    'a run of particles joins the word after it, never a number, nor a particle inside a word',
  );
  for (const filter of [null, 0]) {
    const [page] = await sql<{ hits: { owner_name: string }[] }[]>`
      SELECT hits FROM api.parcel_search_hits(p_query => 'Mc Donald Wilhelmina', p_county => '{suwannee}',
                                              p_just_value_min => ${filter})`;
    t.same(
      page!.hits.map((h) => h.owner_name),
      ['MCDONALD WILHELMINA', 'MCDONALD WILHELMINA ROSE'],
      `${filter === null ? 'postings' : 'GIN'}: the joined owner first`,
    );
  }
});
