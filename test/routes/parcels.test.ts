// Every parameter and error of GET /parcels/search, /parcels/{id}, /parcels/by-parcel-id, /parcels/{id}/sales and
// /sales/search over HTTP.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { get } = await buildTestApp(t);
const json = async (url: string) => {
  const res = await get(url);
  return { status: res.statusCode, body: res.json() };
};
const idsOf = (body: { data: { id: number }[] }) => body.data.map((r) => r.id);

t.test('search returns the list envelope with geometry null and exact pagination', async (t) => {
  const { status, body } = await json('/v1/parcels/search?county=broward&limit=10&offset=295');
  t.equal(status, 200);
  t.same(Object.keys(body).sort(), ['data', 'meta', 'pagination']);
  t.same(body.pagination, { limit: 10, offset: 295, total: 303, has_more: false });
  t.equal(body.data.length, 8);
  t.ok(
    body.data.every(
      (p: { geometry: unknown; county_slug: string }) => p.geometry === null && p.county_slug === 'broward',
    ),
  );
  const first = await json('/v1/parcels/search?county=broward&limit=10');
  t.same(first.body.pagination, { limit: 10, offset: 0, total: 303, has_more: true });
  t.equal((await json('/v1/parcels/search')).body.pagination.limit, 25, 'default limit');
});

t.test('county, use_code and dor_use_code: one value, repeated keys and CSV are equivalent', async (t) => {
  const csv = await json('/v1/parcels/search?county=miami-dade,liberty&dor_use_code=0100,0400&limit=500');
  const repeated = await json(
    '/v1/parcels/search?county=miami-dade&county=liberty&dor_use_code=0100&dor_use_code=0400&limit=500',
  );
  const short = await json('/v1/parcels/search?county=MIAMI-DADE,liberty&dor_use_code=01,004&limit=500');
  t.ok(csv.body.pagination.total > 0);
  t.same(idsOf(repeated.body), idsOf(csv.body));
  t.same(idsOf(short.body), idsOf(csv.body), 'case-insensitive slugs; 01 and 004 mean 0100 and 0400');
  const local = await json('/v1/parcels/search?use_code=0101&limit=5');
  t.ok(local.body.data.every((p: { property_use_code: string }) => p.property_use_code === '0101'));
});

t.test('city, zip, value bounds, last-sale dates and prices filter', async (t) => {
  const city = await json('/v1/parcels/search?city=tampa&limit=500');
  t.ok(city.body.data.length > 0 && city.body.data.every((p: { site_city: string }) => p.site_city === 'TAMPA'));
  const zip = await json('/v1/parcels/search?zip=33130-1234');
  t.ok(zip.body.data.every((p: { site_zip: string }) => p.site_zip === '33130'));
  const values = await json(
    '/v1/parcels/search?just_value_min=500000&just_value_max=600000&assessed_min=100000&assessed_max=600000&limit=500',
  );
  t.ok(values.body.data.length > 0);
  for (const p of values.body.data)
    t.ok(p.just_value >= 500000 && p.just_value <= 600000 && p.assessed_value >= 100000);
  const sales = await json(
    '/v1/parcels/search?sale_after=2020-01-01&sale_before=2021-12-31&sale_price_min=100000&sale_price_max=900000&sort=last_sale_date_desc&limit=500',
  );
  t.ok(sales.body.data.length > 0);
  for (const p of sales.body.data)
    t.ok(p.last_sale_date >= '2020-01-01' && p.last_sale_date <= '2021-12-31' && p.last_sale_price >= 100000);
  const dates = sales.body.data.map((p: { last_sale_date: string }) => p.last_sale_date);
  t.same(dates, [...dates].sort().reverse(), 'sorted newest first');
});

