// buildApp(config): plugins, then routes. Tests import this; main.ts only listens.
import Fastify, { type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { trustProxyOption, type Config } from './config.ts';
import { registerErrorHandling } from './errors.ts';
import {
  answerClientError,
  answerFrameworkError,
  checkRequestEdge,
  loggableUrl,
  MAX_HEAD_BYTES,
  MAX_PATH_SEGMENT,
  parseJsonBody,
} from './http-edge.ts';
import { newRequestId } from './request-id.ts';
import db from './plugins/db.ts';
import { replicaUrls } from './db/replica-urls.ts';
import redis, { redisConnection } from './plugins/redis.ts';
import health from './plugins/health.ts';
import deprecation from './plugins/deprecation.ts';
import openapi from './plugins/openapi.ts';
import auth from './plugins/auth.ts';
import metering from './plugins/metering.ts';
import requestLog from './request-log/plugin.ts';
import apiRoutes from './routes/index.ts';
import mcp from './mcp/server.ts';
import webhooks from './webhooks/plugin.ts';
import { webhookSettings } from './webhooks/settings.ts';
import billing from './billing/plugin.ts';
import site from './site/index.ts';
import { redactLinkTokens } from './site/tokens.ts';
import formats from './formats/plugin.ts';
import explorer from './explorer/index.ts';
import landing from './landing/index.ts';
import docsSite from './docs-site/index.ts';
import metrics from './plugins/metrics.ts';
import opsMetrics from './plugins/ops-metrics.ts';

export function loggerOptions(config: Config, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.LOG_LEVEL,
    ...(stream ? { stream } : {}),
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]'],
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: redactLinkTokens(loggableUrl(req.url)),
        ip: req.ip,
      }),
    },
  };
}

export interface BuildOptions {
  logStream?: NodeJS.WritableStream;
  /** Registered after the API's own routes, for example a benchmark's floor routes (bench/floor-routes.ts). */
  plugins?: FastifyPluginAsync[];
}

export async function buildApp(config: Config, opts: BuildOptions = {}) {
  const app = Fastify({
    logger: loggerOptions(config, opts.logStream),
    genReqId: newRequestId,
    requestIdHeader: false,
    // HTTP/1.1 without Host is answered by checkRequestEdge, in the envelope, rather than by Node with an empty 400
    http: { maxHeaderSize: MAX_HEAD_BYTES, requireHostHeader: false },
    clientErrorHandler: answerClientError,
    bodyLimit: 1024 * 1024,
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT },
    // malformed percent-encoding in the path, a segment over MAX_PATH_SEGMENT: 400 in the envelope, URL check first
    frameworkErrors: answerFrameworkError,
    ajv: {
      customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false },
      // ajv coerces "Infinity" to a number and then skips minimum/maximum: `finite: true` refuses it (the keyword
      // has no `type`, or ajv would skip it for the same reason)
      plugins: [
        (ajv) =>
          ajv.addKeyword({
            keyword: 'finite',
            schemaType: 'boolean',
            validate: (on: boolean, n: unknown) => !on || typeof n !== 'number' || Number.isFinite(n),
            errors: false,
          }),
      ],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerErrorHandling(app);
  // a callback hook, not an async one: no promise per request for work that never waits
  app.addHook('onRequest', checkRequestEdge);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);

  await app.register(metrics, { token: config.METRICS_TOKEN, port: config.METRICS_PORT, host: config.HOST });
  await app.register(db, {
    url: config.API_DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    meterUrl: config.METER_DATABASE_URL,
    replicaUrls: replicaUrls(config.DATABASE_REPLICA_URLS),
    replicaMaxLagMs: config.REPLICA_MAX_LAG_MS,
    heavyConnections: config.HEAVY_CONNECTIONS,
  });
  await app.register(redis, { ...redisConnection(config), keyPrefix: config.REDIS_KEY_PREFIX });
  await app.register(health, { redisRequired: config.REDIS_REQUIRED });
  await app.register(deprecation); // before the docs and the routes: it marks the routes that declare one
  await app.register(openapi, { baseUrl: config.SITE_URL });
  await app.register(metering, { keyPrefix: config.REDIS_KEY_PREFIX, usageBatchMs: config.USAGE_BATCH_MS });
  await app.register(auth, { secret: config.API_KEY_SECRET });
  await app.register(requestLog);
  await app.register(webhooks, { settings: webhookSettings(config) });
  await app.register(opsMetrics);
  await app.register(formats); // before the routes: it adapts the routes that opt in as they are added
  await app.register(apiRoutes, { prefix: '/v1' });
  await app.register(apiRoutes, { prefix: '/api/v1' });
  await app.register(mcp);
  await app.register(explorer, { styleUrl: config.MAP_STYLE_URL });
  await app.register(billing, { config }); // POST /billing/stripe/webhook (raw body, Stripe's signature); app.billing
  await app.register(site, { prefix: '/account', config });
  await app.register(landing, { config });
  await app.register(docsSite, { baseUrl: config.SITE_URL });
  for (const plugin of opts.plugins ?? []) await app.register(plugin);
  return app;
}
export type App = Awaited<ReturnType<typeof buildApp>>;
