// `npm run worker`: the webhook delivery workers alone, without the API (docs/webhooks.md#running-the-workers).
// Graceful stop on SIGINT/SIGTERM: running deliveries finish, then the connections close.
import pino from 'pino';
import { loadConfig } from '../config.ts';
import { webhookSettings } from './settings.ts';
import { WebhookWorker } from './worker.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
const log = pino({ level: config.LOG_LEVEL });
const worker = await WebhookWorker.start(webhookSettings(config), log).catch((err: Error) => {
  log.error({ err: err.message }, 'webhook workers could not start');
  process.exit(1);
});
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping webhook workers');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    worker.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