t.test('query: relevance is the default order; names and addresses are fuzzy', async (t) => {
  const smith = await json('/v1/parcels/search?query=SMITH%20JOHN');
  t.equal(smith.body.data[0].owner_name, 'SMITH JOHN');
  t.ok(smith.body.data.some((p: { owner_name: string }) => p.owner_name === 'JOHN SMITH'));
  t.same(idsOf((await json('/v1/parcels/search?query=123%20oak%20drive&limit=1')).body), [1]);
  t.same(idsOf((await json('/v1/parcels/search?query=500%20BRICKELL%20AVE%20%23%201204&limit=1')).body), [4]);
  const scoped = await json('/v1/parcels/search?query=smith&county=liberty');
  t.ok(scoped.body.data.every((p: { county_slug: string }) => p.county_slug === 'liberty'));
});

t.test('near, bbox and point', async (t) => {
  const near = await json('/v1/parcels/search?near=25.770135,-80.19985&radius_m=20');
  t.equal(near.body.data[0].id, 1, 'distance is the default order with near');
  t.same(idsOf((await json('/v1/parcels/search?point=-80.1997,25.770135')).body), [1, 2]);
  t.same(idsOf((await json('/v1/parcels/search?bbox=-80.19997,25.770027,-80.19943,25.770243')).body), [1, 2]);
  const far = await json('/v1/parcels/search?point=-87.0,30.0');
  t.same(far.body.pagination, { limit: 25, offset: 0, total: 0, has_more: false });
});

t.test('facets: counts over the whole filtered result, in a top-level object', async (t) => {
  const { body } = await json(
    '/v1/parcels/search?county=orange&limit=1&facets=county,dor_use_code&facets=city,zip,property_use_code',
  );
  t.same(Object.keys(body.facets).sort(), ['city', 'county', 'dor_use_code', 'property_use_code', 'zip']);
  t.same(body.facets.county, [{ value: 'orange', count: 251 }]);
  t.equal(
    body.facets.dor_use_code.reduce((s: number, f: { count: number }) => s + f.count, 0),
    251,
  );
  const counts = body.facets.city.map((f: { count: number }) => f.count);
  t.same(
    counts,
    [...counts].sort((a: number, b: number) => b - a),
  );
  t.notOk('facets' in (await json('/v1/parcels/search?limit=1')).body, 'absent unless asked');
});

t.test('every sort is accepted and deterministic', async (t) => {
  for (const sort of [
    'id',
    'just_value_asc',
    'just_value_desc',
    'assessed_value_asc',
    'assessed_value_desc',
    'taxable_value_asc',
    'taxable_value_desc',
    'last_sale_date_asc',
    'last_sale_date_desc',
    'last_sale_price_asc',
    'last_sale_price_desc',
    'year_built_asc',
    'year_built_desc',
  ]) {
    const a = await json(`/v1/parcels/search?county=palm-beach&sort=${sort}&limit=50`);
    const b = await json(`/v1/parcels/search?county=palm-beach&sort=${sort}&limit=50`);
    t.equal(a.status, 200, sort);
    t.same(idsOf(a.body), idsOf(b.body));
  }
  const values = (await json('/v1/parcels/search?county=palm-beach&sort=taxable_value_asc&limit=500')).body.data.map(
    (p: { taxable_value: number }) => p.taxable_value,
  );
  t.same(
    values,
    [...values].sort((x: number, y: number) => x - y),
  );
});

