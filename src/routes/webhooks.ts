// /webhooks: a client's webhook endpoints, their secrets, test events and deliveries (docs/webhooks.md). A plan
// feature (403 feature_not_in_plan elsewhere; beta on Pro), free of credits but counted against the per-minute limit.
// Writes wait for the request's admission before they change anything, so a request refused by the rate limit
// changes nothing.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { badRequest, notFound, sendError, toApiError } from '../errors.ts';
import { requirePlanFeature } from '../plan-features.ts';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  retryDelivery,
  rotateSecret,
  sendTest,
  updateEndpoint,
  wakeEndpoint,
  type EndpointRow,
} from '../queries/webhooks.ts';
import { ErrorEnvelope, ListEnvelope, ObjectEnvelope, commonErrors, meta, pageOf } from '../schemas/common.ts';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryParams,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookParams,
  WebhookTestResult,
} from '../schemas/webhooks.ts';
import { newSigningSecret, sealSecret } from '../webhooks/secrets.ts';
import { checkEndpointUrl } from '../webhooks/ssrf.ts';
import { TEST_EVENTS_PER_MINUTE, countTestEvent } from '../webhooks/test-events.ts';

/** The largest management body: a bigger one is a 400, before it is read whole. */
const MAX_BODY = 16 * 1024;
const CREATE_FIELDS = ['url', 'events', 'counties', 'description', 'value_change_threshold'];
const UPDATE_FIELDS = [...CREATE_FIELDS, 'status'];

const uuidOf = (endpointId: string) => {
  const h = endpointId.slice(3);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
/** The delivery's row id; null past bigint, where no delivery is. */
const deliveryNumber = (deliveryId: string) => {
  const n = BigInt(`0x${deliveryId.slice(4)}`);
  return n > 0x7fffffffffffffffn ? null : n.toString();
};

function onlyFields(body: unknown, known: string[]) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('body: must be a JSON object');
  const unknown = Object.keys(body).find((k) => !known.includes(k));
  if (unknown !== undefined) throw badRequest(`body: unknown field '${unknown}' (the fields are ${known.join(', ')})`);
}

/**
 * Waits for the admission running alongside the handler, so that nothing is written for a refused request and the
 * plan is checked on the client as admission re-read it (a plan changed a moment ago); a refusal is thrown.
 */
async function admitted(request: FastifyRequest) {
  const refusal = request.admission ? await request.admission.catch(toApiError) : null;
  if (refusal) throw refusal;
}

