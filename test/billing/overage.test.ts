// The daily overage invoice items: rounding, exactly once across runs, and a crash between Stripe's answer and our
// commit recovered without a second charge. Days are given, never taken from today.
import t from 'tap';
import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { billingApp, type BillingContext } from './helpers.ts';
import { overageCents, overageDescription, sendOverage } from '../../src/billing/overage.ts';
import { spawnChild } from '../helpers/processes.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';

t.setTimeout(600_000);
const DAY = '2026-11-24';

/** A client billed through Stripe with `credits` of overage on DAY (and plain monthly usage too). */
async function withOverage(ctx: BillingContext, credits: number) {
  const { client, keyId } = await ctx.newClient('developer');
  const customer = await ctx.app.billing!.stripe.customers.create({ metadata: { client_id: client.id } });
  await ctx.db.sql`INSERT INTO billing.customers (client_id, customer_id) VALUES (${client.id}, ${customer.id})`;
  await ctx.db.sql`INSERT INTO meter.usage_daily (client_id, key_id, day, mode, surface, bucket, requests)
                   VALUES (${client.id}, ${keyId}, ${DAY}, 'live', 'rest', 'monthly', 10000)`;
  if (credits > 0) {
    await ctx.db.sql`INSERT INTO meter.usage_daily (client_id, key_id, day, mode, surface, bucket, requests)
                     VALUES (${client.id}, ${keyId}, ${DAY}, 'live', 'rest', 'overage', ${credits}),
                            (${client.id}, ${keyId}, ${DAY}::date + 1, 'live', 'rest', 'overage', 7)`;
  }
  return { clientId: client.id, customer: customer.id };
}

const admin = (ctx: BillingContext, ...args: string[]) =>
  promisify(execFile)('node', ['--import', 'tsx', 'src/accounts/cli.ts', ...args], {
    timeout: 180_000, // only a hang
    env: { ...process.env, ...ctx.env, DATABASE_URL: ctx.db.ownerUrl, API_KEY_SECRET: TEST_KEY_SECRET },
  });

t.test('the rounding table', async (t) => {
  t.same([1, 10, 11, 1234].map(overageCents), [5, 5, 10, 620]);
  t.equal(overageDescription(DAY, 1234), 'API overage 2026-11-24: 1,234 requests');
  const ctx = await billingApp(t);
  const clients = new Map<number, string>();
  for (const credits of [1, 10, 11, 1234, 0]) clients.set(credits, (await withOverage(ctx, credits)).clientId);
  const result = await sendOverage(ctx.app.billing!, DAY);
  const items = ctx.stripe.calls('POST /v1/invoiceitems');
  const byClient = new Map(items.map((r) => [(r.params.metadata as { client_id: string }).client_id, r]));
  for (const [credits, cents] of [
    [1, 5],
    [10, 5],
    [11, 10],
    [1234, 620],
  ] as const) {
    const r = byClient.get(clients.get(credits)!);
    t.equal(r?.params.amount, String(cents), `${credits} credits: ${cents}¢`);
    t.equal(r?.params.description, overageDescription(DAY, credits));
    t.equal(r?.idempotencyKey, `ovg:${clients.get(credits)}:${DAY}`);
    t.equal(r?.params.currency, 'usd');
  }
  t.notOk(byClient.has(clients.get(0)!), '0 credits: nothing');
  t.equal(items.length, 4, 'only the day asked for');
  t.equal(result.sent.length, 4);
  const [view] = await ctx.db
    .sql`SELECT amount_cents FROM meter.overage_invoice_lines WHERE client_id = ${clients.get(1234)!} AND day = ${DAY}`;
  t.equal(view!.amount_cents, 620, 'the SQL view bills the same cents');
  ctx.clean(t);
});

t.test('running the job twice charges once', async (t) => {
  const ctx = await billingApp(t);
  const { clientId } = await withOverage(ctx, 1234);
  const first = await admin(ctx, 'billing', 'overage', '--day', DAY);
  t.match(first.stdout, new RegExp(`${DAY}  ${clientId}  1234 credits  620¢  ii_`));
  const second = await admin(ctx, 'billing', 'overage', '--day', DAY);
  t.equal(second.stdout.trim(), `${DAY}: nothing to send`);
  t.equal(ctx.stripe.calls('POST /v1/invoiceitems').length, 1, 'one invoice item');
  const status = await admin(ctx, 'billing', 'status', '--client', clientId);
  t.match(status.stdout, new RegExp(`${DAY}  1234 credits  \\$6\\.20  sent ii_`), 'status shows it sent');
  t.match(status.stdout, /2026-11-25 {2}7 credits {2}\$0\.05 {2}pending/, 'and the next day pending');
  const bad = await admin(ctx, 'billing', 'overage', '--day', '2026-13-01').catch(
    (e: { code: number; stderr: string }) => e,
  );
  t.equal((bad as { code: number }).code, 1);
  t.match((bad as { stderr: string }).stderr, /admin: day must be YYYY-MM-DD/);
  ctx.clean(t);
});