t.test('bad input is a 400 naming the parameter, never a 500', async (t) => {
  const cases: [string, RegExp][] = [
    [`query=${'x'.repeat(201)}`, /'query'/],
    ['query=', /'query'/],
    ['limit=0', /'limit'/],
    ['limit=501', /'limit'/],
    ['offset=-1', /'offset'/],
    ['limit=abc', /'limit'/],
    ['just_value_min=abc', /'just_value_min'/],
    ['just_value_min=NaN', /'just_value_min'/],
    ['just_value_min=Infinity', /'just_value_min' must be a finite number/],
    ['just_value_min=10&just_value_max=5', /just_value_min/],
    ['assessed_min=10&assessed_max=5', /assessed_min/],
    ['sale_price_min=10&sale_price_max=5', /sale_price_min/],
    ['sale_after=2025-02-30', /'sale_after'/],
    ['sale_after=yesterday', /'sale_after'/],
    ['sale_after=2025-03-01&sale_before=2025-01-01', /sale_after/],
    ['near=25.77,-80.2', /near.*radius_m/],
    ['near=95,-80.2&radius_m=100', /latitude/],
    ['near=25.77&radius_m=100', /'near'/],
    ['near=a,b&radius_m=100', /'near'/],
    ['near=25.77,-80.2&radius_m=0', /'radius_m'/],
    ['near=25.77,-80.2&radius_m=50001', /'radius_m'/],
    ['bbox=1,2,3', /'bbox'/],
    ['bbox=-80,26,-81,27', /bbox/],
    ['bbox=-80,26,-79,95', /bbox/],
    ['point=-80.2,95', /point/],
    ['point=x,y', /'point'/],
    ['sort=cheapest', /'sort' must be one of: relevance/],
    ['sort=relevance', /relevance needs query/],
    ['sort=distance', /distance needs near/],
    ['facets=owner', /unknown facet 'owner'/],
    ['county=atlantis', /unknown county 'atlantis'/],
    [`county=${'a'.repeat(41)}`, /county: each county slug must be 1-40 characters/],
    ['county=miami%27dade', /'county'/],
    ['county=,', /'county' must be one or more county slugs separated by commas/],
    ['county=%20,%20', /'county'/],
    ['dor_use_code=,', /'dor_use_code' must be one or more codes/],
    ['use_code=,,', /'use_code'/],
    ['zip=3313', /'zip'/],
    ['dor_use_code=01;DROP', /'dor_use_code'/],
  ];
  for (const [qs, message] of cases) {
    const res = await get(`/v1/parcels/search?${qs}`);
    t.equal(res.statusCode, 400, qs);
    t.equal(res.json().error?.code, 'bad_request', qs);
    t.match(res.json().error?.message, message, qs);
  }
});

t.test('hostile text is plain text', async (t) => {
  for (const q of [
    "'; DROP TABLE core.parcels; --",
    'SMITH%',
    '\\x00',
    'ö ü ß 名前',
    '%F0%9F%8F%A0 house',
    'a'.repeat(200),
  ]) {
    const res = await get(`/v1/parcels/search?query=${encodeURIComponent(q)}`);
    t.ok(res.statusCode === 200 || res.statusCode === 400, `${q.slice(0, 20)}: ${res.statusCode}`);
  }
  t.equal(
    (await json('/v1/parcels/search?county=broward&limit=1')).body.pagination.total,
    303,
    'the table is still there',
  );
});

t.test('GET /parcels/{id}: geometry filled; 404 unknown; 400 not an integer', async (t) => {
  const { status, body } = await json('/v1/parcels/1');
  t.equal(status, 200);
  t.match(body.data, {
    id: 1,
    parcel_id: '0131320350010',
    owner_name: 'SMITH JOHN',
    site_state: 'FL',
    year_built: Number,
  });
  t.equal(JSON.parse(body.data.geometry).type, 'Polygon');
  t.equal(JSON.parse((await json('/v1/parcels/5')).body.data.geometry).type, 'MultiPolygon');
  const unmapped = (await json('/v1/parcels/15')).body.data;
  t.same(
    [unmapped.geometry, unmapped.centroid_lat, unmapped.site_address_full],
    [null, null, null],
    'unknown values are null',
  );
  t.equal((await get('/v1/parcels/99999999')).statusCode, 404);
  for (const bad of ['abc', '0', '-1', '1.5', '99999999999'])
    t.equal((await get(`/v1/parcels/${bad}`)).statusCode, 400, bad);
});

