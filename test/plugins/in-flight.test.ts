// Requests in flight per client (src/metering/in-flight.ts) and the heavy-request gate (src/db/heavy.ts): the cap by
// plan, its 429, a slot given back however a request ends (answer, error, client gone), nothing charged for a refusal,
// and heavy requests admitted before their work.
import t from 'tap';
import http from 'node:http';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp } from '../helpers/app.ts';
import { inFlightCap } from '../../src/metering/in-flight.ts';
import { HeavyGate, heavyConnections, heavyShare } from '../../src/db/heavy.ts';

/** Requests to /held/v1/wait wait until `open()`; /held/v1/fail throws; both are metered REST routes. */
let open = () => {};
let gate = Promise.resolve();
const close = () => (gate = new Promise<void>((resolve) => (open = resolve)));
let handled = 0;
const held: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('rest'));
  app.addHook('onRequest', app.meter('rest'));
  app.addHook('onSend', app.awaitAdmission);
  app.get('/held/v1/wait', { schema: { hide: true } }, async () => {
    handled++;
    await gate;
    return { data: {} };
  });
  app.get('/held/v1/fail', { schema: { hide: true } }, async () => {
    throw new Error('boom');
  });
  app.get<{ Querystring: { limit?: number } }>(
    '/held/v1/list',
    { schema: { hide: true, querystring: { type: 'object', properties: { limit: { type: 'integer' } } } } },
    async () => {
      handled++;
      return { data: [] };
    },
  );
};

const ctx = await buildTestApp(t, {}, { plugins: [held] });
const { app, db } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as AddressInfo).port;

const charged = async (clientId: string) => {
  await app.flushUsage();
  const [row] = await db.sql<{ n: number }[]>`
    SELECT coalesce(sum(requests), 0)::int AS n FROM meter.usage_daily WHERE client_id = ${clientId}`;
  return row!.n;
};
/** Resolves once the client's in-flight set holds `n` requests. */
async function inFlight(clientId: string, n: number) {
  for (let i = 0; i < 500 && (await app.redis.zcard(`fly:${clientId}`)) !== n; i++) await sleep(10);
  return app.redis.zcard(`fly:${clientId}`);
}

t.test('the cap by plan', async (t) => {
  t.same(
    [30, 60, 150, 300, 600, 1200].map(inFlightCap),
    [2, 3, 7, 15, 30, 60],
    'Free/MCP Starter, Developer, Pro, Growth, Lead Feed, Enterprise',
  );
});

t.test('over the cap: 429 in the envelope with Retry-After and the rate-limit headers, not charged', async (t) => {
  const c = await ctx.newClient('developer'); // 60 a minute: 3 in flight
  close();
  const waiting = [1, 2, 3].map(() => app.inject({ method: 'GET', url: '/held/v1/wait', headers: c.headers }));
  t.equal(await inFlight(c.client.id, 3), 3, 'three in flight');
  const refused = await app.inject({ method: 'GET', url: '/held/v1/list', headers: c.headers });
  t.equal(refused.statusCode, 429);
  t.equal(refused.json().error.code, 'rate_limited');
  t.equal(
    refused.json().error.message,
    'Too many requests in flight: your plan allows 3 at a time; retry when one is answered.',
  );
  t.equal(refused.headers['retry-after'], '1');
  t.equal(refused.headers['x-ratelimit-limit'], '60');
  t.equal(refused.headers['x-ratelimit-remaining'], '57', 'the refusal is not counted in the minute');
  t.ok(refused.headers.ratelimit);
  const other = await ctx.newClient('developer');
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/counties', headers: other.headers })).statusCode,
    200,
    'another client is served',
  );
  open();
  t.same(
    (await Promise.all(waiting)).map((r) => r.statusCode),
    [200, 200, 200],
  );
  t.equal(await inFlight(c.client.id, 0), 0, 'every slot given back after the answers');
  t.equal(await charged(c.client.id), 3, 'the three 2xx charged, the 429 not');
});

