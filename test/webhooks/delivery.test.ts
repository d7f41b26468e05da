// Delivery against real receivers: Standard Webhooks signatures (and both secrets during a rotation), retries with
// the same webhook-id, a silent receiver's timeout, redirects not followed, failed after the schedule, the rest after
// repeated failures, auto-disable, test events, manual retries, the deliveries log, order with one and two workers,
// and clients that lose webhooks.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api, importLiberty, receiver, sleep, startWorker, waitFor, type Receiver } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const sql = db.sql;
const m = api(ctx);
let year = 1990;
const nextYear = () => year++;

const deliveries = async (id: string, query = 'limit=100') => {
  const res = await m.get(`/v1/webhooks/${id}/deliveries?${query}`);
  if (res.statusCode !== 200) throw new Error(res.body);
  return res.json();
};
const ids = (r: Receiver) => r.requests.map((q) => String(q.headers['webhook-id']));
/** One endpoint subscribed to new Liberty records only (one event per record). */
const endpointFor = (r: Receiver) =>
  m.create({ url: r.url, events: ['tax_delinquency.created'], counties: ['liberty'] });
const done = async (id: string) => {
  await m.del(`/v1/webhooks/${id}`);
};

t.test('signed with the standardwebhooks library; one request per event; the deliveries log', async (t) => {
  const w = await startWorker(t, db);
  const r = await receiver(t);
  const e = await endpointFor(r);
  await importLiberty(db, nextYear(), 3);
  await waitFor('3 events', () => r.requests.length >= 3);
  const hook = new Webhook(e.secret);
  for (const q of r.requests) {
    t.match(q.headers, {
      'content-type': 'application/json',
      'webhook-id': /^evt_[0-9a-f]{16}$/,
      'webhook-timestamp': /^\d{10}$/,
      'webhook-signature': /^v1,[A-Za-z0-9+/]+=*$/,
    });
    const payload = hook.verify(q.body, q.headers as Record<string, string>) as { id: string; type: string };
    t.equal(payload.id, q.headers['webhook-id']);
    t.equal(payload.type, 'tax_delinquency.created');
    t.throws(
      () =>
        new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
          q.body,
          q.headers as Record<string, string>,
        ),
      'another secret does not verify',
    );
    t.throws(
      () => hook.verify(q.body.replace('OWNER', 'OWNEX'), q.headers as Record<string, string>),
      'a changed body does not verify',
    );
  }
  // (the receiver answers before the worker records the answer)
  const log = await waitFor('recorded', async () => {
    const l = await deliveries(e.id);
    return l.data.every((d: { status: string }) => d.status === 'delivered') ? l : null;
  });
  t.equal(log.pagination.total, 3);
  t.match(log.data[0], {
    id: /^dlv_[0-9a-f]{16}$/,
    event_id: /^evt_/,
    event_type: 'tax_delinquency.created',
    status: 'delivered',
    next_retry_at: null,
    reason: null,
    attempts: [{ number: 1, status_code: 200, error: null, duration_ms: Number }],
  });
  t.same(log.data.map((d: { event_id: string }) => d.event_id).reverse(), ids(r), 'newest first');
  const page = await deliveries(e.id, 'limit=1&offset=1');
  t.same(page.pagination, { limit: 1, offset: 1, total: 3, has_more: true });
  t.equal(page.data[0].id, log.data[1].id);
  t.equal((await deliveries(e.id, 'status=failed')).pagination.total, 0);
  await done(e.id);
  await w.stop();
});

