// The signed-in account pages: overview, keys, usage, plans and the quick start. Each takes the figures its route
// read and the CSRF token for its forms, and returns escaped HTML (html.ts); the layout around them is html.ts's `page`.
import { count, csrfField, dataTable, dollars, html, raw, utc, type Html } from './html.ts';
import type { AccountRow, CreditRow, KeyRow, PlanRow, UsageRow } from './queries.ts';
import type { Errors } from './auth-pages.ts';
import { chart, legend, seriesOf, table, type DayRange } from './usage.ts';
import { rangeForm } from './dashboard-pages.ts';

const yes = (on: boolean | string) =>
  on === 'beta'
    ? html`<span class="yes">beta</span>`
    : on
      ? html`<span class="yes">included</span>`
      : html`<span class="no">not included</span>`;

const monthName = (period: string) =>
  new Date(`${period}-01T00:00:00Z`).toLocaleString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });

function creditRows(a: AccountRow, credits: CreditRow[]): Html[] {
  const period = new Date().toISOString().slice(0, 7);
  return credits.flatMap((c) => {
    if (c.bucket === 'monthly') {
      if (a.plan === 'free') return [];
      return [
        html`<tr>
          <th scope="row">Monthly grant, ${monthName(period)}</th>
          <td>${count(c.credits)}</td>
          <td>of ${count(a.monthly_quota)}; spent first, renewed on the 1st (UTC)</td>
        </tr>`,
      ];
    }
    if (c.bucket === 'pack') {
      return [
        html`<tr>
          <th scope="row">${c.pack ? `${c.pack[0]!.toUpperCase()}${c.pack.slice(1)}` : 'Credit'} pack</th>
          <td>${count(c.credits)}</td>
          <td>expires ${utc(c.expires_at)}</td>
        </tr>`,
      ];
    }
    return [
      html`<tr>
        <th scope="row">${a.plan === 'free' ? 'Trial credits' : 'One-time credits'}</th>
        <td>${count(c.credits)}</td>
        <td>${a.plan === 'free' ? 'granted at sign-up' : 'trial leftovers and adjustments, spent after packs'}</td>
      </tr>`,
    ];
  });
}

