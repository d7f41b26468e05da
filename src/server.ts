// Serving: listen, graceful shutdown on SIGINT/SIGTERM. With WORKERS > 1 the calling process forks that many API
// processes sharing the port (node:cluster) and only supervises them: auth and metering are exact across processes,
// so nothing else changes.
import cluster from 'node:cluster';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from './config.ts';
import { buildApp } from './app.ts';
import { webhookSettings } from './webhooks/settings.ts';
import { WebhookWorker } from './webhooks/worker.ts';

/** Serves the API with `plugins` registered after its own routes (bench/server.ts adds its floor routes). */
export async function serve(config: Config, plugins: FastifyPluginAsync[] = []): Promise<void> {
  if (config.WORKERS > 1 && cluster.isPrimary) {
    let stopping = false;
    for (let i = 0; i < config.WORKERS; i++) cluster.fork();
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
        return;
      }
      // a worker that dies on its own takes the service down with it, loudly, rather than serving at half strength
      console.error(`API worker ${worker.process.pid} exited (${signal ?? code}); stopping`);
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      process.exitCode = 1;
    });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        stopping = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      });
    }
  } else {
    const app = await buildApp(config, { plugins });
    let webhookWorker: WebhookWorker | null = null; // the delivery workers, unless WEBHOOK_WORKER=false

    let closing = false;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (closing) return;
        closing = true;
        app.log.info({ signal }, 'shutting down');
        const force = setTimeout(() => process.exit(1), 10_000);
        force.unref();
        Promise.all([app.close(), webhookWorker?.stop()]).then(
          () => process.exit(0),
          () => process.exit(1),
        );
      });
    }

    try {
      await app.listen({ host: config.HOST, port: config.PORT });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      console.error(
        e.code === 'EADDRINUSE' ? `port ${config.PORT} is taken: stop that program or set PORT=<free port>` : e.message,
      );
      process.exit(1);
    }
    if (config.WEBHOOK_WORKER) {
      webhookWorker = await WebhookWorker.start(
        webhookSettings(config),
        app.log.child({ component: 'webhooks' }),
      ).catch((err: Error) => {
        console.error(`webhook workers could not start: ${err.message}`);
        process.exit(1);
      });
    }
  }
}
