// One Stripe customer per client, made on first need and stored (billing.customers is unique per client).
import type { Billing } from './stripe.ts';

export class BillingError extends Error {}

export interface CheckoutClient {
  name: string;
  email: string;
  plan: string;
  subscription_status: string;
  customer_id: string | null;
}

export async function clientForCheckout(b: Billing, clientId: string): Promise<CheckoutClient> {
  const [client] = await b.sql<CheckoutClient[]>`SELECT * FROM billing.client_for_checkout(${clientId}::uuid)`;
  if (!client) throw new BillingError(`client ${clientId} not found`);
  return client;
}

/**
 * The client's Stripe customer id. Made with the idempotency key cus:<client>, so two first checkouts at once make
 * one customer; the first id stored wins.
 */
export async function ensureCustomer(b: Billing, clientId: string, client?: CheckoutClient): Promise<string> {
  const c = client ?? (await clientForCheckout(b, clientId));
  if (c.customer_id) return c.customer_id;
  const customer = await b.stripe.customers.create(
    { email: c.email, name: c.name, metadata: { client_id: clientId } },
    { idempotencyKey: `cus:${clientId}` },
  );
  const [row] = await b.sql<{ id: string }[]>`SELECT billing.save_customer(${clientId}::uuid, ${customer.id}) AS id`;
  return row!.id;
}
