// GET /v1/tax-delinquencies/* over HTTP: every parameter, envelopes, coverage gaps, every 400, and no input a 500.
// Alachua (fixtures load nothing there) holds this file's own records, so the assertions do not move with fixtures.
import t, { type Test } from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { arrangeAlachua } from '../helpers/delinquencies.ts';

const { get, db } = await buildTestApp(t);
const sql = db.sql;
// Hundreds of requests in this file: lift the per-minute and monthly limits of its one client.
await sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;

const [A1, A2, A3, A4, A5, A6] = await arrangeAlachua(sql);

type Hit = { id: string; [k: string]: unknown };
const ids = (body: { data: Hit[] }) => body.data.map((r) => r.id);
const HIT_FIELDS = [
  'bid_rate',
  'certificate_holder',
  'certificate_interest_rate',
  'certificate_number',
  'certificate_sale_date',
  'county_parcel_id',
  'county_slug',
  'deed_application_from',
  'delinquent_amount',
  'expires_on',
  'face_amount',
  'id',
  'owner_name',
  'payoff_today',
  'site_address_full',
  'source_vendor',
  'status',
  'tax_year',
  'total_due',
];
const S = '/v1/tax-delinquencies';

async function ok(t: Test, url: string) {
  const res = await get(url);
  t.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`);
  return res.json();
}
async function bad(t: Test, url: string, param: RegExp) {
  const res = await get(url);
  t.equal(res.statusCode, 400, url);
  const body = res.json();
  t.equal(body.error?.code, 'bad_request', `${url}: bad_request`);
  t.match(body.error?.message, param, `${url}: names the parameter (${body.error?.message})`);
}

t.test('search: list envelope, every DelinquencyHit field, exact pagination', async (t) => {
  const body = await ok(t, `${S}/search?county=alachua&limit=2`);
  t.same(Object.keys(body).sort(), ['data', 'meta', 'pagination']);
  t.same(body.pagination, { limit: 2, offset: 0, total: 6, has_more: true });
  t.match(body.meta, { request_id: /^req_/, dataset_status: 'live' });
  t.same(ids(body), [A6, A1], 'due_desc is the default');
  const all = await ok(t, `${S}/search?county=alachua`);
  t.same(all.pagination, { limit: 25, offset: 0, total: 6, has_more: false }, 'limit defaults to 25');
  for (const hit of all.data)
    t.same(Object.keys(hit).sort(), HIT_FIELDS, `hit ${hit.id} has all ${HIT_FIELDS.length} fields`);
  const a4 = all.data.find((h: Hit) => h.id === A4);
  t.equal(a4.status, null, 'nulls stay null');
  t.equal(a4.total_due, null);
  const a1 = all.data.find((h: Hit) => h.id === A1);
  t.match(a1, {
    total_due: 1500.5,
    certificate_sale_date: '2025-06-01',
    certificate_interest_rate: 5.25,
    tax_year: 2024,
  });
  const last = await ok(t, `${S}/search?county=alachua&limit=2&offset=4`);
  t.same(last.pagination, { limit: 2, offset: 4, total: 6, has_more: false });
  t.same(ids(last), [A5, A4]);
  const past = await ok(t, `${S}/search?county=alachua&offset=50`);
  t.same(past, { ...past, data: [], pagination: { limit: 25, offset: 50, total: 6, has_more: false } });
});

t.test('search: HTTP and api.search_tax_delinquencies give the same rows', async (t) => {
  const body = await ok(t, `${S}/search?county=alachua&owner=smith&sort=year_newest`);
  const rows = await sql`SELECT * FROM api.search_tax_delinquencies(p_county => '{alachua}', p_owner => 'smith',
                           p_sort => 'year_newest')`;
  t.same(body.data, [...rows]);
  t.equal(body.data.length, 2);
});

t.test('search: each parameter', async (t) => {
  const cases: [string, string[]][] = [
    ['sort=due_desc', [A6, A1, A3, A2, A5, A4]],
    ['sort=due_asc', [A5, A2, A1, A3, A6, A4]],
    ['sort=year_newest', [A1, A3, A4, A5, A2, A6]],
    ['tax_year=2023', [A2]],
    ['status=delinquent', [A6, A3]],
    ['status=Struck', [A5]],
    ['status=unknown', [A4]],
    ['min_due=1500.5', [A6, A1, A3]],
    ['max_due=800', [A2, A5]],
    ['min_due=50&max_due=800', [A2, A5]],
    ['min_due=0&max_due=0', []],
    ['parcel_id=0123400500', [A1, A2]],
    ['parcel_id=01234-005-00', [A1, A2]],
    [`parcel_id=${encodeURIComponent('01234.005.00')}`, [A1, A2]],
    ['owner=SMITH', [A1, A2]],
    ['owner=john%20a', [A1, A2]],
    [`owner=${encodeURIComponent("o'neil")}`, [A3]],
    [`owner=${encodeURIComponent('García')}`, [A5]],
    ['vendor=lienhub', [A6, A1, A3, A2]],
    ['vendor=RealTaxLien', [A5]],
    ['certificate_number=AL-2024-0900', [A5]],
    ['certificate_number=nope', []],
  ];
  for (const [q, expected] of cases) {
    const body = await ok(t, `${S}/search?county=alachua&${q}`);
    t.same(ids(body), expected, q);
    t.equal(body.pagination.total, expected.length, `${q}: total`);
  }
});

t.test('search: county one, repeated, CSV; coverage gap is empty, never 404', async (t) => {
  const forms = [
    'county=alachua&tax_year=2022',
    'county=ALACHUA&tax_year=2022',
    'county=alachua&county=orange&tax_year=2022',
    'county=alachua,orange&tax_year=2022',
    `county=${encodeURIComponent('orange, alachua')}&tax_year=2022`,
    'county=alachua,alachua&tax_year=2022',
  ];
  for (const q of forms) t.same(ids(await ok(t, `${S}/search?${q}`)), [A6], q);
  const orange = await ok(t, `${S}/search?county=orange`);
  t.same(orange.data, []);
  t.same(orange.pagination, { limit: 25, offset: 0, total: 0, has_more: false });
  const statewide = await ok(t, `${S}/search?owner=smith&tax_year=2023&vendor=lienhub`);
  t.ok(ids(statewide).includes(A2), 'no county is statewide');
});

t.test('search: every bad parameter is 400 naming it', async (t) => {
  const cases: [string, RegExp][] = [
    ['county=atlantis', /county.*atlantis/],
    ['county=alachua,atlantis', /county.*atlantis/],
    [`county=${'a'.repeat(41)}`, /county/],
    [`county=${encodeURIComponent("x' OR 1=1 --")}`, /county/],
    ['county=', /county/],
    ['county=,', /county/],
    ['tax_year=abc', /tax_year/],
    ['tax_year=2024.5', /tax_year/],
    ['tax_year=99999999999', /tax_year/],
    ['tax_year=1800', /tax_year/],
    [`status=${'s'.repeat(41)}`, /status/],
    ['status=', /status/],
    ['min_due=abc', /min_due/],
    ['min_due=NaN', /min_due/],
    ['max_due=Infinity', /max_due/],
    ['max_due=-Infinity', /max_due/],
    ['min_due=1e400', /min_due/],
    ['min_due=-1', /min_due/],
    ['min_due=10&max_due=5', /min_due.*max_due/],
    [`parcel_id=${'1'.repeat(101)}`, /parcel_id/],
    ['parcel_id=---', /parcel_id/],
    [`owner=${'o'.repeat(201)}`, /owner/],
    ['owner=%21%21', /owner/],
    [`vendor=${'v'.repeat(81)}`, /vendor/],
    [`certificate_number=${'c'.repeat(81)}`, /certificate_number/],
    ['sort=price', /sort/],
    ['sort=DUE_DESC', /sort/],
    ['limit=0', /limit/],
    ['limit=501', /limit/],
    ['limit=ten', /limit/],
    ['offset=-1', /offset/],
    ['offset=1.5', /offset/],
  ];
  for (const [q, param] of cases) await bad(t, `${S}/search?${q}`, param);
});

t.test('by-parcel: punctuation-insensitive, newest year first, coverage gaps are empty 200s', async (t) => {
  for (const p of ['01234-005-00', '0123400500', '01234 005 00', '01234.005.00', '01234/005/00']) {
    const body = await ok(t, `${S}/by-parcel?parcel_id=${encodeURIComponent(p)}&county=alachua`);
    t.same(ids(body), [A1, A2], p);
    t.same(body.pagination, { limit: 25, offset: 0, total: 2, has_more: false });
  }
  t.same(ids(await ok(t, `${S}/by-parcel?parcel_id=0123400500`)), [A1, A2], 'without county');
  const page = await ok(t, `${S}/by-parcel?parcel_id=0123400500&limit=1&offset=0`);
  t.same(page.pagination, { limit: 1, offset: 0, total: 2, has_more: true });
  t.same(ids(page), [A1]);
  for (const q of ['parcel_id=0123400500&county=orange', 'parcel_id=99999999&county=alachua', 'parcel_id=X']) {
    const body = await ok(t, `${S}/by-parcel?${q}`);
    t.same(body.data, [], q);
    t.same(body.pagination, { limit: 25, offset: 0, total: 0, has_more: false }, `${q}: pagination`);
  }
  const limited = await ok(t, `${S}/by-parcel?parcel_id=99999999&county=orange&limit=10&offset=20`);
  t.same(limited.pagination, { limit: 10, offset: 20, total: 0, has_more: false });
});

t.test('by-parcel: bad input is 400 naming the parameter', async (t) => {
  await bad(t, `${S}/by-parcel`, /parcel_id.*required/);
  await bad(t, `${S}/by-parcel?county=alachua`, /parcel_id/);
  await bad(t, `${S}/by-parcel?parcel_id=`, /parcel_id/);
  await bad(t, `${S}/by-parcel?parcel_id=${'1'.repeat(101)}`, /parcel_id/);
  await bad(t, `${S}/by-parcel?parcel_id=${encodeURIComponent('--..')}`, /parcel_id/);
  await bad(t, `${S}/by-parcel?parcel_id=1&county=atlantis`, /county.*atlantis/);
  await bad(t, `${S}/by-parcel?parcel_id=1&county=${'a'.repeat(41)}`, /county/);
  await bad(t, `${S}/by-parcel?parcel_id=1&limit=501`, /limit/);
  await bad(t, `${S}/by-parcel?parcel_id=1&offset=-5`, /offset/);
});

t.test('counts: object envelope, scope echoed, descending with ties by status, unknown bucket', async (t) => {
  const body = await ok(t, `${S}/counts?county=Alachua`);
  t.same(Object.keys(body).sort(), ['data', 'meta']);
  t.same(body.data, {
    county: 'alachua',
    tax_year: null,
    counts: [
      { status: 'delinquent', count: 2 },
      { status: 'certificate_sold', count: 1 },
      { status: 'redeemed', count: 1 },
      { status: 'struck', count: 1 },
      { status: 'unknown', count: 1 },
    ],
  });
  const y = await ok(t, `${S}/counts?county=alachua&tax_year=2023`);
  t.same(y.data, { county: 'alachua', tax_year: 2023, counts: [{ status: 'redeemed', count: 1 }] });
  const orange = await ok(t, `${S}/counts?county=orange`);
  t.same(orange.data, { county: 'orange', tax_year: null, counts: [] }, 'a county with no feed: empty counts');
  const statewide = await ok(t, `${S}/counts`);
  t.equal(statewide.data.county, null);
  t.equal(statewide.data.tax_year, null);
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM core.tax_delinquencies`) as unknown as [{ n: number }];
  t.equal(
    statewide.data.counts.reduce((s: number, c: { count: number }) => s + c.count, 0),
    n,
  );
  const byYear = await ok(t, `${S}/counts?tax_year=2022`);
  t.equal(byYear.data.tax_year, 2022);
});

