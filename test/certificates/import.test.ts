// A delinquency file may carry the day a county-held certificate was bought over the counter (county_purchase_date,
// or a collector's "Purchase Date"): the importer loads it, and the payoff prices the purchase from it.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importDelinquencies, STANDARD_COLUMNS } from '../../src/importers/delinquencies.ts';
import { createTestDatabase } from '../helpers/db.ts';

const db = await createTestDatabase();
t.teardown(db.drop);
const dir = mkdtempSync(join(tmpdir(), 'certificates-'));

t.test('county_purchase_date loads, and the payoff uses it', async (t) => {
  const file = join(dir, 'liberty-2023.csv');
  const row = (n: string, purchased: string) =>
    [
      'liberty',
      `P-${n}`,
      2023,
      'struck',
      '1000.00',
      '1000.00',
      `L-${n}`,
      '2024-06-01',
      'OWNER',
      '1 MAIN ST',
      'TaxCertSale',
      '1000.00',
      'COUNTY HELD',
      '18.00',
      '',
      purchased,
    ].join(',');
  writeFileSync(
    file,
    [[...STANDARD_COLUMNS, 'county_purchase_date'].join(','), row('1', '2024-10-10'), row('2', '')].join('\n') + '\n',
  );
  const summary = await importDelinquencies({
    file,
    databaseUrl: db.ownerUrl,
    rejects: join(dir, 'r.csv'),
    quiet: true,
  });
  t.equal(summary.rowsRejected, 0, 'no rejects');
  const rows = await db.sql<{ certificate_number: string; purchased: string | null; id: string }[]>`
    SELECT id::text, certificate_number, to_char(county_purchase_date, 'YYYY-MM-DD') AS purchased
      FROM core.tax_delinquencies WHERE certificate_number IN ('L-1', 'L-2') ORDER BY certificate_number`;
  t.same(
    rows.map((r) => [r.certificate_number, r.purchased]),
    [
      ['L-1', '2024-10-10'],
      ['L-2', null],
    ],
  );
  const [bought] =
    await db.sql`SELECT * FROM api.certificate_payoff(p_id => ${rows[0]!.id}::bigint, p_as_of => '2024-10-10')`;
  // 1000 + 5 months (June-October) x 1.5% x 1000 + 6.25
  t.match(bought, { purchase_price: 1081.25, holder_kind: 'individual', deed_application_from: '2026-04-01' });
  const [held] =
    await db.sql`SELECT * FROM api.certificate_payoff(p_id => ${rows[1]!.id}::bigint, p_as_of => '2024-10-10')`;
  t.match(held, { purchase_price: null, holder_kind: 'county', face_amount: 1000 });
});

t.test("a collector export's Purchase Date column is the same field", async (t) => {
  const file = join(dir, 'collector.csv');
  writeFileSync(
    file,
    'Folio,Tax Year,Cert #,Status,Owner,Situs Address,Advertised Amt,Face Amt,Interest Rate,Amount Due,Sale Date,Holder,Purchase Date\n' +
      'P-9,2022,L-9,County Held,OWNER,1 MAIN ST,"$1,000.00","$1,000.00",18.00%,"$1,000.00",06/01/2023,COUNTY HELD,11/15/2023\n',
  );
  await importDelinquencies({
    file,
    databaseUrl: db.ownerUrl,
    rejects: join(dir, 'r2.csv'),
    quiet: true,
    county: 'liberty',
    vendor: 'TaxCertSale',
  });
  const [row] = await db.sql`
    SELECT to_char(county_purchase_date, 'YYYY-MM-DD') AS purchased FROM core.tax_delinquencies WHERE certificate_number = 'L-9'`;
  t.equal(row?.purchased, '2023-11-15');
});
