// Every tool that returns structured content declares its outputSchema (the REST answer's schema without `meta`), and
// what it returns conforms: the SDK's client validates each call below against the declared schema, and so does an
// explicit check with the same validator family.
import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildTestApp } from '../helpers/app.ts';

const ctx = await buildTestApp(t);
const { app, newClient } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const c = await newClient('growth');
const client = new Client({ name: 'tap', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${c.key}` } },
  }),
);
t.teardown(() => client.close());
const { tools } = await client.listTools();
const schemas = new Map(tools.map((tool) => [tool.name, tool.outputSchema]));

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { text: string }[] };
const ajv = new Ajv({ strict: false, allErrors: true });
async function call(t: Test, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as Result;
  t.notOk(result.isError, `${name}: ${result.content[0]?.text}`);
  const validate = ajv.compile(schemas.get(name)!);
  t.ok(validate(result.structuredContent), `${name} conforms: ${JSON.stringify(validate.errors)}`);
  return result.structuredContent!;
}

const CORE_TOOLS = [
  'list_counties',
  'get_county',
  'search_parcels',
  'get_parcel',
  'get_parcel_sales',
  'search_sales',
  'search_tax_delinquencies',
  'get_parcel_tax_delinquencies',
  'count_tax_delinquencies',
  'list_tax_delinquency_sources',
  'get_tax_delinquency_freshness',
  'get_account_usage',
];

t.test('each tool declares an object outputSchema of its structured content, without meta', async (t) => {
  for (const name of CORE_TOOLS) {
    const schema = schemas.get(name) as { type?: string; properties?: Record<string, unknown>; required?: string[] };
    t.equal(schema?.type, 'object', `${name} has an outputSchema`);
    t.ok(schema?.properties?.data, `${name}: data`);
    t.notOk(schema?.properties?.meta, `${name}: no meta (REST's envelope only)`);
    t.notOk(schema?.required?.includes('meta'));
    t.notMatch(JSON.stringify(schema), /"\$id"/, `${name}: no $id`);
  }
  const withPages = ['search_parcels', 'get_parcel_sales', 'search_sales', 'search_tax_delinquencies'];
  for (const name of withPages) t.ok((schemas.get(name)?.properties as Record<string, unknown>).pagination, name);
});

t.test('every tool call conforms to its outputSchema (the SDK client checks it too)', async (t) => {
  await call(t, 'list_counties');
  await call(t, 'get_county', { county: 'miami-dade' });
  const found = await call(t, 'search_parcels', { county: 'miami-dade', facets: 'county,dor_use_code', limit: 3 });
  t.ok((found.facets as Record<string, unknown>).county, 'facets are part of the schema too');
  const id = (found.data as { id: number }[])[0]!.id;
  await call(t, 'get_parcel', { id });
  await call(t, 'get_parcel_sales', { id });
  await call(t, 'search_sales', { limit: 5 });
  const delinquencies = await call(t, 'search_tax_delinquencies', { limit: 5 });
  const first = (delinquencies.data as { county_parcel_id: string; county_slug: string }[])[0]!;
  await call(t, 'get_parcel_tax_delinquencies', { parcel_id: first.county_parcel_id, county: first.county_slug });
  await call(t, 'count_tax_delinquencies');
  await call(t, 'list_tax_delinquency_sources');
  await call(t, 'get_tax_delinquency_freshness');
  await call(t, 'get_account_usage');
});

t.test('a structured content that breaks the schema is caught (the check can fail)', async (t) => {
  const validate = ajv.compile(schemas.get('get_account_usage')!);
  t.notOk(validate({ data: { events_count: 'many' } }));
});
