// The landing page at / for people: what the API is, the plans (read from the plan table), how to start, and where
// the docs, the explorer and the status are. Server-rendered with the site's escaping template; no script.
import { chromeFooter, chromeHead, chromeHeader, PRODUCT } from '../site/chrome.ts';
import { count, dollars, html, raw, type Html } from '../site/html.ts';
import type { PlanRow } from '../site/queries.ts';

const price = (p: PlanRow) =>
  p.price_cents === null
    ? 'Custom'
    : p.price_cents === 0
      ? 'Free'
      : html`${dollars(p.price_cents)}<small>/month</small>`;

function credits(p: PlanRow): string {
  if (p.price_cents === null) return 'Credits and rate agreed with you';
  if (p.price_cents === 0) return `${count(p.monthly_credits)} credits to try it, ${count(p.rpm)} requests a minute`;
  return `${count(p.monthly_credits)} credits a month, ${count(p.rpm)} requests a minute`;
}

function features(p: PlanRow): string[] {
  const out = [p.rest && p.mcp ? 'REST and MCP' : p.rest ? 'REST' : 'MCP only (no REST)'];
  if (p.csv) out.push('CSV and GeoJSON exports');
  if (p.webhooks !== 'no') out.push(p.webhooks === 'beta' ? 'Webhooks (beta)' : 'Webhooks');
  if (p.overage) out.push('Keeps answering past the grant: $5 per 1,000');
  return out;
}

const plan = (p: PlanRow) =>
  html`<li class="plan">
    <h3>${p.display_name}</h3>
    <p class="price">${price(p)}</p>
    <p>${credits(p)}</p>
    <ul>
      ${features(p).map((f) => html`<li>${f}</li>`)}
    </ul>
  </li>`;

export function landingPage(plans: PlanRow[], siteUrl: string): Html {
  const curl = `curl -H "Authorization: Bearer $FLPROP_KEY" \\\n  "${siteUrl}/v1/parcels/search?county=miami-dade&query=smith&limit=2"`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${PRODUCT}: Florida parcels, sales and tax certificates</title>
        <meta
          name="description"
          content="A REST and MCP API over every Florida county's parcels, recorded sales and delinquent-tax records."
        />
        ${raw(chromeHead())}
        <link rel="stylesheet" href="/assets/landing.css" />
      </head>
      <body>
        ${raw(chromeHeader('home'))}
        <main id="main" class="landing">
          <section class="hero">
            <h1>Florida property records, one API</h1>
            <p class="lead">
              Parcels of all 67 counties with owners, values and polygons, recorded sales, and delinquent taxes and tax
              certificates: searchable by owner, address, parcel id or place, over REST for your code and over MCP for
              your AI agent.
            </p>
            <p class="actions">
              <a class="button primary" href="/account/signup">Create a free account</a>
              <a class="button" href="/docs/guides/quick-start">Read the quick start</a>
              <a class="button" href="/explorer">Open the map</a>
            </p>
            <pre aria-label="A first call"><code>${curl}</code></pre>
          </section>
          <section aria-labelledby="h-what">
            <h2 id="h-what">What you get</h2>
            <ul class="tiles">
              <li>
                <h3>Parcels</h3>
                <p>
                  Owner, site address, use code, just, assessed and taxable values and the polygon, found by
                  typo-tolerant owner or address search, by parcel id in any punctuation, or by radius, box or point.
                  <a href="/docs/guides/search">Search guide</a>
                </p>
              </li>
              <li>
                <h3>Sales</h3>
                <p>Every recorded sale of a parcel, and sale search by county, date, price and use.</p>
              </li>
              <li>
                <h3>Tax certificates</h3>
                <p>
                  Delinquent taxes, certificates, bid rates and statuses from the counties' feeds, with counts and
                  freshness. <a href="/docs/guides/tax-certificates">Tax certificates guide</a>
                </p>
              </li>
              <li>
                <h3>Formats and maps</h3>
                <p>
                  JSON, CSV and GeoJSON answers and vector tiles for your own map.
                  <a href="/docs/guides/formats-and-tiles">Formats guide</a>
                </p>
              </li>
              <li>
                <h3>MCP for agents</h3>
                <p>
                  The same reads as tools for Claude, Cursor or any MCP client. <a href="/docs/guides/mcp">MCP guide</a>
                </p>
              </li>
              <li>
                <h3>Webhooks</h3>
                <p>
                  Signed events when parcels, sales or certificates change.
                  <a href="/docs/guides/webhooks">Webhooks guide</a>
                </p>
              </li>
            </ul>
          </section>
          <section id="plans" aria-labelledby="h-plans">
            <h2 id="h-plans">Plans</h2>
            <p>A successful request or tool call costs one credit; errors are free.</p>
            <ul class="plans">
              ${plans.map(plan)}
            </ul>
            <p><a href="/account/plans">Plans and credit packs in detail</a></p>
          </section>
          <section aria-labelledby="h-start">
            <h2 id="h-start">Start in three steps</h2>
            <ol class="steps">
              <li><a href="/account/signup">Create an account</a>: free, no card.</li>
              <li>Create a key on your account's <a href="/account/keys">API keys</a> page; it is shown once.</li>
              <li>
                Make your first call with the <a href="/docs/guides/quick-start">quick start</a>, or try it in the
                <a href="/docs/reference">API reference</a>.
              </li>
            </ol>
          </section>
        </main>
        ${raw(chromeFooter())}
      </body>
    </html>`;
}

export interface Readiness {
  status: string;
  [component: string]: unknown;
}

/** /status for people: the readiness probe's answer in words. */
export function statusPage(ready: Readiness, checkedAt: Date): Html {
  const ok = ready.status === 'ok';
  const parts = (['database', 'meter', 'redis'] as const).map(
    (c) => html`<li><strong>${c}</strong>: ${String(ready[c] ?? 'unknown')}</li>`,
  );
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Status · ${PRODUCT}</title>
        ${raw(chromeHead())}
        <link rel="stylesheet" href="/assets/landing.css" />
      </head>
      <body>
        ${raw(chromeHeader('status'))}
        <main id="main" class="landing">
          <h1>Status</h1>
          <p class="status ${ok ? 'up' : 'down'}" role="status">
            ${ok ? 'All systems operational.' : ready.status === 'degraded' ? 'Serving, degraded.' : 'Unavailable.'}
          </p>
          <ul>
            ${parts}
          </ul>
          <p class="hint">
            Checked at ${checkedAt.toISOString().slice(0, 19).replace('T', ' ')} UTC. Programs read the same as JSON
            here or at <a href="/readyz">/readyz</a>.
          </p>
        </main>
        ${raw(chromeFooter())}
      </body>
    </html>`;
}
