// Usage per endpoint and key over a date range, checked against an exhaustive count of the requests sent (and rows
// recorded on other days, at the range's edges); the endpoints page and its CSV; the daily usage page's range form;
// key names: given at creation, changed, shown, refused when too long, another client's key untouched.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { signUp } from './helpers.ts';

const ctx = await buildTestApp(t);
const { app, db } = ctx;

interface EndpointRow {
  endpoint: string;
  key_id: string;
  key_name: string | null;
  ok: string;
  failed: string;
}
const usageOf = (clientId: string, from: string, to: string) =>
  db.sql<EndpointRow[]>`SELECT * FROM site.endpoint_usage(${clientId}::uuid, ${from}::date, ${to}::date)`;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A signed-up account with a named live key; returns the key. */
async function namedKey(agent: Awaited<ReturnType<typeof signUp>>['agent'], name: string) {
  const res = await agent.post('/account/keys', { mode: 'live', name }, { from: '/account/keys' });
  if (res.statusCode !== 201) throw new Error(`key creation answered ${res.statusCode}`);
  return /data-raw-key>([^<]+)</.exec(res.body)![1]!;
}

t.test('per endpoint and key over a range, against an exhaustive count', async (t) => {
  const { agent, clientId } = await signUp(ctx);
  const keys = [await namedKey(agent, 'server'), await namedKey(agent, 'laptop')];
  const ids = await db.sql<{ id: string; name: string }[]>`
    SELECT id, name FROM accounts.api_keys WHERE client_id = ${clientId}`;
  const idOf = (name: string) => ids.find((k) => k.name === name)!.id;
  const calls = [
    ['/v1/counties', 'GET /v1/counties'],
    ['/v1/counties/miami-dade', 'GET /v1/counties/:county'],
    ['/v1/parcels/999999999', 'GET /v1/parcels/:id'],
    ['/v1/parcels/search?limit=0', 'GET /v1/parcels/search'],
  ] as const;
  // expected[endpoint|key] = [ok, failed], counted from the answers themselves
  const expected = new Map<string, [number, number]>();
  for (let i = 0; i < 23; i++) {
    const [url, endpoint] = calls[(i * 7) % calls.length]!;
    const k = i % 3 === 0 ? 1 : 0;
    const res = await app.inject({ url, headers: { authorization: `Bearer ${keys[k]}` } });
    const id = `${endpoint}|${idOf(k === 0 ? 'server' : 'laptop')}`;
    const counts = expected.get(id) ?? [0, 0];
    counts[res.statusCode >= 200 && res.statusCode < 300 ? 0 : 1]++;
    expected.set(id, counts);
  }
  await app.requestLog.flush();
  const [clock] = await db.sql<{ ms: number }[]>`SELECT (extract(epoch FROM now()) * 1000)::float8 AS ms`;
  const today = dayOf(clock!.ms);
  const rows = await usageOf(clientId, today, today);
  const got = new Map(rows.map((r) => [`${r.endpoint}|${r.key_id}`, [Number(r.ok), Number(r.failed)]]));
  t.same(Object.fromEntries(got), Object.fromEntries(expected), 'every endpoint and key, answered and failed, exactly');
  t.ok(
    [...expected.values()].some(([, failed]) => failed > 0),
    'failed requests among them',
  );
  t.ok(
    [...expected.values()].some(([ok]) => ok > 0),
    'answered requests among them',
  );
  t.equal(rows.find((r) => r.key_id === idOf('laptop'))?.key_name, 'laptop');

  // rows recorded on other days: inside the range at its edges, outside it just past them
  const day = 86_400_000;
  const at = (days: number) => Date.parse(`${today}T12:00:00Z`) + days * day;
  const row = (days: number) => ({
    client_id: clientId,
    key_id: idOf('server'),
    at_ms: at(days),
    method: 'GET',
    path: '/v1/counties',
    endpoint: 'GET /v1/counties',
    status: 200,
    error_code: null,
    duration_ms: 1,
  });
  await db.sql`SELECT meter.record_requests(${db.sql.json([row(-40), row(-10), row(-10), row(-9)] as never)})`;
  const sumOk = async (from: number, to: number) =>
    (await usageOf(clientId, dayOf(at(from)), dayOf(at(to))))
      .filter((r) => r.endpoint === 'GET /v1/counties' && r.key_id === idOf('server'))
      .reduce((a, r) => a + Number(r.ok), 0);
  const todays = expected.get(`GET /v1/counties|${idOf('server')}`)?.[0] ?? 0;
  t.equal(await sumOk(-10, -10), 2, 'one day');
  t.equal(await sumOk(-10, -9), 3, 'both edges included');
  t.equal(await sumOk(-39, 0), 3 + todays, 'the day before the range is not');
  t.equal(await sumOk(-40, 0), 4 + todays);
  await t.rejects(usageOf(clientId, today, dayOf(at(-1))), { code: '22023' }, 'a reversed range');
  await t.rejects(usageOf(clientId, dayOf(at(-400)), today), { code: '22023' }, 'over 366 days');

  // the page and its CSV show the same numbers
  const from = dayOf(at(-10));
  const page = await agent.get(`/account/usage/endpoints?from=${from}&to=${today}`);
  t.equal(page.statusCode, 200);
  t.match(page.body, /<code>GET \/v1\/parcels\/:id<\/code>/);
  t.match(page.body, /laptop/);
  const csv = await agent.get(`/account/usage/endpoints.csv?from=${from}&to=${today}`);
  t.equal(csv.statusCode, 200);
  t.match(csv.headers['content-disposition'], `endpoints-${from}-to-${today}.csv`);
  const lines = csv.body.trim().split('\n');
  t.equal(lines[0], 'endpoint,key_name,key,key_id,mode,ok,failed');
  const fromCsv = new Map(
    lines.slice(1).map((l) => {
      const f = l.split(',');
      return [`${f[0]}|${f[3]}`, [Number(f[5]), Number(f[6])]];
    }),
  );
  const withOlder = new Map(expected);
  const server = `GET /v1/counties|${idOf('server')}`;
  withOlder.set(server, [(expected.get(server)?.[0] ?? 0) + 3, expected.get(server)?.[1] ?? 0]);
  t.same(Object.fromEntries(fromCsv), Object.fromEntries(withOlder), 'the CSV: today and the rows from ten days ago');

  for (const bad of ['from=2026-13-01&to=2026-12-01', `from=${today}&to=${dayOf(at(-1))}`, 'from=yesterday']) {
    const refused = await agent.get(`/account/usage/endpoints?${bad}`);
    t.equal(refused.statusCode, 400, bad);
  }
});

