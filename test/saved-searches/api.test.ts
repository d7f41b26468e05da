// The saved-search API: create, read, list, change, delete; params refused with the search endpoint's own message;
// plan gates (403 elsewhere, beta on Pro) and the per-plan limit; management free of credits; matches paged by a
// cursor (1 credit a page) in JSON and CSV; one client never sees another's.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api } from '../webhooks/helpers.ts';
import { importList } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const lead = await ctx.newClient('lead_feed');
const m = api(ctx, lead.key);
const errorOf = (res: { statusCode: number; json: () => { error: { code: string; message: string } } }) => ({
  status: res.statusCode,
  code: res.json().error.code,
  message: res.json().error.message,
});
/** The client's charged requests so far (GET /v1/account/usage is itself free). */
const charged = async (key: string) => {
  await ctx.app.flushUsage();
  return (await api(ctx, key).get('/v1/account/usage')).json().data.events_count as number;
};

t.test('create, read, list, change, delete', async (t) => {
  const endpoint = await m.create({ url: 'http://127.0.0.1:9/hook', events: ['county.data_refreshed'] });
  const res = await m.post('/v1/saved-searches', {
    name: 'Newly delinquent, two counties, over $3,000',
    resource: 'tax_delinquencies',
    params: { county: ['broward', 'palm-beach'], min_due: 3000, status: 'delinquent', limit: 5, sort: 'due_asc' },
    deliver: { webhook_endpoints: [endpoint.id], email: 'daily' },
  });
  t.equal(res.statusCode, 201, res.body);
  const s = res.json().data;
  t.match(s, {
    id: /^ss_[0-9a-f]{32}$/,
    resource: 'tax_delinquencies',
    params: { county: 'broward,palm-beach', min_due: '3000', status: 'delinquent' },
    deliver: { webhook_endpoints: [endpoint.id], email: 'daily' },
    match_count: 0,
    last_matched_at: null,
    beta: false,
  });
  t.notOk('limit' in s.params || 'sort' in s.params, 'paging and sort are not filters: not kept');
  t.same((await m.get(`/v1/saved-searches/${s.id}`)).json().data, s, 'read back');
  t.same(
    (await m.get('/v1/saved-searches')).json().data.map((x: { id: string }) => x.id),
    [s.id],
    'listed',
  );
  const changed = await m.patch(`/v1/saved-searches/${s.id}`, {
    name: 'renamed',
    params: { county: 'broward', min_due: 5000 },
    deliver: { email: null },
  });
  t.equal(changed.statusCode, 200, changed.body);
  t.match(changed.json().data, {
    name: 'renamed',
    params: { county: 'broward', min_due: '5000' },
    deliver: { webhook_endpoints: [endpoint.id], email: null },
  });
  const other = await ctx.newClient('lead_feed');
  t.equal((await api(ctx, other.key).get(`/v1/saved-searches/${s.id}`)).statusCode, 404, "another client's: 404");
  t.equal((await api(ctx, other.key).del(`/v1/saved-searches/${s.id}`)).statusCode, 404);
  t.equal((await m.del(`/v1/saved-searches/${s.id}`)).statusCode, 204);
  t.equal((await m.get(`/v1/saved-searches/${s.id}`)).statusCode, 404, 'deleted');
  t.equal((await m.get('/v1/saved-searches/ss_nothex')).statusCode, 400, 'a malformed id: 400');
  t.equal(await charged(lead.key), 0, 'management costs no credit');
});

