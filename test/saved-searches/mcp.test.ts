// The saved-search MCP tools over the SDK's own client: create (checked as the API checks), list, and page the matches
// an import recorded; refused on a plan without saved searches.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildTestApp } from '../helpers/app.ts';
import { importList } from './helpers.ts';

const ctx = await buildTestApp(t);
const { app, db } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

async function connect(key: string) {
  const client = new Client({ name: 'tap', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  t.teardown(() => client.close());
  return client;
}
type Result = { isError?: boolean; content: { text: string }[]; structuredContent?: Record<string, unknown> };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as Result;

t.test('create, list and page the matches', async (t) => {
  const c = await connect((await ctx.newClient('lead_feed')).key);
  const bad = await call(c, 'create_saved_search', {
    name: 'x',
    resource: 'tax_delinquencies',
    params: { min_due: -1 },
  });
  t.ok(bad.isError, 'a bad filter is refused');
  t.match(bad.content[0]!.text, "query parameter 'min_due' must be >= 0");
  const made = await call(c, 'create_saved_search', {
    name: 'holmes',
    resource: 'tax_delinquencies',
    params: { county: 'holmes', min_due: 100 },
  });
  t.notOk(made.isError, made.content[0]?.text ?? 'created');
  const id = (made.structuredContent!.data as { id: string }).id;
  const list = await call(c, 'list_saved_searches');
  t.same(
    (list.structuredContent!.data as { id: string }[]).map((s) => s.id),
    [id],
  );
  await importList(
    db,
    'holmes',
    2031,
    Array.from({ length: 12 }, (_, i) => ({ parcel: `M-${i}`, due: 50 + i * 10 })),
  );
  const first = await call(c, 'get_saved_search_matches', { id, limit: 5 });
  const rest = await call(c, 'get_saved_search_matches', {
    id,
    since: first.structuredContent!.next_cursor,
    limit: 100,
  });
  const parcels = [first, rest].flatMap((r) =>
    (r.structuredContent!.data as { record: { county_parcel_id: string } }[]).map((m) => m.record.county_parcel_id),
  );
  t.same(parcels, ['M-5', 'M-6', 'M-7', 'M-8', 'M-9', 'M-10', 'M-11'], 'due >= 100, each once, in order');
});

t.test('refused on a plan without saved searches', async (t) => {
  const c = await connect((await ctx.newClient('developer')).key);
  const res = await call(c, 'list_saved_searches');
  t.ok(res.isError);
  t.match(res.content[0]!.text, /Saved searches is not included in your plan/);
});
