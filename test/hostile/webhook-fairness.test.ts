// Finding 5 of the second hostile campaign (issue 42): one customer's webhooks starved another's deliveries. Each
// attempt to a receiver that never answers holds one of a process's worker slots until the timeout, and test events
// were free and unlimited: ten hanging endpoints and three test events each delayed another customer's delivery from
// 0.13 s to 64 s. Here the same scenario, scaled down: customer A's endpoints hang, B's delivery must go out at about
// the speed it has alone; and a burst of test events on one endpoint gets exactly the per-endpoint limit through.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api, receiver, startWorker, waitFor, type Receiver } from '../webhooks/helpers.ts';
import { TEST_EVENTS_PER_MINUTE } from '../../src/webhooks/test-events.ts';
import { clientSlots } from '../../src/webhooks/worker.ts';

/** The default number of slots of a process. */
const CONCURRENCY = 4;
/** The attempt timeout: far longer than any delivery that does not wait behind a hanging one. */
const HANG_MS = 20_000;

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;

/** Starts the minute-long window of the test-event count with most of it left, so a burst lands in one window. */
async function freshMinute() {
  const second = new Date().getUTCSeconds();
  if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

/** Milliseconds from a test event's request to its arrival at the receiver. */
async function testDelivery(m: ReturnType<typeof api>, endpointId: string, hook: Receiver) {
  const before = hook.requests.length;
  const started = Date.now();
  const res = await m.post(`/v1/webhooks/${endpointId}/test`);
  if (res.statusCode !== 202) throw new Error(`test event: ${res.statusCode} ${res.body}`);
  await waitFor('the delivery', () => hook.requests.length > before, HANG_MS * 4);
  return hook.requests[before]!.at - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

t.test("a client's hanging endpoints leave the other clients' deliveries their speed", async (t) => {
  // the worker first: teardowns run last-first, so the receivers close (their hanging requests end) before it stops
  const w = await startWorker(t, db, {
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_TIMEOUT_MS: String(HANG_MS),
    WEBHOOK_SWEEP_MS: '10000',
  });
  const hookA = await receiver(t, () => ({ hang: true }));
  const hookB = await receiver(t);
  await freshMinute();

  const b = await ctx.newClient('growth');
  const mb = api(ctx, b.key);
  const eb = await mb.create({ url: hookB.url, events: ['webhook.test'] });
  const alone = median([
    await testDelivery(mb, eb.id, hookB),
    await testDelivery(mb, eb.id, hookB),
    await testDelivery(mb, eb.id, hookB),
  ]);

  // A: more hanging endpoints than the process has slots, two test events each (as the campaign, scaled down)
  const a = await ctx.newClient('growth');
  const ma = api(ctx, a.key);
  const endpoints = [];
  for (let i = 0; i < CONCURRENCY + 2; i++)
    endpoints.push(await ma.create({ url: hookA.url, events: ['webhook.test'] }));
  for (const e of endpoints) {
    for (let i = 0; i < 2; i++) t.equal((await ma.post(`/v1/webhooks/${e.id}/test`)).statusCode, 202);
  }
  const share = clientSlots(CONCURRENCY);
  await waitFor("A's attempts hanging", () => hookA.requests.length >= share, HANG_MS);
  const hangingSince = hookA.requests[0]!.at;

  // B's delivery is queued behind every job of A's: without a share per client it waits for a slot to free
  const withA = await testDelivery(mb, eb.id, hookB);
  const arrived = hookB.requests.at(-1)!.at;
  t.ok(arrived < hangingSince + HANG_MS, "B's delivery went out while A's attempts still hung");
  t.equal(hookA.requests.length, share, `A holds ${share} of the ${CONCURRENCY} slots, no more`);
  const ratio = withA / Math.max(alone, 1);
  t.ok(ratio <= 5, `B's delivery: ${withA} ms beside A's hanging endpoints, ${alone} ms alone (${ratio.toFixed(1)}x)`);

  await hookA.close();
  await w.stop();
});

t.test('a burst of test events on one endpoint gets exactly the limit through, the rest 429', async (t) => {
  const hook = await receiver(t);
  const c = await ctx.newClient('growth');
  const m = api(ctx, c.key);
  const e = await m.create({ url: hook.url, events: ['webhook.test'] });
  await freshMinute();
  const answers = await Promise.all(Array.from({ length: 12 }, () => m.post(`/v1/webhooks/${e.id}/test`)));
  const accepted = answers.filter((r) => r.statusCode === 202);
  const refused = answers.filter((r) => r.statusCode === 429);
  t.equal(accepted.length, TEST_EVENTS_PER_MINUTE, `${TEST_EVENTS_PER_MINUTE} accepted`);
  t.equal(refused.length, 12 - TEST_EVENTS_PER_MINUTE, 'the rest refused');
  for (const r of refused) {
    t.match(r.json().error, { code: 'rate_limited', message: /^too many test events/ });
    t.ok(Number(r.headers['retry-after']) >= 1, 'with Retry-After');
  }
  const [{ n }] = (await db.sql`
    SELECT count(*)::int AS n FROM webhooks.deliveries WHERE endpoint_id = ${e.id.slice(3)}::uuid`) as unknown as [
    { n: number },
  ];
  t.equal(n, TEST_EVENTS_PER_MINUTE, 'only the accepted ones became deliveries');
});