t.test("params are refused with the search endpoint's own message", async (t) => {
  const cases: [string, Record<string, string>][] = [
    ['tax_delinquencies', { min_due: '-1' }],
    ['tax_delinquencies', { min_due: '5000', max_due: '10' }],
    ['tax_delinquencies', { county: 'atlantis' }],
    ['tax_delinquencies', { tax_year: '1700' }],
    ['tax_delinquencies', { owner: '***' }],
    ['tax_delinquencies', { min_due: 'Infinity' }],
    ['parcels', { near: '26.1' }],
    ['parcels', { near: '26.1,-80.1' }],
    ['parcels', { just_value_min: '10', just_value_max: '1' }],
    ['parcels', { zip: 'abc' }],
    ['parcels', { query: '!!!' }],
  ];
  for (const [resource, params] of cases) {
    const path = resource === 'parcels' ? 'parcels' : 'tax-delinquencies';
    const search = await ctx.get(`/v1/${path}/search?${new URLSearchParams(params)}`);
    const saved = await m.post('/v1/saved-searches', { name: 'x', resource, params });
    t.equal(search.statusCode, 400, `${resource} ${JSON.stringify(params)}: the search refuses it`);
    t.same(errorOf(saved), errorOf(search), `${resource} ${JSON.stringify(params)}: refused the same way`);
  }
  t.match(errorOf(await m.post('/v1/saved-searches', { name: 'x', resource: 'parcels', params: { ownr: 'x' } })), {
    status: 400,
    message: /^params: unknown parameter 'ownr' \(the filters are query, county/,
  });
  t.match(
    errorOf(
      await m.post('/v1/saved-searches', {
        name: 'x',
        resource: 'parcels',
        params: {},
        deliver: { webhook_endpoints: [`ep_${'0'.repeat(32)}`] },
      }),
    ),
    { status: 400, message: /^deliver.webhook_endpoints: no webhook endpoint 'ep_0{32}'/ },
  );
  t.equal((await m.post('/v1/saved-searches', { name: 'x', resource: 'sales', params: {} })).statusCode, 400);
  t.equal((await m.post('/v1/saved-searches', '{"name":')).statusCode, 400, 'bad JSON');
  t.equal(
    (await m.post('/v1/saved-searches', { name: 'x', resource: 'parcels', params: {}, extra: 1 })).statusCode,
    400,
  );
});

t.test('plan gates and limits', async (t) => {
  for (const plan of ['free', 'developer', 'mcp_starter']) {
    const c = await ctx.newClient(plan);
    if (plan === 'mcp_starter') continue; // no REST at all
    const res = await api(ctx, c.key).post('/v1/saved-searches', { name: 'x', resource: 'parcels', params: {} });
    t.match(errorOf(res), { status: 403, code: 'feature_not_in_plan', message: /^Saved searches is not included/ });
    t.equal((await api(ctx, c.key).get('/v1/saved-searches')).statusCode, 403);
  }
  const pro = await ctx.newClient('pro');
  const p = api(ctx, pro.key);
  for (let i = 0; i < 5; i++) {
    const res = await p.post('/v1/saved-searches', { name: `p${i}`, resource: 'parcels', params: { county: 'gulf' } });
    t.equal(res.statusCode, 201);
    t.equal(res.json().data.beta, true, 'a beta on Pro');
  }
  t.match(errorOf(await p.post('/v1/saved-searches', { name: 'p6', resource: 'parcels', params: {} })), {
    status: 400,
    message: 'too many saved searches: your plan allows 5; delete one first',
  });
  const growth = api(ctx, (await ctx.newClient('growth')).key);
  const made = [];
  for (let round = 0; round < 10; round++) {
    // three at a time: concurrent creations, within the in-flight cap
    made.push(
      ...(await Promise.all(
        [0, 1, 2].map((i) =>
          growth.post('/v1/saved-searches', { name: `g${round}-${i}`, resource: 'parcels', params: {} }),
        ),
      )),
    );
  }
  const codes = made.map((r) => r.statusCode).sort();
  t.equal(codes.filter((c) => c === 201).length, 25, `Growth: 25, also under concurrent requests (${codes.join(' ')})`);
  t.equal(codes.filter((c) => c === 400).length, 5, 'the rest refused');
});

t.test('matches: a cursor that never skips or repeats, 1 credit a page, CSV', async (t) => {
  const res = await m.post('/v1/saved-searches', {
    name: 'gulf',
    resource: 'tax_delinquencies',
    params: { county: 'gulf' },
  });
  const id = res.json().data.id as string;
  const first = await m.get(`/v1/saved-searches/${id}/matches`);
  t.same(first.json().data, [], 'nothing before an import');
  t.equal(first.json().next_cursor, '0');
  await importList(
    db,
    'gulf',
    2030,
    Array.from({ length: 23 }, (_, i) => ({ parcel: `P-${i}`, due: 100 + i })),
  );
  const before = await charged(lead.key);
  const seen: string[] = [];
  let cursor = '0';
  let pages = 0;
  for (;;) {
    const page = await m.get(`/v1/saved-searches/${id}/matches?since=${cursor}&limit=5`);
    t.equal(page.statusCode, 200);
    const body = page.json();
    pages++;
    for (const x of body.data) seen.push(x.record.county_parcel_id);
    cursor = body.next_cursor;
    if (!body.has_more) break;
  }
  t.equal(pages, 5, '23 matches in pages of 5');
  t.same([...seen].sort(), Array.from({ length: 23 }, (_, i) => `P-${i}`).sort(), 'each once');
  t.equal(await charged(lead.key), before + 5, '1 credit a page');
  t.equal(
    (await m.get(`/v1/saved-searches/${id}/matches?since=${cursor}`)).json().data.length,
    0,
    'none after the last',
  );
  const csv = await m.get(`/v1/saved-searches/${id}/matches?limit=3&format=csv`);
  t.equal(csv.statusCode, 200);
  t.match(csv.headers['content-type'], /^text\/csv/);
  const lines = csv.body.trim().split('\r\n');
  t.match(lines[0], /^cursor,matched_at,id,county_slug,county_parcel_id,tax_year,status/);
  t.equal(lines.length, 4, 'a header and 3 records');
  t.ok(csv.headers['x-next-cursor'], 'the next cursor in a header');
  t.equal((await m.get(`/v1/saved-searches/${id}/matches?since=-1`)).statusCode, 400);
});
