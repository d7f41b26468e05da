// The dashboard's pages: the request log, usage per endpoint and key over a date range (and its CSV), key names, and
// the low-credit email's setting.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { stringify } from 'csv-stringify/sync';
import { UUID, field } from './form.ts';
import { messagePage } from './auth-pages.ts';
import { dayRange, fileName } from './usage.ts';
import * as d from './dashboard-queries.ts';
import { LOG_PAGE_SIZE, alertsPage, badRangePage, endpointUsagePage, requestLogPage } from './dashboard-pages.ts';
import type { Site } from './index.ts';

const STATUS = /^(?:[1-5]xx|[1-5]\d\d|errors)?$/;

export default async function dashboardRoutes(app: FastifyInstance, opts: { site: Site }) {
  const site = opts.site;
  const { sql } = site;
  const bad = (reply: FastifyReply, title: string, current: string, text: string, back: string) =>
    site.render(reply, { title, current, status: 400 }, () => messagePage(text, { href: back, label: title }));

  app.get('/requests', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const query = request.query as Record<string, unknown>;
    const status = typeof query.status === 'string' ? query.status.trim().toLowerCase() : '';
    const search = typeof query.q === 'string' ? query.q.trim() : '';
    const page = typeof query.page === 'string' && /^\d{1,2}$/.test(query.page) ? Number(query.page) : 1;
    if (!STATUS.test(status) || search.length > 100 || page < 1 || page > 1000 / LOG_PAGE_SIZE) {
      return bad(
        reply,
        'Request log',
        '/account/requests',
        `Status is one of 2xx, 3xx, 4xx, 5xx, errors or a status code such as 429; search is at most 100 characters; pages run from 1 to ${1000 / LOG_PAGE_SIZE}.`,
        '/account/requests',
      );
    }
    const rows = await d.requestLog(
      sql,
      request.siteSession!.hash,
      status,
      search,
      LOG_PAGE_SIZE,
      (page - 1) * LOG_PAGE_SIZE,
    );
    return site.render(reply, { title: 'Request log', current: '/account/requests' }, () =>
      requestLogPage(rows, { status, search, page }),
    );
  });

  const endpointRows = async (request: Parameters<Site['requireUser']>[0], reply: FastifyReply) => {
    const range = dayRange(request.query);
    if (typeof range === 'string') {
      await site.render(reply, { title: 'Usage per endpoint', current: '/account/usage', status: 400 }, () =>
        badRangePage(range),
      );
      return null;
    }
    return { range, rows: await d.endpointUsage(sql, request.siteSession!.hash, range.from, range.to) };
  };

  app.get('/usage/endpoints', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const found = await endpointRows(request, reply);
    if (!found) return reply;
    return site.render(reply, { title: 'Usage per endpoint', current: '/account/usage' }, () =>
      endpointUsagePage(found.range, found.rows),
    );
  });

  app.get('/usage/endpoints.csv', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const found = await endpointRows(request, reply);
    if (!found) return reply;
    const body = stringify(
      found.rows.map((r) => [
        r.endpoint,
        r.key_name ?? '',
        r.key_display ?? '',
        r.key_id,
        r.mode ?? '',
        r.ok,
        r.failed,
      ]),
      { header: true, columns: ['endpoint', 'key_name', 'key', 'key_id', 'mode', 'ok', 'failed'] },
    );
    return reply
      .header('Cache-Control', 'no-store')
      .header('Content-Disposition', `attachment; filename="${fileName('endpoints', found.range)}"`)
      .type('text/csv; charset=utf-8')
      .send(body);
  });

  app.post('/keys/:id/name', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const id = (request.params as { id: string }).id;
    const name = field(request.body, 'name', 200);
    try {
      const renamed = UUID.test(id) ? await d.renameKey(sql, request.siteSession!.hash, id, name) : undefined;
      if (!renamed) {
        return site.render(reply, { title: 'No such key', status: 404, current: '/account/keys' }, () =>
          messagePage('No key of yours has this address.', { href: '/account/keys', label: 'Your keys' }),
        );
      }
    } catch (err) {
      const e = err as { code?: string; message: string };
      if (e.code === '22023') return bad(reply, 'API keys', '/account/keys', e.message, '/account/keys');
      throw err;
    }
    return reply.redirect('/account/keys', 303);
  });

  app.get('/alerts', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const alert = await d.creditAlert(sql, request.siteSession!.hash);
    const saved = (request.query as Record<string, unknown>).saved !== undefined;
    return site.render(
      reply,
      { title: 'Low-credit email', current: '/account/usage', notice: saved ? { kind: 'ok', text: 'Saved.' } : null },
      (csrf) => alertsPage(csrf, alert, null),
    );
  });

  app.post('/alerts', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const session = request.siteSession!.hash;
    const text = field(request.body, 'threshold', 20).replace(/[,\s]/g, '');
    const threshold = text === '' ? null : /^\d{1,10}$/.test(text) ? Number(text) : NaN;
    if (threshold !== null && !(threshold >= 1 && threshold <= 1e9)) {
      const alert = await d.creditAlert(sql, session);
      return site.render(reply, { title: 'Low-credit email', current: '/account/usage', status: 400 }, (csrf) =>
        alertsPage(
          csrf,
          alert,
          'Write a whole number of credits from 1 to 1,000,000,000, or leave it empty for no email.',
        ),
      );
    }
    await d.setCreditAlert(sql, session, threshold);
    return reply.redirect('/account/alerts?saved', 303);
  });
}