export function overviewPage(a: AccountRow, credits: CreditRow[]): Html {
  const left = credits.reduce((sum, c) => sum + (c.bucket === 'monthly' && a.plan === 'free' ? 0 : c.credits), 0);
  const capDay = new Date(a.signup_at.getTime() + 7 * 86_400_000);
  const trialNote =
    a.plan === 'free'
      ? a.trial_capped_at
        ? html`<p class="hint">
            Your trial passed its first 7 days: the balance was capped at 100 credits on ${utc(a.trial_capped_at)}.
          </p>`
        : html`<p class="hint">
            After 7 days (from ${utc(capDay)}) the trial balance is capped once at 100 credits. At zero, requests are
            answered 402 until you move to a paid plan or buy a pack.
          </p>`
      : '';
  return html`${a.client_status !== 'active' ? html`<div class="notice error" role="alert">This account is suspended: every key is refused. Write to us to reopen it.</div>` : ''}
    <div class="grid">
      <section class="card" aria-labelledby="h-plan">
        <h2 id="h-plan">Plan</h2>
        <p class="big">${a.plan_name}</p>
        <p>
          ${a.price_cents === null ? 'Custom contract' : a.price_cents === 0 ? 'Free' : `${dollars(a.price_cents)} a month`}${
            a.plan !== 'free' ? html`, subscription <strong>${a.subscription_status.replace('_', ' ')}</strong>` : ''
          }
        </p>
        <dl class="facts">
          <dt>Per-minute limit</dt>
          <dd>${count(a.rpm)} requests</dd>
          <dt>REST API</dt>
          <dd>${yes(a.rest)}</dd>
          <dt>MCP endpoint</dt>
          <dd>${yes(a.mcp)}</dd>
          <dt>CSV output</dt>
          <dd>${yes(a.csv)}</dd>
          <dt>Webhooks</dt>
          <dd>${yes(a.webhooks === 'no' ? false : a.webhooks)}</dd>
        </dl>
        <p><a href="/account/plans">Compare plans and credit packs</a></p>
      </section>
      <section class="card" aria-labelledby="h-month">
        <h2 id="h-month">This month</h2>
        <p class="big">${count(a.events_count)} <span class="of">of ${count(a.monthly_quota)}</span></p>
        <meter min="0" max="100" value="${Math.min(a.percent_used, 100)}" aria-label="Share of the monthly quota used">
          ${a.percent_used}%
        </meter>
        <p>
          ${a.percent_used}% of this month's quota used by live keys (charged requests, REST and MCP). Resets
          ${a.reset_date.replace('T', ' ').replace('Z', ' UTC')}.
        </p>
        <dl class="facts">
          <dt>Overage so far</dt>
          <dd>
            ${
              a.overage_allowed || a.overage_credits > 0
                ? html`${dollars(a.overage_cents)}
                    <span class="hint"
                      >(${count(a.overage_credits)} credits past the grant, billed per day at $0.005, rounded up to
                      $0.05)</span
                    >`
                : html`<span class="no">none on this plan</span>`
            }
          </dd>
          <dt>Test keys</dt>
          <dd>${count(a.test_events)} of ${count(a.test_quota)} this month</dd>
        </dl>
      </section>
    </div>
    <section class="card" aria-labelledby="h-credits">
      <h2 id="h-credits">Credits left: ${count(left)}</h2>
      <p class="hint">
        Spent in this order: the monthly grant, then packs (the soonest to expire first), then one-time credits.
      </p>
      ${dataTable('numbers', ['Bucket', 'Left', 'Note'], creditRows(a, credits))} ${trialNote}
    </section>
    <section class="card" aria-labelledby="h-next">
      <h2 id="h-next">Next steps</h2>
      <ul>
        <li>
          <a href="/account/keys">Create an API key</a> (shown once) and <a href="/account/quickstart">try it</a>.
        </li>
        <li><a href="/account/usage">See your usage</a> per day and key, or download it as CSV.</li>
        <li>Read the <a href="/docs">API reference</a>. <a href="/account/password">Change your password</a>.</li>
      </ul>
    </section>`;
}

function curlLines(base: string, key: string): Html {
  return html`<pre class="code"><code>curl -s -H "Authorization: Bearer ${key}" "${base}/v1/counties/miami-dade"
curl -s -H "Authorization: Bearer ${key}" "${base}/v1/parcels/search?county=miami-dade&amp;limit=5"
curl -s -H "Authorization: Bearer ${key}" "${base}/v1/account/usage"</code></pre>`;
}

