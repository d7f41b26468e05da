// POST /billing/stripe/webhook: signed fixture events and their effects, replays, reordering, bad signatures.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { billingApp, type BillingContext } from './helpers.ts';
import { checkoutUrl } from '../../src/billing/checkout.ts';

/** A Checkout Session made through the double for `item`, completed as Stripe reports it. */
async function completed(ctx: BillingContext, clientId: string, kind: 'plan' | 'pack', item: string) {
  const url = await checkoutUrl(ctx.app.billing!, clientId, { kind, item });
  return ctx.stripe.completedSession(url.split('/checkout/')[1]!);
}

const state = async (ctx: BillingContext, clientId: string) => {
  const [c] = await ctx.db.sql`
    SELECT plan, subscription_status,
           (SELECT count(*)::int FROM accounts.credit_packs WHERE client_id = ${clientId}) AS packs,
           (SELECT coalesce(sum(delta), 0)::int FROM meter.ledger WHERE client_id = ${clientId} AND bucket = 'credits') AS one_time
      FROM accounts.clients WHERE id = ${clientId}`;
  return c!;
};

t.test('a pack: its credits for 12 months, granted once whatever arrives again', async (t) => {
  const ctx = await billingApp(t);
  const { client } = await ctx.newClient('developer');
  const session = await completed(ctx, client.id, 'pack', 'starter');
  const created = Math.floor(Date.now() / 1000);
  const event = ctx.event('checkout.session.completed', session, { created });
  const first = await ctx.post(event);
  t.equal(first.statusCode, 200);
  t.equal(first.json().outcome, 'applied');
  const [pack] = await ctx.db.sql`
    SELECT pack, credits::int, extract(epoch FROM purchased_at)::int AS at, expires_at = purchased_at + interval '12 months' AS year
      FROM accounts.credit_packs WHERE client_id = ${client.id}`;
  t.same(pack, { pack: 'starter', credits: 1000, at: created, year: true });

  const replay = await ctx.post(event);
  t.equal(replay.statusCode, 200, 'the same event again: 200');
  t.equal(replay.json().outcome, 'replay');
  const other = await ctx.post(ctx.event('checkout.session.async_payment_succeeded', session));
  t.equal(other.json().outcome, 'duplicate', 'another event about the same session');
  t.equal((await state(ctx, client.id)).packs, 1, 'one pack');
  ctx.clean(t);
});

t.test('a plan: the trial moves to Developer and keeps its credits; Portal changes and status follow', async (t) => {
  const ctx = await billingApp(t);
  const { client } = await ctx.newClient('free');
  const session = await completed(ctx, client.id, 'plan', 'developer');
  const t0 = Math.floor(Date.now() / 1000);
  t.equal(
    (await ctx.post(ctx.event('checkout.session.completed', session, { created: t0 }))).json().outcome,
    'applied',
  );
  t.match(await state(ctx, client.id), { plan: 'developer', subscription_status: 'active', one_time: 500 });

  const sub = { id: session.subscription, customer: session.customer, metadata: { client_id: client.id } };
  const withPlan = (plan: string, status: string) => ({
    ...sub,
    status,
    items: {
      object: 'list',
      data: [
        {
          id: 'si_1',
          object: 'subscription_item',
          price: { id: 'price_x', object: 'price', lookup_key: `plan:${plan}` },
        },
      ],
    },
  });
  const pastDue = await ctx.post(
    ctx.event('customer.subscription.updated', withPlan('developer', 'past_due'), { created: t0 + 20 }),
  );
  t.equal(pastDue.json().outcome, 'applied');
  t.match(await state(ctx, client.id), { plan: 'developer', subscription_status: 'past_due' });
  const older = await ctx.post(
    ctx.event('customer.subscription.updated', withPlan('developer', 'active'), { created: t0 + 10 }),
  );
  t.equal(older.json().outcome, 'stale', 'an older event arriving later');
  t.match(await state(ctx, client.id), { subscription_status: 'past_due' }, 'moves nothing backwards');
  await ctx.post(ctx.event('customer.subscription.updated', withPlan('pro', 'active'), { created: t0 + 30 }));
  t.match(
    await state(ctx, client.id),
    { plan: 'pro', subscription_status: 'active' },
    'a Portal plan change, paid again',
  );

  const { client: other } = await ctx.newClient('developer');
  await ctx.db.sql`INSERT INTO accounts.credit_packs (client_id, pack, credits, purchased_at, expires_at)
                   VALUES (${client.id}, 'starter', 1000, now(), now() + interval '12 months')`;
  const deleted = await ctx.post(
    ctx.event('customer.subscription.deleted', withPlan('pro', 'canceled'), { created: t0 + 40 }),
  );
  t.equal(deleted.json().outcome, 'applied');
  t.match(
    await state(ctx, client.id),
    { plan: 'free', subscription_status: 'canceled', packs: 1, one_time: 500 },
    "canceled: the Free plan's rules, no new trial grant, packs and credits kept",
  );
  const [capped] = await ctx.db
    .sql`SELECT trial_capped_at IS NOT NULL AS capped FROM accounts.clients WHERE id = ${client.id}`;
  t.ok(capped!.capped, 'and no trial cap later');
  t.match(await state(ctx, other.id), { plan: 'developer' }, 'another client untouched');
  ctx.clean(t);
});

