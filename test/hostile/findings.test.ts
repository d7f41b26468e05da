// Each finding of the hostile campaign (issue 30) as a test: what an attacker sent, and what the service must answer.
import t, { type Test } from 'tap';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { buildTestApp } from '../helpers/app.ts';
import { loggableUrl } from '../../src/http-edge.ts';
import { toApiError } from '../../src/errors.ts';
import { withRole } from '../../src/db-url.ts';

const ctx = await buildTestApp(t);
const { app, db } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as AddressInfo).port;
const ENVELOPE_ID = /^req_[0-9a-f]{24}$/;

/** Sends raw bytes and returns the status, headers and body of the answer (the connection is closed after it). */
function raw(bytes: string | Buffer, timeoutMs = 3000) {
  return new Promise<{ status: number; headers: Record<string, string>; body: string; ms: number }>(
    (resolve, reject) => {
      const started = performance.now();
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        socket.destroy();
        const text = Buffer.concat(chunks).toString('latin1');
        const [head = '', ...rest] = text.split('\r\n\r\n');
        const [statusLine = '', ...lines] = head.split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines) {
          const at = line.indexOf(':');
          headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
        }
        const status = Number(statusLine.split(' ')[1]);
        if (!status) reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
        else resolve({ status, headers, body: rest.join('\r\n\r\n'), ms: performance.now() - started });
      };
      socket.on('data', (chunk) => {
        chunks.push(chunk);
        const text = Buffer.concat(chunks).toString('latin1');
        const length = /content-length: (\d+)/i.exec(text)?.[1];
        const bodyAt = text.indexOf('\r\n\r\n');
        if (length !== undefined && bodyAt >= 0 && Buffer.byteLength(text.slice(bodyAt + 4), 'latin1') >= +length) {
          finish();
        }
      });
      socket.on('end', finish);
      socket.on('error', finish);
      socket.setTimeout(timeoutMs, finish);
      socket.write(bytes);
    },
  );
}

function assertEnvelope(
  t: Test,
  res: { status: number; headers: Record<string, string>; body: string },
  status: number,
  code: string,
) {
  t.equal(res.status, status, `status ${status}`);
  t.match(res.headers['content-type'], /^application\/json/);
  const body = JSON.parse(res.body);
  t.same(Object.keys(body), ['error']);
  t.same(Object.keys(body.error).sort(), ['code', 'message', 'request_id']);
  t.equal(body.error.code, code);
  t.match(body.error.request_id, ENVELOPE_ID);
  t.equal(res.headers['x-request-id'], body.error.request_id, 'the id is in the header too');
  t.notMatch(body.error.message, /Client Error|at .*\.js|stack/, 'no internal detail');
  return body.error.message as string;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
/** How many times slower than the control a request may be on a loaded machine; a stall is a hundred times and more. */
const SLOWER = 10;
/** How long a request waits for Redis before it goes on without it (FAIL_OPEN_MS in src/plugins/metering.ts). */
const FAIL_OPEN_MS = 1000;

t.test('a 60,000-character URL is refused at once and stalls nothing', async (t) => {
  const url = `/v1/counties?x=${'a'.repeat(60_000)}`;
  const healthz = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
  const alone: number[] = [];
  const long: number[] = [];
  const beside: number[] = [];
  for (let i = 0; i < 7; i++) {
    // the control: the same probe a moment before, with nothing beside it
    alone.push((await raw(healthz)).ms);
    const [refused, probe] = await Promise.all([raw(`GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`), raw(healthz)]);
    assertEnvelope(t, refused, 400, 'bad_request');
    t.equal(probe.status, 200, 'a request beside it is answered');
    long.push(refused.ms);
    beside.push(probe.ms);
  }
  const ms = (values: number[]) => `${median(values).toFixed(1)} ms`;
  t.comment(`medians: /healthz alone ${ms(alone)}, the long URL ${ms(long)}, /healthz beside it ${ms(beside)}`);
  t.ok(median(long) < SLOWER * median(alone), `refused at once: not ${SLOWER} times slower than a /healthz alone`);
  t.ok(median(beside) < SLOWER * median(alone), `the /healthz beside it not slowed ${SLOWER} times`);
  const logged = ctx.logs.filter((l) => l.includes('/v1/counties?x=aaa'));
  t.ok(logged.length > 0 && logged.every((l) => l.length < 2000), 'the log keeps a short prefix of it');
});

t.test('the logged URL never holds a key, however it is encoded, and is cut to a bounded length', async (t) => {
  const key = `flprop_live_${'A1b2C3d4'.repeat(4)}`;
  for (const url of [
    `/v1/counties?api_key=${key}`,
    `/v1/counties?api_key=${key.replaceAll('_', '%5F')}`,
    `/v1/counties?api_key=${key.replaceAll('_', '%5f').toUpperCase()}`,
  ]) {
    t.notMatch(loggableUrl(url), /A1b2|a1b2/i, url);
  }
  const cut = loggableUrl(`/v1/x?${'y'.repeat(1020)}${key}`);
  t.notMatch(cut, /flprop_live_A1/, 'a key cut by the truncation is redacted too');
  t.match(cut, /characters\)$/);
  const res = await ctx.get(`/v1/counties?api_key=${key.replaceAll('_', '%5F')}`);
  t.equal(res.statusCode, 200);
  t.notOk(ctx.logs.join('').includes('A1b2C3d4'), 'not in the log');
});

