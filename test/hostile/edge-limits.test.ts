// Cost before work at the request edge (issue 42, finding 2): a JSON body with many keys or elements is refused before
// it is parsed and stalls nothing beside it.
import t from 'tap';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { buildTestApp } from '../helpers/app.ts';
import { MAX_JSON_ENTRIES } from '../../src/http-edge.ts';

// the probes before the fix waited out several stalls of a second or more each, longer on a busy machine
t.setTimeout(240_000);
const ctx = await buildTestApp(t);
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
