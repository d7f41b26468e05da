// Server-side request forgery: outside development only public https:// targets. Loopback, private, link-local,
// cloud-metadata and multicast addresses are refused at registration and again at delivery, after DNS resolution
// (a name that resolves to loopback), and redirects are not followed.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { buildTestApp } from '../helpers/app.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { loadConfig } from '../../src/config.ts';
import { sealSecret } from '../../src/webhooks/secrets.ts';
import { addressRefusal } from '../../src/webhooks/ssrf.ts';
import { FAST, api, receiver, settingsFor, sleep, startWorker, waitFor } from './helpers.ts';

const STRICT = { ...FAST, WEBHOOK_ALLOW_LOOPBACK: 'false' };
const ctx = await buildTestApp(t, STRICT);
const { db } = ctx;
const m = api(ctx);

t.test('the setting: loopback allowed in development only, never in production', async (t) => {
  const base = { PATH: process.env.PATH, API_KEY_SECRET: TEST_KEY_SECRET };
  t.equal(loadConfig({ ...base, NODE_ENV: 'development' }).WEBHOOK_ALLOW_LOOPBACK, true, 'make run: on');
  t.equal(loadConfig({ ...base, NODE_ENV: 'test' }).WEBHOOK_ALLOW_LOOPBACK, false);
  t.equal(loadConfig({ ...base, NODE_ENV: 'production' }).WEBHOOK_ALLOW_LOOPBACK, false);
  t.throws(
    () => loadConfig({ ...base, NODE_ENV: 'production', WEBHOOK_ALLOW_LOOPBACK: 'true' }),
    /WEBHOOK_ALLOW_LOOPBACK: must not be true in production/,
  );
});

t.test('registration refuses what is not a public https:// address', async (t) => {
  const hook = await receiver(t);
  const cases: [string, RegExp][] = [
    [hook.url, /^url: must be an https:\/\/ URL$/],
    [`https://127.0.0.1:${hook.port}/hook`, /^url: 127\.0\.0\.1 is a loopback address/],
    ['https://127.1.2.3/', /loopback/],
    ['https://2130706433/', /^url: 127\.0\.0\.1 is a loopback address/],
    ['https://0x7f.1/', /loopback/],
    ['https://[::1]/', /loopback/],
    [
      `https://localhost:${hook.port}/hook`,
      /^url: localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/,
    ],
    ['https://10.1.2.3/', /^url: 10\.1\.2\.3 is a private address/],
    ['https://172.16.5.4/', /private/],
    ['https://192.168.1.1/', /private/],
    ['https://[::ffff:10.0.0.1]/', /private/],
    ['https://[fd00:ec2::254]/', /private \(unique local\)/],
    ['https://169.254.169.254/latest/meta-data/', /^url: 169\.254\.169\.254 is a link-local address \(cloud metadata/],
    ['https://[fe80::1]/', /link-local/],
    ['https://100.100.100.200/', /shared/],
    ['https://224.0.0.251/', /multicast/],
    ['https://[ff02::1]/', /multicast/],
    ['https://0.0.0.0/', /this network/],
    ['https://255.255.255.255/', /reserved/],
    [
      'https://metadata.google.internal/computeMetadata/v1/',
      /^url: (the host metadata\.google\.internal does not resolve|.*link-local)/,
    ],
  ];
  for (const [url, message] of cases) {
    const res = await m.post('/v1/webhooks', { url, events: ['webhook.test'] });
    t.equal(res.statusCode, 400, url);
    t.match(res.json().error.message, message, url);
  }
  t.same((await m.get('/v1/webhooks')).json().data, [], 'none registered');
  const ok = await m.post('/v1/webhooks', { url: 'https://8.8.8.8/hook', events: ['webhook.test'] });
  t.equal(ok.statusCode, 201, 'a public https:// address is fine');
  await m.del(`/v1/webhooks/${ok.json().data.id}`);
  t.equal(hook.requests.length, 0, 'registration never calls the URL');
});

t.test('an API process in production mode refuses 127.0.0.1', async (t) => {
  const prod = await buildTestApp(t, { ...FAST, NODE_ENV: 'production', WEBHOOK_ALLOW_LOOPBACK: '' }, { db });
  const hook = await receiver(t);
  for (const url of [hook.url, `https://127.0.0.1:${hook.port}/hook`]) {
    const res = await api(prod).post('/v1/webhooks', { url, events: ['webhook.test'] });
    t.equal(res.statusCode, 400, url);
    t.match(res.json().error.message, /^url: (must be an https:\/\/ URL|127\.0\.0\.1 is a loopback address)/);
  }
});

t.test('addresses, one by one', async (t) => {
  const strict = { allowLoopback: false };
  const dev = { allowLoopback: true };
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34'])
    t.equal(addressRefusal(a, strict), null, a);
  for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::7f00:1']) {
    t.match(addressRefusal(a, strict), /loopback/, a);
    t.equal(addressRefusal(a, dev), null, `${a} in development`);
  }
  for (const a of ['10.0.0.1', '169.254.169.254', 'fd00:ec2::254', '::ffff:a9fe:a9fe', '192.168.0.1', '198.18.0.1']) {
    t.ok(addressRefusal(a, dev), `${a}: refused even in development`);
  }
});

