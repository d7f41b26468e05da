// The catalogue sync, the Stripe customer per client and Checkout Sessions, against the Stripe double.
import t from 'tap';
import { billingApp } from './helpers.ts';
import { syncCatalogue } from '../../src/billing/catalogue.ts';
import { checkoutUrl, portalUrl } from '../../src/billing/checkout.ts';
import { STRIPE_API_VERSION } from '../../src/billing/stripe.ts';

t.test('sync-catalog makes one product and price per paid plan and pack, then finds them', async (t) => {
  const ctx = await billingApp(t);
  const prices = ctx.stripe.calls('POST /v1/prices');
  t.same(
    prices
      .map((r) => [
        r.params.lookup_key,
        r.params.unit_amount,
        (r.params.recurring as { interval?: string })?.interval ?? null,
      ])
      .sort(),
    [
      ['pack:bulk', '9900', null],
      ['pack:investigator', '2300', null],
      ['pack:power', '34900', null],
      ['pack:starter', '500', null],
      ['plan:developer', '1900', 'month'],
      ['plan:growth', '14900', 'month'],
      ['plan:lead_feed', '29900', 'month'],
      ['plan:mcp_starter', '500', 'month'],
      ['plan:pro', '4900', 'month'],
    ],
    'Developer $19, Pro $49, Growth $149, Lead Feed $299, MCP Starter $5 monthly; packs one-time; no Enterprise',
  );
  t.ok(
    prices.every((r) => r.idempotencyKey === `price:${String(r.params.lookup_key)}:${String(r.params.unit_amount)}`),
  );
  t.ok(
    ctx.stripe.requests.every((r) => r.stripeVersion === STRIPE_API_VERSION),
    'every request names the pinned version',
  );
  const again = await syncCatalogue(ctx.db.sql, ctx.app.billing!.stripe);
  t.ok(
    again.every((i) => i.outcome === 'found'),
    'a second run finds everything',
  );
  t.equal(ctx.stripe.calls('POST /v1/prices').length, 9, 'and makes nothing');
  t.equal(ctx.stripe.calls('POST /v1/products').length, 9);
  ctx.clean(t);
});

t.test('checkout carries our client id and item; one Stripe customer per client', async (t) => {
  const ctx = await billingApp(t);
  const { client } = await ctx.newClient('free');
  const url = await checkoutUrl(ctx.app.billing!, client.id, { kind: 'plan', item: 'developer' });
  t.match(url, `${ctx.stripe.base}/checkout/cs_test_`);
  const [create] = ctx.stripe.calls('POST /v1/checkout/sessions');
  t.match(create!.params, {
    mode: 'subscription',
    client_reference_id: client.id,
    metadata: { client_id: client.id, plan: 'developer' },
    subscription_data: { metadata: { client_id: client.id, plan: 'developer' } },
  });
  await checkoutUrl(ctx.app.billing!, client.id, { kind: 'pack', item: 'starter' });
  const pack = ctx.stripe.calls('POST /v1/checkout/sessions')[1]!;
  t.match(pack.params, { mode: 'payment', metadata: { client_id: client.id, pack: 'starter' } });
  await portalUrl(ctx.app.billing!, client.id);
  const customers = ctx.stripe.calls('POST /v1/customers');
  t.equal(customers.length, 1, 'one customer, made once');
  t.equal(customers[0]!.idempotencyKey, `cus:${client.id}`);
  t.same(customers[0]!.params.metadata, { client_id: client.id });
  const [row] = await ctx.db.sql`SELECT count(*)::int AS n FROM billing.customers WHERE client_id = ${client.id}`;
  t.equal(row!.n, 1);
  await t.rejects(checkoutUrl(ctx.app.billing!, client.id, { kind: 'plan', item: 'enterprise' }), /not on sale/);
  ctx.clean(t);
});

t.test('the double refuses what Stripe would refuse', async (t) => {
  const ctx = await billingApp(t);
  const b = ctx.app.billing!;
  await t.rejects(
    b.stripe.invoiceItems.create({ customer: 'cus_x', amount: 5, currency: 'usd', bogus: 1 } as never),
    /unknown|additional|Invalid/i,
  );
  t.match(ctx.stripe.violations, [/POST \/v1\/invoiceitems: Invalid request/], 'recorded as a violation');
});
