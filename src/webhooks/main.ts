// `npm run worker`: the webhook delivery workers alone, without the API (docs/webhooks.md#running-the-workers).
// Graceful stop on SIGINT/SIGTERM: running deliveries finish, then the connections close. With METRICS_PORT, its
// delivery metrics and the process's own are served at /metrics on that port (docs/operations.md#metrics).
import pino from 'pino';
import { Registry } from 'prom-client';
import { collectProcessMetrics, serveRegistry } from '../plugins/metrics.ts';
import { deliveryMetrics } from './metrics.ts';
import { loadConfig } from '../config.ts';
import { LOOPBACK_WARNING, webhookSettings } from './settings.ts';
import { WebhookWorker } from './worker.ts';
import { loadLocalEnv } from '../local-env.ts';

loadLocalEnv(); // this clone's services when the environment does not name them
let config;
try {
  config = loadConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
const log = pino({ level: config.LOG_LEVEL });
const registry = new Registry();
if (config.METRICS_PORT) {
  collectProcessMetrics(registry);
  await serveRegistry(registry, config.METRICS_PORT, config.HOST).catch((err: Error) => {
    log.error({ err: err.message }, 'metrics could not be served');
    process.exit(1);
  });
}
const metrics = deliveryMetrics(registry);
const settings = webhookSettings(config);
if (settings.allowLoopback) log.warn(LOOPBACK_WARNING);
// The handlers are installed before the workers start, so a signal that arrives while they connect still stops them
// cleanly once they have started.
const started = WebhookWorker.start(settings, log, metrics);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping webhook workers');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    started
      .then((worker) => worker.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
}
await started.catch((err: Error) => {
  log.error({ err: err.message }, 'webhook workers could not start');
  process.exit(1);
});
