// The request log: answered requests of known keys reach meter.request_log through the in-memory buffer's flush, with
// status, error code and duration, the key's id (never the key) and the path without secret query values; each
// client keeps its newest 1,000 rows and none older than 30 days (the clock passed in); a flush records the rows kept
// before it started, in one call, however fast new ones arrive; reads filter by status and search; the log page shows
// the rows and refuses a bad filter with a 400.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { loggedPath, errorCodeOf } from '../../src/request-log/entry.ts';
import { RequestLog } from '../../src/request-log/plugin.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { signUp } from './helpers.ts';

const ctx = await buildTestApp(t);
const { app, db } = ctx;

interface LogRow {
  at: Date;
  key_id: string;
  key_display: string | null;
  method: string;
  path: string;
  endpoint: string | null;
  status: number;
  error_code: string | null;
  duration_ms: number;
  total: string;
}
const logOf = (clientId: string, status: string | null = null, search: string | null = null, now = new Date()) =>
  db.sql<LogRow[]>`
    SELECT * FROM site.request_log(${clientId}::uuid, ${status}, ${search}, 1000, 0, ${now})`;

t.test('loggedPath removes secret query values and keys, keeps the rest', async (t) => {
  t.equal(
    loggedPath('/v1/parcels/search?county=dade&api_key=abc123&limit=5&token=xyz&x-signature=s'),
    '/v1/parcels/search?county=dade&api_key=[REDACTED]&limit=5&token=[REDACTED]&x-signature=[REDACTED]',
  );
  t.equal(loggedPath('/v1/parcels/search?q=flprop_live_ABCDEFGH'), '/v1/parcels/search?q=[REDACTED]');
  t.equal(loggedPath('/v1/counties'), '/v1/counties');
  t.equal(errorCodeOf('{"error":{"code":"not_found","message":"x"}}'), 'not_found');
  t.equal(errorCodeOf('{"data":[]}'), null);
  t.equal(errorCodeOf(Buffer.from('{"error":{"code":"x"}}')), null);
});

t.test('requests are logged with status, error code and route; never the key or a secret value', async (t) => {
  const { client, key, keyId, headers } = await ctx.newClient('growth');
  const secret = 'hunter2-very-secret-value';
  const ok = await app.inject({ url: `/v1/counties?session_token=${secret}`, headers });
  t.equal(ok.statusCode, 200);
  const missing = await app.inject({ url: '/v1/parcels/999999999', headers });
  t.equal(missing.statusCode, 404);
  const bad = await app.inject({ url: `/v1/parcels/search?limit=0&key=${key}`, headers });
  t.equal(bad.statusCode, 400);
  const badCode = (bad.json() as { error: { code: string } }).error.code;
  await app.inject({ url: '/v1/counties' }); // no key: no account to log it in
  await app.requestLog.flush(); // after the once-a-second flush that may have taken some of them already

  const rows = await logOf(client.id);
  t.equal(rows.length, 3, 'three requests of the key');
  const [third, second, first] = rows;
  t.match(first, { method: 'GET', status: 200, error_code: null, endpoint: 'GET /v1/counties', key_id: keyId });
  t.equal(first!.path, '/v1/counties?session_token=[REDACTED]');
  t.match(second, { status: 404, error_code: 'not_found', endpoint: 'GET /v1/parcels/:id' });
  t.match(third, { status: 400, error_code: badCode });
  t.notOk(third!.path.includes(key), 'the raw key is not in the path');
  t.match(third!.path, /key=\[REDACTED\]/);
  t.ok(rows.every((r) => r.duration_ms >= 0 && r.key_display?.startsWith('flprop_live_…')));
  const [dump] = await db.sql<{ text: string }[]>`
    SELECT string_agg(l::text, ' ') AS text FROM meter.request_log l WHERE client_id = ${client.id}`;
  t.notOk(dump!.text.includes(secret), 'no secret query value stored');
  t.notOk(dump!.text.includes(key.slice(12)), 'no part of the key body stored');

  t.same(
    (await logOf(client.id, '4xx')).map((r) => r.status),
    [400, 404],
  );
  t.same(
    (await logOf(client.id, '404')).map((r) => r.status),
    [404],
  );
  t.same(
    (await logOf(client.id, '2xx')).map((r) => r.status),
    [200],
  );
  t.same(
    (await logOf(client.id, 'errors', 'NOT_FOUND')).map((r) => r.status),
    [404],
  );
  await t.rejects(logOf(client.id, 'teapot'), { code: '22023' });
});

