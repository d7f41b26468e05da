// The management API: register, list, read, change, delete, rotate; bad input is a 400 naming the field; plan gates;
// free of credits but counted against the per-minute limit; secrets shown once, never stored in clear nor logged;
// one client never sees another's endpoints; the roles.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import postgres from 'postgres';
import { buildTestApp } from '../helpers/app.ts';
import { openSecret } from '../../src/webhooks/secrets.ts';
import { REFUSED_URL } from '../../src/webhooks/ssrf.ts';
import { TEST_EVENTS_PER_MINUTE } from '../../src/webhooks/test-events.ts';
import { FAST, api, receiver, settingsFor, waitFor, webhooksUrl } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db, app } = ctx;
const m = api(ctx);
const hook = await receiver(t);

const errorOf = (res: { statusCode: number; json: () => { error: { code: string; message: string } } }) => ({
  status: res.statusCode,
  ...res.json().error,
});

t.test('register, read, list, change, rotate, delete', async (t) => {
  const res = await m.post('/v1/webhooks', {
    url: hook.url,
    events: ['tax_delinquency.created', 'county.data_refreshed', 'tax_delinquency.created'],
    counties: ['Miami-Dade', 'broward'],
    description: 'lead list',
  });
  t.equal(res.statusCode, 201);
  const e = res.json().data;
  t.match(e, {
    id: /^ep_[0-9a-f]{32}$/,
    url: hook.url,
    description: 'lead list',
    events: ['county.data_refreshed', 'tax_delinquency.created'],
    counties: ['broward', 'miami-dade'],
    status: 'enabled',
    disabled_reason: null,
    beta: false,
    previous_secret_expires_at: null,
    created_at: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
  });
  t.match(e.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'a Standard Webhooks secret: whsec_ and 32 bytes in base64');
  t.equal(Buffer.from(e.secret.slice(6), 'base64').length, 32);

  const one = await m.get(`/v1/webhooks/${e.id}`);
  t.equal(one.statusCode, 200);
  const { secret: _s, ...shown } = e;
  t.same(one.json().data, shown, 'the same endpoint, without its secret');
  t.notOk('secret' in one.json().data, 'the secret is shown only once');
  t.same(
    (await m.get('/api/v1/webhooks')).json().data.map((x: { id: string }) => x.id),
    [e.id],
    'listed (under /api/v1 too)',
  );

  const patched = await m.patch(`/v1/webhooks/${e.id}`, { counties: null, description: null, status: 'disabled' });
  t.equal(patched.statusCode, 200);
  t.match(patched.json().data, {
    counties: null,
    description: null,
    status: 'disabled',
    disabled_reason: 'disabled by the client',
    events: ['county.data_refreshed', 'tax_delinquency.created'],
    url: hook.url,
  });
  const enabled = await m.patch(`/v1/webhooks/${e.id}`, { status: 'enabled', events: ['parcel.sale_recorded'] });
  t.match(enabled.json().data, { status: 'enabled', disabled_reason: null, events: ['parcel.sale_recorded'] });
  const moved = await m.patch(`/v1/webhooks/${e.id}`, { url: `${hook.url}/v2` });
  t.equal(moved.json().data.url, `${hook.url}/v2`);

  const rotated = await m.post(`/v1/webhooks/${e.id}/rotate-secret`);
  t.equal(rotated.statusCode, 200);
  const r = rotated.json().data;
  t.match(r.secret, /^whsec_/);
  t.not(r.secret, e.secret, 'a new secret');
  const overlap = Date.parse(r.previous_secret_expires_at) - Date.now();
  t.ok(overlap > 23.9 * 3600e3 && overlap <= 24 * 3600e3, 'the old secret signs alongside for 24 hours');

  // in the database: only sealed boxes, which the service's key opens
  const [row] =
    await db.sql`SELECT secret_box, old_secret_box FROM webhooks.endpoints WHERE id = ${e.id.slice(3)}::uuid`;
  const uuid = e.id.slice(3).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  const key = settingsFor(db).secretKey;
  for (const [box, secret] of [
    [row!.secret_box, r.secret],
    [row!.old_secret_box, e.secret],
  ] as [Buffer, string][]) {
    t.notOk(box.includes(Buffer.from(secret)), 'not stored in clear');
    t.notOk(box.includes(Buffer.from(secret.slice(6), 'base64')), 'nor its key bytes');
    t.equal(openSecret(key, uuid, box), secret, 'sealed under the service key');
  }
  t.throws(() => openSecret(key, '00000000-0000-0000-0000-000000000000', row!.secret_box), 'bound to its endpoint');
  t.notOk(
    ctx.logs.some((l) => l.includes(e.secret.slice(6, 30)) || l.includes(r.secret.slice(6, 30))),
    'no secret in the logs',
  );

  const del = await m.del(`/v1/webhooks/${e.id}`);
  t.equal(del.statusCode, 204);
  t.equal(del.body, '');
  t.equal((await m.get(`/v1/webhooks/${e.id}`)).statusCode, 404);
  t.equal((await m.del(`/v1/webhooks/${e.id}`)).statusCode, 404, 'deleted once');
  t.same((await m.get('/v1/webhooks')).json().data, []);
});

