// The account site's webhook endpoints: register (the secret shown once), test, disable/enable, delete after a
// confirmation, and the delivery log. Every change goes through the management API's own functions (queries/webhooks.ts
// as api_webhooks, the SSRF check, the test-event limit), so a page answers what POST /v1/webhooks would; plan-gated
// as the API is (Growth, Lead Feed, Enterprise; beta on Pro).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../errors.ts';
import { PLAN_FEATURES } from '../plan-features.ts';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  sendTest,
  updateEndpoint,
  wakeEndpoint,
} from '../queries/webhooks.ts';
import { uuidOf } from '../saved-searches/queries.ts';
import { checkEndpointUrl } from '../webhooks/ssrf.ts';
import { newSigningSecret, sealSecret } from '../webhooks/secrets.ts';
import { countTestEvent } from '../webhooks/test-events.ts';
import { field } from './form.ts';
import { messagePage } from './auth-pages.ts';
import { plans } from './queries.ts';
import { deletePage, endpointPage, endpointsPage } from './webhook-pages.ts';
import type { Site } from './index.ts';

const ENDPOINT_ID = /^ep_[0-9a-f]{32}$/;
const RECENT_DELIVERIES = 50;
const TITLE = 'Webhooks';
const CURRENT = '/account/webhooks';

/** The form's comma-separated counties: null (every county) when empty. */
const countiesOf = (text: string) => {
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length ? list : null;
};

/** The message of a refusal the API would answer 4xx with (its own errors and SQL's 22023), or null. */
const refusal = (err: unknown) => {
  const e = err as { code?: string; message?: string };
  return err instanceof ApiError || e.code === '22023' ? (e.message ?? 'bad input') : null;
};