t.test('a slot is given back on an error and when the client goes away', async (t) => {
  const c = await ctx.newClient('developer');
  const failed = await app.inject({ method: 'GET', url: '/held/v1/fail', headers: c.headers });
  t.equal(failed.statusCode, 500);
  t.equal(await inFlight(c.client.id, 0), 0, 'released after a 500');

  close();
  const req = http.get({ host: '127.0.0.1', port, path: '/held/v1/wait', headers: c.headers, agent: false });
  req.on('error', () => {});
  t.equal(await inFlight(c.client.id, 1), 1, 'in flight');
  req.destroy(); // the client goes away before the answer
  t.equal(await inFlight(c.client.id, 0), 0, 'released when the client went away, before the handler ended');
  open();
});

t.test('a heavy request over the cap is refused before its handler runs', async (t) => {
  const c = await ctx.newClient('developer');
  close();
  const waiting = [1, 2, 3].map(() => app.inject({ method: 'GET', url: '/held/v1/wait', headers: c.headers }));
  await inFlight(c.client.id, 3);
  // a light request is admitted alongside its handler; a heavy one before it
  const before = handled;
  const heavy = await app.inject({ method: 'GET', url: '/held/v1/list?limit=500', headers: c.headers });
  t.equal(heavy.statusCode, 429);
  t.equal(handled, before, 'the heavy handler never ran');
  open();
  await Promise.all(waiting);
});

t.test('heavyConnections: large pages, CSV and GeoJSON of a list hold one, facets two', async (t) => {
  const requestOf = (
    query: Record<string, unknown>,
    opts: { list?: boolean; formats?: string[]; accept?: string } = {},
  ) =>
    ({
      query,
      headers: { accept: opts.accept },
      routeOptions: {
        schema: opts.list === false ? {} : { querystring: { properties: { limit: {} } } },
        config: { formats: opts.formats },
      },
    }) as unknown as FastifyRequest;
  const of = (query: Record<string, unknown>, opts = {}) => heavyConnections(requestOf(query, opts));
  t.equal(of({ limit: '100' }), 0, 'a page of 100: light');
  t.equal(of({ limit: '101' }), 1, 'a page of 101');
  t.equal(of({ limit: 500 }), 1, 'validated (a number)');
  t.equal(of({ facets: 'county' }), 2, 'facets: the page and the facets side by side');
  t.equal(of({ format: 'csv' }, { formats: ['csv', 'geojson'] }), 1, 'CSV');
  t.equal(of({}, { formats: ['geojson'], accept: 'application/geo+json' }), 1, 'GeoJSON by Accept');
  t.equal(of({}, { formats: ['geojson'] }), 0, 'JSON of a list');
  t.equal(of({ limit: '500' }, { list: false }), 0, 'not a list (no limit parameter)');
});

t.test(
  'HeavyGate: at most `size` connections held, in arrival order; one abandoned while waiting never starts',
  async (t) => {
    t.same([1, 2, 3, 4, 9].map(heavyShare), [1, 1, 2, 3, 8], 'one connection left for light requests');
    const gate = new HeavyGate(3);
    const res = () => Object.assign(new EventEmitter(), { closed: false }) as unknown as ServerResponse;
    const started: number[] = [];
    const r = [res(), res(), res(), res(), res()];
    const needs = [2, 1, 2, 1, 5];
    r.forEach((x, i) => gate.enter(x, needs[i]!, () => started.push(i)));
    t.same(started, [0, 1], 'two start (3 connections held); the next needs 2');
    t.equal(gate.held, 3);
    t.equal(gate.queued, 3, 'the one needing 1 waits behind it: arrival order');
    r[2]!.emit('close'); // gone while waiting
    t.same(started, [0, 1], 'still full');
    r[0]!.emit('close');
    t.same(started, [0, 1, 3], 'a freed place goes to the next live one');
    r[1]!.emit('close');
    r[3]!.emit('close');
    t.same(started, [0, 1, 3, 4], 'one needing more than the gate has takes all of it');
    t.equal(gate.held, 3);
    r[4]!.emit('close');
    t.equal(gate.held, 0);
    t.equal(gate.running, 0);
    t.equal(gate.queued, 0);
  },
);
