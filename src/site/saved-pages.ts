// The account site's saved searches (docs/saved-searches.md#the-account-site): the list with each search's latest
// matches, a form that saves a search from a search URL's parameters, a search's matches page by page, and the
// digest's unsubscribe page (GET: a button; POST: RFC 8058 one-click, which needs no session and no CSRF token: the
// token in the address is the authority).
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import { checkParams, paramsOfUrl } from '../saved-searches/params.ts';
import {
  createSavedSearch,
  getSavedSearch,
  listMatches,
  listSavedSearches,
  recentMatches,
  unsubscribe,
  uuidOf,
  type MatchRow,
  type SavedSearchRow,
} from '../saved-searches/queries.ts';
import { listEndpoints, type EndpointRow } from '../queries/webhooks.ts';
import { count, csrfField, html, type Html } from './html.ts';
import { field } from './form.ts';
import type { Site } from './index.ts';

const RECENT = 5;
const PAGE = 100;
const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const SEARCH_ID = /^ss_[0-9a-f]{32}$/;
const ENDPOINT_ID = /^ep_[0-9a-f]{32}$/;

/** One line of a matched record. */
function recordLine(resource: string, r: Record<string, unknown>): Html {
  const v = (x: unknown) => (x === null || x === undefined || x === '' ? '—' : String(x));
  return resource === 'tax_delinquencies'
    ? html`${v(r.county_slug)} <code>${v(r.county_parcel_id)}</code> ${v(r.tax_year)}: ${v(r.status)}, ${v(r.total_due)}
        due — ${v(r.owner_name)}`
    : html`${v(r.county_slug)} <code>${v(r.parcel_id)}</code>: ${v(r.owner_name)}, ${v(r.site_address_full)}`;
}

const queryOf = (params: Record<string, string>) => new URLSearchParams(params).toString() || '(every record)';

function listPage(
  csrf: string,
  searches: SavedSearchRow[],
  recent: Map<string, MatchRow[]>,
  error: string | null,
  endpoints: EndpointRow[] = [],
): Html {
  const items = searches.map(
    (s) =>
      html`<section class="card saved-search" data-id="${s.id}">
        <h2><a href="/account/saved-searches/${s.id}">${s.name}</a></h2>
        <p>
          ${s.resource === 'parcels' ? 'Parcels' : 'Tax delinquencies'}: <code>${queryOf(s.params)}</code><br />
          ${count(s.match_count)} match${s.match_count === 1 ? '' : 'es'}; email: ${s.deliver.email ?? 'none'};
          webhooks: ${s.deliver.webhook_endpoints.length}
        </p>
        ${
          (recent.get(s.id) ?? []).length
            ? html`<ul class="matches">
                ${(recent.get(s.id) ?? []).map((m) => html`<li>${m.matched_at.slice(0, 10)} ${recordLine(s.resource, m.record)}</li>`)}
              </ul>`
            : html`<p class="muted">No matches yet: they come with the next import.</p>`
        }
      </section>`,
  );
  return html`<h1>Saved searches</h1>
    <p>
      A saved search is told each record that newly matches it after an import, once: by webhook, by email digest, or
      through <code>GET /v1/saved-searches/{id}/matches</code>.
    </p>
    <section class="card" aria-labelledby="h-new">
      <h2 id="h-new">Save a search</h2>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <form method="post" action="/account/saved-searches" class="stack">
        ${csrfField(csrf)}
        <label>Name <input name="name" required maxlength="200" /></label>
        <label
          >Search URL
          <input
            name="url"
            required
            maxlength="2000"
            placeholder="/v1/tax-delinquencies/search?county=broward,palm-beach&amp;min_due=3000"
        /></label>
        <label
          >Email digest
          <select name="email">
            <option value="">none</option>
            <option value="daily">daily</option>
            <option value="weekly">weekly</option>
          </select></label
        >
        ${
          endpoints.length
            ? html`<fieldset>
                <legend>Webhook endpoints that receive the matches</legend>
                ${endpoints.map(
                  (e) =>
                    html`<label class="choice"
                      ><input type="checkbox" name="webhook_endpoints" value="${e.id}" /> ${e.url}</label
                    >`,
                )}
              </fieldset>`
            : html`<p class="hint">
                <a href="/account/webhooks">Register a webhook endpoint</a> to have matches sent to it.
              </p>`
        }
        <button type="submit">Save the search</button>
      </form>
    </section>
    ${items}`;
}

function matchesPage(s: SavedSearchRow, rows: MatchRow[], more: boolean): Html {
  const next = rows.at(-1)?.cursor;
  return html`<h1>${s.name}</h1>
    <p><code>${queryOf(s.params)}</code> — ${count(s.match_count)} matches</p>
    <ol class="matches">
      ${rows.map((m) => html`<li>${m.matched_at} ${recordLine(s.resource, m.record)}</li>`)}
    </ol>
    ${more && next ? html`<p><a href="/account/saved-searches/${s.id}?since=${next}">Next ${PAGE}</a></p>` : ''}
    <p><a href="/account/saved-searches">All saved searches</a></p>`;
}

