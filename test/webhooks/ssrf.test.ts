// Server-side request forgery: only public https:// targets unless WEBHOOK_ALLOW_LOOPBACK is set. Loopback, private,
// link-local, cloud-metadata and multicast addresses, and IPv6 forms that stand for them, are refused at registration
// and again at delivery, after DNS resolution (a name that resolves to loopback), with one message that says nothing
// of what a name resolves to; redirects are not followed.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { buildTestApp } from '../helpers/app.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { loadConfig } from '../../src/config.ts';
import { sealSecret } from '../../src/webhooks/secrets.ts';
import { LOOPBACK_WARNING } from '../../src/webhooks/settings.ts';
import { REFUSED_ATTEMPT, REFUSED_URL, addressRefusal } from '../../src/webhooks/ssrf.ts';
import { FAST, api, receiver, settingsFor, sleep, startWorker, waitFor } from './helpers.ts';

const STRICT = { ...FAST, WEBHOOK_ALLOW_LOOPBACK: 'false' };
const ctx = await buildTestApp(t, STRICT);
const { db } = ctx;
const m = api(ctx);

t.test('the setting: loopback allowed only when asked for, never in production; a warning at start', async (t) => {
  const base = { PATH: process.env.PATH, API_KEY_SECRET: TEST_KEY_SECRET };
  for (const NODE_ENV of [undefined, 'development', 'test', 'production']) {
    const env = NODE_ENV ? { ...base, NODE_ENV } : base;
    t.equal(loadConfig(env).WEBHOOK_ALLOW_LOOPBACK, false, `NODE_ENV ${NODE_ENV ?? 'unset'}: off`);
  }
  t.equal(loadConfig({ ...base, WEBHOOK_ALLOW_LOOPBACK: 'true' }).WEBHOOK_ALLOW_LOOPBACK, true, 'make run sets it');
  t.throws(
    () => loadConfig({ ...base, NODE_ENV: 'production', WEBHOOK_ALLOW_LOOPBACK: 'true' }),
    /WEBHOOK_ALLOW_LOOPBACK: must not be true in production/,
  );
  const warned = (logs: string[]) => logs.some((l) => l.includes('"level":40') && l.includes(LOOPBACK_WARNING));
  t.notOk(warned(ctx.logs), 'off: no warning');
  const dev = await buildTestApp(t, FAST, { db });
  t.ok(warned(dev.logs), 'on: a warning at start');
  const res = await api(ctx).post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['webhook.test'] });
  t.equal(res.statusCode, 400, 'off: an http:// loopback target is refused');
});

t.test(
  'registration refuses what is not a public https:// address, with one message that reveals nothing',
  async (t) => {
    const hook = await receiver(t);
    t.match(
      (await m.post('/v1/webhooks', { url: hook.url, events: ['webhook.test'] })).json().error.message,
      /^url: must be an https:\/\/ URL$/,
    );
    const refused = [
      `https://127.0.0.1:${hook.port}/hook`,
      'https://127.1.2.3/',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://[::1]/',
      `https://localhost:${hook.port}/hook`,
      'https://10.1.2.3/',
      'https://172.16.5.4/',
      'https://192.168.1.1/',
      'https://[::ffff:10.0.0.1]/',
      'https://[fd00:ec2::254]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fe80::1]/',
      'https://100.100.100.200/',
      'https://224.0.0.251/',
      'https://[ff02::1]/',
      'https://0.0.0.0/',
      'https://255.255.255.255/',
      // IPv6 forms that embed a loopback, private or link-local IPv4 address
      'https://[::127.0.0.1]/',
      'https://[::10.0.0.1]/',
      'https://[::a9fe:a9fe]/',
      'https://[::ffff:0:a9fe:a9fe]/',
      'https://[64:ff9b:1::a9fe:a9fe]/',
      'https://[64:ff9b::10.0.0.1]/',
      'https://[2002:a9fe:a9fe::1]/',
      'https://[2001:0:4136:e378:8000:63bf:5601:5efe]/',
      // a name that resolves to loopback, and one that does not resolve: the same answer
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://no-such-host.invalid/',
    ];
    for (const url of refused) {
      const res = await m.post('/v1/webhooks', { url, events: ['webhook.test'] });
      t.equal(res.statusCode, 400, url);
      t.equal(res.json().error.message, REFUSED_URL, url);
    }
    t.notMatch(REFUSED_URL, /\d+\.\d+|::|resolves to/, 'the message names no address');
    t.same((await m.get('/v1/webhooks')).json().data, [], 'none registered');
    const ok = await m.post('/v1/webhooks', { url: 'https://8.8.8.8/hook', events: ['webhook.test'] });
    t.equal(ok.statusCode, 201, 'a public https:// address is fine');
    await m.del(`/v1/webhooks/${ok.json().data.id}`);
    t.equal(hook.requests.length, 0, 'registration never calls the URL');
  },
);

