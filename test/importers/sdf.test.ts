// SDF importer end to end: Liberty and Alachua sales in one file (older header spelling), a header-less legacy file
// read positionally, natural-key upsert, rejects, idempotence.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { importSdf } from '../../src/importers/sdf.ts';
import { fixture, rawRow, readRejects, rejectsPath } from './fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const opts = (file: string, name: string) => ({
  file: fixture(file),
  databaseUrl: db.ownerUrl,
  rejects: rejectsPath(name),
  quiet: true,
});
const [{ n: liberty0 }] = (await sql`SELECT count(*)::int AS n FROM core.sales WHERE county_id = 39`) as unknown as [
  { n: number },
];

t.test('SDF: counts, rejects, mapping', async (t) => {
  const s = await importSdf(opts('sdf/SDF49F202501.csv', 'sdf'));
  t.equal(s.rowsRead, 283);
  t.same(
    s.counties.map((c) => [c.county, c.rows, c.inserted, c.updated]),
    [
      ['alachua', 100, 100, 0],
      ['liberty', 181, 180, 0],
    ],
  );
  t.same(
    readRejects(rejectsPath('sdf')).map((r) => [r.line, r.reason]),
    [
      [6, 'SALE_MO: 13 is out of range 0..12'],
      [8, 'PARCEL_ID: missing'],
      [9, 'duplicate: superseded by line 10 (last line wins)'],
    ],
  );
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM core.sales WHERE county_id = 39`) as unknown as [
    { n: number },
  ];
  t.equal(n, liberty0 + 180);

  const raw = rawRow('sdf/SDF49F202501.csv', (f) => f[1] === '01-1S-07-0000-0010-0000');
  const [sale] = await sql`SELECT sale_date::text, sale_price, book, page, instrument_number, qualification_code,
                                  vacant_improved, multi_parcel, sale_id_code, dor_use_code, grantor, grantee, deed_code, source
                             FROM core.sales WHERE county_id = 39 AND parcel_id = ${raw.PARCEL_ID!} AND sale_id_code = ${raw.SALE_ID_CD!}`;
  t.same(sale, {
    sale_date: '2024-11-01',
    sale_price: raw.SALE_PRC,
    book: raw.OR_BOOK,
    page: '0034', // leading zeros kept
    instrument_number: raw.CLERK_NO,
    qualification_code: raw.QUAL_CD,
    vacant_improved: raw.VI_CD,
    multi_parcel: false,
    sale_id_code: raw.SALE_ID_CD,
    dor_use_code: '0100',
    grantor: null,
    grantee: null,
    deed_code: null,
    source: 'sdf',
  });
  const [dup] = await sql`SELECT qualification_code FROM core.sales s JOIN (
                            SELECT parcel_id FROM core.sales WHERE county_id = 39 AND qualification_code = '99') d USING (parcel_id)
                           WHERE s.county_id = 39 AND s.qualification_code = '99'`;
  t.equal(dup!.qualification_code, '99', 'the later duplicate line won');
});

t.test('re-run: nothing inserted or updated', async (t) => {
  const s = await importSdf(opts('sdf/SDF49F202501.csv', 'sdf2'));
  t.same(
    s.counties.map((c) => [c.inserted, c.updated]),
    [
      [0, 0],
      [0, 0],
    ],
  );
});

t.test('header-less legacy SDF is read positionally', async (t) => {
  const s = await importSdf(opts('sdf/SDF11F202501-noheader.csv', 'legacy'));
  t.equal(s.rowsRead, 20, 'the first line is data');
  t.same(
    s.counties.map((c) => [c.county, c.inserted]),
    [['alachua', 20]],
  );
});