t.test('counts: bad input is 400 naming the parameter', async (t) => {
  await bad(t, `${S}/counts?county=atlantis`, /county.*atlantis/);
  await bad(t, `${S}/counts?county=${'a'.repeat(41)}`, /county/);
  await bad(t, `${S}/counts?county=a,b`, /county/);
  await bad(t, `${S}/counts?tax_year=twenty`, /tax_year/);
  await bad(t, `${S}/counts?tax_year=2024.1`, /tax_year/);
});

t.test('sources: list envelope, camelCase, filters, default limit 100, maximum 500', async (t) => {
  const body = await ok(t, `${S}/sources?county=alachua`);
  t.same(
    body.data.map((s: { taxYear: number }) => s.taxYear),
    [2024, 2023, 2022],
  );
  t.same(body.pagination, { limit: 100, offset: 0, total: 3, has_more: false });
  t.same(Object.keys(body.data[0]).sort(), [
    'active',
    'countyId',
    'countySlug',
    'createdAt',
    'downloadUrl',
    'id',
    'lastCheckedAt',
    'lastError',
    'lastSuccessAt',
    'notes',
    'requiresLogin',
    'saleUrl',
    'sourceKind',
    'taxYear',
    'updatedAt',
    'vendor',
  ]);
  t.match(body.data[0], {
    countyId: '1',
    countySlug: 'alachua',
    vendor: 'LienHub',
    requiresLogin: true,
    active: true,
    lastSuccessAt: '2025-07-02T00:00:00Z',
    createdAt: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
  });
  const years = async (q: string) =>
    (await ok(t, `${S}/sources?county=alachua&${q}`)).data.map((s: { taxYear: number }) => s.taxYear);
  t.same(await years('vendor=HUB'), [2024, 2022], 'vendor contains, case-insensitive');
  t.same(await years('source_kind=bulk_download'), [2023]);
  t.same(await years('active=true'), [2024, 2022]);
  t.same(await years('active=false'), [2023]);
  t.same(await years('limit=1&offset=2'), [2022]);
  const page = await ok(t, `${S}/sources?county=alachua&limit=1`);
  t.same(page.pagination, { limit: 1, offset: 0, total: 3, has_more: true });
  t.equal((await ok(t, `${S}/sources?limit=500`)).pagination.limit, 500);
  const orange = await ok(t, `${S}/sources?county=orange`);
  t.same(orange.data, []);
  t.same(orange.pagination, { limit: 100, offset: 0, total: 0, has_more: false });
});

