// Prometheus metrics: behind METRICS_TOKEN on the API's port (a 404 to everyone else), or on METRICS_PORT; counts of
// requests by route, status and surface, refusals by reason, and latency, which move with the traffic.
import t from 'tap';
import { createServer } from 'node:net';
import { buildTestApp } from '../helpers/app.ts';
import { loadConfig } from '../../src/config.ts';

const TOKEN = 'm'.repeat(40);

/** A free port on loopback. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The value of one series in a Prometheus text answer, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

t.test('behind METRICS_TOKEN: counts move with requests and refusals; without the token a plain 404', async (t) => {
  const { app, get } = await buildTestApp(t, { METRICS_TOKEN: TOKEN });
  const scrape = async () =>
    (await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
  const ok = { route: '/v1/counties/:county', status: '200', surface: 'rest' };
  const before = await scrape();
  await get('/v1/counties/broward');
  await get('/v1/counties/lee');
  await app.inject({ method: 'GET', url: '/v1/counties/broward', headers: { authorization: 'Bearer nope' } });
  const after = await scrape();
  t.equal(sample(after, 'http_requests_total', ok) - sample(before, 'http_requests_total', ok), 2, 'two answers');
  const refused = { reason: 'unauthorized', surface: 'rest' };
  t.equal(sample(after, 'http_refusals_total', refused) - sample(before, 'http_refusals_total', refused), 1);
  t.ok(sample(after, 'http_request_duration_seconds_count', { route: ok.route }) >= 2, 'latency observed');
  t.match(after, /process_cpu_user_seconds_total/, 'the process metrics');
  for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`]) {
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
    t.equal(res.statusCode, 404, `${authorization ?? 'no token'}: as an unknown path`);
    t.equal(res.json().error.code, 'not_found');
  }
  t.notOk(after.includes(TOKEN), 'the token is never in the answer');
});

t.test('on METRICS_PORT without a token, and not served at all when neither is set', async (t) => {
  const port = await freePort();
  const { get } = await buildTestApp(t, { METRICS_PORT: String(port) });
  await get('/v1/counties/broward');
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  t.equal(res.status, 200);
  t.ok(sample(await res.text(), 'http_requests_total', { route: '/v1/counties/:county', status: '200' }) >= 1);
  t.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);
  const plain = await buildTestApp(t);
  t.equal((await plain.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
});

t.test('a token shorter than 32 characters stops the process', async (t) => {
  t.throws(() => loadConfig({ ...process.env, METRICS_TOKEN: 'short' }), /METRICS_TOKEN/);
});