t.test('the log keeps the newest 1,000 requests per client and nothing older than 30 days', async (t) => {
  const a = await ctx.newClient('growth');
  const b = await ctx.newClient('growth');
  const now = Date.now();
  const rowsFor = (c: typeof a, n: number, startMs: number) =>
    Array.from({ length: n }, (_, i) => ({
      client_id: c.client.id,
      key_id: c.keyId,
      at_ms: startMs + i,
      method: 'GET',
      path: `/v1/counties?i=${i}`,
      endpoint: 'GET /v1/counties',
      status: 200,
      error_code: null,
      duration_ms: 1.5,
    }));
  const record = async (rows: unknown[], at: number) =>
    (
      await db.sql<{ n: number }[]>`SELECT meter.record_requests(${db.sql.json(rows as never)}, ${new Date(at)}) AS n`
    )[0]!.n;
  t.equal(await record(rowsFor(a, 700, now - 10_000), now), 700);
  t.equal(await record([...rowsFor(a, 700, now - 5_000), ...rowsFor(b, 5, now - 5_000)], now), 705);
  const count = async (clientId: string) =>
    (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM meter.request_log WHERE client_id = ${clientId}`)[0]!
      .n;
  t.equal(await count(a.client.id), 1000, 'capped at 1,000');
  t.equal(await count(b.client.id), 5, 'another client keeps its own');
  const kept = await logOf(a.client.id);
  t.equal(kept.length, 1000);
  t.equal(kept[0]!.path, '/v1/counties?i=699', 'the newest first');
  // 1,400 written: the first call's oldest 400 (i = 0 to 399) are gone
  t.equal(kept.at(-1)!.at.getTime(), now - 10_000 + 400, 'the oldest 400 are gone');
  t.equal(kept.at(-1)!.path, '/v1/counties?i=400');
  t.equal(Number(kept[0]!.total), 1000);

  // 31 days on: nothing read, and the next flush deletes the old rows
  const later = now + 31 * 86_400_000;
  t.equal((await logOf(b.client.id, null, null, new Date(later))).length, 0, 'older than 30 days: not shown');
  t.equal((await logOf(b.client.id, null, null, new Date(now + 29 * 86_400_000))).length, 5, '29 days: shown');
  await record(rowsFor(b, 1, later), later);
  t.equal(await count(a.client.id), 0, 'older than 30 days: deleted');
  t.equal(await count(b.client.id), 1);

  // one call of 1,200 rows: 1,000 kept, every one counted per endpoint
  const c = await ctx.newClient('growth');
  t.equal(await record(rowsFor(c, 1200, later - 2000), later), 1200);
  t.equal(await count(c.client.id), 1000);
  t.equal((await logOf(c.client.id, null, null, new Date(later))).at(-1)!.path, '/v1/counties?i=200');
  const [counted] = await db.sql<{ ok: number }[]>`
    SELECT sum(ok)::int AS ok FROM meter.endpoint_usage_daily WHERE client_id = ${c.client.id}`;
  t.equal(counted!.ok, 1200);

  // a row whose key is not the client's is left out
  t.equal(await record([{ ...rowsFor(a, 1, now)[0], key_id: b.keyId }], now), 0);
});

t.test('a flush records the rows kept before it started; rows kept while it runs wait for the next', async (t) => {
  const c = await ctx.newClient('growth');
  const log = new RequestLog(app.meterSql); // the app's own log flushes on its timer: this one only when told
  const keep = (n: number) => {
    for (let i = 0; i < n; i++) {
      const request = {
        auth: { clientId: c.client.id, keyId: c.keyId },
        routeOptions: { url: '/v1/counties' },
        method: 'GET',
        url: `/v1/counties?i=${i}`,
        loggedErrorCode: null,
      } as unknown as FastifyRequest;
      log.record(request, { elapsedTime: 1.5, statusCode: 200 } as unknown as FastifyReply);
    }
  };
  keep(3);
  const first = log.flush();
  keep(2); // answered while the flush's call is in flight, as under steady load
  t.equal(await first, 3, 'one call, of the rows kept before it started');
  t.equal(log.waiting, 2, 'the newer rows wait for the next flush');
  t.equal(await log.flush(), 2);
  t.equal(log.waiting, 0);
  const [row] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM meter.request_log WHERE client_id = ${c.client.id}`;
  t.equal(row!.n, 5, 'every row recorded once');
});

t.test('the request log page lists the account requests and filters them', async (t) => {
  const { agent, clientId } = await signUp(ctx);
  const created = await agent.post('/account/keys', { mode: 'live', name: 'log page' }, { from: '/account/keys' });
  t.equal(created.statusCode, 201);
  const key = /data-raw-key>([^<]+)</.exec(created.body)![1]!;
  const headers = { authorization: `Bearer ${key}` };
  t.equal((await app.inject({ url: '/v1/counties', headers })).statusCode, 200);
  t.equal((await app.inject({ url: '/v1/parcels/search?limit=0', headers })).statusCode, 400);
  await app.requestLog.flush();
  t.equal((await logOf(clientId)).length, 2);

  const page = await agent.get('/account/requests');
  t.equal(page.statusCode, 200);
  t.match(page.body, /<code>\/v1\/counties<\/code>/);
  t.match(page.body, /log page/, 'the key name is shown');
  t.match(page.body, /\/v1\/parcels\/search\?limit=0/);
  t.notOk(page.body.includes(key), 'never the key');
  const errors = await agent.get('/account/requests?status=4xx');
  t.equal(errors.statusCode, 200);
  t.notMatch(errors.body, /<code>\/v1\/counties<\/code>/);
  t.match(errors.body, /<code>bad_request<\/code>/);
  const refused = await agent.get('/account/requests?status=teapot');
  t.equal(refused.statusCode, 400);
  t.match(refused.body, /2xx, 3xx, 4xx, 5xx/);
});