t.test('sources: active is a strict boolean; other bad input is 400 naming the parameter', async (t) => {
  for (const v of ['yes', '1', '0', 'TRUE', 'False', 'on', '', 'true,false']) {
    await bad(t, `${S}/sources?active=${encodeURIComponent(v)}`, /active/);
  }
  await bad(t, `${S}/sources?active=true&active=false`, /active/);
  await bad(t, `${S}/sources?county=atlantis`, /county.*atlantis/);
  await bad(t, `${S}/sources?limit=501`, /limit/);
  await bad(t, `${S}/sources?limit=0`, /limit/);
  await bad(t, `${S}/sources?offset=-1`, /offset/);
  await bad(t, `${S}/sources?vendor=${'v'.repeat(81)}`, /vendor/);
  await bad(t, `${S}/sources?source_kind=${'k'.repeat(41)}`, /source_kind/);
});

t.test('sources/{county}: every row newest first; no feed is empty; unknown slug is 404', async (t) => {
  const body = await ok(t, `${S}/sources/ALACHUA`);
  t.same(
    body.data.map((s: { taxYear: number }) => s.taxYear),
    [2024, 2023, 2022],
  );
  t.same(body.pagination, { limit: 500, offset: 0, total: 3, has_more: false });
  const list = await ok(t, `${S}/sources?county=alachua`);
  t.same(body.data, list.data, 'the same rows as the filtered list');
  const orange = await ok(t, `${S}/sources/orange`);
  t.same(orange.data, []);
  t.same(orange.pagination, { limit: 500, offset: 0, total: 0, has_more: false });
  const missing = await get(`${S}/sources/atlantis`);
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().error.code, 'not_found');
  t.match(missing.json().error.message, /atlantis/);
  await bad(t, `${S}/sources/${encodeURIComponent("x' OR 1=1")}`, /county/);
});

