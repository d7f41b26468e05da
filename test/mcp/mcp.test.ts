// The MCP endpoint driven by the SDK's own client over HTTP against a listening app.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildTestApp } from '../helpers/app.ts';

const ctx = await buildTestApp(t);
const { app, newClient, db, invalidate } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

async function connect(key: string) {
  const client = new Client({ name: 'tap', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}
type ToolResult = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
};
const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as ToolResult;
const usage = async (key: string) =>
  (await app.inject({ url: '/v1/account/usage', headers: { authorization: `Bearer ${key}` } })).json().data;

t.test('tools/list names every tool with a description and a JSON Schema input', async (t) => {
  const c = await newClient('developer');
  const client = await connect(c.key);
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name);
  for (const name of [
    'list_counties',
    'get_county',
    'get_account_usage',
    'search_parcels',
    'get_parcel',
    'get_parcel_sales',
    'search_sales',
    'search_tax_delinquencies',
    'get_parcel_tax_delinquencies',
    'count_tax_delinquencies',
    'list_tax_delinquency_sources',
    'get_tax_delinquency_freshness',
  ]) {
    t.ok(names.includes(name), name);
  }
  for (const tool of tools) {
    t.ok(tool.description && tool.description.length > 40, `${tool.name} explains itself`);
    t.equal(tool.inputSchema.type, 'object');
  }
  t.match(client.getInstructions(), /list_counties/);
});

t.test('a tool returns the same data as REST, as structured content plus a summary', async (t) => {
  const c = await newClient('developer');
  const client = await connect(c.key);
  const rest = (await app.inject({ url: '/v1/counties/miami-dade', headers: c.headers })).json();
  const result = await callTool(client, 'get_county', { county: 'miami-dade' });
  t.notOk(result.isError);
  t.same(result.structuredContent?.data, rest.data);
  t.match(result.content[0]?.text, /Miami-Dade/);
  const all = await callTool(client, 'list_counties');
  t.equal((all.structuredContent?.data as unknown[]).length, 67);
});

t.test('delinquency tools return what REST returns for the same inputs', async (t) => {
  const c = await newClient('developer');
  const client = await connect(c.key);
  const rest = (url: string) => app.inject({ url, headers: c.headers }).then((r) => r.json());
  const D = '/v1/tax-delinquencies';
  const search = await callTool(client, 'search_tax_delinquencies', {
    county: 'miami-dade,broward',
    status: 'certificate_sold',
    sort: 'due_asc',
    limit: 4,
  });
  const restSearch = await rest(`${D}/search?county=miami-dade,broward&status=certificate_sold&sort=due_asc&limit=4`);
  t.same(search.structuredContent?.data, restSearch.data);
  t.same(search.structuredContent?.pagination, restSearch.pagination);
  t.match(search.content[0]?.text, /records match/);
  const byParcel = await callTool(client, 'get_parcel_tax_delinquencies', {
    parcel_id: '01-3132-035-0010',
    county: 'miami-dade',
  });
  const restByParcel = await rest(`${D}/by-parcel?parcel_id=01-3132-035-0010&county=miami-dade`);
  t.same(byParcel.structuredContent?.data, restByParcel.data);
  t.equal((byParcel.structuredContent?.data as unknown[]).length, 3, 'parcel 1 has three records');
  const current = await callTool(client, 'get_parcel_tax_delinquencies', { parcel_id: 'X-1', county: 'orange' });
  t.notOk(current.isError, 'a county without a feed is not an error');
  t.match(current.content[0]?.text, /No delinquency records/);
  const counts = await callTool(client, 'count_tax_delinquencies', { county: 'Palm-Beach', tax_year: 2022 });
  t.same(counts.structuredContent?.data, (await rest(`${D}/counts?county=Palm-Beach&tax_year=2022`)).data);
  const sources = await callTool(client, 'list_tax_delinquency_sources', { active: false });
  t.same(sources.structuredContent?.data, (await rest(`${D}/sources?active=false`)).data);
  const fresh = await callTool(client, 'get_tax_delinquency_freshness');
  t.same(fresh.structuredContent?.data, (await rest(`${D}/freshness`)).data);
  const missing = await callTool(client, 'get_parcel_tax_delinquencies', { county: 'miami-dade' });
  t.ok(missing.isError);
  t.match(missing.content[0]?.text, /parcel_id/, 'a missing argument is named');
  const badSort = await callTool(client, 'search_tax_delinquencies', { sort: 'cheapest' });
  t.ok(badSort.isError);
  t.match(badSort.content[0]?.text, /sort.*due_desc/);
  const badCounty = await callTool(client, 'count_tax_delinquencies', { county: 'atlantis' });
  t.ok(badCounty.isError);
  t.match(badCounty.content[0]?.text, /unknown county 'atlantis'/);
});