t.test('the daily usage page takes a date range', async (t) => {
  const { agent } = await signUp(ctx);
  const page = await agent.get('/account/usage?from=2026-01-05&to=2026-03-10');
  t.equal(page.statusCode, 200);
  t.match(page.body, /name="from" value="2026-01-05"/);
  t.match(page.body, /No charged requests from 2026-01-05 to 2026-03-10/);
  t.equal((page.body.match(/<figure class="chart">/g) ?? []).length, 3, 'a chart per month of the range');
  const file = await agent.get('/account/usage.csv?from=2026-01-05&to=2026-03-10');
  t.match(file.headers['content-disposition'], 'usage-2026-01-05-to-2026-03-10.csv');
  t.equal((await agent.get('/account/usage?from=2025-01-01&to=2026-03-10')).statusCode, 400, 'over 366 days');
  t.equal((await agent.get('/account/usage.csv?from=2026-02-30&to=2026-03-10')).statusCode, 400, 'no such day');
});

t.test('key names: given at creation, changed, shown; too long refused; never on another client', async (t) => {
  const a = await signUp(ctx);
  const b = await signUp(ctx);
  await namedKey(a.agent, '  production   server ');
  const [key] = await db.sql<{ id: string; name: string }[]>`
    SELECT id, name FROM accounts.api_keys WHERE client_id = ${a.clientId}`;
  t.equal(key!.name, 'production server', 'trimmed, spaces collapsed');
  t.match((await a.agent.get('/account/keys')).body, /value="production server"/);

  const renamed = await a.agent.post(`/account/keys/${key!.id}/name`, { name: 'staging' }, { from: '/account/keys' });
  t.equal(renamed.statusCode, 303);
  t.match((await a.agent.get('/account/keys')).body, /value="staging"/);

  const long = await a.agent.post(`/account/keys/${key!.id}/name`, { name: 'x'.repeat(61) }, { from: '/account/keys' });
  t.equal(long.statusCode, 400);
  t.match(long.body, /at most 60 characters/);
  const created = await a.agent.post(
    '/account/keys',
    { mode: 'live', name: 'y'.repeat(61) },
    { from: '/account/keys' },
  );
  t.equal(created.statusCode, 400, 'a key is not created with a name too long');

  const other = await b.agent.post(`/account/keys/${key!.id}/name`, { name: 'mine now' }, { from: '/account/keys' });
  t.equal(other.statusCode, 404, "another client's key");
  const cleared = await a.agent.post(`/account/keys/${key!.id}/name`, { name: '' }, { from: '/account/keys' });
  t.equal(cleared.statusCode, 303);
  const [after] = await db.sql<{ name: string | null }[]>`SELECT name FROM accounts.api_keys WHERE id = ${key!.id}`;
  t.equal(after!.name, null, 'an empty name removes it');
  t.equal(
    (await a.agent.post('/account/keys/not-a-key/name', { name: 'x' }, { from: '/account/keys' })).statusCode,
    404,
  );
});

t.test("the accounts service (the operator CLI's) names keys with the site's rule", async (t) => {
  const { svc, client } = await ctx.newClient('growth');
  const { row } = await svc.createKey(client.id, 'live', '  ci   runner ');
  t.equal(row.name, 'ci runner');
  t.equal((await svc.createKey(client.id, 'test')).row.name, null, 'a name is optional');
  t.same(
    (await svc.listKeys(client.id)).map((k) => k.name),
    [null, 'ci runner', null],
    'listed with their names, oldest first',
  );
  await t.rejects(svc.createKey(client.id, 'live', 'z'.repeat(61)), { code: '22023' });
  t.equal((await svc.revokeKey(row.id)).name, 'ci runner');
});
