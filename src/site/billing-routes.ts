// The shop's routes under /account/billing (docs/billing.md#site): POST checkout (CSRF-checked like every site form)
// redirects to Stripe Checkout, POST portal to the Customer Portal, GET return is where Checkout comes back. With
// billing off they answer 404 and the plans page says to write to support.
import type { FastifyInstance } from 'fastify';
import { field } from './form.ts';
import { messagePage } from './auth-pages.ts';
import { returnPage } from './billing-pages.ts';
import { checkoutUrl, portalUrl } from '../billing/checkout.ts';
import { BillingError } from '../billing/customers.ts';
import type { Site } from './index.ts';

export default async function billingRoutes(app: FastifyInstance, opts: { site: Site }) {
  const { site } = opts;
  const billing = app.billing;
  if (!billing) return;

  app.post('/billing/checkout', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    const kind = field(request.body, 'kind', 10);
    const item = field(request.body, 'item', 40);
    const refuse = (text: string) =>
      site.render(reply, { title: 'Not on sale', status: 400, current: '/account/plans' }, () =>
        messagePage(text, { href: '/account/plans', label: 'Plans and packs' }),
      );
    if ((kind !== 'plan' && kind !== 'pack') || !/^[a-z_]{1,30}$/.test(item)) return refuse('Choose a plan or a pack.');
    const [state] = await billing.sql<{ stripe_status: string | null }[]>`
      SELECT stripe_status FROM billing.account_billing(${user.client_id}::uuid)`;
    // a client already subscribed changes plan in the Portal (prorated there), not with a second subscription
    if (kind === 'plan' && state?.stripe_status && ['active', 'past_due', 'trialing'].includes(state.stripe_status)) {
      return reply.redirect(await portalUrl(billing, user.client_id), 303);
    }
    try {
      return reply.redirect(await checkoutUrl(billing, user.client_id, { kind, item }), 303);
    } catch (err) {
      if (err instanceof BillingError) return refuse(`That ${kind} cannot be bought online.`);
      throw err;
    }
  });

  app.post('/billing/portal', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    return reply.redirect(await portalUrl(billing, user.client_id), 303);
  });

  app.get('/billing/return', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    const session = (request.query as Record<string, unknown>).session_id;
    const id = typeof session === 'string' && /^cs_[A-Za-z0-9_]{1,200}$/.test(session) ? session : null;
    const [row] = id
      ? await billing.sql<{ done: boolean }[]>`SELECT billing.checkout_done(${user.client_id}::uuid, ${id}) AS done`
      : [{ done: false }];
    if (!row!.done) reply.header('Refresh', '3');
    return site.render(reply, { title: row!.done ? 'Payment received' : 'Processing', current: '/account/plans' }, () =>
      returnPage(row!.done),
    );
  });
}