export default async function webhookRoutes(app: FastifyInstance, opts: { site: Site }) {
  const site = opts.site;
  const { sql, settings } = app.webhooks;
  const policy = { allowLoopback: settings.allowLoopback };

  /** The signed-in client's id when their plan includes webhooks; otherwise the answer is sent and null returned. */
  const client = async (request: Parameters<Site['requireUser']>[0], reply: FastifyReply) => {
    const user = site.requireUser(request, reply);
    if (!user) return null;
    const plan = (await plans(site.sql)).find((p) => p.plan === user.plan);
    if (plan && plan.webhooks !== 'no') return user.client_id;
    const { name, plans: which } = PLAN_FEATURES.webhooks;
    site.render(reply, { title: TITLE, current: CURRENT, status: 403 }, () =>
      messagePage(`${name} is not included in your plan; it is included in ${which}.`, {
        href: '/account/plans',
        label: 'Compare plans',
      }),
    );
    return null;
  };
  const idOf = (request: { params: unknown }) => {
    const id = (request.params as { id: string }).id;
    return ENDPOINT_ID.test(id) ? uuidOf(id) : null;
  };
  const missing = (reply: FastifyReply) =>
    site.render(reply, { title: 'No such endpoint', status: 404, current: CURRENT }, () =>
      messagePage('No webhook endpoint of yours has this address.', { href: CURRENT, label: 'Your endpoints' }),
    );
  const showList = async (
    reply: FastifyReply,
    clientId: string,
    created: Parameters<typeof endpointsPage>[2],
    error: string | null,
    status = 200,
  ) => {
    const endpoints = await listEndpoints(sql, clientId);
    return site.render(reply, { title: TITLE, current: CURRENT, status }, (csrf) =>
      endpointsPage(csrf, endpoints, created, error),
    );
  };
  const showEndpoint = async (
    reply: FastifyReply,
    clientId: string,
    id: string,
    error: string | null,
    status = 200,
  ) => {
    const [endpoint, page] = await Promise.all([
      getEndpoint(sql, clientId, id),
      listDeliveries(sql, clientId, id, { limit: RECENT_DELIVERIES, offset: 0 }),
    ]);
    if (!endpoint) return missing(reply);
    return site.render(reply, { title: `Webhook ${endpoint.url}`, current: CURRENT, status }, (csrf) =>
      endpointPage(csrf, endpoint, page?.items ?? [], error),
    );
  };

  app.get('/webhooks', async (request, reply) => {
    const clientId = await client(request, reply);
    if (!clientId) return reply;
    return showList(reply, clientId, null, null);
  });

  app.post('/webhooks', async (request, reply) => {
    const clientId = await client(request, reply);
    if (!clientId) return reply;
    const body = request.body as Record<string, unknown> | undefined;
    const raw = body?.events;
    const events = (Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : []).filter(
      (e): e is string => typeof e === 'string',
    );
    const threshold = field(body, 'value_change_threshold', 10).trim();
    try {
      if (events.length === 0) throw new ApiError(400, 'bad_request', 'events: choose at least one event type');
      if (events.length > 20) throw new ApiError(400, 'bad_request', 'events: must have at most 20 items');
      if (threshold !== '' && !Number.isFinite(Number(threshold)))
        throw new ApiError(400, 'bad_request', 'value_change_threshold: must be a number');
      const url = await checkEndpointUrl(field(body, 'url', 4096).trim(), policy);
      const id = randomUUID();
      const secret = newSigningSecret();
      const row = await createEndpoint(sql, {
        clientId,
        id,
        url,
        events,
        counties: countiesOf(field(body, 'counties', 3000)),
        description: field(body, 'description', 500).trim() || null,
        valueChangeThreshold: threshold === '' ? null : Number(threshold),
        secretBox: sealSecret(settings.secretKey, id, secret),
        maxEndpoints: settings.maxEndpoints,
      });
      // the one answer that holds the secret: rendered here, never stored or redirected to
      return showList(reply, clientId, { ...row, secret }, null, 201);
    } catch (err) {
      const message = refusal(err);
      if (!message) throw err;
      return showList(reply, clientId, null, message, 400);
    }
  });

  app.get('/webhooks/:id', async (request, reply) => {
    const clientId = await client(request, reply);
    if (!clientId) return reply;
    const id = idOf(request);
    return id ? showEndpoint(reply, clientId, id, null) : missing(reply);
  });

  app.post('/webhooks/:id/test', async (request, reply) => {
    const clientId = await client(request, reply);
    if (!clientId) return reply;
    const id = idOf(request);
    if (!id || !(await getEndpoint(sql, clientId, id))) return missing(reply);
    try {
      await countTestEvent(app.redis, clientId, id, (m) => request.log.warn(m));
      if (!(await sendTest(sql, clientId, id))) return missing(reply);
    } catch (err) {
      const message = refusal(err);
      if (!message) throw err;
      return showEndpoint(reply, clientId, id, message, err instanceof ApiError ? err.statusCode : 400);
    }
    await wakeEndpoint(sql, id);
    return reply.redirect(`/account/webhooks/${(request.params as { id: string }).id}`, 303);
  });

  for (const action of ['disable', 'enable'] as const) {
    app.post(`/webhooks/:id/${action}`, async (request, reply) => {
      const clientId = await client(request, reply);
      if (!clientId) return reply;
      const id = idOf(request);
      const status = action === 'enable' ? 'enabled' : 'disabled';
      if (!id || !(await updateEndpoint(sql, clientId, id, { status }))) return missing(reply);
      if (status === 'enabled') await wakeEndpoint(sql, id);
      return reply.redirect(`/account/webhooks/${(request.params as { id: string }).id}`, 303);
    });
  }

  app.get('/webhooks/:id/delete', async (request, reply) => {
    const clientId = await client(request, reply);
    if (!clientId) return reply;
    const id = idOf(request);
    const endpoint = id ? await getEndpoint(sql, clientId, id) : null;
    if (!endpoint) return missing(reply);
    return site.render(reply, { title: 'Delete a webhook endpoint', current: CURRENT }, (csrf) =>
      deletePage(csrf, endpoint),
    );
  });

  app.post('/webhooks/:id/delete', async (request, reply) => {
    const clientId = await client(request, reply);
    if (!clientId) return reply;
    const id = idOf(request);
    if (!id || !(await deleteEndpoint(sql, clientId, id))) return missing(reply);
    return reply.redirect('/account/webhooks', 303);
  });
}
