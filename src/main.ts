// The process: config, app, listen, graceful shutdown on SIGINT/SIGTERM.
import { loadConfig } from './config.ts';
import { buildApp } from './app.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
const app = await buildApp(config, { benchRoutes: config.BENCH_ROUTES && config.NODE_ENV !== 'production' });

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app.close().then(
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