export function keysPage(
  csrf: string,
  base: string,
  keys: KeyRow[],
  created: { key: string; row: KeyRow } | null,
  errors: Errors = {},
): Html {
  const newKey = created
    ? html`<section class="card newkey" aria-labelledby="h-new">
        <h2 id="h-new">Your new ${created.row.mode} key${created.row.name ? html` “${created.row.name}”` : ''}</h2>
        <p class="warning" role="alert">
          <strong>Copy it now: it will not be shown again.</strong> We keep only a hash of it and cannot show it or send
          it to you later. If you lose it, revoke it and create another.
        </p>
        <div class="rawkey">
          <code id="raw-key" data-raw-key>${created.key}</code>
          <button type="button" class="copy" data-copy="raw-key" hidden>Copy</button>
        </div>
        <p>Try it (the quick start, with your key filled in):</p>
        ${curlLines(base, created.key)}
      </section>`
    : '';
  const rows = keys.map(
    (k) =>
      html`<tr>
        <td>
          <form method="post" action="/account/keys/${k.id}/name" class="rename">
            ${csrfField(csrf)}
            <label
              ><span class="sr">Name of ${k.display}</span
              ><input name="name" value="${k.name ?? ''}" maxlength="60" placeholder="no name" /></label
            ><button type="submit" class="link">Save<span class="sr"> the name of ${k.display}</span></button>
          </form>
        </td>
        <td><code>${k.display}</code></td>
        <td>${k.mode}</td>
        <td>${utc(k.created_at)}</td>
        <td>${utc(k.last_used_at)}</td>
        <td>
          ${k.status === 'active' ? html`<span class="yes">active</span>` : html`<span class="no">revoked ${utc(k.revoked_at, '')}</span>`}
        </td>
        <td>
          ${k.status === 'active' ? html`<a href="/account/keys/${k.id}/revoke" class="danger">Revoke<span class="sr"> ${k.display}</span></a>` : ''}
        </td>
      </tr>`,
  );
  return html`${newKey}
    <section class="card" aria-labelledby="h-create">
      <h2 id="h-create">Create a key</h2>
      ${errors.mode ? html`<p class="error" role="alert">${errors.mode}</p>` : ''}
      <form method="post" action="/account/keys" class="form">
        ${csrfField(csrf)} ${errors.name ? html`<p class="error" role="alert">${errors.name}</p>` : ''}
        <label
          >Name (optional, up to 60 characters: where the key is used)
          <input name="name" maxlength="60" placeholder="production server" autocomplete="off"
        /></label>
        <fieldset>
          <legend>Kind of key</legend>
          <label class="choice"
            ><input type="radio" name="mode" value="live" checked /> Live: draws on your plan's credits</label
          >
          <label class="choice"
            ><input type="radio" name="mode" value="test" /> Test: the same endpoints, a separate pool of 100 requests a
            month</label
          >
        </fieldset>
        <button type="submit">Create key</button>
      </form>
      <p class="hint">
        Keep several keys to rotate: create the new one, deploy it, then revoke the old one. A revoked key is refused
        from its very next request.
      </p>
    </section>
    <section class="card" aria-labelledby="h-keys">
      <h2 id="h-keys">Your keys</h2>
      ${
        keys.length === 0
          ? html`<p>No keys yet.</p>`
          : dataTable(
              'keys',
              ['Name', 'Key', 'Mode', 'Created', 'Last used', 'Status', html`<span class="sr">Action</span>`],
              rows,
            )
      }
    </section>`;
}

export function revokePage(csrf: string, key: KeyRow): Html {
  return html`<form method="post" action="/account/keys/${key.id}/revoke" class="card form">
    ${csrfField(csrf)}
    <p>
      Revoke the ${key.mode} key <code>${key.display}</code>, created ${utc(key.created_at)}, last used
      ${utc(key.last_used_at)}?
    </p>
    <p class="warning">Its next request is refused (401), and a revoked key cannot be restored.</p>
    <div class="actions">
      <button type="submit" class="danger">Revoke the key</button> <a href="/account/keys">Cancel</a>
    </div>
  </form>`;
}

export function usagePage(range: DayRange, rows: UsageRow[]): Html {
  const { months } = range;
  const series = seriesOf(rows);
  const query = `from=${range.from}&to=${range.to}`;
  return html`<p class="lead">
      Charged requests (answers 2xx, one credit each) per UTC day, per key, REST and MCP apart. A request shows here
      about two seconds after it is answered.
      <a href="/account/usage/endpoints?${query}">Usage per endpoint and key</a> ·
      <a href="/account/requests">Request log</a>
    </p>
    ${rangeForm('/account/usage', range)} ${legend(series)}
    ${months
      .slice()
      .reverse()
      .map(
        (m) =>
          html`<section class="card">
            <h2>${monthName(m.period)}</h2>
            ${chart(m, rows, series)}
          </section>`,
      )}
    <section class="card" aria-labelledby="h-table">
      <h2 id="h-table">The numbers</h2>
      <p><a href="/account/usage.csv?${query}" download>Download as CSV</a> (one line per day, key and surface).</p>
      ${rows.length === 0 ? html`<p>No charged requests from ${range.from} to ${range.to}.</p>` : table(months, rows, series)}
    </section>`;
}