const webhooks: FastifyPluginAsyncTypebox = async (app) => {
  const { sql, settings } = app.webhooks;
  const policy = { allowLoopback: settings.allowLoopback };
  const shown = (request: FastifyRequest, row: EndpointRow) => ({ ...row, beta: request.auth!.webhooks === 'beta' });
  const client = async (request: FastifyRequest) => {
    await admitted(request);
    await requirePlanFeature(request, 'webhooks');
    return request.auth!.clientId;
  };
  const missing = () => notFound('No webhook endpoint with that id.');

  // A body over the limit is a 400 naming it: from its declared length before it is read, and from Fastify's own
  // limit (413 otherwise) when it is sent without one.
  app.addHook('preParsing', async (request) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > MAX_BODY) throw badRequest(`body: must be at most ${MAX_BODY} bytes (16 KB)`);
  });
  app.setErrorHandler((error, request, reply) => {
    const apiError =
      (error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? badRequest(`body: must be at most ${MAX_BODY} bytes (16 KB)`)
        : toApiError(error);
    if (apiError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, apiError);
  });

  const tags = ['webhooks'];
  const gate = 'Growth, Lead Feed and Enterprise; beta on Pro. Free of credits; counts against the per-minute limit.';
  const errors = { ...commonErrors, 404: ErrorEnvelope };

  app.post(
    '/webhooks',
    {
      bodyLimit: MAX_BODY,
      config: { free: true },
      schema: {
        tags,
        summary: 'Register a webhook endpoint',
        description: `Returns the signing secret once. At most 10 endpoints per client. ${gate}`,
        body: CreateWebhookBody,
        response: { 201: ObjectEnvelope(WebhookEndpointWithSecret), ...errors },
      },
    },
    async (request, reply) => {
      const clientId = await client(request);
      onlyFields(request.body, CREATE_FIELDS);
      const body = request.body;
      const url = await checkEndpointUrl(body.url, policy);
      const id = randomUUID();
      const secret = newSigningSecret();
      const row = await createEndpoint(sql, {
        clientId,
        id,
        url,
        events: body.events,
        counties: body.counties ?? null,
        description: body.description ?? null,
        valueChangeThreshold: body.value_change_threshold ?? null,
        secretBox: sealSecret(settings.secretKey, id, secret),
        maxEndpoints: settings.maxEndpoints,
      });
      reply.code(201);
      return { data: { ...shown(request, row), secret }, meta: meta(request) };
    },
  );

  app.get(
    '/webhooks',
    {
      config: { free: true },
      schema: {
        tags,
        summary: "The client's webhook endpoints, oldest first",
        description: gate,
        response: { 200: ObjectEnvelope(Type.Array(WebhookEndpoint)), ...commonErrors },
      },
    },
    async (request) => {
      const rows = await listEndpoints(sql, await client(request));
      return { data: rows.map((r) => shown(request, r)), meta: meta(request) };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      config: { free: true },
      schema: {
        tags,
        summary: 'One webhook endpoint',
        description: gate,
        params: WebhookParams,
        response: { 200: ObjectEnvelope(WebhookEndpoint), ...errors },
      },
    },
    async (request) => {
      const row = await getEndpoint(sql, await client(request), uuidOf(request.params.id));
      if (!row) throw missing();
      return { data: shown(request, row), meta: meta(request) };
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      bodyLimit: MAX_BODY,
      config: { free: true },
      schema: {
        tags,
        summary: 'Change a webhook endpoint (url, events, counties, description, status)',
        description: `Fields left out are unchanged; counties null: every county. status enabled clears a disabled reason. ${gate}`,
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: ObjectEnvelope(WebhookEndpoint), ...errors },
      },
    },
    async (request) => {
      const clientId = await client(request);
      onlyFields(request.body, UPDATE_FIELDS);
      const body = request.body;
      const url = body.url === undefined ? undefined : await checkEndpointUrl(body.url, policy);
      const id = uuidOf(request.params.id);
      const row = await updateEndpoint(sql, clientId, id, { ...body, url });
      if (!row) throw missing();
      if (body.status === 'enabled') await wakeEndpoint(sql, id);
      return { data: shown(request, row), meta: meta(request) };
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { free: true },
      schema: {
        tags,
        summary: 'Delete a webhook endpoint',
        description: `It stops receiving at once; its pending deliveries are dropped. ${gate}`,
        params: WebhookParams,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const clientId = await client(request);
      if (!(await deleteEndpoint(sql, clientId, uuidOf(request.params.id)))) throw missing();
      reply.code(204);
      return null;
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { free: true },
      schema: {
        tags,
        summary: "Replace an endpoint's signing secret",
        description: `Returns the new secret once; the old one keeps signing alongside it for 24 hours. ${gate}`,
        params: WebhookParams,
        response: { 200: ObjectEnvelope(WebhookEndpointWithSecret), ...errors },
      },
    },
    async (request) => {
      const clientId = await client(request);
      const id = uuidOf(request.params.id);
      const secret = newSigningSecret();
      const box = sealSecret(settings.secretKey, id, secret);
      const row = await rotateSecret(sql, clientId, id, box, settings.rotationOverlapMs);
      if (!row) throw missing();
      return { data: { ...shown(request, row), secret }, meta: meta(request) };
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: { free: true },
      schema: {
        tags,
        summary: 'Send a webhook.test event to the endpoint now',
        description: `One attempt, no retries; its result is in the deliveries list. At most ${TEST_EVENTS_PER_MINUTE} a minute per endpoint (429 with Retry-After past it). ${gate}`,
        params: WebhookParams,
        response: { 202: ObjectEnvelope(WebhookTestResult), ...errors },
      },
    },
    async (request, reply) => {
      const clientId = await client(request);
      const id = uuidOf(request.params.id);
      await countTestEvent(app.redis, clientId, id, (m) => request.log.warn(m));
      const sent = await sendTest(sql, clientId, id);
      if (!sent) throw missing();
      await wakeEndpoint(sql, id);
      reply.code(202);
      return { data: sent, meta: meta(request) };
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { free: true },
      schema: {
        tags,
        summary: "An endpoint's deliveries, newest first, each with its attempts",
        description: `Kept 30 days after they finish. ${gate}`,
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: ListEnvelope(WebhookDelivery), ...errors },
      },
    },
    async (request) => {
      const { status, limit, offset } = request.query;
      const page = await listDeliveries(sql, await client(request), uuidOf(request.params.id), {
        status,
        limit,
        offset,
      });
      if (!page) throw missing();
      return { data: page.items, pagination: pageOf(limit, offset, page.total), meta: meta(request) };
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/retry',
    {
      config: { free: true },
      schema: {
        tags,
        summary: 'Send a delivery again now',
        description: `A finished delivery gets one more attempt (same webhook-id); a pending one is sent now. ${gate}`,
        params: DeliveryParams,
        response: { 202: ObjectEnvelope(WebhookDelivery), ...errors },
      },
    },
    async (request, reply) => {
      const clientId = await client(request);
      const id = uuidOf(request.params.id);
      const number = deliveryNumber(request.params.delivery_id);
      const delivery = number === null ? null : await retryDelivery(sql, clientId, id, number);
      if (!delivery) throw notFound('No such delivery of that webhook endpoint.');
      await wakeEndpoint(sql, id);
      reply.code(202);
      return { data: delivery, meta: meta(request) };
    },
  );
};
export default webhooks;
