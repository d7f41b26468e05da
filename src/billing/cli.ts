// `admin billing ...`: the operator's Stripe commands (docs/billing.md#operator), over the owner connection.
//   billing sync-catalog                 find or make the products and prices of the paid plans and packs
//   billing overage --day YYYY-MM-DD     send one UTC day's overage invoice items (harmless to repeat)
//   billing status --client ID           Stripe customer, subscriptions, last events, overage lines
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../db-url.ts';
import { parseCliArgs } from '../accounts/cli-args.ts';
import { syncCatalogue } from './catalogue.ts';
import { sendOverage } from './overage.ts';
import { stripeClient, type Billing } from './stripe.ts';

export const BILLING_USAGE = `  billing sync-catalog   (Stripe products and prices of the paid plans and packs, made once)
  billing overage --day YYYY-MM-DD   (that UTC day's overage invoice items; harmless to repeat)
  billing status --client ID`;

export class BillingUsageError extends Error {}

function setting(name: string): string | undefined {
  const file = process.env[`${name}_FILE`];
  return process.env[name] || (file ? readFileSync(file, 'utf8').trim() : undefined);
}

async function status(sql: postgres.Sql, clientId: string) {
  const [client] = await sql`
    SELECT c.id, c.name, c.plan, c.subscription_status, b.customer_id
      FROM accounts.clients c LEFT JOIN billing.customers b ON b.client_id = c.id WHERE c.id = ${clientId}`;
  if (!client) throw new BillingUsageError(`client ${clientId} not found`);
  const subscriptions = await sql`
    SELECT subscription_id, plan, status, cancel_at_period_end, event_at FROM billing.subscriptions
     WHERE client_id = ${clientId} ORDER BY event_at DESC`;
  const events = await sql`
    SELECT event_id, type, outcome, created, received_at FROM billing.events
     WHERE client_id = ${clientId} ORDER BY received_at DESC LIMIT 10`;
  const overage = await sql`
    SELECT l.day::text, l.credits::int, l.amount_cents, o.invoice_item_id, o.sent_at, o.attempts
      FROM meter.overage_invoice_lines l
      LEFT JOIN billing.overage_items o ON o.client_id = l.client_id AND o.day = l.day
     WHERE l.client_id = ${clientId} ORDER BY l.day DESC LIMIT 62`;
  const text = [
    `${client.name}  ${client.id}`,
    `plan ${client.plan} (${client.subscription_status}); Stripe customer ${client.customer_id ?? 'none (billed by hand)'}`,
    'subscriptions:',
    ...subscriptions.map(
      (s) =>
        `  ${s.subscription_id}  ${s.plan ?? '?'}  ${s.status}${s.cancel_at_period_end ? ' (cancels at period end)' : ''}  as of ${s.event_at.toISOString()}`,
    ),
    'last events:',
    ...events.map((e) => `  ${e.received_at.toISOString()}  ${e.type}  ${e.outcome}  ${e.event_id}`),
    'overage lines:',
    ...overage.map(
      (o) =>
        `  ${o.day}  ${o.credits} credits  $${(o.amount_cents / 100).toFixed(2)}  ${o.sent_at ? `sent ${o.invoice_item_id}` : o.attempts ? `pending (${o.attempts} attempts)` : 'pending'}`,
    ),
  ].join('\n');
  return { json: { client, subscriptions, events, overage }, text };
}

/** Runs one `billing` command; `argv` after the word billing. */
export async function runBillingCli(argv: string[], out: (json: unknown, text: string) => void): Promise<void> {
  const { values, positionals } = parseCliArgs(argv, {
    day: { type: 'string' },
    client: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const command = positionals.join(' ');
  const sql = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
  try {
    if (command === 'status') {
      if (!values.client) throw new BillingUsageError('--client is required');
      const s = await status(sql, values.client);
      return out(s.json, s.text);
    }
    if (command !== 'sync-catalog' && command !== 'overage') {
      throw new BillingUsageError(`unknown command 'billing ${command}'\n${BILLING_USAGE}`);
    }
    const key = setting('STRIPE_SECRET_KEY');
    if (!key) throw new BillingUsageError('STRIPE_SECRET_KEY (or STRIPE_SECRET_KEY_FILE) is not set: billing is off');
    const stripe = stripeClient(key, process.env.STRIPE_API_BASE || undefined);
    if (command === 'sync-catalog') {
      const items = await syncCatalogue(sql, stripe);
      return out(
        items,
        items
          .map(
            (i) =>
              `${i.outcome.padEnd(7)}  ${i.lookup_key.padEnd(18)}  ${i.price_id}  $${(i.unit_amount / 100).toFixed(2)}`,
          )
          .join('\n'),
      );
    }
    if (!values.day) throw new BillingUsageError('--day YYYY-MM-DD is required');
    const billing: Billing = { stripe, sql, webhookSecret: undefined, siteUrl: '' };
    let result;
    try {
      result = await sendOverage(billing, values.day);
    } catch (err) {
      if (err instanceof RangeError) throw new BillingUsageError(err.message);
      throw err;
    }
    return out(
      result,
      result.sent.length === 0
        ? `${result.day}: nothing to send`
        : result.sent
            .map(
              (s) =>
                `${s.day}  ${s.client_id}  ${s.credits} credits  ${s.amount_cents}¢  ${s.invoice_item_id}${s.found ? ' (found, sent before)' : ''}`,
            )
            .join('\n'),
    );
  } finally {
    await sql.end();
  }
}