export function plansPage(
  plans: PlanRow[],
  packs: { display_name: string; credits: number; price_cents: number }[],
  current: string | null,
  support: string,
  shop: Html | null = null,
): Html {
  const cell = (on: boolean | string) => (on === 'beta' ? 'beta' : on ? 'yes' : '—');
  return html`<p class="lead">
      Every successful request (REST call or MCP tool call) costs one credit. Errors are free.
    </p>
    <section class="card" aria-labelledby="h-plans">
      <h2 id="h-plans">Plans</h2>
      ${dataTable(
        'numbers plans',
        ['Plan', 'Price', 'Credits a month', 'Requests a minute', 'REST', 'MCP', 'CSV', 'Webhooks'],
        plans.map(
          (p) => html`<tr${p.plan === current ? raw(' class="current"') : ''}>
          <th scope="row">${p.display_name}${p.plan === current ? html` <span class="tag">your plan</span>` : ''}</th>
          <td>${p.price_cents === null ? 'custom' : p.price_cents === 0 ? 'free' : `${dollars(p.price_cents)}/month`}</td>
          <td>${p.plan === 'free' ? '500 at sign-up; capped at 100 after 7 days' : p.plan === 'enterprise' ? 'custom' : count(p.monthly_credits)}${p.plan === 'mcp_starter' ? ', MCP only' : ''}</td>
          <td>${p.plan === 'enterprise' ? 'custom' : count(p.rpm)}</td>
          <td>${p.rest ? 'yes' : 'no (403)'}</td><td>${cell(p.mcp)}</td><td>${cell(p.csv)}</td><td>${cell(p.webhooks === 'no' ? false : p.webhooks)}</td>
        </tr>`,
        ),
      )}
      <p>
        Overage: on Developer, Pro, Growth and Lead Feed, requests past the monthly grant keep being answered and cost
        $5 per 1,000 credits ($0.005 each), billed per day and rounded up to the next $0.05. The Free Trial answers 402
        at zero credits; MCP Starter, Enterprise and a past-due subscription answer 429 until the next month.
      </p>
    </section>
    <section class="card" aria-labelledby="h-packs">
      <h2 id="h-packs">Credit packs</h2>
      ${dataTable(
        'numbers',
        ['Pack', 'Credits', 'Price', 'Per 1,000'],
        packs.map(
          (p) =>
            html`<tr>
              <th scope="row">${p.display_name}</th>
              <td>${count(p.credits)}</td>
              <td>${dollars(p.price_cents)}</td>
              <td>${dollars(Math.round((p.price_cents * 1000) / p.credits))}</td>
            </tr>`,
        ),
      )}
      <p>
        One-time, on any plan; a pack expires 12 months after purchase. Packs are spent after the monthly grant, add no
        feature and do not raise the per-minute limit.
      </p>
    </section>
    ${
      shop ??
      html`<section class="card" aria-labelledby="h-change">
        <h2 id="h-change">Changing plan or buying a pack</h2>
        <p>
          For now we make these changes by hand: write to <a href="mailto:${support}">${support}</a> from the email you
          sign in with, naming the plan or pack you want. The new plan or credits apply from your next request; your
          keys stay the same. Online payment is not available yet.
        </p>
      </section>`
    }`;
}

export function quickstartPage(base: string, keys: KeyRow[]): Html {
  const active = keys.filter((k) => k.status === 'active');
  return html`<ol class="steps">
    <li>
      <p>
        ${active.length === 0 ? html`<a href="/account/keys">Create a key</a>.` : html`Use one of your keys (${active.map((k, i) => html`${i ? ', ' : ''}<code>${k.display}</code>`)}), or <a href="/account/keys">create one</a>.`}
        A new key's page shows these lines with the key filled in; it is shown only then, so keep it in your secrets
        store and read it from there:
      </p>
      <pre class="code"><code>export FLPROP_KEY='flprop_live_…'   # your key</code></pre>
    </li>
    <li>
      <p>Call the API with it:</p>
      ${curlLines(base, '$FLPROP_KEY')}
    </li>
    <li>
      <p>
        Every request is described in the <a href="/docs">API reference</a> (<a href="/v1/openapi.json"
          >OpenAPI document</a
        >). Successful answers cost one credit; watch them on the <a href="/account/usage">usage page</a>.
      </p>
    </li>
  </ol>`;
}