t.test('freshness: object envelope with the four fields', async (t) => {
  const body = await ok(t, `${S}/freshness`);
  t.same(Object.keys(body).sort(), ['data', 'meta']);
  t.same(Object.keys(body.data).sort(), ['last_ingested_at', 'last_source_success_at', 'latest_tax_year', 'total']);
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM core.tax_delinquencies`) as unknown as [{ n: number }];
  t.equal(body.data.total, n);
  t.ok(body.data.latest_tax_year >= 2024);
  t.match(body.data.last_ingested_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  t.match(body.data.last_source_success_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

t.test('/api/v1 serves the same endpoints', async (t) => {
  const a = await ok(t, `/v1/tax-delinquencies/counts?county=alachua`);
  const b = await ok(t, `/api/v1/tax-delinquencies/counts?county=alachua`);
  t.same(b.data, a.data);
});

t.test('no input gives a 500', async (t) => {
  const values = [
    "x' OR '1'='1",
    "'; DROP TABLE core.tax_delinquencies; --",
    '%',
    '_',
    '\\',
    '%00',
    '\u0000',
    '😀',
    'Ω≈ç√',
    '\u202e',
    'NaN',
    'Infinity',
    '-Infinity',
    '1e308',
    '99999999999999999999999',
    '-0',
    '0x10',
    '[]',
    '{}',
    'null',
    'undefined',
    ' ',
  ];
  const paths = [
    [
      'search',
      [
        'county',
        'tax_year',
        'status',
        'min_due',
        'max_due',
        'parcel_id',
        'owner',
        'vendor',
        'certificate_number',
        'sort',
        'limit',
        'offset',
      ],
    ],
    ['by-parcel', ['parcel_id', 'county', 'limit', 'offset']],
    ['counts', ['county', 'tax_year']],
    ['sources', ['county', 'vendor', 'source_kind', 'active', 'limit', 'offset']],
  ] as const;
  let n = 0;
  for (const [path, params] of paths) {
    for (const p of params) {
      for (const v of values) {
        const extra = path === 'by-parcel' && p !== 'parcel_id' ? '&parcel_id=1' : '';
        const url = `${S}/${path}?${p}=${encodeURIComponent(v)}${extra}`;
        const res = await get(url);
        n++;
        if (res.statusCode >= 500) t.fail(`${url}: ${res.statusCode} ${res.body}`);
        else if (res.statusCode !== 200 && res.statusCode !== 400) t.fail(`${url}: unexpected ${res.statusCode}`);
      }
    }
  }
  for (const v of values) {
    const res = await get(`${S}/sources/${encodeURIComponent(v)}`);
    n++;
    t.ok(res.statusCode < 500, `sources/${v}: ${res.statusCode}`);
  }
  t.ok(n > 300, `${n} requests, none a 500`);
});
