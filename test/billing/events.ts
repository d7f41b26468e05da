// Stripe events from the templates in fixtures/stripe/events, with the ids, times and objects a test gives.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

type Json = Record<string, unknown>;
export type EventType =
  | 'checkout.session.completed'
  | 'checkout.session.async_payment_succeeded'
  | 'customer.subscription.updated'
  | 'customer.subscription.deleted'
  | 'invoice.paid'
  | 'invoice.payment_failed'
  | 'charge.refunded';

const TEMPLATE: Record<EventType, string> = {
  'checkout.session.completed': 'checkout.session.completed',
  'checkout.session.async_payment_succeeded': 'checkout.session.completed',
  'customer.subscription.updated': 'customer.subscription.updated',
  'customer.subscription.deleted': 'customer.subscription.updated',
  'invoice.paid': 'invoice.payment_failed',
  'invoice.payment_failed': 'invoice.payment_failed',
  'charge.refunded': 'charge.refunded',
};

/** An event of `type` whose object is the template's with `object` merged over it; `created` in Unix seconds. */
export function eventFixture(type: EventType, object: Json, opts: { id?: string; created?: number } = {}): Json {
  const template = JSON.parse(
    readFileSync(new URL(`../../fixtures/stripe/events/${TEMPLATE[type]}.json`, import.meta.url), 'utf8'),
  ) as Json & { data: { object: Json } };
  return {
    ...template,
    id: opts.id ?? `evt_${randomBytes(12).toString('hex')}`,
    type,
    created: opts.created ?? Math.floor(Date.now() / 1000),
    data: { ...template.data, object: { ...template.data.object, ...object } },
  };
}
