// Findings 3, 4 and 7a of the second hostile campaign (issue 42): one client must not take the service from the
// others. A burst of heavy reads from one key does not starve another client's by-id read; idle connections from one
// address do not use up the process's descriptors; every MCP POST of a known key counts, even one that is not JSON.
// Timings are ratios against the same request sent alone in the same run.
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp } from '../helpers/app.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { loadConfig } from '../../src/config.ts';
import { connectionLimits } from '../../src/server.ts';
import { startApi } from '../services/graceful-helpers.ts';

const ctx = await buildTestApp(t); // a pool of 4: heavy requests hold 3 connections at most
const { app, db } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as AddressInfo).port;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** One request over its own connection (no agent): status, headers, body and how long it took. */
function request(
  path: string,
  headers: Record<string, string>,
  opts: { method?: string; body?: string; port?: number; localAddress?: string } = {},
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: opts.port ?? port,
        path,
        method: opts.method ?? 'GET',
        headers,
        agent: false,
        localAddress: opts.localAddress,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body, ms: performance.now() - started }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

t.test('finding 3: a burst of heavy reads from one key does not starve another client', async (t) => {
  const attacker = await ctx.newClient('growth');
  const victim = await ctx.newClient('growth');
  const { id } = JSON.parse((await request('/v1/parcels/search?limit=1', victim.headers)).body).data[0];
  const byId = () => request(`/v1/parcels/${id}`, victim.headers);
  const heavy = '/v1/parcels/search?limit=500&facets=county,dor_use_code,property_use_code,city,zip';
  t.equal((await request(heavy, attacker.headers)).status, 200, 'the heavy search is a valid request');

  // the same request alone, before and after the burst
  const alone: number[] = [];
  for (let i = 0; i < 7; i++) alone.push((await byId()).ms);

  // 150 concurrent heavy searches (the campaign sent 300 on a larger machine), inside the key's 300 a minute
  let peak = 0;
  let peakAdmitted = 0;
  const watch = setInterval(() => {
    peak = Math.max(peak, app.heavyGate.held);
    peakAdmitted = Math.max(peakAdmitted, app.heavyGate.running + app.heavyGate.queued);
  }, 1);
  t.teardown(() => clearInterval(watch));
  const burst = Promise.all(Array.from({ length: 150 }, () => request(heavy, attacker.headers)));
  let done = false;
  void burst.finally(() => (done = true));
  const beside: number[] = [];
  // each probe is sent while the burst is in flight
  while (!done && beside.length < 15) {
    const probe = await byId();
    t.equal(probe.status, 200);
    beside.push(probe.ms);
  }
  t.ok(beside.length > 0, `probes answered while the burst was in flight (${beside.length})`);
  const answers = await burst;
  clearInterval(watch);
  for (let i = 0; i < 7; i++) alone.push((await byId()).ms);
  const ratio = median(beside) / median(alone);
  t.comment(
    `by-id alone ${median(alone).toFixed(1)} ms, beside the burst ${median(beside).toFixed(1)} ms (x${ratio.toFixed(1)})`,
  );
  t.ok(ratio < 10, `the by-id read beside the burst was not slowed more than 10x (x${ratio.toFixed(1)})`);

  const ok = answers.filter((a) => a.status === 200).length;
  const refused = answers.filter((a) => a.status === 429);
  t.equal(ok + refused.length, 150, 'every request answered 200 or 429');
  t.ok(refused.length > 0, `requests over the key's in-flight cap refused (${refused.length} of 150)`);
  t.ok(peakAdmitted <= 15, `at most 15 (Growth's cap) admitted at once (${peakAdmitted})`);
  t.ok(peak > 0 && peak <= 3, `heavy requests held at most 3 of the 4 connections (${peak})`);
  const first = refused[0]!;
  t.equal(JSON.parse(first.body).error.code, 'rate_limited', 'in the error envelope');
  t.match(JSON.parse(first.body).error.message, /requests in flight: your plan allows 15 at a time/);
  t.equal(first.headers['retry-after'], '1');
  t.ok(first.headers['x-ratelimit-limit'] && first.headers.ratelimit, 'with the rate-limit headers');

  // a refused request is not charged (docs/metering.md): only the 200s are
  await app.flushUsage();
  const [row] = await db.sql<{ n: number }[]>`
    SELECT coalesce(sum(requests), 0)::int AS n FROM meter.usage_daily WHERE client_id = ${attacker.client.id}`;
  t.equal(row!.n, ok + 1, 'charged for its 2xx answers only');
});