t.test(
  'GET /parcels/by-parcel-id: punctuation-insensitive; 400 without county or parcel_id; 404 no match',
  async (t) => {
    for (const form of ['01-3132-035-0010', '0131320350010', '01 3132 035 0010']) {
      const { status, body } = await json(
        `/v1/parcels/by-parcel-id?county=miami-dade&parcel_id=${encodeURIComponent(form)}`,
      );
      t.equal(status, 200, form);
      t.equal(body.data.id, 1);
      t.ok(body.data.geometry);
    }
    t.equal((await json('/v1/parcels/by-parcel-id?county=broward&parcel_id=494213BA0140')).body.data.id, 7);
    t.equal((await json('/v1/parcels/by-parcel-id?county=broward&parcel_id=494213010140')).body.data.id, 8);
    t.equal((await get('/v1/parcels/by-parcel-id?parcel_id=1')).statusCode, 400);
    t.equal((await get('/v1/parcels/by-parcel-id?county=broward')).statusCode, 400);
    t.equal((await get('/v1/parcels/by-parcel-id?county=broward&parcel_id=nope')).statusCode, 404);
    t.equal(
      (await get('/v1/parcels/by-parcel-id?county=alachua&parcel_id=123')).statusCode,
      404,
      'a real county with no data',
    );
    t.equal((await get('/v1/parcels/by-parcel-id?county=atlantis&parcel_id=123')).statusCode, 400, 'an unknown county');
  },
);

t.test('GET /parcels/{id}/sales: newest first, paged, empty for none, 404 for an unknown parcel', async (t) => {
  const { body } = await json('/v1/parcels/1/sales');
  t.same(
    body.data.map((s: { sale_date: string }) => s.sale_date),
    ['2021-03-01', '2017-11-01', '2012-02-01'],
  );
  t.same(body.pagination, { limit: 25, offset: 0, total: 3, has_more: false });
  t.same(Object.keys(body.data[0]).sort(), [
    'book',
    'county_parcel_id',
    'county_slug',
    'deed_code',
    'grantee',
    'grantor',
    'id',
    'instrument_number',
    'page',
    'qualification_code',
    'sale_date',
    'sale_price',
  ]);
  const paged = await json('/v1/parcels/1/sales?limit=1&offset=1');
  t.same(paged.body.pagination, { limit: 1, offset: 1, total: 3, has_more: true });
  t.equal(paged.body.data[0].sale_date, '2017-11-01');
  const none = (await json('/v1/parcels/4/sales')).body;
  t.same(
    [none.data, none.pagination],
    [[], { limit: 25, offset: 0, total: 0, has_more: false }],
    'a parcel without sales',
  );
  t.equal((await get('/v1/parcels/99999999/sales')).statusCode, 404);
  t.equal((await get('/v1/parcels/1/sales?limit=501')).statusCode, 400);
});

t.test('GET /sales/search: every parameter and sort; a county with no sales is an empty list', async (t) => {
  const all = await json('/v1/sales/search?limit=500');
  t.ok(all.body.pagination.total > 0);
  const dates = all.body.data.map((s: { sale_date: string }) => s.sale_date);
  t.same(dates, [...dates].sort().reverse(), 'date_newest is the default');
  const ranged = await json(
    '/v1/sales/search?county=miami-dade,broward&from=2015-01-01&to=2020-12-31&min_price=100000&max_price=800000&use_code=01&sort=price_asc&limit=500',
  );
  t.ok(ranged.body.data.length > 0);
  const prices = ranged.body.data.map((s: { sale_price: number }) => s.sale_price);
  t.same(
    prices,
    [...prices].sort((a: number, b: number) => a - b),
  );
  for (const s of ranged.body.data)
    t.ok(
      s.sale_date >= '2015-01-01' && s.sale_date <= '2020-12-31' && ['miami-dade', 'broward'].includes(s.county_slug),
    );
  for (const sort of ['date_oldest', 'price_desc'])
    t.equal((await get(`/v1/sales/search?sort=${sort}`)).statusCode, 200);
  t.same((await json('/v1/sales/search?county=alachua')).body.data, []);
  for (const [qs, message] of [
    ['sort=random', /'sort'/],
    ['from=2025-13-01', /'from'/],
    ['from=2025-02-01&to=2025-01-01', /from/],
    ['min_price=9&max_price=1', /min_price/],
    ['county=atlantis', /atlantis/],
    ['county=,', /'county'/],
    ['use_code=,', /'use_code'/],
    ['limit=0', /'limit'/],
    ['min_price=-1', /'min_price'/],
  ] as [string, RegExp][]) {
    const res = await get(`/v1/sales/search?${qs}`);
    t.equal(res.statusCode, 400, qs);
    t.match(res.json().error.message, message, qs);
  }
});