t.test('rotation: both secrets sign during the overlap, then only the new one', async (t) => {
  const w = await startWorker(t, db);
  const r = await receiver(t);
  const e = await endpointFor(r);
  const rotated = (await m.post(`/v1/webhooks/${e.id}/rotate-secret`)).json().data;
  await importLiberty(db, nextYear(), 1);
  await waitFor('the event', () => r.requests.length >= 1);
  const q = r.requests[0]!;
  t.equal(String(q.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
  for (const secret of [e.secret, rotated.secret]) {
    t.doesNotThrow(
      () => new Webhook(secret).verify(q.body, q.headers as Record<string, string>),
      'each secret verifies',
    );
  }
  // the overlap ends (24 hours in real life)
  await sql`UPDATE webhooks.endpoints SET old_secret_until = now() - interval '1 second' WHERE id = ${e.id.slice(3)}::uuid`;
  await importLiberty(db, nextYear(), 1);
  await waitFor('the second event', () => r.requests.length >= 2);
  const q2 = r.requests[1]!;
  t.equal(String(q2.headers['webhook-signature']).split(' ').length, 1, 'one signature');
  t.doesNotThrow(() => new Webhook(rotated.secret).verify(q2.body, q2.headers as Record<string, string>));
  t.throws(
    () => new Webhook(e.secret).verify(q2.body, q2.headers as Record<string, string>),
    'the old secret no longer',
  );
  await done(e.id);
  await w.stop();
});

t.test('a receiver failing twice then succeeding: retried with the same webhook-id', async (t) => {
  const w = await startWorker(t, db);
  const r = await receiver(t, (_q, n) => ({ status: n <= 2 ? 500 : 204 }));
  const e = await endpointFor(r);
  await importLiberty(db, nextYear(), 1);
  await waitFor('three attempts', () => r.requests.length >= 3);
  await sleep(500);
  t.equal(r.requests.length, 3, 'no more after the success');
  t.equal(new Set(ids(r)).size, 1, 'the same webhook-id every time');
  t.equal(new Set(r.requests.map((q) => q.body)).size, 1, 'the same body every time');
  const gaps = [r.requests[1]!.at - r.requests[0]!.at, r.requests[2]!.at - r.requests[1]!.at];
  t.ok(
    gaps.every((g) => g >= 150),
    `waited for the schedule between attempts (${gaps.join(', ')} ms)`,
  );
  const [d] = (await deliveries(e.id)).data;
  t.match(d, {
    status: 'delivered',
    attempts: [
      { number: 1, status_code: 500, error: 'HTTP 500' },
      { number: 2, status_code: 500 },
      { number: 3, status_code: 204, error: null },
    ],
  });
  await done(e.id);
  await w.stop();
});

t.test('a receiver that never answers: the attempt times out and is retried', async (t) => {
  const w = await startWorker(t, db);
  const r = await receiver(t, (_q, n) => (n === 1 ? { hang: true } : {}));
  const e = await endpointFor(r);
  await importLiberty(db, nextYear(), 1);
  await waitFor('delivered', async () => (await deliveries(e.id)).data[0]?.status === 'delivered');
  const [d] = (await deliveries(e.id)).data;
  t.match(d.attempts[0], { number: 1, status_code: null, error: 'timed out after 1000 ms' });
  // not before the timeout (1000 ms, less a timer's rounding); after it, however late a loaded machine runs the
  // timer, but not left to hang: a hung attempt would never be recorded at all
  const { duration_ms: gaveUpAfter } = d.attempts[0];
  t.ok(gaveUpAfter >= 990 && gaveUpAfter < 31_000, `gave up at the timeout (${gaveUpAfter} ms)`);
  t.match(d.attempts[1], { number: 2, status_code: 200 });
  t.equal(new Set(ids(r)).size, 1);
  await done(e.id);
  await w.stop();
});

t.test('a redirect is not followed', async (t) => {
  const w = await startWorker(t, db);
  const target = await receiver(t);
  const r = await receiver(t, () => ({ status: 302, headers: { location: target.url } }));
  const e = await endpointFor(r);
  await importLiberty(db, nextYear(), 1);
  await waitFor('failed', async () => (await deliveries(e.id)).data[0]?.status === 'failed');
  const [d] = (await deliveries(e.id)).data;
  t.equal(d.attempts.length, 4, 'the first attempt and the 3 retries of the schedule');
  t.match(d, { status: 'failed', reason: 'every attempt failed', next_retry_at: null, finished_at: String });
  t.ok(
    d.attempts.every(
      (a: { status_code: number; error: string }) =>
        a.status_code === 302 && /redirects are not followed/.test(a.error),
    ),
  );
  t.equal(target.requests.length, 0, 'the Location was never requested');
  await done(e.id);
  await w.stop();
});

t.test('test events and manual retries', async (t) => {
  const w = await startWorker(t, db);
  let healthy = true;
  const r = await receiver(t, () => ({ status: healthy ? 200 : 500 }));
  const e = await endpointFor(r);
  const sent = await m.post(`/v1/webhooks/${e.id}/test`);
  t.equal(sent.statusCode, 202);
  const { delivery_id, event_id } = sent.json().data;
  await waitFor('the test event', () => r.requests.length >= 1);
  const body = JSON.parse(r.requests[0]!.body);
  t.match(body, { id: event_id, type: 'webhook.test', data: { endpoint_id: e.id } });
  t.doesNotThrow(() =>
    new Webhook(e.secret).verify(r.requests[0]!.body, r.requests[0]!.headers as Record<string, string>),
  );

  // a failed test is not retried on its own; a retry asked for sends it again, with the same webhook-id
  healthy = false;
  const second = (await m.post(`/v1/webhooks/${e.id}/test`)).json().data;
  await waitFor(
    'failed',
    async () =>
      (await deliveries(e.id)).data.find((d: { id: string }) => d.id === second.delivery_id)?.status === 'failed',
  );
  await sleep(500);
  t.equal(r.requests.length, 2, 'one attempt, no automatic retries');
  healthy = true;
  const retried = await m.post(`/v1/webhooks/${e.id}/deliveries/${second.delivery_id}/retry`);
  t.equal(retried.statusCode, 202);
  t.match(retried.json().data, { id: second.delivery_id, status: 'pending' });
  await waitFor(
    'delivered',
    async () =>
      (await deliveries(e.id)).data.find((d: { id: string }) => d.id === second.delivery_id)?.status === 'delivered',
  );
  t.equal(r.requests[2]!.headers['webhook-id'], second.event_id, 'the same webhook-id');
  const d = (await deliveries(e.id)).data.find((x: { id: string }) => x.id === second.delivery_id);
  t.match(d.attempts, [
    { number: 1, status_code: 500 },
    { number: 2, status_code: 200 },
  ]);
  t.equal(
    (await m.post(`/v1/webhooks/${e.id}/deliveries/${delivery_id}/retry`)).statusCode,
    202,
    'a delivered one may be sent again',
  );
  await waitFor('resent', () => r.requests.length >= 4);
  t.match((await m.post(`/v1/webhooks/${e.id}/deliveries/dlv_${'f'.repeat(16)}/retry`)).json().error, {
    code: 'not_found',
  });
  await m.patch(`/v1/webhooks/${e.id}`, { status: 'disabled' });
  t.match((await m.post(`/v1/webhooks/${e.id}/test`)).json().error, {
    code: 'bad_request',
    message: /^status: the endpoint is disabled/,
  });
  t.match((await m.post(`/v1/webhooks/${e.id}/deliveries/${delivery_id}/retry`)).json().error, {
    code: 'bad_request',
    message: /disabled/,
  });
  await done(e.id);
  await w.stop();
});

t.test('order: one endpoint gets its events in order; a retry does not hold back the events after it', async (t) => {
  const w = await startWorker(t, db);
  const first = new Set<string>();
  // the first event's first attempt fails; everything else succeeds
  const r = await receiver(t, (q) => {
    const id = String(q.headers['webhook-id']);
    if (first.size === 0) {
      first.add(id);
      return { status: 503 };
    }
    return {};
  });
  const e = await endpointFor(r);
  await importLiberty(db, nextYear(), 4);
  await waitFor('5 requests', () => r.requests.length >= 5);
  const got = ids(r);
  const sorted = [...new Set(got)].sort();
  t.same(got.slice(0, 4), sorted, 'first attempts in creation order');
  t.equal(got[4], sorted[0], 'the failed first event comes again after the later ones');
  await done(e.id);
  await w.stop();
});

t.test('two workers: each event delivered once, in order', async (t) => {
  const w1 = await startWorker(t, db);
  const w2 = await startWorker(t, db);
  const r = await receiver(t);
  const r2 = await receiver(t);
  const e = await endpointFor(r);
  const e2 = await endpointFor(r2);
  await importLiberty(db, nextYear(), 300);
  await waitFor('300 events each', () => r.requests.length >= 300 && r2.requests.length >= 300, 30_000);
  await sleep(500);
  for (const x of [r, r2]) {
    t.equal(x.requests.length, 300, 'no duplicates');
    t.same(ids(x), [...ids(x)].sort(), 'in order');
  }
  await done(e.id);
  await done(e2.id);
  await w1.stop();
  await w2.stop();
});

t.test('repeated failures: the endpoint rests instead of failing every delivery', async (t) => {
  const w = await startWorker(t, db, { WEBHOOK_RETRY_SCHEDULE: '2,2,2' });
  const r = await receiver(t, () => ({ status: 500 }));
  const e = await endpointFor(r);
  await importLiberty(db, nextYear(), 12);
  await waitFor('5 attempts', () => r.requests.length >= 5);
  await sleep(700);
  t.equal(r.requests.length, 5, 'five failures in a row, then nothing until the earliest retry');
  const log = (await deliveries(e.id)).data;
  t.equal(log.filter((d: { attempts: unknown[] }) => d.attempts.length === 0).length, 7, 'the rest wait, unattempted');
  t.ok(log.every((d: { status: string }) => d.status === 'pending'));
  await done(e.id);
  await w.stop();
});

t.test('an endpoint failing for the configured span is disabled, with the reason', async (t) => {
  const w = await startWorker(t, db, {
    WEBHOOK_DISABLE_AFTER_SECONDS: '0.5',
    WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3,0.3,0.3,0.3',
  });
  const r = await receiver(t, () => ({ status: 500 }));
  const e = await endpointFor(r);
  await importLiberty(db, nextYear(), 2);
  const disabled = await waitFor('disabled', async () => {
    const x = (await m.get(`/v1/webhooks/${e.id}`)).json().data;
    return x.status === 'disabled' ? x : null;
  });
  t.match(
    disabled.disabled_reason,
    /^disabled automatically: every delivery attempt since \S+ failed \(the last: HTTP 500\)$/,
  );
  const log = (await deliveries(e.id)).data;
  t.ok(
    log.every((d: { status: string }) => d.status === 'skipped' || d.status === 'failed'),
    'nothing left pending',
  );
  t.ok(log.some((d: { reason: string }) => d.reason === 'the endpoint was disabled after failing'));
  const seen = r.requests.length;
  await importLiberty(db, nextYear(), 1);
  await sleep(600);
  t.equal(r.requests.length, seen, 'a disabled endpoint receives nothing');
  const enabled = (await m.patch(`/v1/webhooks/${e.id}`, { status: 'enabled' })).json().data;
  t.match(enabled, { status: 'enabled', disabled_reason: null });
  await done(e.id);
  await w.stop();
});

t.test('suspended and downgraded clients receive nothing until they are back', async (t) => {
  const ra = await receiver(t);
  const rb = await receiver(t);
  const a = await endpointFor(ra);
  const bClient = await ctx.newClient('growth');
  const mb = api(ctx, bClient.key);
  const b = await mb.create({ url: rb.url, events: ['tax_delinquency.created'], counties: ['liberty'] });

  // events happen while B is suspended: B never gets them
  await bClient.svc.setStatus(bClient.client.id, 'suspended');
  const w = await startWorker(t, db);
  await importLiberty(db, nextYear(), 2);
  await waitFor('A gets its events', () => ra.requests.length >= 2);
  await sleep(500);
  t.equal(rb.requests.length, 0, 'suspended: nothing');

  // deliveries made while B was entitled, sent after it was downgraded: skipped, with the reason
  await w.stop();
  await bClient.svc.setStatus(bClient.client.id, 'active');
  await importLiberty(db, nextYear(), 2);
  await sql`SELECT webhooks.fan_out(1000)`;
  const pendingB =
    await sql`SELECT count(*)::int AS n FROM webhooks.deliveries WHERE endpoint_id = ${b.id.slice(3)}::uuid AND status = 'pending'`;
  t.equal(pendingB[0]!.n, 2, 'B had deliveries waiting');
  await bClient.svc.setPlan(bClient.client.id, 'developer');
  const w2 = await startWorker(t, db);
  await waitFor('A gets the next two', () => ra.requests.length >= 4);
  const skipped = await waitFor('B skipped', async () => {
    const rows = await sql`SELECT status, reason FROM webhooks.deliveries WHERE endpoint_id = ${b.id.slice(3)}::uuid`;
    return rows.every((x) => x.status === 'skipped') ? rows : null;
  });
  t.match(skipped[0], { reason: 'the client is suspended or its plan does not include webhooks' });
  t.equal(rb.requests.length, 0, 'downgraded: nothing');

  // back on a plan with webhooks: new events arrive again
  await bClient.svc.setPlan(bClient.client.id, 'pro');
  await importLiberty(db, nextYear(), 1);
  await waitFor('B gets the new event', () => rb.requests.length >= 1);
  t.equal(rb.requests.length, 1);
  await done(a.id);
  await w2.stop();
});
