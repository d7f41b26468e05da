// The account site's webhook endpoints (docs/site.md#webhooks): the list with a form that registers one (its signing
// secret shown once, like a key), an endpoint's page (send a test event, disable or enable, its delivery log) and the
// confirmation before deleting it. Each takes what its route read and returns escaped HTML (html.ts).
import { csrfField, html, utc, dataTable, type Html } from './html.ts';
import type { EndpointRow } from '../queries/webhooks.ts';
import type { WebhookDelivery } from '../schemas/webhooks.ts';
import { EVENT_TYPES } from '../schemas/webhooks.ts';

const status = (e: EndpointRow) =>
  e.status === 'enabled'
    ? html`<span class="yes">enabled</span>`
    : html`<span class="no">disabled${e.disabled_reason ? html` (${e.disabled_reason})` : ''}</span>`;

export function endpointsPage(
  csrf: string,
  endpoints: EndpointRow[],
  created: (EndpointRow & { secret: string }) | null,
  error: string | null,
): Html {
  const secret = created
    ? html`<section class="card newkey" aria-labelledby="h-secret">
        <h2 id="h-secret">Signing secret of ${created.url}</h2>
        <p class="warning" role="alert">
          <strong>Copy it now: it will not be shown again.</strong> Your receiver checks each request's signature with
          it (webhook-signature). If you lose it, rotate it through the API.
        </p>
        <div class="rawkey">
          <code id="raw-secret" data-raw-secret>${created.secret}</code>
          <button type="button" class="copy" data-copy="raw-secret" hidden>Copy</button>
        </div>
        <p><a href="/account/webhooks/${created.id}">Send it a test event</a></p>
      </section>`
    : '';
  const rows = endpoints.map(
    (e) =>
      html`<tr>
        <td><a href="/account/webhooks/${e.id}">${e.url}</a></td>
        <td>${e.events.join(', ')}</td>
        <td>${e.counties ? e.counties.join(', ') : 'every county'}</td>
        <td>${status(e)}</td>
        <td>${utc(new Date(e.created_at))}</td>
      </tr>`,
  );
  return html`${secret}
    <section class="card" aria-labelledby="h-register">
      <h2 id="h-register">Register an endpoint</h2>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <form method="post" action="/account/webhooks" class="form">
        ${csrfField(csrf)}
        <label
          >URL (https://) <input name="url" required maxlength="2048" placeholder="https://example.com/hooks"
        /></label>
        <fieldset>
          <legend>Events</legend>
          ${EVENT_TYPES.filter((t) => t !== 'webhook.test').map(
            (t) => html`<label class="choice"><input type="checkbox" name="events" value="${t}" /> ${t}</label>`,
          )}
        </fieldset>
        <label
          >Counties (slugs, comma-separated; empty: every county)
          <input name="counties" maxlength="3000" placeholder="broward, palm-beach"
        /></label>
        <label
          >Value change threshold, percent (parcel.value_changed; empty: 10)
          <input name="value_change_threshold" inputmode="decimal" maxlength="10"
        /></label>
        <label>Description (optional) <input name="description" maxlength="500" /></label>
        <button type="submit">Register the endpoint</button>
      </form>
    </section>
    <section class="card" aria-labelledby="h-endpoints">
      <h2 id="h-endpoints">Your endpoints</h2>
      ${
        endpoints.length === 0
          ? html`<p>No endpoints yet.</p>`
          : dataTable('keys', ['URL', 'Events', 'Counties', 'Status', 'Registered'], rows)
      }
    </section>`;
}

function deliveryRow(d: WebhookDelivery): Html {
  const last = d.attempts.at(-1);
  return html`<tr data-delivery="${d.id}">
    <td><code>${d.id}</code></td>
    <td>${d.event_type}</td>
    <td>${d.status}${d.reason ? html` (${d.reason})` : ''}</td>
    <td>${d.attempts.length}</td>
    <td>${last ? (last.status_code ?? last.error ?? '—') : '—'}</td>
    <td>${d.next_retry_at ? utc(new Date(d.next_retry_at)) : '—'}</td>
    <td>${utc(new Date(d.created_at))}</td>
  </tr>`;
}

export function endpointPage(csrf: string, e: EndpointRow, deliveries: WebhookDelivery[], error: string | null): Html {
  const toggle = e.status === 'enabled' ? 'disable' : 'enable';
  return html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <section class="card" aria-labelledby="h-endpoint">
      <h2 id="h-endpoint">${e.url}</h2>
      <dl class="facts">
        <dt>Id</dt>
        <dd><code>${e.id}</code></dd>
        <dt>Status</dt>
        <dd>${status(e)}</dd>
        <dt>Events</dt>
        <dd>${e.events.join(', ')}</dd>
        <dt>Counties</dt>
        <dd>${e.counties ? e.counties.join(', ') : 'every county'}</dd>
        <dt>Value change threshold</dt>
        <dd>${e.value_change_threshold}%</dd>
        <dt>Description</dt>
        <dd>${e.description ?? '—'}</dd>
      </dl>
      <div class="actions">
        <form method="post" action="/account/webhooks/${e.id}/test">
          ${csrfField(csrf)}<button type="submit">Send a test event</button>
        </form>
        <form method="post" action="/account/webhooks/${e.id}/${toggle}">
          ${csrfField(csrf)}<button type="submit">${toggle === 'disable' ? 'Disable' : 'Enable'}</button>
        </form>
        <a href="/account/webhooks/${e.id}/delete" class="danger">Delete</a>
      </div>
    </section>
    <section class="card" aria-labelledby="h-deliveries">
      <h2 id="h-deliveries">Recent deliveries</h2>
      ${
        deliveries.length === 0
          ? html`<p>No deliveries yet.</p>`
          : dataTable(
              'numbers deliveries',
              ['Delivery', 'Event', 'Status', 'Attempts', 'Last response', 'Next retry', 'Queued'],
              deliveries.map(deliveryRow),
            )
      }
      <p><a href="/account/webhooks">All endpoints</a></p>
    </section>`;
}

export function deletePage(csrf: string, e: EndpointRow): Html {
  return html`<form method="post" action="/account/webhooks/${e.id}/delete" class="card form">
    ${csrfField(csrf)}
    <p>Delete the endpoint <code>${e.url}</code>, registered ${utc(new Date(e.created_at))}?</p>
    <p class="warning">It stops receiving at once; its pending deliveries are dropped. This cannot be undone.</p>
    <div class="actions">
      <button type="submit" class="danger">Delete the endpoint</button> <a href="/account/webhooks/${e.id}">Cancel</a>
    </div>
  </form>`;
}