t.test('parcel and sale tools return what REST returns for the same inputs', async (t) => {
  const c = await newClient('developer');
  const client = await connect(c.key);
  const rest = (url: string) => app.inject({ url, headers: c.headers }).then((r) => r.json());
  const search = await callTool(client, 'search_parcels', {
    query: 'smith john',
    county: ['miami-dade', 'broward'],
    limit: 5,
    facets: 'county',
  });
  const restSearch = await rest(
    '/v1/parcels/search?query=smith%20john&county=miami-dade,broward&limit=5&facets=county',
  );
  t.same(search.structuredContent?.data, restSearch.data);
  t.same(search.structuredContent?.pagination, restSearch.pagination);
  t.same(search.structuredContent?.facets, restSearch.facets);
  t.match(search.content[0]?.text, /parcels match/);
  const byId = await callTool(client, 'get_parcel', { id: 1 });
  t.same(byId.structuredContent?.data, (await rest('/v1/parcels/1')).data);
  const byParcelId = await callTool(client, 'get_parcel', { county: 'miami-dade', parcel_id: '01-3132-035-0010' });
  t.equal((byParcelId.structuredContent?.data as { id: number }).id, 1);
  const neither = await callTool(client, 'get_parcel', {});
  t.ok(neither.isError);
  t.match(neither.content[0]?.text, /'id'/);
  const sales = await callTool(client, 'get_parcel_sales', { id: 1 });
  t.same(sales.structuredContent?.data, (await rest('/v1/parcels/1/sales')).data);
  const saleSearch = await callTool(client, 'search_sales', { county: 'broward', sort: 'price_desc', limit: 3 });
  t.same(
    saleSearch.structuredContent?.data,
    (await rest('/v1/sales/search?county=broward&sort=price_desc&limit=3')).data,
  );
  const badLimit = await callTool(client, 'search_parcels', { limit: 900 });
  t.ok(badLimit.isError);
  t.match(badLimit.content[0]?.text, /'limit'/);
  const badBox = await callTool(client, 'search_parcels', { bbox: '1,2' });
  t.ok(badBox.isError);
  t.match(badBox.content[0]?.text, /bbox/);
  const badDate = await callTool(client, 'search_sales', { from: '2025-02-30' });
  t.ok(badDate.isError);
  t.match(badDate.content[0]?.text, /'from'/);
  const badSort = await callTool(client, 'search_sales', { sort: 'random' });
  t.ok(badSort.isError, 'an unknown sort is refused');
  const unknownCounty = await callTool(client, 'search_parcels', { county: 'atlantis' });
  t.match(unknownCounty.content[0]?.text, /unknown county 'atlantis'/);
});

t.test('bad arguments are a tool error naming the argument, never an internal error', async (t) => {
  const c = await newClient('developer');
  const client = await connect(c.key);
  const bad = await callTool(client, 'get_county', { county: "x' OR 1=1 --" });
  t.ok(bad.isError);
  t.match(bad.content[0]?.text, /'county'/);
  const missing = await callTool(client, 'get_county', {});
  t.ok(missing.isError);
  t.match(missing.content[0]?.text, /county/);
  const unknown = await callTool(client, 'get_county', { county: 'atlantis' });
  t.ok(unknown.isError);
  t.match(unknown.content[0]?.text, /No county with slug 'atlantis'/);
  const noSuchTool = await callTool(client, 'drop_tables');
  t.ok(noSuchTool.isError);
  await app.flushUsage();
  t.equal((await usage(c.key)).events_count, 0, 'failed tool calls cost nothing');
});

t.test('credits are shared with REST: a REST call and a tool call both move /account/usage', async (t) => {
  const c = await newClient('pro');
  const client = await connect(c.key);
  await client.listTools();
  t.equal((await usage(c.key)).events_count, 0, 'initialize and tools/list are free');
  await app.inject({ url: '/v1/counties/orange', headers: c.headers });
  await callTool(client, 'get_county', { county: 'orange' });
  await callTool(client, 'get_account_usage');
  await app.flushUsage();
  t.equal((await usage(c.key)).events_count, 2, 'one REST request + one tool call (usage is free)');
  const [row] =
    await db.sql`SELECT sum(requests)::int AS n FROM meter.usage_daily WHERE client_id = ${c.client.id} AND surface = 'mcp'`;
  t.equal(row?.n, 1);
});

t.test('plan gating: the free trial is refused, MCP Starter works here while REST refuses it', async (t) => {
  const trial = await newClient('free');
  await t.rejects(connect(trial.key), /403|mcp_disabled|does not include the MCP endpoint/);
  const raw = await fetch(`${base}/api/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${trial.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(raw.status, 403);
  t.equal((await raw.json()).error.code, 'mcp_disabled');
  const starter = await newClient('mcp_starter');
  const client = await connect(starter.key);
  t.notOk((await callTool(client, 'get_county', { county: 'lee' })).isError);
  t.equal((await app.inject({ url: '/v1/counties/lee', headers: starter.headers })).statusCode, 403);
});

t.test('authentication failures are the same 401 body as REST', async (t) => {
  await t.rejects(connect('flprop_live_0000000000000000000000000000000X'), /401|Invalid API key/);
  const res = await fetch(`${base}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(res.status, 401);
  t.same((await res.json()).error, {
    code: 'unauthorized',
    message: 'Invalid API key.',
    request_id: res.headers.get('x-request-id'),
  });
});

t.test('an exhausted balance comes back as a tool error that says when to retry', async (t) => {
  const c = await newClient('mcp_starter');
  await db.sql`UPDATE accounts.clients SET custom_monthly_credits = 1 WHERE id = ${c.client.id}`;
  await invalidate(c.client.id);
  const client = await connect(c.key);
  t.notOk((await callTool(client, 'get_county', { county: 'polk' })).isError);
  const refused = await callTool(client, 'get_county', { county: 'polk' });
  t.ok(refused.isError);
  t.match(refused.content[0]?.text, /retry in \d+ seconds/);
});

t.test('GET on the endpoint is 405: the server is stateless', async (t) => {
  const c = await newClient('developer');
  const res = await app.inject({ method: 'GET', url: '/api/mcp', headers: c.headers });
  t.equal(res.statusCode, 405);
  t.equal(res.headers.allow, 'POST');
});