t.test('delivery checks again, after DNS: a target that became internal receives nothing', async (t) => {
  const hook = await receiver(t);
  const w = await startWorker(t, db, { WEBHOOK_ALLOW_LOOPBACK: 'false' });
  const key = settingsFor(db).secretKey;
  // endpoints as they would be if DNS had pointed elsewhere at registration: written directly, past the API's check
  const targets = [
    [`https://localhost:${hook.port}/hook`, /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/],
    [`https://127.0.0.1:${hook.port}/hook`, /^refused: 127\.0\.0\.1 is a loopback address$/],
    [`http://127.0.0.1:${hook.port}/hook`, /^refused: http:\/\/ targets are not allowed$/],
    ['https://169.254.169.254/latest/meta-data/', /^refused: 169\.254\.169\.254 is a link-local address/],
  ] as const;
  for (const [url, error] of targets) {
    const id = randomUUID();
    await db.sql`
      INSERT INTO webhooks.endpoints (id, client_id, url, events, secret_box)
      SELECT ${id}::uuid, k.client_id, ${url}, '{webhook.test}', ${sealSecret(key, id, 'whsec_AAAA')}
        FROM accounts.api_keys k ORDER BY k.created_at LIMIT 1`;
    const [client] = await db.sql`SELECT client_id FROM webhooks.endpoints WHERE id = ${id}::uuid`;
    await db.sql`SELECT webhooks.send_test(${client!.client_id}::uuid, ${id}::uuid)`;
    const [d] = await waitFor(url, async () => {
      const rows = await db.sql`
        SELECT d.status, a.error FROM webhooks.deliveries d JOIN webhooks.attempts a ON a.delivery_id = d.id
         WHERE d.endpoint_id = ${id}::uuid`;
      return rows.length ? rows : null;
    });
    t.equal(d!.status, 'failed', url);
    t.match(d!.error, error, url);
  }
  await sleep(200);
  t.equal(hook.requests.length, 0, 'the loopback receiver got nothing');
  await w.stop();
});

t.test('a redirect to the metadata address is not followed', async (t) => {
  const w = await startWorker(t, db, { WEBHOOK_ALLOW_LOOPBACK: 'true' });
  // the development setting lets the test register a loopback receiver; the metadata address stays refused
  const dev = await buildTestApp(t, FAST, { db });
  const r = await receiver(t, () => ({
    status: 307,
    headers: { location: 'http://169.254.169.254/latest/meta-data/' },
  }));
  const e = await api(dev).create({ url: r.url, events: ['webhook.test'] });
  await api(dev).post(`/v1/webhooks/${e.id}/test`);
  const d = await waitFor('failed', async () => {
    const x = (await api(dev).get(`/v1/webhooks/${e.id}/deliveries`)).json().data[0];
    return x?.status === 'failed' ? x : null;
  });
  t.match(d.attempts, [{ status_code: 307, error: 'HTTP 307: redirects are not followed' }]);
  t.equal(r.requests.length, 1, 'one request, to the registered URL only');
  await w.stop();
});
