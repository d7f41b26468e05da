import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { get } = await buildTestApp(t);

t.test('GET /v1/counties lists all 67 counties alphabetically', async (t) => {
  const res = await get('/v1/counties');
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.equal(body.data.length, 67);
  const names = body.data.map((c: { countyName: string }) => c.countyName);
  t.same(
    names,
    [...names].sort((a: string, b: string) => a.localeCompare(b)),
    'alphabetical by county name',
  );
  t.match(body.meta, { request_id: /^req_[a-f0-9]+$/, dataset_status: 'live' });
  t.equal(res.headers['x-request-id'], body.meta.request_id, 'the header carries the same request id');
  for (const c of body.data) {
    t.same(
      Object.keys(c).sort(),
      [
        'countyFips',
        'countyName',
        'countySlug',
        'createdAt',
        'dorCountyNumber',
        'id',
        'lastImportAt',
        'parcelCount',
        'propertyAppraiserUrl',
        'taxCertificateSaleUrl',
        'taxCertificateVendor',
        'taxCollectorUrl',
        'updatedAt',
      ],
      `${c.countySlug} has every CountyRecord field`,
    );
  }
});

t.test('GET /v1/counties/miami-dade carries the 1997 FIPS code and revenue number 13', async (t) => {
  const res = await get('/v1/counties/miami-dade');
  t.equal(res.statusCode, 200);
  t.match(res.json().data, {
    countyName: 'Miami-Dade',
    countySlug: 'miami-dade',
    countyFips: '12086',
    dorCountyNumber: '13',
  });
});

t.test('slugs are case-insensitive and St. Johns / DeSoto follow the slug rule', async (t) => {
  for (const [slug, name, fips] of [
    ['ST-JOHNS', 'St. Johns', '12109'] as const,
    ['desoto', 'DeSoto', '12027'] as const,
    ['st-lucie', 'St. Lucie', '12111'] as const,
  ]) {
    const res = await get(`/v1/counties/${slug}`);
    t.equal(res.statusCode, 200, slug);
    t.match(res.json().data, { countyName: name, countyFips: fips });
  }
});

t.test('a county with nothing loaded has parcelCount 0 and lastImportAt null', async (t) => {
  const res = await get('/v1/counties/alachua');
  t.match(res.json().data, { parcelCount: 0, lastImportAt: null });
});

t.test('an unknown slug is 404 not_found in the envelope', async (t) => {
  const res = await get('/v1/counties/atlantis');
  t.equal(res.statusCode, 404);
  t.same(Object.keys(res.json().error).sort(), ['code', 'message', 'request_id']);
  t.equal(res.json().error.code, 'not_found');
});

t.test('a slug with characters no slug has is 400 saying what a slug is (st.johns is st-johns)', async (t) => {
  const res = await get('/v1/counties/st.johns');
  t.equal(res.statusCode, 400);
  t.match(res.json().error.message, /path parameter 'county' must be a county slug .*miami-dade/);
});

t.test('/api/v1 serves the same routes as /v1', async (t) => {
  const a = await get('/v1/counties/orange');
  const b = await get('/api/v1/counties/orange');
  t.equal(b.statusCode, 200);
  t.same(b.json().data, a.json().data);
});
