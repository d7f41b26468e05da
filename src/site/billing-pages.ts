// The shop on the account site (docs/billing.md#site): Upgrade / Change plan and Buy pack buttons, Manage billing,
// the page Checkout returns to, and the overview's billing block. Escaped HTML (html.ts).
import { count, csrfField, dollars, html, dataTable, type Html } from './html.ts';

export interface BillingRow {
  subscription_status: string;
  stripe_status: string | null;
  cancel_at_period_end: boolean;
  failed_invoice_url: string | null;
  failed_amount_due: number | null;
  overage: { day: string; credits: number; amount_cents: number; sent: boolean }[];
  checkouts: number;
}

const button = (csrf: string, kind: 'plan' | 'pack', item: string, label: string) =>
  html`<form method="post" action="/account/billing/checkout" class="inline">
    ${csrfField(csrf)}<input type="hidden" name="kind" value="${kind}" /><input
      type="hidden"
      name="item"
      value="${item}"
    />
    <button type="submit">${label}</button>
  </form>`;

/** The plans page's buying section: a button per paid plan and per pack, and the Portal for what is bought. */
export function shopSection(
  csrf: string,
  plans: { plan: string; display_name: string; price_cents: number | null }[],
  packs: { pack: string; display_name: string; price_cents: number }[],
  current: string | null,
  subscribed: boolean,
): Html {
  const paid = plans.filter((p) => p.price_cents !== null && p.price_cents > 0);
  if (current === null) {
    return html`<section class="card" aria-labelledby="h-change">
      <h2 id="h-change">Changing plan or buying a pack</h2>
      <p>
        <a href="/account/signin?next=/account/plans">Sign in</a> to change plan or buy a pack; payment is by card
        through Stripe.
      </p>
    </section>`;
  }
  return html`<section class="card" aria-labelledby="h-change">
    <h2 id="h-change">Change plan or buy a pack</h2>
    <p>
      Payment is by card through Stripe. A new plan applies from your next request once the payment is confirmed; your
      keys stay the same.
    </p>
    <ul class="shop">
      ${paid.map(
        (p) =>
          html`<li>
            ${p.display_name}, ${dollars(p.price_cents!)}/month:
            ${p.plan === current ? html`<span class="tag">your plan</span>` : button(csrf, 'plan', p.plan, `${current === 'free' ? 'Upgrade to' : 'Change to'} ${p.display_name}`)}
          </li>`,
      )}
    </ul>
    <ul class="shop">
      ${packs.map((p) => html`<li>${button(csrf, 'pack', p.pack, `Buy ${p.display_name} pack (${dollars(p.price_cents)})`)}</li>`)}
    </ul>
    ${
      subscribed
        ? html`<form method="post" action="/account/billing/portal">
              ${csrfField(csrf)}<button type="submit">Manage billing</button>
            </form>
            <p>
              Cards, invoices, plan changes and cancelling (at the end of the paid month) are in Stripe's billing
              portal.
            </p>`
        : ''
    }
  </section>`;
}

/** The page Checkout returns to: processing until the signed event has landed, then done. */
export function returnPage(done: boolean): Html {
  return done
    ? html`<p class="lead">Payment received: your purchase is active.</p>
        <p><a href="/account">See your plan and credits</a></p>`
    : html`<p class="lead" role="status">Processing your payment…</p>
        <p>
          This page checks again every few seconds. Nothing changes until Stripe confirms the payment, usually within a
          minute.
        </p>
        <p><a href="/account">Back to your account</a></p>`;
}

/** The overview's billing block: the subscription's state, a failed payment, each day's overage and whether it was sent. */
export function billingBlock(b: BillingRow): Html {
  return html`<section class="card" aria-labelledby="h-billing">
    <h2 id="h-billing">Billing</h2>
    <p>
      Subscription:
      <strong class="sub-status">${b.stripe_status ?? b.subscription_status}</strong
      >${b.cancel_at_period_end ? ' (cancels at the end of the paid month)' : ''}
    </p>
    ${
      b.subscription_status === 'past_due'
        ? html`<p class="error" role="alert">
            Your last payment failed. Overage is off: past your monthly credits and packs, requests are answered 429
            until the next month. Update your card under Manage
            billing${b.failed_invoice_url ? html` or <a href="${b.failed_invoice_url}">pay the open invoice</a>` : ''}
            and overage is on again from the next request.
          </p>`
        : b.failed_invoice_url
          ? html`<p class="error">
              A payment of ${dollars(b.failed_amount_due ?? 0)} failed:
              <a href="${b.failed_invoice_url}">pay the invoice</a>.
            </p>`
          : ''
    }
    ${
      b.overage.length > 0
        ? dataTable(
            'numbers',
            ['Day (UTC)', 'Overage credits', 'Amount', 'Invoice'],
            b.overage.map(
              (o) =>
                html`<tr>
                  <th scope="row">${o.day}</th>
                  <td>${count(o.credits)}</td>
                  <td>${dollars(o.amount_cents)}</td>
                  <td>${o.sent ? 'sent to Stripe' : 'pending'}</td>
                </tr>`,
            ),
          )
        : ''
    }
  </section>`;
}