t.test('subscription.updated before checkout.session.completed', async (t) => {
  const ctx = await billingApp(t);
  const { client } = await ctx.newClient('free');
  const session = await completed(ctx, client.id, 'plan', 'growth');
  const t0 = Math.floor(Date.now() / 1000);
  const sub = {
    id: session.subscription,
    customer: session.customer,
    metadata: { client_id: client.id, plan: 'growth' },
    status: 'past_due',
    items: {
      object: 'list',
      data: [
        {
          id: 'si_1',
          object: 'subscription_item',
          price: { id: 'price_x', object: 'price', lookup_key: 'plan:growth' },
        },
      ],
    },
  };
  t.equal(
    (await ctx.post(ctx.event('customer.subscription.updated', sub, { created: t0 + 5 }))).json().outcome,
    'applied',
  );
  t.match(await state(ctx, client.id), { plan: 'growth', subscription_status: 'past_due' });
  t.equal(
    (await ctx.post(ctx.event('checkout.session.completed', session, { created: t0 }))).json().outcome,
    'applied',
  );
  t.match(await state(ctx, client.id), { plan: 'growth', subscription_status: 'past_due' }, 'the newer state stays');
  ctx.clean(t);
});

t.test('invoices and refunds', async (t) => {
  const ctx = await billingApp(t);
  const { client } = await ctx.newClient('developer');
  const session = await completed(ctx, client.id, 'pack', 'starter');
  await ctx.post(ctx.event('checkout.session.completed', session));
  const failed = await ctx.post(
    ctx.event('invoice.payment_failed', { id: 'in_1', customer: session.customer, amount_due: 1900 }),
  );
  t.equal(failed.json().outcome, 'applied', 'an invoice found by its Stripe customer');
  const [billing] = await ctx.db.sql`SELECT * FROM billing.account_billing(${client.id}::uuid)`;
  t.match(billing, { failed_amount_due: 1900, failed_invoice_url: /^https:\/\/invoice\.stripe\.com\// });

  // 200 of the pack's 1,000 credits spent, then a half refund: 500 voided; then the rest: the 300 left
  await ctx.db.sql`INSERT INTO meter.ledger (client_id, bucket, pack_id, delta, reason)
                   SELECT ${client.id}, 'pack', id, -200, 'usage' FROM accounts.credit_packs WHERE client_id = ${client.id}`;
  const charge = { id: 'ch_1', customer: session.customer, payment_intent: session.payment_intent, amount: 500 };
  const half = await ctx.post(ctx.event('charge.refunded', { ...charge, amount_refunded: 250, refunded: false }));
  t.equal(half.json().outcome, 'applied');
  const left = async () => {
    const [r] = await ctx.db.sql`SELECT credits::int FROM meter.credits_left(${client.id}::uuid) WHERE bucket = 'pack'`;
    return r?.credits;
  };
  t.equal(await left(), 300, 'half the price refunded: 500 credits voided');
  await ctx.post(ctx.event('charge.refunded', { ...charge, amount_refunded: 500, refunded: true }));
  t.equal(await left(), 0, 'fully refunded: the 300 left voided');
  const again = await ctx.post(ctx.event('charge.refunded', { ...charge, amount_refunded: 500, refunded: true }));
  t.equal(again.json().outcome, 'duplicate');
  const [voided] = await ctx.db.sql`SELECT -sum(delta)::int AS n FROM meter.ledger WHERE reason = 'pack_refunded'`;
  t.equal(voided!.n, 800, 'never more than was unspent');
  ctx.clean(t);
});

t.test('bad signature, stale timestamp, unknown client', async (t) => {
  const ctx = await billingApp(t);
  const { client } = await ctx.newClient('developer');
  const session = await completed(ctx, client.id, 'pack', 'bulk');
  const event = ctx.event('checkout.session.completed', session);
  const count = async () => (await ctx.db.sql`SELECT count(*)::int AS n FROM billing.events`)[0]!.n;

  const forged = await ctx.post(event, { secret: 'whsec_notthesecret' });
  t.equal(forged.statusCode, 400);
  t.equal(forged.json().error.code, 'bad_request');
  const stale = await ctx.post(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
  t.equal(stale.statusCode, 400, 'an hour-old signature');
  const none = await ctx.app.inject({
    method: 'POST',
    url: '/billing/stripe/webhook',
    payload: JSON.stringify(event),
    headers: { 'content-type': 'application/json' },
  });
  t.equal(none.statusCode, 400, 'no signature');
  t.equal(await count(), 0, 'nothing recorded');
  t.equal((await state(ctx, client.id)).packs, 0, 'nothing granted');

  const stranger = randomUUID();
  const unknown = await ctx.post(
    ctx.event('checkout.session.completed', {
      ...session,
      id: 'cs_test_stranger',
      customer: 'cus_nobody',
      client_reference_id: stranger,
      metadata: { client_id: stranger, pack: 'bulk' },
    }),
  );
  t.equal(unknown.statusCode, 200);
  t.equal(unknown.json().outcome, 'unknown client');
  t.equal(await count(), 1, 'recorded');
  const [packs] = await ctx.db.sql`SELECT count(*)::int AS n FROM accounts.credit_packs WHERE pack = 'bulk'`;
  t.equal(packs!.n, 0, 'nothing granted');
  ctx.clean(t);
});

t.test('billing off: no webhook route', async (t) => {
  const { buildTestApp } = await import('../helpers/app.ts');
  const ctx = await buildTestApp(t, { STRIPE_SECRET_KEY: '' });
  t.equal(ctx.app.billing, null);
  const res = await ctx.app.inject({ method: 'POST', url: '/billing/stripe/webhook', payload: '{}' });
  t.equal(res.statusCode, 404);
});