t.test("requests Node's HTTP parser refuses are answered in the envelope", async (t) => {
  const cases: [string, string][] = [
    ['unknown method', 'FOO /v1/counties HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['control character in a header', 'GET /v1/counties HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'],
    ['NUL in the request line', 'GET /v1/cou\x00nties HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['folded header', 'GET /v1/counties HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\n\r\n'],
    [
      'Content-Length with Transfer-Encoding',
      'POST /api/mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    ['two Content-Lengths', 'POST /api/mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['bare LF line endings', 'GET /v1/counties HTTP/1.1\nHost: x\n\n'],
  ];
  for (const [what, bytes] of cases) {
    const res = await raw(bytes);
    t.test(what, async (t) => {
      assertEnvelope(t, res, 400, 'bad_request');
    });
  }
  const big = await raw(`GET /v1/counties HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70_000)}\r\n\r\n`);
  t.match(assertEnvelope(t, big, 431, 'headers_too_large'), /8192 characters/);
  const longUrl = await raw(`GET /v1/counties?q=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assertEnvelope(t, longUrl, 431, 'headers_too_large');
  const noHost = await raw('GET /v1/counties HTTP/1.1\r\n\r\n');
  t.match(assertEnvelope(t, noHost, 400, 'bad_request'), /Host header is required/);
});

t.test('a repeated Authorization or X-API-Key header is a 401, whatever the keys', async (t) => {
  const other = await ctx.newClient('growth');
  const headers = (lines: string[]) =>
    raw(`GET /v1/counties HTTP/1.1\r\nHost: x\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`);
  const one = await headers([`Authorization: Bearer ${ctx.key}`]);
  t.equal(one.status, 200, 'one header is fine');
  for (const lines of [
    [`Authorization: Bearer ${ctx.key}`, `Authorization: Bearer ${other.key}`],
    [`Authorization: Bearer ${ctx.key}`, `authorization: Bearer ${ctx.key}`],
    [`X-API-Key: ${ctx.key}`, `X-API-Key: ${ctx.key}`],
  ]) {
    const res = await headers(lines);
    t.equal(res.status, 401, lines.join(' + '));
    t.equal(JSON.parse(res.body).error.message, 'Invalid API key.');
  }
});

t.test('a malformed percent-encoding in the query string is a 400', async (t) => {
  for (const url of ['/v1/parcels/search?query=%ZZ', '/v1/parcels/search?query=abc%', '/v1/counties?x=%4']) {
    const res = await ctx.get(url);
    t.equal(res.statusCode, 400, url);
    t.match(res.json().error.message, /percent-encoding/);
  }
  t.equal((await ctx.get('/v1/parcels/search?query=SMITH%20JOHN&county=miami-dade')).statusCode, 200);
});

const mcp = (headers: Record<string, string>, payload: string | object) =>
  app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
const usageOf = async (clientId: string) => {
  await app.flushUsage();
  const [row] = await db.sql<{ n: number }[]>`
    SELECT coalesce(sum(requests), 0)::int AS n FROM meter.usage_daily WHERE client_id = ${clientId}`;
  return row!.n;
};

t.test('an MCP batch is refused, charges nothing, and takes one slot of the per-minute limit', async (t) => {
  const c = await ctx.newClient('developer');
  const call = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'list_counties', arguments: {} },
  });
  const res = await mcp(
    c.headers,
    Array.from({ length: 100 }, (_, i) => call(i + 1)),
  );
  t.equal(res.statusCode, 400);
  t.match(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: /Batches are not accepted/ } });
  t.equal(Number(res.headers['x-ratelimit-remaining']), 59, 'one slot of the Developer plan’s 60');
  t.equal(await usageOf(c.client.id), 0, 'nothing charged');
  const single = await mcp(c.headers, call(1));
  t.equal(single.statusCode, 200);
  t.equal(await usageOf(c.client.id), 1, 'one call, one credit');
});

t.test('MCP: a tools/call without a name, or with a __proto__ key, gets a clear answer', async (t) => {
  const c = await ctx.newClient('developer');
  for (const params of [{}, { name: 5 }, { name: 'list_counties', arguments: [] }, null]) {
    const res = await mcp(c.headers, { jsonrpc: '2.0', id: 7, method: 'tools/call', params });
    t.equal(res.statusCode, 200, JSON.stringify(params));
    const body = res.json();
    t.match(body, { jsonrpc: '2.0', id: 7, error: { code: -32602, message: /^Invalid params/ } });
    t.notMatch(res.body, /Zod|invalid_type|"expected"/);
  }
  const proto = await mcp(
    c.headers,
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_counties","arguments":{"__proto__":{"x":1}}}}',
  );
  t.equal(proto.statusCode, 400);
  t.match(proto.json().error.message, /__proto__/);
  const task = await mcp(c.headers, {
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: { name: 'list_counties', arguments: {}, task: { ttl: 1000 } },
  });
  t.match(task.json(), { id: 4, error: { code: -32602, message: /tasks are not supported/ } });
  t.ok(task.headers['x-ratelimit-remaining'], 'counted against the per-minute limit like every refusal');
  const notification = await mcp(c.headers, {
    jsonrpc: '2.0',
    method: 'tools/call',
    params: { name: 'list_counties' },
  });
  t.ok(notification.headers['x-ratelimit-remaining'], 'a tools/call without an id is admitted as a free message');
  const init = await mcp(c.headers, { jsonrpc: '2.0', id: 3, method: 'initialize', params: {} });
  t.match(init.json(), {
    id: 3,
    error: { code: -32602, message: /^Invalid params for initialize: 'params.protocolVersion'/ },
  });
  const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_counties","arguments":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}}`;
  const nested = await mcp(c.headers, deep);
  t.equal(nested.statusCode, 400, 'nesting 2,000 deep is refused before any recursive code sees it');
  t.match(nested.json().error.message, /deeper than 64 levels/);
  const bracketsInAString = await mcp(c.headers, {
    jsonrpc: '2.0',
    id: 9,
    method: 'tools/call',
    params: { name: 'search_parcels', arguments: { query: `${'['.repeat(100)}"\\{` } },
  });
  t.equal(bracketsInAString.statusCode, 200, 'brackets inside a string are text, not nesting');
  t.notMatch(bracketsInAString.body, /deeper than/);
  const broken = await mcp(c.headers, '{"jsonrpc":');
  t.equal(broken.statusCode, 400);
  t.match(broken.json().error.message, /not valid JSON/);
  t.equal(await usageOf(c.client.id), 0, 'nothing charged');
});

t.test(
  "MCP: a tool argument outside its list, or a NUL reaching SQL, is the client's error, not an internal one",
  async (t) => {
    const c = await ctx.newClient('developer');
    for (const sort of ['bogus', 'a\u0000b']) {
      const res = await mcp(c.headers, {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'search_parcels', arguments: { sort } },
      });
      const text = res.json().result.content[0].text as string;
      t.match(res.json().result, { isError: true });
      t.match(text, /^Invalid argument 'sort': must be one of: relevance/, JSON.stringify(sort));
    }
    const nul = toApiError(
      Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
        code: '22021',
        severity: 'ERROR',
      }),
    );
    t.match(nul, { statusCode: 400, code: 'bad_request', message: /NUL character/ });
    t.equal(await usageOf(c.client.id), 0, 'nothing charged');
  },
);

t.test('a key revoked with plain SQL is refused once the notification arrives, and from then on', async (t) => {
  const c = await ctx.newClient('growth');
  t.equal((await ctx.get('/v1/counties', c.headers)).statusCode, 200, 'cached as valid');
  const committed = Date.now();
  await db.sql`UPDATE accounts.api_keys SET status = 'revoked', revoked_at = now() WHERE id = ${c.keyId}`;
  // the notification comes milliseconds after the commit; a loaded machine may take seconds, never half a minute
  let refusedAfter = -1;
  while (refusedAfter < 0 && Date.now() - committed < 30_000) {
    if ((await ctx.get('/v1/counties', c.headers)).statusCode === 401) refusedAfter = Date.now() - committed;
  }
  t.ok(refusedAfter >= 0, `refused once the notification arrived (${refusedAfter} ms after the commit)`);
  for (let i = 0; i < 5; i++) t.equal((await ctx.get('/v1/counties', c.headers)).statusCode, 401, 'and after');
});

t.test('HEAD is a GET without its body: the same work, the same credit', async (t) => {
  const c = await ctx.newClient('growth');
  const res = await app.inject({ method: 'HEAD', url: '/v1/counties', headers: c.headers });
  t.equal(res.statusCode, 200);
  t.equal(res.body, '');
  t.ok(res.headers['x-ratelimit-remaining']);
  t.equal(await usageOf(c.client.id), 1);
});

t.test('the API role cannot write money; the meter role records only what metering writes', async (t) => {
  const c = await ctx.newClient('growth');
  const row = (n: number, extra: Record<string, unknown> = {}) => ({
    batch_id: `usage:batch:${Date.now() * 1000}-${Math.random()}`,
    client_id: c.client.id,
    key_id: c.keyId,
    mode: 'live',
    surface: 'rest',
    bucket: 'credits',
    pack_id: null,
    period: '2026-01', // a fixed day: what is checked does not depend on the date
    day: '2026-01-15',
    n,
    ...extra,
  });
  const reader = postgres(db.apiUrl, { max: 1, onnotice: () => {} });
  const meter = postgres(withRole(db.apiUrl, 'api_meter'), { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    await reader.end();
    await meter.end();
  });
  for (const call of [
    reader`SELECT meter.flush_usage(${reader.json([row(-3)] as never)})`,
    reader`SELECT accounts.touch_keys(${[c.keyId]}::uuid[], now())`,
    reader`SELECT meter.apply_trial_cap(${c.client.id}::uuid, 0)`,
    reader`INSERT INTO meter.ledger (client_id, bucket, delta, reason) VALUES (${c.client.id}, 'credits', 5, 'x')`,
  ]) {
    await t.rejects(call, { code: '42501' }, 'api_reader: permission denied');
  }
  const other = await ctx.newClient('growth');
  const forged = [
    row(-3),
    row(0),
    row(2, { batch_id: 'made-up' }),
    row(2, { key_id: other.keyId }),
    row(2, { bucket: 'test' }),
    row(2, { bucket: 'pack' }),
  ];
  const [none] = await meter`SELECT meter.flush_usage(${meter.json([...forged, row(2)] as never)}) AS n`;
  t.equal(none!.n, 2, 'only the row as metering writes it is recorded; the forged ones are refused');
  const refused = await db.sql<{ reason: string }[]>`
    SELECT reason FROM meter.refused_usage WHERE usage->>'client_id' = ${c.client.id} ORDER BY reason`;
  t.same(
    refused.map((r) => r.reason),
    [
      'bucket does not fit the mode',
      'count not positive',
      'count not positive',
      "key not the client's, or not of this mode",
      'not a metering batch',
      'pack bucket without a pack',
    ],
    'each kept with its reason, none blocking the rest',
  );
  const [ledger] = await db.sql<{ delta: number }[]>`
    SELECT coalesce(sum(delta), 0)::int AS delta FROM meter.ledger WHERE client_id = ${c.client.id} AND reason = 'usage'`;
  t.equal(ledger!.delta, -2, 'the ledger holds the genuine row only: no credit minted');
  const trial = await ctx.newClient('free', { signupAt: new Date(Date.now() - 8 * 86_400_000) });
  const [capped] = await meter`SELECT meter.apply_trial_cap(${trial.client.id}::uuid, -5000) AS delta`;
  t.equal(Number(capped!.delta), -400, 'a negative pending count is read as 0: 500 capped to 100, never more');
  await t.rejects(meter`SELECT count(*) FROM meter.ledger`, { code: '42501' }, 'api_meter reads no table');
});

t.test('/account/usage answers within the fail-open budget while Redis does not answer', async (t) => {
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  // two new apps, one whose Redis never answers and the control, whose Redis does, warmed alike by requests that need
  // no Redis; then the same request to both at the same moment
  const [down, up] = await Promise.all([
    buildTestApp(t, { REDIS_URL: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}` }, { db }),
    buildTestApp(t, {}, { db }),
  ]);
  for (const app of [down.app, up.app]) {
    for (const url of ['/healthz', '/v1/openapi.json']) t.equal((await app.inject({ url })).statusCode, 200, url);
  }
  const c = await ctx.newClient('growth');
  const timed = async (app: typeof ctx.app) => {
    const started = performance.now();
    const res = await app.inject({ method: 'GET', url: '/v1/account/usage', headers: c.headers });
    return { status: res.statusCode, ms: performance.now() - started };
  };
  const [unanswered, control] = await Promise.all([timed(down.app), timed(up.app)]);
  t.equal(unanswered.status, 200);
  t.equal(control.status, 200);
  const late = unanswered.ms - control.ms;
  t.ok(
    late < 1.4 * FAIL_OPEN_MS,
    `${late.toFixed(0)} ms later than the control (${control.ms.toFixed(0)} ms): one fail-open budget of ${FAIL_OPEN_MS} ms`,
  );
});

t.test('garbage after a valid request on one connection: the valid request gets its own answer', async (t) => {
  const res = await raw(
    `GET /v1/counties/broward HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ctx.key}\r\n\r\nFOO\x01 / HTTP/1.1\r\n\r\n`,
  );
  t.equal(res.status, 200, 'not a 400 in its place');
  t.match(JSON.parse(res.body), { data: { countySlug: 'broward' } });
});

t.test('a body sent to a path no route serves is refused before it is parsed', async (t) => {
  const deep = '['.repeat(200_000) + ']'.repeat(200_000);
  const res = await app.inject({
    method: 'POST',
    url: '/nope',
    headers: { 'content-type': 'application/json' },
    payload: deep,
  });
  t.equal(res.statusCode, 404);
  t.match(res.json().error.message, /No route for POST \/nope/);
});

t.test('/readyz says so when the usage writer cannot connect', async (t) => {
  const broken = await buildTestApp(t, { METER_DATABASE_URL: withRole(db.apiUrl, 'nobody_at_all') }, { db });
  const ready = await broken.app.inject({ url: '/readyz' });
  t.equal(ready.statusCode, 503);
  t.match(ready.json(), { status: 'unavailable', database: 'ok', meter: 'unavailable', redis: 'ok' });
});