t.test("a crash between Stripe's answer and our commit: recovered without a second charge", async (t) => {
  const ctx = await billingApp(t);
  const { clientId, customer } = await withOverage(ctx, 55);
  const lock = await ctx.db.sql.reserve();
  t.teardown(() => lock.release());
  // when Stripe has made the item and before it answers, hold the row our commit must update
  let answered!: () => void;
  const stripeAnswered = new Promise<void>((resolve) => (answered = resolve));
  ctx.stripe.beforeAnswer = async (r) => {
    if (r.operation !== 'POST /v1/invoiceitems') return;
    await lock`BEGIN`;
    await lock`SELECT 1 FROM billing.overage_items WHERE client_id = ${clientId} AND day = ${DAY} FOR UPDATE`;
    answered();
  };
  const child = spawnChild(t, 'node', ['--import', 'tsx', 'src/accounts/cli.ts', 'billing', 'overage', '--day', DAY], {
    env: { ...process.env, ...ctx.env, DATABASE_URL: ctx.db.ownerUrl, API_KEY_SECRET: TEST_KEY_SECRET },
  });
  const ended = once(child, 'exit').then(() => {
    throw new Error('the CLI ended before Stripe answered it');
  });
  await Promise.race([stripeAnswered, ended]);
  ended.catch(() => {});
  ctx.stripe.beforeAnswer = null;
  // the CLI waits on our lock to record the item: it has Stripe's answer and has not committed
  let backend: number | undefined;
  while (backend === undefined) {
    const [w] = await ctx.db.sql`SELECT pid FROM pg_stat_activity
                                  WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%finish_overage%'`;
    backend = w?.pid as number | undefined;
    if (child.exitCode !== null) throw new Error('the CLI ended before it was stopped');
    await new Promise((r) => setTimeout(r, 50));
  }
  // the process dies, and with it its connection and the statement it had sent
  process.kill(-child.pid!, 'SIGKILL');
  await once(child, 'exit');
  await ctx.db.sql`SELECT pg_terminate_backend(${backend})`;
  while ((await ctx.db.sql`SELECT 1 FROM pg_stat_activity WHERE pid = ${backend}`).length > 0) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await lock`ROLLBACK`;
  const [pending] = await ctx.db.sql`SELECT sent_at, attempts FROM billing.overage_items WHERE client_id = ${clientId}`;
  t.same(pending, { sent_at: null, attempts: 1 }, 'the row is still pending after the crash');
  t.equal(ctx.stripe.invoiceItems.size, 1, 'Stripe holds the item');

  const again = await sendOverage(ctx.app.billing!, DAY);
  t.equal(again.sent.length, 1);
  t.ok(again.sent[0]!.found, 'the next run finds the item');
  t.equal(ctx.stripe.calls('POST /v1/invoiceitems').length, 1, 'and asks for no second one');
  t.equal(ctx.stripe.calls('GET /v1/invoiceitems')[0]!.params.customer, customer);
  const [sent] = await ctx.db.sql`SELECT invoice_item_id FROM billing.overage_items WHERE client_id = ${clientId}`;
  t.equal(sent!.invoice_item_id, [...ctx.stripe.invoiceItems.keys()][0]);
  t.equal((await sendOverage(ctx.app.billing!, DAY)).sent.length, 0, 'and a third run does nothing');
  ctx.clean(t);
});

t.test("a repeat within Stripe's idempotency window gets the same item", async (t) => {
  const ctx = await billingApp(t);
  const { clientId, customer } = await withOverage(ctx, 20);
  const params = {
    customer,
    amount: 10,
    currency: 'usd',
    description: overageDescription(DAY, 20),
    metadata: { client_id: clientId, day: DAY, credits: '20', overage_key: `ovg:${clientId}:${DAY}` },
  };
  const a = await ctx.app.billing!.stripe.invoiceItems.create(params, { idempotencyKey: `ovg:${clientId}:${DAY}` });
  const b = await ctx.app.billing!.stripe.invoiceItems.create(params, { idempotencyKey: `ovg:${clientId}:${DAY}` });
  t.equal(a.id, b.id);
  t.equal(ctx.stripe.invoiceItems.size, 1);
  ctx.clean(t);
});
