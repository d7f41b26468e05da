// An analyst in psql and an HTTP client get the same rows: each request's `data` equals what the api.* function
// returns when called directly with the same inputs (written here as an analyst would write the call).
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { get, db } = await buildTestApp(t);
const sql = db.sql;

/** JSON round trip, so a row from postgres.js compares with one parsed from the HTTP body. */
const plain = (rows: unknown) => JSON.parse(JSON.stringify(rows)) as unknown;

const CASES: [string, () => Promise<unknown>][] = [
  [
    '/v1/parcels/search?query=smith%20john&limit=10',
    () => sql`SELECT * FROM api.search_parcels(p_query => 'smith john', p_limit => 10)`,
  ],
  [
    '/v1/parcels/search?query=123%20oak%20drive&county=miami-dade',
    () => sql`SELECT * FROM api.search_parcels(p_query => '123 oak drive', p_county => '{miami-dade}')`,
  ],
  [
    '/v1/parcels/search?county=miami-dade&dor_use_code=01&sort=just_value_desc&limit=7&offset=3',
    () => sql`SELECT * FROM api.search_parcels(p_county => '{miami-dade}', p_dor_use_code => '{01}',
                p_sort => 'just_value_desc', p_limit => 7, p_offset => 3)`,
  ],
  [
    '/v1/parcels/search?near=25.770135,-80.19985&radius_m=200',
    () => sql`SELECT * FROM api.search_parcels(p_near_lat => 25.770135, p_near_lng => -80.19985, p_radius_m => 200)`,
  ],
  [
    '/v1/parcels/search?bbox=-80.2005,25.7695,-80.199,25.771&sort=id',
    () => sql`SELECT * FROM api.search_parcels(p_bbox => '{-80.2005,25.7695,-80.199,25.771}', p_sort => 'id')`,
  ],
  [
    '/v1/parcels/search?point=-80.1997,25.770135',
    () => sql`SELECT * FROM api.search_parcels(p_point_lng => -80.1997, p_point_lat => 25.770135)`,
  ],
  ['/v1/parcels/1', () => sql`SELECT * FROM api.get_parcel(p_id => 1)`],
  [
    '/v1/parcels/by-parcel-id?county=broward&parcel_id=4942-13-BA-0140',
    () => sql`SELECT * FROM api.get_parcel_by_parcel_id(p_county => 'broward', p_parcel_id => '4942-13-BA-0140')`,
  ],
  ['/v1/parcels/1/sales', () => sql`SELECT * FROM api.list_parcel_sales(p_id => 1)`],
  [
    '/v1/sales/search?county=broward&sort=price_desc&limit=10',
    () => sql`SELECT * FROM api.search_sales(p_county => '{broward}', p_sort => 'price_desc', p_limit => 10)`,
  ],
  [
    '/v1/tax-delinquencies/search?county=miami-dade&status=certificate_sold&sort=due_asc',
    () => sql`SELECT * FROM api.search_tax_delinquencies(p_county => '{miami-dade}', p_status => 'certificate_sold',
                p_sort => 'due_asc')`,
  ],
  [
    '/v1/tax-delinquencies/by-parcel?parcel_id=01-3132-035-0010',
    () => sql`SELECT * FROM api.get_tax_delinquencies_by_parcel(p_parcel_id => '01-3132-035-0010')`,
  ],
  [
    '/v1/tax-delinquencies/sources?active=true',
    () => sql`SELECT * FROM api.list_tax_delinquency_sources(p_active => true)`,
  ],
  ['/v1/counties', () => sql`SELECT * FROM api.list_counties()`],
];

for (const [url, direct] of CASES) {
  t.test(url, async (t) => {
    const res = await get(url);
    t.equal(res.statusCode, 200);
    const body = res.json() as { data: unknown };
    const rows = plain(await direct()) as unknown[];
    t.ok(rows.length > 0, 'the case returns rows, so the comparison means something');
    t.same(Array.isArray(body.data) ? body.data : [body.data], rows);
  });
}

t.test('status counts: the HTTP counts are the stored procedure rows', async (t) => {
  const res = await get('/v1/tax-delinquencies/counts?county=palm-beach&tax_year=2022');
  const rows = await sql`SELECT * FROM api.count_tax_delinquencies(p_county => 'palm-beach', p_tax_year => 2022)`;
  t.ok(rows.length > 0);
  t.same(res.json().data.counts, plain(rows));
});
