// The dashboard's pages: the request log (filter by status, search, pages of 100), usage per endpoint and key over a
// date range, the date-range form the usage pages share, and the low-credit email's setting.
import { count, csrfField, html, raw, utc, dataTable, type Html } from './html.ts';
import type { CreditAlert, EndpointUsageRow, LoggedRequest } from './dashboard-queries.ts';
import type { DayRange } from './usage.ts';
import { messagePage } from './auth-pages.ts';

/** The request log's status filter choices (the value, the label). */
export const STATUS_CHOICES = [
  ['', 'Every status'],
  ['2xx', '2xx: answered'],
  ['errors', 'Errors (400 and above)'],
  ['4xx', '4xx: refused'],
  ['5xx', '5xx: our failures'],
] as const;
export const LOG_PAGE_SIZE = 100;

const keyLabel = (display: string | null, name: string | null) =>
  name ? html`${name} <code>${display ?? ''}</code>` : html`<code>${display ?? 'deleted key'}</code>`;

export function rangeForm(action: string, range: DayRange): Html {
  return html`<form method="get" action="${action}" class="card form range">
    <label>From <input type="date" name="from" value="${range.from}" required /></label>
    <label>To <input type="date" name="to" value="${range.to}" required /></label>
    <button type="submit">Show</button>
    <span class="hint">UTC days, at most 366 apart.</span>
  </form>`;
}

export const badRangePage = (message: string) =>
  messagePage(`${message} Example: from 2026-10-01 to 2026-11-30.`, { href: '/account/usage', label: 'Usage' });

export function requestLogPage(rows: LoggedRequest[], filter: { status: string; search: string; page: number }): Html {
  const total = rows[0]?.total ?? 0;
  const first = (filter.page - 1) * LOG_PAGE_SIZE;
  const link = (page: number) =>
    `/account/requests?${new URLSearchParams({ status: filter.status, q: filter.search, page: String(page) })}`;
  const body = rows.map(
    (r) =>
      html`<tr class="${r.status >= 400 ? 'failed' : ''}">
        <td><time datetime="${r.at.toISOString()}">${utc(r.at)}</time></td>
        <td>${keyLabel(r.key_display, r.key_name)}</td>
        <td>${r.method}</td>
        <td class="path"><code>${r.path}</code></td>
        <td>${r.status}</td>
        <td>${r.error_code ? html`<code>${r.error_code}</code>` : ''}</td>
        <td class="num">${r.duration_ms.toFixed(1)} ms</td>
      </tr>`,
  );
  return html`<p class="lead">
      The last 1,000 requests of your keys in the last 30 days, newest first, about two seconds after each is answered.
      Paths are shown without secret query values (keys, tokens, passwords become [REDACTED]); a request without a valid
      key belongs to no account and is not listed.
    </p>
    <form method="get" action="/account/requests" class="card form range">
      <label
        >Status
        <select name="status">
          ${STATUS_CHOICES.map(
            ([value, label]) =>
              html`<option value="${value}" ${filter.status === value ? raw('selected') : ''}>${label}</option>`,
          )}
        </select></label
      >
      <label>Path, endpoint or error code <input name="q" value="${filter.search}" maxlength="100" /></label>
      <button type="submit">Filter</button>
    </form>
    <section class="card" aria-labelledby="h-log">
      <h2 id="h-log">
        ${total === 0 ? 'No requests' : html`Requests ${count(first + 1)}–${count(first + rows.length)} of ${count(total)}`}
      </h2>
      ${
        rows.length === 0
          ? html`<p>No request matches. <a href="/account/quickstart">The quick start</a> makes a first one.</p>`
          : dataTable('numbers log', ['Time (UTC)', 'Key', 'Method', 'Path', 'Status', 'Error', 'Duration'], body)
      }
      <p class="pages">
        ${filter.page > 1 ? html`<a href="${link(filter.page - 1)}" rel="prev">Newer</a>` : ''}
        ${first + rows.length < total ? html`<a href="${link(filter.page + 1)}" rel="next">Older</a>` : ''}
      </p>
    </section>`;
}

export function endpointUsagePage(range: DayRange, rows: EndpointUsageRow[]): Html {
  const endpoints = new Map<string, EndpointUsageRow[]>();
  for (const r of rows) endpoints.set(r.endpoint, [...(endpoints.get(r.endpoint) ?? []), r]);
  const sum = (list: EndpointUsageRow[], f: 'ok' | 'failed') => list.reduce((a, r) => a + r[f], 0);
  const query = `from=${range.from}&to=${range.to}`;
  const body = [...endpoints].flatMap(([endpoint, list]) => [
    html`<tr class="total">
      <th scope="row"><code>${endpoint}</code></th>
      <td class="num">${count(sum(list, 'ok'))}</td>
      <td class="num">${count(sum(list, 'failed'))}</td>
    </tr>`,
    ...list.map(
      (r) =>
        html`<tr>
          <td class="key">${keyLabel(r.key_display, r.key_name)} ${r.mode === 'test' ? '(test)' : ''}</td>
          <td class="num">${count(r.ok)}</td>
          <td class="num">${count(r.failed)}</td>
        </tr>`,
    ),
  ]);
  return html`<p class="lead">
      Requests per endpoint and key from ${range.from} to ${range.to} (UTC): answered (2xx, one credit each) and refused
      or failed (any other status, no credit). <a href="/account/usage?${query}">Usage per day</a> ·
      <a href="/account/requests">Request log</a>
    </p>
    ${rangeForm('/account/usage/endpoints', range)}
    <section class="card" aria-labelledby="h-endpoints">
      <h2 id="h-endpoints">By endpoint and key</h2>
      <p>
        <a href="/account/usage/endpoints.csv?${query}" download>Download as CSV</a> (one line per endpoint and key).
      </p>
      ${
        rows.length === 0
          ? html`<p>No requests from ${range.from} to ${range.to}.</p>`
          : dataTable('numbers endpoints', ['Endpoint, then each key', 'Answered (2xx)', 'Refused or failed'], body, {
              foot: html`<tr class="total">
                <th scope="row">Total</th>
                <td class="num">${count(sum(rows, 'ok'))}</td>
                <td class="num">${count(sum(rows, 'failed'))}</td>
              </tr>`,
            })
      }
    </section>`;
}

export function alertsPage(csrf: string, alert: CreditAlert | null, error: string | null): Html {
  return html`<p class="lead">
      We email you when the credits you have left (this month's grant, packs and one-time credits together) fall below
      the number you set here, at most once per billing month (UTC). We check about once a minute.
    </p>
    <form method="post" action="/account/alerts" class="card form">
      ${csrfField(csrf)} ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <label
        >Email me below this many credits (empty: no email)
        <input name="threshold" inputmode="numeric" pattern="[0-9,]*" value="${alert ? String(alert.threshold) : ''}"
      /></label>
      <button type="submit">Save</button>
      <p class="hint">
        ${
          alert
            ? alert.last_sent_at
              ? html`Last sent ${utc(alert.last_sent_at)} (for ${alert.last_sent_period}).`
              : 'Not sent yet this month.'
            : 'No low-credit email is set.'
        }
      </p>
    </form>`;
}
