// Cost before work at the request edge (issue 42, findings 2 and 7): a JSON body with many keys or elements is
// refused before it is parsed and stalls nothing beside it; no error repeats unbounded input; /metrics without its
// token is answered as an unknown path; every answer carries the security headers, and the docs page a policy under
// which Swagger UI still works (checked in headless Chromium, screenshot .local/screenshots/docs.png).
import t from 'tap';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { MAX_JSON_ENTRIES, MAX_PATH_SEGMENT, MAX_URL_LENGTH } from '../../src/http-edge.ts';
import { MAX_MESSAGE_LENGTH } from '../../src/errors.ts';

// the probes before the fix waited out several stalls of a second or more each, longer on a busy machine
t.setTimeout(240_000);
const TOKEN = 'm'.repeat(40);
const ctx = await buildTestApp(t, { METRICS_TOKEN: TOKEN });
const { app, db } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as AddressInfo).port;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
}

/** Sends one raw request on a connection of its own; the answer once its Content-Length has arrived. */
function raw(bytes: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('latin1');
      const bodyAt = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, bodyAt))?.[1];
      if (bodyAt < 0 || length === undefined || text.length - bodyAt - 4 < Number(length)) return;
      const ms = performance.now() - started;
      socket.destroy();
      const [statusLine = '', ...lines] = text.slice(0, bodyAt).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(bodyAt + 4), ms });
    });
    socket.on('error', fail);
    socket.on('end', () => fail(new Error('closed before a whole answer')));
    socket.write(bytes);
  });
}

const post = (path: string, headers: Record<string, string>, body: string) =>
  Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