t.test(
  'an API process in production mode refuses 127.0.0.1 and the IPv6 forms that embed internal addresses',
  async (t) => {
    const prod = await buildTestApp(t, { ...FAST, NODE_ENV: 'production', WEBHOOK_ALLOW_LOOPBACK: '' }, { db });
    const hook = await receiver(t);
    const http = await api(prod).post('/v1/webhooks', { url: hook.url, events: ['webhook.test'] });
    t.equal(http.json().error.message, 'url: must be an https:// URL');
    const hosts = ['127.0.0.1', '[::127.0.0.1]', '[::10.0.0.1]', '[::a9fe:a9fe]', '[::ffff:0:a9fe:a9fe]'];
    for (const host of [...hosts, '[64:ff9b:1::a9fe:a9fe]', 'localhost']) {
      const url = `https://${host}:${hook.port}/hook`;
      const res = await api(prod).post('/v1/webhooks', { url, events: ['webhook.test'] });
      t.equal(res.statusCode, 400, url);
      t.equal(res.json().error.message, REFUSED_URL, url);
    }
  },
);

t.test('addresses, one by one', async (t) => {
  const strict = { allowLoopback: false };
  const dev = { allowLoopback: true };
  const publicOnes = ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34', '::ffff:8.8.8.8'];
  for (const a of [...publicOnes, '64:ff9b::8.8.8.8', '::ffff:0:808:808']) t.equal(addressRefusal(a, strict), null, a);
  const loopback = ['127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::7f00:1', '::127.0.0.1'];
  for (const a of [...loopback, '::7f00:1', '::ffff:0:127.0.0.1', '[::FFFF:7F00:1]']) {
    t.match(addressRefusal(a, strict), /loopback/, a);
    t.equal(addressRefusal(a, dev), null, `${a} with WEBHOOK_ALLOW_LOOPBACK`);
  }
  const embedded: [string, RegExp][] = [
    ['::10.0.0.1', /private/], // IPv4-compatible, ::/96
    ['::a9fe:a9fe', /link-local/],
    ['::ffff:a9fe:a9fe', /link-local/], // IPv4-mapped, ::ffff:0:0/96
    ['::ffff:0:a9fe:a9fe', /link-local/], // IPv4-translated (SIIT), ::ffff:0:0:0/96
    ['::ffff:0:10.0.0.1', /private/],
    ['64:ff9b::a9fe:a9fe', /link-local/], // NAT64, 64:ff9b::/96
    ['64:ff9b::192.168.0.1', /private/],
    ['64:ff9b:1::a9fe:a9fe', /NAT64/], // local-use NAT64, 64:ff9b:1::/48
    ['64:ff9b:1:2:3:4:8.8.8.8', /NAT64/],
    ['2002:a9fe:a9fe::1', /6to4/], // 6to4, 2002::/16
    ['2002:0a00:0001::', /6to4/],
    ['2001:0:4136:e378:8000:63bf:5601:5efe', /reserved/], // Teredo, 2001::/32
    ['::', /unspecified/],
    ['::2', /this network/],
  ];
  for (const [a, why] of embedded) {
    t.match(addressRefusal(a, strict), why, a);
    t.match(addressRefusal(a, dev), why, `${a}: refused even with WEBHOOK_ALLOW_LOOPBACK`);
  }
  for (const a of ['10.0.0.1', '169.254.169.254', 'fd00:ec2::254', '192.168.0.1', '198.18.0.1']) {
    t.ok(addressRefusal(a, dev), `${a}: refused even with WEBHOOK_ALLOW_LOOPBACK`);
  }
});

t.test('delivery checks again, after DNS: a target that became internal receives nothing', async (t) => {
  const hook = await receiver(t);
  const w = await startWorker(t, db, { WEBHOOK_ALLOW_LOOPBACK: 'false' });
  const key = settingsFor(db).secretKey;
  // endpoints as they would be if DNS had pointed elsewhere at registration: written directly, past the API's check
  const targets = [
    [`https://localhost:${hook.port}/hook`, REFUSED_ATTEMPT],
    [`https://127.0.0.1:${hook.port}/hook`, REFUSED_ATTEMPT],
    [`https://[::127.0.0.1]:${hook.port}/hook`, REFUSED_ATTEMPT],
    [`http://127.0.0.1:${hook.port}/hook`, 'refused: http:// targets are not allowed'],
    ['https://169.254.169.254/latest/meta-data/', REFUSED_ATTEMPT],
    ['https://no-such-host.invalid/', REFUSED_ATTEMPT],
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
    t.equal(d!.error, error, url);
  }
  await sleep(200);
  t.equal(hook.requests.length, 0, 'the loopback receiver got nothing');
  await w.stop();
});

t.test('a redirect to the metadata address is not followed', async (t) => {
  const w = await startWorker(t, db, { WEBHOOK_ALLOW_LOOPBACK: 'true' });
  // WEBHOOK_ALLOW_LOOPBACK lets the test register a loopback receiver; the metadata address stays refused
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
