// Checkout Sessions for a plan or a pack, and Customer Portal sessions. The redirect back grants nothing: only the
// signed webhook event does (src/billing/webhook.ts).
import { BillingError, clientForCheckout, ensureCustomer } from './customers.ts';
import { lookupKey, type Billing } from './stripe.ts';

export interface Purchase {
  kind: 'plan' | 'pack';
  item: string;
}

/** The Checkout URL for `purchase` by the client. */
export async function checkoutUrl(b: Billing, clientId: string, purchase: Purchase): Promise<string> {
  const [row] = await b.sql<{ price: string | null }[]>`
    SELECT billing.price_of(${lookupKey(purchase.kind, purchase.item)}) AS price`;
  if (!row?.price) throw new BillingError(`${purchase.kind} '${purchase.item}' is not on sale`);
  const client = await clientForCheckout(b, clientId);
  const customer = await ensureCustomer(b, clientId, client);
  const metadata = { client_id: clientId, [purchase.kind]: purchase.item };
  const session = await b.stripe.checkout.sessions.create({
    mode: purchase.kind === 'plan' ? 'subscription' : 'payment',
    customer,
    client_reference_id: clientId,
    line_items: [{ price: row.price, quantity: 1 }],
    metadata,
    ...(purchase.kind === 'plan' ? { subscription_data: { metadata } } : { payment_intent_data: { metadata } }),
    success_url: `${b.siteUrl}/account/billing/return?session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${b.siteUrl}/account/plans`,
  });
  if (!session.url) throw new BillingError('Stripe gave no Checkout address');
  return session.url;
}

/** The Customer Portal URL for the client (cards, invoices, cancelling, plan changes among our prices). */
export async function portalUrl(b: Billing, clientId: string): Promise<string> {
  const customer = await ensureCustomer(b, clientId);
  const session = await b.stripe.billingPortal.sessions.create({ customer, return_url: `${b.siteUrl}/account` });
  return session.url;
}

/** The account page's billing block (billing.account_billing). */
export async function accountBilling(b: Billing, clientId: string) {
  const [row] = await b.sql<import('../site/billing-pages.ts').BillingRow[]>`
    SELECT subscription_status, stripe_status, cancel_at_period_end, failed_invoice_url, failed_amount_due, overage,
           checkouts::int AS checkouts
      FROM billing.account_billing(${clientId}::uuid)`;
  return row ?? null;
}