t.test('bad input is a 400 naming the field', async (t) => {
  const ok = { url: hook.url, events: ['tax_delinquency.created'] };
  const cases: [string, unknown, RegExp | string][] = [
    [
      'unknown event type',
      { ...ok, events: ['tax_delinquency.created', 'parcel.sold'] },
      /^events: unknown event type 'parcel\.sold'/,
    ],
    ['no event type', { ...ok, events: [] }, /events/],
    ['unknown county', { ...ok, counties: ['miami-dade', 'atlantis'] }, /^counties: unknown county 'atlantis'/],
    ['empty county list', { ...ok, counties: [] }, /^counties: give at least one county/],
    ['malformed URL', { ...ok, url: 'not a url' }, /^url: must be an absolute URL/],
    ['a URL that is not http(s)', { ...ok, url: 'ftp://example.com/x' }, /^url: must be an http/],
    ['credentials in the URL', { ...ok, url: 'http://user:pw@127.0.0.1/x' }, /^url: must not contain a user name/],
    ['a host that does not resolve', { ...ok, url: 'https://no-such-host.invalid/x' }, REFUSED_URL],
    ['a URL too long', { ...ok, url: `https://example.com/${'a'.repeat(2100)}` }, /url/],
    ['missing url', { events: ok.events }, /body 'url' is required/],
    ['an unknown field', { ...ok, secret: 'mine' }, /^body: unknown field 'secret'/],
    ['a description too long', { ...ok, description: 'x'.repeat(501) }, /description/],
    ['not an object', [ok], /body/],
    ['not JSON', '{"url":', /not valid JSON/],
  ];
  for (const [what, body, message] of cases) {
    const res = await m.post('/v1/webhooks', body);
    t.equal(res.statusCode, 400, what);
    t.match(res.json().error, { code: 'bad_request', message }, what);
  }
  t.same((await m.get('/v1/webhooks')).json().data, [], 'nothing was registered');

  // a body over 16 KB: by its declared length, and sent chunked without one
  const big = { ...ok, description: 'x', pad: 'y'.repeat(17_000) };
  t.match(errorOf(await m.post('/v1/webhooks', big)), { status: 400, message: /^body: must be at most 16384 bytes/ });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/v1/webhooks',
        headers: {
          authorization: `Bearer ${ctx.key}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
      },
      (res) => {
        let b = '';
        res.on('data', (c) => (b += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: b }));
      },
    );
    req.on('error', reject);
    const body = JSON.stringify(big);
    for (let i = 0; i < body.length; i += 1000) req.write(body.slice(i, i + 1000));
    req.end();
  });
  t.equal(chunked.status, 400, 'chunked over 16 KB');
  t.match(JSON.parse(chunked.body).error.message, /^body: must be at most 16384 bytes/);

  const e = await m.create(ok);
  const patches: [unknown, RegExp | string][] = [
    [{ status: 'paused' }, /status/],
    [{ events: ['nope'] }, /^events: unknown event type 'nope'/],
    [{ counties: ['atlantis'] }, /^counties: unknown county 'atlantis'/],
    [{ url: 'https://10.1.2.3/x' }, REFUSED_URL],
    [{ colour: 'red' }, /^body: unknown field 'colour'/],
  ];
  for (const [body, message] of patches) {
    const res = await m.patch(`/v1/webhooks/${e.id}`, body);
    t.match(errorOf(res), { status: 400, code: 'bad_request', message }, JSON.stringify(body));
  }
  t.match(
    (await m.get(`/v1/webhooks/${e.id}`)).json().data,
    { events: ['tax_delinquency.created'], status: 'enabled' },
    'unchanged',
  );

  t.match(errorOf(await m.get('/v1/webhooks/ep_123')), {
    status: 400,
    message: /path parameter 'id' must be an endpoint id/,
  });
  t.match(errorOf(await m.get(`/v1/webhooks/ep_${'0'.repeat(32)}`)), { status: 404, code: 'not_found' });
  t.match(errorOf(await m.post(`/v1/webhooks/${e.id}/deliveries/dlv_x/retry`)), {
    status: 400,
    message: /delivery_id/,
  });
  t.match(errorOf(await m.get(`/v1/webhooks/${e.id}/deliveries?limit=101`)), { status: 400, message: /limit/ });
  t.match(errorOf(await m.get(`/v1/webhooks/${e.id}/deliveries?status=lost`)), { status: 400, message: /status/ });

  // at most 10 endpoints per client
  for (let i = (await m.get('/v1/webhooks')).json().data.length; i < 10; i++) await m.create(ok);
  t.match(errorOf(await m.post('/v1/webhooks', ok)), {
    status: 400,
    message: /^too many endpoints: a client may have at most 10/,
  });
  const list = (await m.get('/v1/webhooks')).json().data;
  t.equal(list.length, 10);
  await m.del(`/v1/webhooks/${list[0].id}`);
  t.equal((await m.post('/v1/webhooks', ok)).statusCode, 201, 'a deleted endpoint frees its place');
  for (const x of (await m.get('/v1/webhooks')).json().data) await m.del(`/v1/webhooks/${x.id}`);
});

t.test('ten concurrent registrations past the limit: exactly the limit is kept', async (t) => {
  const c = await ctx.newClient('growth');
  const mc = api(ctx, c.key);
  const results = await Promise.all(
    Array.from({ length: 14 }, () => mc.post('/v1/webhooks', { url: hook.url, events: ['webhook.test'] })),
  );
  t.equal(results.filter((r) => r.statusCode === 201).length, 10);
  t.equal(results.filter((r) => r.statusCode === 400).length, 4);
});

t.test('plans: Growth, Lead Feed, Enterprise; beta on Pro; refused elsewhere, for free', async (t) => {
  for (const plan of ['growth', 'lead_feed', 'enterprise', 'pro']) {
    const c = await ctx.newClient(plan);
    const e = await api(ctx, c.key).create({ url: hook.url, events: ['webhook.test'] });
    t.equal(e.beta, plan === 'pro', `${plan}: beta ${plan === 'pro'}`);
  }
  for (const plan of ['free', 'developer']) {
    const c = await ctx.newClient(plan);
    const mc = api(ctx, c.key);
    for (const res of [
      await mc.get('/v1/webhooks'),
      await mc.post('/v1/webhooks', { url: hook.url, events: ['webhook.test'] }),
      await mc.get(`/v1/webhooks/ep_${'0'.repeat(32)}`),
    ]) {
      t.match(
        errorOf(res),
        {
          status: 403,
          code: 'feature_not_in_plan',
          message:
            /^Webhooks is not included in your plan; it is included in Growth, Lead Feed and Enterprise \(beta on Pro\)/,
        },
        plan,
      );
      t.ok(res.headers['x-ratelimit-remaining'], 'counted against the per-minute limit');
    }
    await app.flushUsage();
    const usage = (await api(ctx, c.key).get('/v1/account/usage')).json().data;
    t.equal(usage.events_count, 0, `${plan}: not charged`);
    t.equal(
      (await db.sql`SELECT count(*)::int AS n FROM webhooks.endpoints WHERE client_id = ${c.client.id}`)[0]!.n,
      0,
    );
  }
  const starter = await ctx.newClient('mcp_starter');
  t.match(errorOf(await api(ctx, starter.key).get('/v1/webhooks')), { status: 403, code: 'rest_disabled' });

  // downgraded: refused; upgraded again: the endpoints are back. (A plan change reaches a running API process as
  // the platform's auth cache learns of it, within milliseconds; the polls wait for that, not for webhooks.)
  const c = await ctx.newClient('growth');
  const mc = api(ctx, c.key);
  const e = await mc.create({ url: hook.url, events: ['webhook.test'] });
  const statusOf = (want: number, url = `/v1/webhooks/${e.id}`) =>
    waitFor(
      `HTTP ${want}`,
      async () => {
        const res = await mc.get(url);
        return res.statusCode === want ? res : null;
      },
      3000,
    );
  await c.svc.setPlan(c.client.id, 'developer');
  t.match(errorOf(await statusOf(403)), { status: 403, code: 'feature_not_in_plan' }, 'downgraded');
  await c.svc.setPlan(c.client.id, 'growth');
  t.match((await statusOf(200)).json().data, { id: e.id, status: 'enabled' }, 'upgraded again: the endpoint is back');
  await c.svc.setStatus(c.client.id, 'suspended');
  t.match(errorOf(await statusOf(401, '/v1/webhooks')), { status: 401 }, 'suspended: like every route');
});

t.test('free of credits, counted against the per-minute limit; a refused write changes nothing', async (t) => {
  const c = await ctx.newClient('growth');
  const mc = api(ctx, c.key);
  const first = await mc.get('/v1/webhooks');
  const second = await mc.post('/v1/webhooks', { url: hook.url, events: ['webhook.test'] });
  t.equal(second.statusCode, 201);
  t.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1);
  await app.flushUsage();
  t.equal((await mc.get('/v1/account/usage')).json().data.events_count, 0, 'no credit spent');

  await c.svc.setLimits(c.client.id, { rpm: 4 });
  await ctx.invalidate(c.client.id);
  let refused = null;
  for (let i = 0; i < 6 && !refused; i++) {
    const res = await mc.post('/v1/webhooks', { url: hook.url, events: ['webhook.test'] });
    if (res.statusCode === 429) refused = res;
  }
  t.ok(refused, 'past the limit: 429');
  t.match(refused!.json().error, { code: 'rate_limited' });
  const [{ n }] =
    (await db.sql`SELECT count(*)::int AS n FROM webhooks.endpoints WHERE client_id = ${c.client.id}`) as unknown as [
      { n: number },
    ];
  const listed = await db.sql`SELECT 1 FROM webhooks.endpoints WHERE client_id = ${c.client.id}`;
  t.equal(n, listed.length);
  t.ok(n <= 4, `only admitted requests registered (${n})`);
});

t.test("one client never reaches another's endpoints", async (t) => {
  const mine = await m.create({ url: hook.url, events: ['webhook.test'] });
  const other = await ctx.newClient('growth');
  const mo = api(ctx, other.key);
  for (const res of [
    await mo.get(`/v1/webhooks/${mine.id}`),
    await mo.patch(`/v1/webhooks/${mine.id}`, { status: 'disabled' }),
    await mo.post(`/v1/webhooks/${mine.id}/rotate-secret`),
    await mo.post(`/v1/webhooks/${mine.id}/test`),
    await mo.get(`/v1/webhooks/${mine.id}/deliveries`),
    await mo.del(`/v1/webhooks/${mine.id}`),
  ]) {
    t.equal(res.statusCode, 404);
  }
  t.same((await mo.get('/v1/webhooks')).json().data, []);
  t.equal((await m.get(`/v1/webhooks/${mine.id}`)).json().data.status, 'enabled', 'untouched');
});

t.test('test events: at most 5 a minute per endpoint, then 429 with Retry-After', async (t) => {
  const c = await ctx.newClient('growth');
  const mc = api(ctx, c.key);
  const [a, b] = [
    await mc.create({ url: hook.url, events: ['webhook.test'] }),
    await mc.create({ url: hook.url, events: ['webhook.test'] }),
  ];
  // the count is per fixed minute: start with most of a minute left, so that all of it lands in one window
  const second = new Date().getUTCSeconds();
  if (second > 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
  for (let i = 1; i <= TEST_EVENTS_PER_MINUTE; i++)
    t.equal((await mc.post(`/v1/webhooks/${a.id}/test`)).statusCode, 202, `test ${i}`);
  const refused = await mc.post(`/v1/webhooks/${a.id}/test`);
  t.match(errorOf(refused), {
    status: 429,
    code: 'rate_limited',
    message: /^too many test events: at most 5 a minute per endpoint; retry in \d+ s$/,
  });
  const wait = Number(refused.headers['retry-after']);
  t.ok(wait >= 1 && wait <= 60, `Retry-After: ${wait}`);
  t.ok(refused.headers['x-ratelimit-remaining'], "the per-minute limit's headers are there too");
  const [{ n }] = (await db.sql`
    SELECT count(*)::int AS n FROM webhooks.deliveries WHERE endpoint_id = ${a.id.slice(3)}::uuid`) as unknown as [
    { n: number },
  ];
  t.equal(n, TEST_EVENTS_PER_MINUTE, 'the refused one wrote nothing');
  t.equal((await mc.post(`/v1/webhooks/${b.id}/test`)).statusCode, 202, 'another endpoint has its own count');
});

t.test('roles: the API reader cannot see webhooks; api_webhooks only through its functions', async (t) => {
  const reader = postgres(db.apiUrl, { max: 1, onnotice: () => {} });
  const writer = postgres(webhooksUrl(db), { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    await reader.end();
    await writer.end();
  });
  await t.rejects(reader`SELECT * FROM webhooks.endpoints`, /permission denied/);
  await t.rejects(reader`SELECT webhooks.list_endpoints(gen_random_uuid())`, /permission denied/);
  await t.rejects(writer`SELECT secret_box FROM webhooks.endpoints`, /permission denied/);
  await t.rejects(writer`DELETE FROM webhooks.deliveries`, /permission denied/);
  await t.rejects(writer`UPDATE core.parcels SET owner_name = 'x'`, /permission denied/);
  await t.rejects(writer`SELECT * FROM accounts.api_keys`, /permission denied/);
  await t.rejects(writer`SELECT webhooks.begin_merge(1, 1::smallint, 'nal')`, /permission denied/);
  // saved searches: the workers match queued imports, and nothing else of matching is theirs to call
  await t.rejects(writer`SELECT saved.deliver_load(1)`, /permission denied/);
  await t.rejects(writer`SELECT saved.queue_load(1)`, /permission denied/);
  await t.rejects(writer`SELECT * FROM saved.queued_keys`, /permission denied/);
  const [r] = await writer`SELECT webhooks.list_endpoints(gen_random_uuid()) AS e`;
  t.same(r!.e, [], 'its own functions work');
  const [m] = await writer`SELECT load_id FROM saved.match_next()`;
  t.equal(m!.load_id, null, 'and the matching of queued imports (none queued here)');
});

t.test('the OpenAPI document lists the webhook routes', async (t) => {
  const doc = (await app.inject({ url: '/v1/openapi.json' })).json();
  for (const p of [
    '/v1/webhooks',
    '/v1/webhooks/{id}',
    '/v1/webhooks/{id}/rotate-secret',
    '/v1/webhooks/{id}/test',
    '/v1/webhooks/{id}/deliveries',
    '/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
  ]) {
    t.ok(doc.paths[p], p);
  }
  t.ok(doc.paths['/v1/webhooks'].post.responses['201'], 'create answers 201');
  t.match(doc.paths['/v1/webhooks'].post.description, /beta on Pro/);
});
