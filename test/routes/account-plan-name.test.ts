// /v1/account/usage keeps the interface's plan id (`free`, `developer` …) and adds `plan_name`, the name the site and
// its price list show (Free Trial …), so a client need not map ids to names; the MCP tool's summary uses the name.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { app, newClient, db } = await buildTestApp(t);
const plans = await db.sql<
  { plan: string; display_name: string; rest: boolean }[]
>`SELECT plan, display_name, rest FROM accounts.plans`;

t.test('every plan: the id as the interface has it, and the name as the site shows it', async (t) => {
  t.ok(plans.length >= 7);
  // MCP Starter has no REST (403 rest_disabled): its usage is read through MCP, below
  for (const { plan, display_name } of plans.filter((p) => p.rest)) {
    const c = await newClient(plan);
    const res = await app.inject({ url: '/v1/account/usage', headers: c.headers });
    t.equal(res.statusCode, 200, plan);
    t.match(res.json().data, { plan, plan_name: display_name }, plan);
  }
  const free = plans.find((p) => p.plan === 'free');
  t.equal(free?.display_name, 'Free Trial', "the site's name of the free plan");
});

t.test('the analyst in psql gets the same from api.get_account_usage', async (t) => {
  const c = await newClient('free');
  const [row] = await db.sql`SELECT plan, plan_name FROM api.get_account_usage(p_client_id => ${c.client.id}::uuid)`;
  t.same(row, { plan: 'free', plan_name: 'Free Trial' });
});

t.test("the MCP tool's summary names the plan as the site does", async (t) => {
  const c = await newClient('mcp_starter');
  const res = await app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: { ...c.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_account_usage', arguments: {} } },
  });
  const result = res.json().result;
  t.match(result.content[0].text, / on the MCP Starter plan; /);
  t.match(result.structuredContent.data, { plan: 'mcp_starter', plan_name: 'MCP Starter' });
});