export default async function savedPages(app: FastifyInstance, opts: { site: Site }) {
  const site = opts.site;
  const sql = app.webhooks.sql;
  const mayHave = async (clientId: string) =>
    (
      await site.sql<{ ok: boolean }[]>`
      SELECT p.webhooks <> 'no' AS ok FROM accounts.clients c JOIN accounts.plans p ON p.plan = c.plan
       WHERE c.id = ${clientId}::uuid`.catch(() => [{ ok: true }])
    )[0]?.ok ?? false;

  const showList = async (
    clientId: string,
    reply: Parameters<Site['render']>[0],
    error: string | null,
    status = 200,
  ) => {
    const [searches, recent, endpoints] = await Promise.all([
      listSavedSearches(sql, clientId),
      recentMatches(sql, clientId, RECENT),
      listEndpoints(sql, clientId),
    ]);
    const bySearch = new Map<string, MatchRow[]>();
    for (const r of recent) bySearch.set(r.search_id, [...(bySearch.get(r.search_id) ?? []), r]);
    return site.render(reply, { title: 'Saved searches', current: '/account/saved-searches', status }, (csrf) =>
      listPage(csrf, searches, bySearch, error, endpoints),
    );
  };

  app.get('/saved-searches', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    return showList(user.client_id, reply, null);
  });

  app.post('/saved-searches', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    try {
      if (!(await mayHave(user.client_id))) {
        throw new ApiError(
          403,
          'feature_not_in_plan',
          'Saved searches come with Growth, Lead Feed and Enterprise (a beta on Pro).',
        );
      }
      const { resource, params } = paramsOfUrl(field(request.body, 'url', 2000));
      const checked = checkParams(resource, params);
      const email = field(request.body, 'email', 10);
      const chosen = (request.body as Record<string, unknown> | undefined)?.webhook_endpoints ?? [];
      const endpointIds = (Array.isArray(chosen) ? chosen : [chosen]).map(String);
      if (endpointIds.some((id) => !ENDPOINT_ID.test(id)))
        throw new ApiError(
          400,
          'bad_request',
          'deliver.webhook_endpoints: must be endpoint ids (ep_ and 32 hex digits)',
        );
      await createSavedSearch(sql, {
        clientId: user.client_id,
        id: randomUUID(),
        name: field(request.body, 'name', 200).trim() || 'Saved search',
        resource,
        params: checked.params,
        args: checked.args,
        endpointIds: endpointIds.map(uuidOf),
        email: email === 'daily' || email === 'weekly' ? email : null,
        token: randomBytes(24).toString('base64url'),
      });
      return reply.redirect('/account/saved-searches', 303);
    } catch (err) {
      const e = err as { code?: string; message?: string; statusCode?: number };
      // the API's own 400s and SQL's 22023 say what is wrong with the search
      const message = e instanceof ApiError || e.code === '22023' ? (e.message ?? 'bad input') : null;
      if (!message) throw err;
      return showList(user.client_id, reply, message, e instanceof ApiError ? e.statusCode : 400);
    }
  });

  app.get('/saved-searches/:id', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    const id = (request.params as { id: string }).id;
    const sinceRaw = (request.query as { since?: string }).since ?? '0';
    const s = SEARCH_ID.test(id) ? await getSavedSearch(sql, user.client_id, uuidOf(id)) : null;
    if (!s || !/^\d{1,18}$/.test(sinceRaw)) {
      return site.render(reply, { title: 'Not found', status: 404 }, () => html`<h1>No such saved search</h1>`);
    }
    const rows = await listMatches(sql, user.client_id, uuidOf(id), sinceRaw, PAGE + 1);
    return site.render(reply, { title: s.name, current: '/account/saved-searches' }, () =>
      matchesPage(s, rows.slice(0, PAGE), rows.length > PAGE),
    );
  });

  const unsubscribed = async (token: string) => (TOKEN.test(token) ? unsubscribe(sql, token) : null);
  app.get('/unsubscribe/:token', async (request, reply) => {
    const token = (request.params as { token: string }).token;
    return site.render(
      reply,
      { title: 'Unsubscribe' },
      () =>
        html`<h1>Stop this digest?</h1>
          <form method="post" action="/account/unsubscribe/${token}">
            <input type="hidden" name="List-Unsubscribe" value="One-Click" />
            <button type="submit">Unsubscribe</button>
          </form>`,
    );
  });
  app.post('/unsubscribe/:token', async (request, reply) => {
    const name = await unsubscribed((request.params as { token: string }).token);
    return site.render(reply, { title: 'Unsubscribe', status: name === null ? 404 : 200 }, () =>
      name === null
        ? html`<h1>Nothing to unsubscribe</h1>
            <p>This link is not (or no longer) valid.</p>`
        : html`<h1>Unsubscribed</h1>
            <p>The digest of “${name}” is stopped. The search itself is kept.</p>`,
    );
  });
}
