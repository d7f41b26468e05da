// Prometheus metrics (prom-client): requests by route, status and surface, their latency, and refusals by reason,
// plus the process's own (CPU, memory, event-loop lag). Served at /metrics behind METRICS_TOKEN on the API's port,
// or without a token on METRICS_PORT (bound to HOST, for a scraper on a private network); neither set, not served.
import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { routeNotFound } from '../errors.ts';

export interface MetricsOptions {
  token?: string;
  port?: number;
  host: string;
}

/** Which product surface a request belongs to, by its route. */
function surfaceOf(route: string): 'rest' | 'mcp' | 'site' | 'other' {
  if (/^\/(api\/)?v1\//.test(route)) return 'rest';
  if (route.startsWith('/mcp')) return 'mcp';
  if (route.startsWith('/account')) return 'site';
  return 'other';
}

const REFUSALS: Record<number, string> = {
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  429: 'rate_limited',
};

/** Whether `presented` is `Bearer <token>`, compared in constant time. */
function bearerMatches(presented: string | undefined, token: string): boolean {
  const want = Buffer.from(`Bearer ${token}`);
  const got = Buffer.from(presented ?? '');
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * prom-client's default gauges that carry a counter's `_total` suffix, which Prometheus's conventions (and
 * `promtool check metrics`) reserve for counters. Each repeats the sum of its per-type series (nodejs_active_handles
 * {type} and the like), which stay.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The process's own metrics (CPU, memory, event-loop lag, handles, GC) in `registry`, under conventional names. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
}

/** Serves `registry` at /metrics on `port` of `host`, unauthenticated (a port for a private network: METRICS_PORT); resolves once it listens. */
export async function serveRegistry(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry: plugins add their own metrics with `registers: [app.metrics]`. */
    metrics: Registry;
  }
}

export default fp(
  async (app: FastifyInstance, opts: MetricsOptions) => {
    // a registry of this app's own: several apps in one process (tests, node:cluster's primary) never share counts
    const registry = new Registry();
    app.decorate('metrics', registry);
    if (!opts.token && !opts.port) return;
    collectProcessMetrics(registry);
    const labels = ['route', 'method', 'status', 'surface'] as const;
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'Answered requests.',
      labelNames: labels,
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from the request to its answer.',
      labelNames: ['route', 'surface'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    const refusals = new Counter({
      name: 'http_refusals_total',
      help: 'Requests refused by authentication, credits, plan or rate limit (401, 402, 403, 429).',
      labelNames: ['reason', 'surface'],
      registers: [registry],
    });

    // a callback hook, not an async one: no promise per request for work that never waits
    app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const surface = surfaceOf(route);
      const status = reply.statusCode;
      requests.inc({ route, method: request.method, status: String(status), surface });
      duration.observe({ route, surface }, reply.elapsedTime / 1000);
      const reason = REFUSALS[status];
      if (reason) refusals.inc({ reason, surface });
      done();
    });

    if (opts.token) {
      const token = opts.token;
      app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
        // the very answer an unknown path gets, so that the endpoint is not discoverable without the token
        if (!bearerMatches(request.headers.authorization, token)) throw routeNotFound(request);
        return reply.type(registry.contentType).send(await registry.metrics());
      });
    }
    if (opts.port) {
      const server = await serveRegistry(registry, opts.port, opts.host);
      app.addHook('onClose', async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
    }
  },
  { name: 'metrics' },
);
