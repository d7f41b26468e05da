// past_due turns overage off at the next request in every API process; paid again, it is on again.
import t from 'tap';
import { billingApp } from './helpers.ts';
import { buildTestApp } from '../helpers/app.ts';

t.test('past_due stops overage at the next request in every process', async (t) => {
  const ctx = await billingApp(t);
  // a second API process: same database, same Redis counters
  const second = await buildTestApp(t, { ...ctx.env, REDIS_KEY_PREFIX: ctx.prefix }, { db: ctx.db });
  const { client, headers } = await ctx.newClient('developer');
  await ctx.db.sql`INSERT INTO billing.customers (client_id, customer_id) VALUES (${client.id}, 'cus_pastdue')`;
  // the month's 10,000 credits spent: every request from here is overage
  await ctx.db.sql`INSERT INTO meter.ledger (client_id, bucket, period, delta, reason)
                   VALUES (${client.id}, 'monthly', meter.period_of(now()), -10000, 'test: grant spent')`;
  await ctx.invalidate(client.id);
  const get = (app: typeof ctx.app) => app.inject({ method: 'GET', url: '/v1/counties', headers });
  t.equal((await get(ctx.app)).statusCode, 200, 'overage on: answered');
  t.equal((await get(second.app)).statusCode, 200, 'in the other process too');

  const sub = (status: string) => ({
    id: 'sub_pastdue',
    customer: 'cus_pastdue',
    status,
    metadata: { client_id: client.id },
    items: {
      object: 'list',
      data: [
        {
          id: 'si_1',
          object: 'subscription_item',
          price: { id: 'price_x', object: 'price', lookup_key: 'plan:developer' },
        },
      ],
    },
  });
  const t0 = Math.floor(Date.now() / 1000);
  t.equal(
    (await ctx.post(ctx.event('customer.subscription.updated', sub('past_due'), { created: t0 }))).json().outcome,
    'applied',
  );
  for (const [name, app] of [
    ['the process that got the event', ctx.app],
    ['the other process', second.app],
  ] as const) {
    const refused = await get(app);
    t.equal(refused.statusCode, 429, `${name}: 429 past the grant`);
    t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After to the next cycle');
  }
  t.equal(
    (await ctx.post(ctx.event('customer.subscription.updated', sub('active'), { created: t0 + 1 }))).json().outcome,
    'applied',
  );
  t.equal((await get(second.app)).statusCode, 200, 'paid again: overage on at the next request');
  t.equal((await get(ctx.app)).statusCode, 200);
  ctx.clean(t);
});