const probe = () => raw('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const keys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
const call = (params: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`;
const usageOf = async (clientId: string) => {
  await app.flushUsage();
  const [row] = await db.sql<{ n: number }[]>`
    SELECT coalesce(sum(requests), 0)::int AS n FROM meter.usage_daily WHERE client_id = ${clientId}`;
  return row!.n;
};
const TOO_MANY = new RegExp(`more than ${MAX_JSON_ENTRIES} keys and array elements`);

/**
 * The longest a /healthz probe waited while `body` was posted and answered: one probe is always in flight, so a probe
 * waits out any stall of the event loop the body causes.
 */
async function stallBeside(body: Buffer): Promise<{ stall: number; answer: Answer }> {
  let answered = false;
  const request = raw(body).finally(() => (answered = true));
  let stall = 0;
  do stall = Math.max(stall, (await probe()).ms);
  while (!answered);
  return { stall, answer: await request };
}

t.test('MCP bodies with many keys or elements are refused before they are parsed and stall nothing', async (t) => {
  const c = await ctx.newClient('growth');
  const other = await ctx.newClient('growth');
  // the campaign's three shapes: 60,000 argument keys (857 KB), a 100,000-element array, 60,000 keys in params
  const hostile = [
    call(`{"name":"list_counties","arguments":${keys(60_000)}}`),
    call(`{"name":"list_counties","arguments":{"x":[${Array(100_000).fill(1).join(',')}]}}`),
    call(`${keys(60_000).slice(0, -1)},"name":"list_counties","arguments":{}}`),
  ];
  // The control: an ordinary call as large, with few keys (an argument the tool ignores), served and charged. Every
  // MCP call costs a probe beside it some milliseconds on a busy machine, so the hostile bodies are held to that.
  const ordinary = hostile.map((body) =>
    call(`{"name":"list_counties","arguments":{"note":"${'n'.repeat(body.length - 70)}"}}`),
  );
  const stalls = { hostile: [] as number[], ordinary: [] as number[], alone: [] as number[] };
  for (let round = 0; round < 6; round++) {
    const control = await stallBeside(post('/api/mcp', other.headers, ordinary[round % 3]!));
    t.equal(control.answer.status, 200, 'an ordinary call is served');
    const attack = await stallBeside(post('/api/mcp', c.headers, hostile[round % 3]!));
    t.equal(attack.answer.status, 400, 'a hostile one refused');
    t.match(JSON.parse(attack.answer.body), { error: { code: 'bad_request', message: TOO_MANY } });
    stalls.ordinary.push(control.stall);
    stalls.hostile.push(attack.stall);
    stalls.alone.push((await probe()).ms);
  }
  const [hostileMs, ordinaryMs, aloneMs] = [median(stalls.hostile), median(stalls.ordinary), median(stalls.alone)];
  t.ok(
    hostileMs <= 3 * ordinaryMs,
    `a /healthz probe beside a hostile body was not slowed more than 3x against one beside an ordinary call as ` +
      `large (median longest wait ${hostileMs.toFixed(1)} ms against ${ordinaryMs.toFixed(1)} ms; a probe alone ` +
      `${aloneMs.toFixed(1)} ms)`,
  );
  t.equal(await usageOf(c.client.id), 0, 'nothing charged');
});

t.test('a body within the bounds is served; one entry more is refused, on every JSON route', async (t) => {
  const c = await ctx.newClient('growth');
  // jsonrpc, id, method, params, name, arguments and x are 7 entries: the rest of the budget goes to x's elements
  const counties = (n: number) => JSON.stringify(Array.from({ length: n }, () => 'broward'));
  const within = await app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: { ...c.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: call(`{"name":"list_counties","arguments":{"x":${counties(MAX_JSON_ENTRIES - 7)}}}`),
  });
  t.equal(within.statusCode, 200, 'at the limit: served');
  t.match(within.json(), { result: { content: [{ text: /^67 counties/ }] } });
  const over = await app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: { ...c.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: call(`{"name":"list_counties","arguments":{"x":${counties(MAX_JSON_ENTRIES - 6)}}}`),
  });
  t.equal(over.statusCode, 400, 'one more: refused');
  t.match(over.json().error.message, TOO_MANY);
  const webhook = await app.inject({
    method: 'POST',
    url: '/v1/webhooks',
    headers: { ...c.headers, 'content-type': 'application/json' },
    payload: JSON.stringify({ url: 'https://example.com/hook', events: Array(MAX_JSON_ENTRIES).fill('x') }),
  });
  t.equal(webhook.statusCode, 400, 'a REST body too');
  t.match(webhook.json().error.message, TOO_MANY);
});

t.test('a URL over the limit is refused as such wherever it fails, and no error repeats what was sent', async (t) => {
  // a path segment longer than the router matches used to skip the URL check and come back whole in the 400
  const long = await raw(`GET /v1/counties/${'a'.repeat(65_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  t.equal(long.status, 400);
  t.equal(JSON.parse(long.body).error.message, `The URL is longer than ${MAX_URL_LENGTH} characters.`);
  t.ok(long.body.length < 300, `a short answer (${long.body.length} bytes)`);
  const segment = await raw(`GET /v1/counties/${'b'.repeat(MAX_PATH_SEGMENT + 1)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  t.equal(segment.status, 400);
  t.equal(JSON.parse(segment.body).error.message, `A path segment is longer than ${MAX_PATH_SEGMENT} characters.`);
  const percent = await ctx.get(`/v1/counties/%E0%A4%Az${'c'.repeat(150)}`);
  t.equal(percent.statusCode, 400);
  t.match(percent.json().error.message, /^The path has a malformed percent-encoding/);
  t.notMatch(percent.body, /ccc/, 'the path is not repeated');
  const unknown = await ctx.get(`/${'d'.repeat(MAX_URL_LENGTH - 10)}`);
  t.equal(unknown.statusCode, 404);
  t.ok(unknown.json().error.message.length <= MAX_MESSAGE_LENGTH, 'a 404 repeats a bounded part of its path');
  const c = await ctx.newClient('growth');
  const mcp = (body: string) =>
    app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { ...c.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: body,
    });
  const name = 'e'.repeat(500_000);
  const tool = await mcp(call(JSON.stringify({ name, arguments: {} })));
  t.match(tool.json(), { result: { isError: true, content: [{ text: /^Unknown tool 'eee/ }] } });
  t.ok(tool.body.length < 1000, `an unknown tool's long name is cut (${tool.body.length} bytes)`);
  const method = await mcp(JSON.stringify({ jsonrpc: '2.0', id: 2, method: name, params: { task: {} } }));
  t.match(method.json(), { id: 2, error: { code: -32602 } });
  t.ok(method.body.length < 1000, `a long method name is cut (${method.body.length} bytes)`);
});

t.test('/metrics without its token is byte for byte the 404 of an unknown path', async (t) => {
  const shape = (res: { statusCode: number; headers: Record<string, unknown>; body: string }, path: string) => {
    const headers = { ...res.headers };
    delete headers['x-request-id'];
    delete headers.date;
    return { status: res.statusCode, headers, body: res.body.replace(/req_[0-9a-f]{24}/, 'ID').replace(path, 'PATH') };
  };
  for (const method of ['GET', 'HEAD', 'POST'] as const) {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`]) {
      const headers = authorization ? { authorization } : {};
      const metrics = await app.inject({ method, url: '/metrics', headers });
      const unknown = await app.inject({ method, url: '/metricz', headers }); // as long, so the lengths match too
      t.same(shape(metrics, '/metrics'), shape(unknown, '/metricz'), `${method} ${authorization ?? 'no token'}`);
    }
  }
  const scrape = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(scrape.statusCode, 200, 'with the token: served');
});

t.test('every answer forbids sniffing and framing; the docs page has a policy of its own', async (t) => {
  const c = await ctx.newClient('growth');
  const mcpHeaders = {
    ...c.headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const answers = {
    '/healthz': await app.inject({ url: '/healthz' }),
    '/v1/openapi.json': await app.inject({ url: '/v1/openapi.json' }),
    '/docs': await app.inject({ url: '/docs' }),
    '/docs/reference': await app.inject({ url: '/docs/reference' }),
    'a docs asset': await app.inject({ url: '/docs/reference/static/swagger-ui-bundle.js' }),
    'a REST answer': await ctx.get('/v1/counties/broward'),
    'an unknown path': await app.inject({ url: '/nothing' }),
    'a refused key': await app.inject({ url: '/v1/counties', headers: { authorization: 'Bearer nope' } }),
    'a router refusal': await app.inject({ url: `/v1/counties/${'a'.repeat(300)}` }),
    'an MCP answer': await app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: mcpHeaders,
      payload: call('{"name":"list_counties","arguments":{}}'),
    }),
  };
  for (const [what, res] of Object.entries(answers)) {
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
    t.equal(res.headers['x-frame-options'], 'DENY', `${what}: no framing`);
    t.match(res.headers['content-security-policy'], "frame-ancestors 'none'", `${what}: no framing (CSP)`);
  }
  t.equal(answers['/healthz'].headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
  t.match(answers['/docs'].headers['content-security-policy'], "script-src 'self'");
  t.match(answers['/docs/reference'].headers['content-security-policy'], "script-src 'self'");
  const parserRefusal = await raw('GET /v1/counties HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n');
  t.equal(parserRefusal.status, 400);
  t.equal(parserRefusal.headers['x-content-type-options'], 'nosniff', "Node's parser refusal: nosniff too");
  const site = await app.inject({ url: '/account/login' });
  t.match(site.headers['content-security-policy'], "script-src 'self'", 'the site keeps its own policy');
});

t.test('Swagger UI works under the docs page policy in headless Chromium', async (t) => {
  const browser = await launchBrowser();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => (m.type() === 'error' ? problems.push(m.text()) : undefined));
  page.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure()?.errorText}`));
  await page.goto(`http://127.0.0.1:${port}/docs/reference`);
  await page.waitForSelector('.opblock-summary-path', { timeout: 60_000 });
  t.match(await page.textContent('.info .title'), /Florida Property/, 'the document is rendered');
  // "Try it out" on GET /v1/counties: the page calls the API (connect-src 'self'); without a key, 401
  const operation = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/v1/counties"]') });
  await operation.locator('.opblock-summary').click();
  await operation.locator('.try-out__btn').click();
  await operation.locator('.execute').click();
  const status = operation.locator('.live-responses-table .response .response-col_status');
  await status.waitFor({ timeout: 30_000 });
  t.match(await status.textContent(), /401/, 'the call is made from the page and its answer shown');
  await screenshot(page, 'docs');
  // the 401 of that call is the answer expected, not a problem of the page
  const unexpected = problems.filter((p) => !/status of 401/.test(p));
  t.same(unexpected, [], 'no script error, policy violation or failed load');
});