t.test('finding 7a: every MCP POST of a known key counts, one that is not JSON too', async (t) => {
  const c = await ctx.newClient('mcp_starter'); // 30 a minute
  const headers = {
    ...c.headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{${'"k":1,'.repeat(10_000)}`; // cut short
  const remaining: number[] = [];
  for (let i = 0; i < 30; i++) {
    const res = await request('/api/mcp', headers, { method: 'POST', body });
    t.equal(res.status, 400, 'malformed JSON: 400');
    remaining.push(Number(res.headers['x-ratelimit-remaining']));
  }
  t.same(remaining.slice(0, 3), [29, 28, 27], 'each one counted, with the rate-limit headers');
  t.equal(remaining[29], 0);
  const valid = await request('/api/mcp', headers, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  t.equal(valid.status, 429, 'the 31st message of the minute is refused');
  t.ok(valid.headers['retry-after']);
});

/** Opens `n` TCP connections from `localAddress` and sends nothing; resolves once each is open or refused. */
async function idle(n: number, localAddress: string, toPort: number) {
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect({ host: '127.0.0.1', port: toPort, localAddress });
          s.on('error', () => {});
          s.once('connect', () => resolve(s));
          s.once('close', () => resolve(s));
        }),
    ),
  );
  return sockets;
}

/** Descriptors the API process may open beside its connections meanwhile (database, Redis, logs). */
const SLACK = 10;

t.test('finding 4: idle connections from one address cannot keep others out', async (t) => {
  const api = await startApi(t, {
    API_DATABASE_URL: db.apiUrl,
    REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:`,
    MAX_CONNECTIONS: '300',
    MAX_CONNECTIONS_PER_ADDRESS: '50',
    KEEP_ALIVE_TIMEOUT_MS: '300',
  });
  const healthz = (localAddress: string) => request('/healthz', {}, { port: api.port, localAddress });
  const sockets: net.Socket[] = [];
  t.teardown(() => sockets.forEach((s) => s.destroy()));

  // What the server holds, counted in its own descriptors: a client may believe a connection open that the kernel
  // dropped from a full accept queue, and never learn otherwise while it sends nothing.
  const descriptors = () => readdirSync(`/proc/${api.child.pid}/fd`).length;
  await healthz('127.0.0.2');
  const base = descriptors();
  /** The descriptors added since `base` once the server has taken every waiting connection (up to 30 s). */
  const settled = async (most: number) => {
    for (let i = 0; i < 300 && descriptors() - base > most; i++) await sleep(100);
    return descriptors() - base;
  };
  // 2,000 idle connections from one address: the server keeps 50 of them and closes the rest at once
  sockets.push(...(await idle(2000, '127.0.0.1', api.port)));
  const held = await settled(50 + SLACK);
  t.ok(held <= 50 + SLACK, `at most 50 connections from 127.0.0.1 kept (${held} descriptors more)`);
  t.equal((await healthz('127.0.0.2')).status, 200, 'another address is served meanwhile');

  // from many addresses, 50 each, each wave taken by the server before the next: at most MAX_CONNECTIONS in all
  for (let i = 3; i <= 9; i++) {
    sockets.push(...(await idle(50, `127.0.0.${i}`, api.port)));
    const expected = Math.min(300, 50 * (i - 1)) - SLACK;
    for (let tries = 0; tries < 100 && descriptors() - base < expected; tries++) await sleep(100);
  }
  const total = await settled(300 + SLACK);
  t.ok(total >= 300 - SLACK, `the cap was reached (${total} descriptors more)`);
  t.ok(total <= 300 + SLACK, `at most 300 connections in all (${total} descriptors more)`);
  // and a connection freed is served again
  for (const s of sockets) s.destroy();
  let served = 0;
  for (let tries = 0; tries < 50 && served === 0; tries++) {
    served = (await healthz('127.0.0.10').catch(() => ({ status: 0 }))).status === 200 ? 1 : 0;
    if (!served) await sleep(100);
  }
  t.equal(served, 1, 'once the idle connections are gone, a fresh connection is served');

  // a keep-alive connection left idle is closed by the server after KEEP_ALIVE_TIMEOUT_MS
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: api.port, path: '/healthz', agent, localAddress: '127.0.0.11' });
    req.on('socket', (s: net.Socket) => req.on('response', (res) => res.resume().on('end', () => resolve(s))));
    req.on('error', reject);
  });
  const closed = once(socket, 'close').then(() => true);
  const late = new Promise<boolean>((resolve) => setTimeout(resolve, 30_000, false).unref());
  t.ok(await Promise.race([closed, late]), 'the idle keep-alive connection was closed by the server');
});

t.test('behind a proxy, whose address every connection shares, there is no per-address cap unless one is set', (t) => {
  const limits = (env: Record<string, string>) =>
    connectionLimits(loadConfig({ ...env, API_KEY_SECRET: TEST_KEY_SECRET }));
  t.equal(limits({}).perAddress, 256, 'direct: 256 from one address');
  t.equal(limits({ TRUST_PROXY: 'false' }).perAddress, 256);
  t.equal(limits({ TRUST_PROXY: '10.0.0.0/8' }).perAddress, 0, 'behind a proxy: none');
  t.equal(limits({ TRUST_PROXY: '1', MAX_CONNECTIONS_PER_ADDRESS: '1000' }).perAddress, 1000, 'unless set');
  t.end();
});
