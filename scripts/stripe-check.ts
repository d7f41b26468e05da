// `make stripe-check` (not in CI; docs/billing.md#stripe-check): the billing scenario against a real Stripe account in
// test mode. Needs STRIPE_SECRET_KEY=sk_test_…, the API running (`make run`) with STRIPE_WEBHOOK_SECRET set to what
// `stripe listen --forward-to 127.0.0.1:3000/billing/stripe/webhook` prints, and the local database.
//   1. sync the catalogue (twice: the second run finds everything);
//   2. a new Free Trial client subscribes to Developer with Stripe's test card: the forwarded events move it to
//      Developer, active;
//   3. a Starter pack through Checkout: the script prints the Checkout address, a person pays with 4242 4242 4242 4242,
//      and the forwarded event grants 1,000 credits;
//   4. yesterday's overage (12 credits, planted) becomes exactly one invoice item of 10 cents, also when run again.
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { loadLocalEnv } from '../src/local-env.ts';
import { syncCatalogue } from '../src/billing/catalogue.ts';
import { checkoutUrl } from '../src/billing/checkout.ts';
import { ensureCustomer } from '../src/billing/customers.ts';
import { previousDay, sendOverage } from '../src/billing/overage.ts';
import { stripeClient, type Billing } from '../src/billing/stripe.ts';

const step = (m: string) => console.log(`stripe-check: ${m}`);
async function until<T>(what: string, seconds: number, read: () => Promise<T | undefined>): Promise<T> {
  for (const end = Date.now() + seconds * 1000; Date.now() < end; await new Promise((r) => setTimeout(r, 2000))) {
    const v = await read();
    if (v !== undefined) return v;
  }
  throw new Error(`${what}: nothing within ${seconds} s (is \`stripe listen\` forwarding to the running API?)`);
}

async function main() {
  loadLocalEnv();
  const key = process.env.STRIPE_SECRET_KEY ?? '';
  if (!key.startsWith('sk_test_')) throw new Error('set STRIPE_SECRET_KEY=sk_test_… (test mode only)');
  const sql = postgres(ownerDatabaseUrl(), { max: 2, onnotice: () => {} });
  const stripe = stripeClient(key, process.env.STRIPE_API_BASE || undefined);
  const b: Billing = {
    stripe,
    sql,
    webhookSecret: undefined,
    siteUrl: process.env.SITE_URL || 'http://127.0.0.1:3000',
  };
  try {
    await syncCatalogue(sql, stripe);
    const again = await syncCatalogue(sql, stripe);
    if (again.some((i) => i.outcome !== 'found')) throw new Error('a second sync-catalog made something');
    step(`catalogue: ${again.length} prices found on the second run`);

    const [client] = await sql<{ id: string }[]>`
      INSERT INTO accounts.clients (name, email, plan) VALUES ('stripe-check', 'stripe-check@example.com', 'free') RETURNING id`;
    const customer = await ensureCustomer(b, client!.id);
    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer });
    await stripe.customers.update(customer, { invoice_settings: { default_payment_method: pm.id } });
    const [price] = await sql<
      { price_id: string }[]
    >`SELECT price_id FROM billing.catalogue WHERE lookup_key = 'plan:developer'`;
    await stripe.subscriptions.create({
      customer,
      items: [{ price: price!.price_id }],
      metadata: { client_id: client!.id, plan: 'developer' },
    });
    await until('the subscription event', 120, async () => {
      const [c] =
        await sql`SELECT 1 FROM accounts.clients WHERE id = ${client!.id} AND plan = 'developer' AND subscription_status = 'active'`;
      return c;
    });
    step(`client ${client!.id} is on Developer, active`);

    step(`pay with 4242 4242 4242 4242 here: ${await checkoutUrl(b, client!.id, { kind: 'pack', item: 'starter' })}`);
    await until('the pack', 600, async () => {
      const [p] = await sql`SELECT 1 FROM accounts.credit_packs WHERE client_id = ${client!.id} AND credits = 1000`;
      return p;
    });
    step('the Starter pack granted 1,000 credits');

    const day = previousDay(Date.now());
    const [key0] = await sql<{ id: string }[]>`
      INSERT INTO accounts.api_keys (client_id, mode, key_hash, display)
      VALUES (${client!.id}, 'live', sha256(random()::text::bytea), 'stripe-check') RETURNING id`;
    await sql`INSERT INTO meter.usage_daily (client_id, key_id, day, mode, surface, bucket, requests)
              VALUES (${client!.id}, ${key0!.id}, ${day}, 'live', 'rest', 'overage', 12)`;
    const first = await sendOverage(b, day);
    const second = await sendOverage(b, day);
    const item = await stripe.invoiceItems.retrieve(first.sent[0]!.invoice_item_id);
    if (item.amount !== 10 || second.sent.length !== 0)
      throw new Error(`overage: ${item.amount} cents, ${second.sent.length} repeats`);
    step(`overage ${day}: one invoice item of 10 cents (${item.id}); done`);
  } finally {
    await sql.end();
  }
}

main().catch((err: Error) => {
  console.error(`stripe-check: ${err.message}`);
  process.exit(1);
});
