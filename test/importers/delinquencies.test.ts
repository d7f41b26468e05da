// Delinquency importer end to end: the standard CSV (Miami-Dade 2024 replaced, Alachua 2025 first load) and a
// tax-collector export (Liberty 2025); the source row updated on success and on failure; idempotence.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { importDelinquencies } from '../../src/importers/delinquencies.ts';
import { fixture, rawRow, readRejects, rejectsPath } from './fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const opts = (file: string, name: string, extra = {}) => ({
  file: fixture(file),
  databaseUrl: db.ownerUrl,
  rejects: rejectsPath(name),
  quiet: true,
  ...extra,
});
const source = async (county: number, year: number) =>
  (
    await sql`SELECT vendor, sale_url, source_kind, last_checked_at, last_success_at, last_error
               FROM core.tax_delinquency_sources WHERE county_id = ${county} AND tax_year = ${year}`
  )[0];

t.test('standard CSV', async (t) => {
  const md2024before = await source(13, 2024);
  const [{ other }] = (await sql`SELECT count(*)::int AS other FROM core.tax_delinquencies
                                  WHERE county_id = 13 AND tax_year <> 2024`) as unknown as [{ other: number }];
  const s = await importDelinquencies(opts('delinquencies/standard-2025.csv', 'std'));
  t.equal(s.rowsRead, 304);
  const md = s.counties.find((c) => c.county === 'miami-dade')!;
  t.match(md, { rows: 151, inserted: 150, updated: 1 });
  t.ok((md.deleted as number) > 0, 'Miami-Dade 2024 records absent from the file deleted');
  t.match(
    s.counties.find((c) => c.county === 'alachua'),
    { rows: 151, inserted: 150, updated: 0, deleted: 0 },
  );
  t.same(
    readRejects(rejectsPath('std')).map((r) => [r.line, r.reason]),
    [
      [304, "total_due: not an amount: '12,34.x'"],
      [305, "county: unknown county 'atlantis'"],
      [156, 'duplicate: superseded by line 303 (last line wins)'],
    ],
  );
  const [{ n }] =
    (await sql`SELECT count(*)::int AS n FROM core.tax_delinquencies WHERE county_id = 13 AND tax_year = 2024`) as unknown as [
      { n: number },
    ];
  t.equal(n, 151);
  const [{ o }] =
    (await sql`SELECT count(*)::int AS o FROM core.tax_delinquencies WHERE county_id = 13 AND tax_year <> 2024`) as unknown as [
      { o: number },
    ];
  t.equal(o, other, 'other tax years untouched');

  const raw = rawRow('delinquencies/standard-2025.csv', (f) => f[1] === '06103-004-000' && f[5] === '999.99');
  const [d] =
    await sql`SELECT parcel_id, tax_year, status, delinquent_amount::text, total_due::text, certificate_number,
                               certificate_sale_date::text, owner_name, site_address_full, source_vendor, face_amount::text,
                               certificate_holder, certificate_interest_rate::text, bid_rate::text
                          FROM core.tax_delinquencies WHERE county_id = 1 AND parcel_id = '06103-004-000'`;
  t.same(d, {
    parcel_id: raw.parcel_id,
    tax_year: Number(raw.tax_year),
    status: 'certificate_sold',
    delinquent_amount: raw.delinquent_amount,
    total_due: '999.99',
    certificate_number: raw.certificate_number,
    certificate_sale_date: raw.certificate_sale_date || null,
    owner_name: raw.owner_name,
    site_address_full: raw.site_address_full || null,
    source_vendor: raw.source_vendor,
    face_amount: raw.face_amount || null,
    certificate_holder: raw.certificate_holder || null,
    certificate_interest_rate: raw.certificate_interest_rate || null,
    bid_rate: raw.bid_rate || null,
  });
  const [one] = await sql`SELECT status, total_due::text FROM core.tax_delinquencies
                           WHERE county_id = 13 AND parcel_id = '0131320350010' AND tax_year = 2024`;
  t.same(one, { status: 'delinquent', total_due: '3612.48' }, 'named parcel 1 updated in place');

  const al = await source(1, 2025);
  t.match(al, { vendor: 'LienHub', sale_url: 'https://lienhub.com', source_kind: 'bulk_download', last_error: null });
  t.ok(al!.last_success_at, 'source row created with a success');
  const md2024 = await source(13, 2024);
  t.ok(md2024!.last_success_at > md2024before!.last_success_at, 'existing source row: success recorded');
  t.equal(md2024!.source_kind, 'cert_sale_portal', 'existing source row otherwise kept');
});

