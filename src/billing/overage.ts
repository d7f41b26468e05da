// The daily overage invoice items (docs/billing.md#overage): for UTC day D, one item per Stripe-billed client with
// overage on D, of 5 × ceil(credits / 10) cents, on the customer's next invoice. Harmless to repeat, and a crash
// between Stripe's answer and our commit neither loses nor doubles a charge:
//   1. billing.overage_due records the (client, day) row once (unique) and lists those not sent;
//   2. billing.begin_overage_attempt counts the attempt in its own commit;
//   3. an attempt after the first looks for the item an earlier one may have made (metadata overage_key) before it
//      asks for one; every create carries the idempotency key ovg:<client>:<day>, so Stripe answers a repeat with
//      the same item for 24 hours, and the lookup covers the time after;
//   4. billing.finish_overage stores the item's id.
import type { Billing } from './stripe.ts';

export interface OverageLine {
  client_id: string;
  day: string;
  customer_id: string;
  credits: number;
  amount_cents: number;
}

export interface OverageResult {
  day: string;
  sent: (OverageLine & { invoice_item_id: string; found: boolean })[];
}

/** What $0.005 a credit rounded up to $0.05 makes of a day's credits, in cents. */
export const overageCents = (credits: number) => 5 * Math.ceil(credits / 10);

/** The description on the customer's invoice: `API overage 2026-11-24: 1,234 requests`. */
export const overageDescription = (day: string, credits: number) =>
  `API overage ${day}: ${credits.toLocaleString('en-US')} requests`;

export const overageKey = (clientId: string, day: string) => `ovg:${clientId}:${day}`;

/** Sends day `day`'s overage lines not sent yet; returns what it sent (or found already made). */
export async function sendOverage(b: Billing, day: string): Promise<OverageResult> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) {
    throw new RangeError(`day must be YYYY-MM-DD, got '${day}'`);
  }
  const due = await b.sql<(OverageLine & { attempts: number; first_attempt_at: Date | null })[]>`
    SELECT client_id, day::text, customer_id, credits::float8 AS credits, amount_cents
      FROM billing.overage_due(${day}::date)`;
  const result: OverageResult = { day, sent: [] };
  for (const line of due) {
    const [attempt] = await b.sql<{ attempts: number; first_attempt_at: Date; sent: boolean }[]>`
      SELECT * FROM billing.begin_overage_attempt(${line.client_id}::uuid, ${day}::date)`;
    if (!attempt || attempt.sent) continue;
    const key = overageKey(line.client_id, day);
    let itemId: string | undefined;
    if (attempt.attempts > 1) {
      const since = Math.floor(attempt.first_attempt_at.getTime() / 1000) - 300;
      for await (const item of b.stripe.invoiceItems.list({
        customer: line.customer_id,
        created: { gte: since },
        limit: 100,
      })) {
        if (item.metadata?.overage_key === key) {
          itemId = item.id;
          break;
        }
      }
    }
    const found = itemId !== undefined;
    itemId ??= (
      await b.stripe.invoiceItems.create(
        {
          customer: line.customer_id,
          amount: line.amount_cents,
          currency: 'usd',
          description: overageDescription(day, line.credits),
          metadata: { client_id: line.client_id, day, credits: String(line.credits), overage_key: key },
        },
        { idempotencyKey: key },
      )
    ).id;
    await b.sql`SELECT billing.finish_overage(${line.client_id}::uuid, ${day}::date, ${itemId})`;
    result.sent.push({ ...line, invoice_item_id: itemId, found });
  }
  return result;
}

/** The UTC day before `now`: the day a run after midnight bills. */
export const previousDay = (now: number) => new Date(now - 86_400_000).toISOString().slice(0, 10);
