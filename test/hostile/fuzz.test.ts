// Property-based hostile fuzz of every documented GET route (under /v1 and /api/v1) and of POST /api/mcp.
import t from 'tap';
import fc from 'fast-check';
import { buildTestApp } from '../helpers/app.ts';
import {
  MAX_URL,
  MCP_HEADERS,
  MCP_PATH,
  check,
  mcpRequest,
  operationsOf,
  reproduction,
  requestHeaders,
  restRequest,
  type Auth,
  type FuzzRequest,
} from '../../scripts/fuzz/properties.ts';

/**
 * Generous: a request over this has hung. Slow work is the cost checks' to refuse (their own tests), and a loaded
 * machine makes a request of a few hundred milliseconds take seconds.
 */
const MAX_MS = 30_000;
const REST_RUNS = 800;
const MCP_RUNS = 400;
/**
 * The suite runs one fixed seed, so that a run repeats the last (`make fuzz` explores new ones for minutes);
 * FUZZ_SEED=<the seed a failure printed> replays another.
 */
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 1;

// 1,200 requests and every MCP tool: under a minute when idle, past tap's two minutes on a loaded machine
t.setTimeout(600_000);
const { app, db, newClient, invalidate } = await buildTestApp(t);
// an enterprise client far above any per-minute limit, so the fuzz meets the routes rather than 429s
const { client, key, headers } = await newClient('enterprise');
await db.sql`UPDATE accounts.clients SET custom_rpm = 1000000000 WHERE id = ${client.id}`;
await invalidate(client.id);

const operations = operationsOf((await app.inject({ url: '/v1/openapi.json' })).json());
const listed = await app.inject({
  method: 'POST',
  url: MCP_PATH,
  headers: { ...MCP_HEADERS, ...headers },
  payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
});
const tools: { name: string }[] = listed.json().result?.tools ?? [];

/** The slowest request of the run so far, for the report. */
let slowest = { ms: 0, url: '' };
const holds = (arbitrary: fc.Arbitrary<FuzzRequest>) =>
  fc.asyncProperty(arbitrary, async (req) => {
    const started = performance.now();
    const res = await app.inject({
      method: req.method,
      url: req.url,
      headers: requestHeaders(req, key),
      payload: req.body,
    });
    const elapsed = performance.now() - started;
    if (elapsed > slowest.ms) slowest = { ms: Math.round(elapsed), url: req.url.slice(0, 120) };
    const problems = check(req, { status: res.statusCode, headers: res.headers, body: res.body }, elapsed, MAX_MS);
    if (problems.length > 0)
      throw new Error(
        `${reproduction(req)}\n-> ${res.statusCode} ${res.body.slice(0, 400)}\n- ${problems.join('\n- ')}`,
      );
  });

t.test('the fuzz reaches every documented GET operation and every MCP tool', async (t) => {
  t.ok(operations.length >= 10, `${operations.length} GET operations in the OpenAPI document`);
  t.ok(tools.length >= 10, `${tools.length} tools from tools/list`);
  const requests = fc.sample(restRequest(operations), { numRuns: REST_RUNS, seed });
  const unprefixed = requests.map((r) => r.url.replace(/^\/api\/v1/, '/v1'));
  t.ok(
    operations.every((op) => unprefixed.some((url) => url.startsWith(op.path.split('{')[0]!))),
    'every operation is requested',
  );
  t.ok(requests.some((r) => r.url.startsWith('/api/v1/')) && requests.some((r) => r.url.startsWith('/v1/')));
  t.ok(requests.every((r) => r.url.length <= MAX_URL, `every URL within ${MAX_URL} characters`));
  const bodies = fc.sample(mcpRequest(tools), { numRuns: MCP_RUNS, seed }).map((r) => r.body ?? '');
  t.ok(
    tools.every((tool) => bodies.some((b) => b.includes(`"name":"${tool.name}"`))),
    'every tool is called',
  );
});

t.test('the checks catch each kind of wrong answer', async (t) => {
  const id = 'req_0123456789abcdef01234567';
  const json = { 'content-type': 'application/json', 'x-request-id': id };
  const envelope = (message: string) => JSON.stringify({ error: { code: 'bad_request', message, request_id: id } });
  const rest = (url: string, auth: Auth = 'bearer'): FuzzRequest => ({ kind: 'rest', method: 'GET', url, auth });
  const mcp = (body: string): FuzzRequest => ({ kind: 'mcp', method: 'POST', url: MCP_PATH, body, auth: 'bearer' });
  const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}';
  // prettier-ignore
  const cases: [string, FuzzRequest, number, Record<string, string>, string, RegExp][] = [
    ['a 5xx', rest('/v1/counties'), 500, json, envelope('x'), /server error/],
    ['a bare 431', rest(`/v1/counties?q=${'a'.repeat(9000)}`), 431, {}, '', /not JSON/],
    ['a 400 outside the envelope', rest('/v1/counties?query=%ZZ'), 400, json, '{"message":"bad"}', /keys/],
    ['a request id unlike the header', rest('/v1/counties'), 400, { ...json, 'x-request-id': 'req_x' }, envelope('x'), /X-Request-Id/],
    ['a 2xx without data', rest('/v1/counties'), 200, json, '{}', /without data/],
    ['two Authorization headers served', rest('/v1/counties', 'duplicate'), 200, json, '{"data":[]}', /duplicate/],
    ['a batch answered', mcp('[{"jsonrpc":"2.0","id":1,"method":"ping"}]'), 200, json, '[{"jsonrpc":"2.0","id":1,"result":{}}]', /batch/],
    ['a validation dump', mcp(call), 200, json, JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: '[\n {\n "expected": "string"' } }), /-32603[^]*dump/],
    ['a ZodError', mcp(call), 200, json, '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"ZodError: x"}}', /ZodError/],
    ['a tool\'s own internal error', mcp(call), 200, json, '{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"Internal error; retry with backoff."}]}}', /server's own/],
    ['valid JSON called invalid', mcp('{"__proto__":{}}'), 400, json, envelope('Body is not valid JSON'), /valid JSON refused/],
    ['no answer to a request', mcp(call), 202, {}, '', /202/],
    ['too slow', rest('/v1/counties'), 200, json, '{"data":[]}', /took/],
  ];
  for (const [what, req, status, headers, body, problem] of cases) {
    const problems = check(req, { status, headers, body }, what === 'too slow' ? MAX_MS + 1 : 1, MAX_MS);
    t.match(problems.join('\n'), problem, what);
  }
  t.same(check(mcp(call), { status: 200, headers: json, body: '{"jsonrpc":"2.0","id":1,"result":{}}' }, 1, MAX_MS), []);
  t.same(check(rest('/v1/x'), { status: 404, headers: json, body: envelope('No route') }, 1, MAX_MS), []);
});

t.test(`REST: ${REST_RUNS} hostile GETs, each a 2xx with data or a 4xx in the envelope`, async (t) => {
  await fc.assert(holds(restRequest(operations)), { numRuns: REST_RUNS, seed });
  t.pass(`no violation (slowest so far ${slowest.ms} ms: ${slowest.url})`);
});

t.test(`MCP: ${MCP_RUNS} hostile POSTs, each a JSON-RPC 2.0 answer or an enveloped HTTP refusal`, async (t) => {
  await fc.assert(holds(mcpRequest(tools)), { numRuns: MCP_RUNS, seed });
  t.pass(`no violation (slowest so far ${slowest.ms} ms: ${slowest.url})`);
});