t.test('re-run: nothing updated, freshness stays', async (t) => {
  const [f0] = await sql`SELECT max(ingested_at) AS m FROM core.tax_delinquencies`;
  const s = await importDelinquencies(opts('delinquencies/standard-2025.csv', 'std2'));
  t.same(
    s.counties.map((c) => [c.inserted, c.updated, c.deleted]),
    [
      [0, 0, 0],
      [0, 0, 0],
    ],
  );
  const [f1] = await sql`SELECT max(ingested_at) AS m FROM core.tax_delinquencies`;
  t.same(f1, f0);
});

t.test('collector layout with --county/--tax-year/--vendor', async (t) => {
  t.notOk(await source(39, 2025), 'Liberty has no source row yet');
  const s = await importDelinquencies(
    opts('delinquencies/collector-liberty-2025.csv', 'col', {
      county: 'liberty',
      taxYear: 2025,
      vendor: 'TaxCertSale',
    }),
  );
  t.same(s.counties, [{ county: 'liberty', rows: 120, inserted: 120, updated: 0, deleted: 0, guard: 'first load' }]);
  t.same(
    readRejects(rejectsPath('col')).map((r) => [r.line, r.reason]),
    [[122, "certificate_sale_date: not a calendar date: '13/45/2026'"]],
  );
  const statuses =
    await sql`SELECT status, count(*)::int AS n FROM core.tax_delinquencies WHERE county_id = 39 GROUP BY 1 ORDER BY 1`;
  t.same(statuses.map((r) => r.status).sort(), ['certificate_sold', 'delinquent', 'open', 'redeemed', 'struck']);
  const raw = rawRow('delinquencies/collector-liberty-2025.csv', (f) => f[3] === 'Struck to County');
  const [d] = await sql`SELECT status, total_due::text, certificate_sale_date::text, certificate_holder,
                               certificate_interest_rate::text, bid_rate::text, source_vendor, owner_name
                          FROM core.tax_delinquencies WHERE county_id = 39 AND parcel_id = ${raw.Folio!}`;
  t.same(d, {
    status: 'struck',
    total_due: raw['Amount Due']!.replace(/[$,]/g, ''),
    certificate_sale_date: '2026-06-01',
    certificate_holder: 'LIBERTY COUNTY',
    certificate_interest_rate: '18.00',
    bid_rate: '18.00',
    source_vendor: 'TaxCertSale',
    owner_name: raw.Owner,
  });
  t.match(await source(39, 2025), {
    vendor: 'TaxCertSale',
    sale_url: '',
    source_kind: 'bulk_download',
    last_error: null,
  });
});

t.test('failure is recorded on the source row, data untouched', async (t) => {
  const ok = await source(39, 2025);
  const [{ n0 }] =
    (await sql`SELECT count(*)::int AS n0 FROM core.tax_delinquencies WHERE county_id = 39`) as unknown as [
      { n0: number },
    ];
  await t.rejects(
    importDelinquencies(
      opts('delinquencies/collector-liberty-2025.csv', 'fail', { county: 'liberty', taxYear: 2025, maxRejectRate: 0 }),
    ),
    /1 of 121 rows invalid/,
  );
  const failed = await source(39, 2025);
  t.match(failed!.last_error, /over --max-reject-rate 0/);
  t.same(failed!.last_success_at, ok!.last_success_at, 'last success kept');
  t.ok(failed!.last_checked_at > ok!.last_checked_at);
  const [{ n1 }] =
    (await sql`SELECT count(*)::int AS n1 FROM core.tax_delinquencies WHERE county_id = 39`) as unknown as [
      { n1: number },
    ];
  t.equal(n1, n0);
  await t.rejects(
    importDelinquencies(opts('delinquencies/missing.csv', 'missing', { county: 'liberty', taxYear: 2025 })),
    /no such file/,
  );
  t.match((await source(39, 2025))!.last_error, /missing\.csv: no such file/, 'a missing file is a failed check too');
});
