// Public liveness and readiness probes. /healthz answers while the process runs (liveness only: it touches nothing).
// /readyz answers 503 while this process should get no traffic: the database (the API's connection or the usage
// writer's) does not answer, Redis does not answer and REDIS_REQUIRED is set, or the process is shutting down
// (src/server.ts); the body names each check and, when not ready, what keeps it so.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';

/** How long each check may take before it counts as failed. */
const CHECK_MS = 1000;

export interface HealthOptions {
  /** Whether Redis being unreachable makes the process not ready (REDIS_REQUIRED). */
  redisRequired?: boolean;
}

type Check = 'ok' | 'unavailable' | 'timeout';

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by the shutdown (src/server.ts): from then on /readyz answers 503 so a load balancer sends no more. */
    lifecycle: { shuttingDown: boolean };
  }
}

/** 'ok', 'unavailable' (the probe failed) or 'timeout' (no answer within CHECK_MS). */
async function check(probe: () => Promise<unknown>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Check>((resolve) => (timer = setTimeout(resolve, CHECK_MS, 'timeout')));
  try {
    return await Promise.race([probe().then((): Check => 'ok'), late]);
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

export default fp(
  async (app: FastifyInstance, opts: HealthOptions) => {
    app.decorate('lifecycle', { shuttingDown: false });
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const [database, meter, redis] = await Promise.all([
        check(() => app.sql`SELECT 1`),
        check(() => app.meterSql`SELECT 1`),
        check(() => app.redis.ping()),
      ]);
      const notReady: string[] = [];
      if (database !== 'ok') notReady.push('database');
      if (meter !== 'ok') notReady.push('meter');
      if (redis !== 'ok' && opts.redisRequired) notReady.push('redis');
      if (app.lifecycle.shuttingDown) notReady.push('shutting_down');
      if (notReady.length > 0) {
        return reply.code(503).send({ status: 'unavailable', database, meter, redis, not_ready: notReady });
      }
      // Redis down but not required: serving, with the metering failing open
      return { status: redis === 'ok' ? 'ok' : 'degraded', database, meter, redis };
    });
  },
  { name: 'health', dependencies: ['db', 'redis'] },
);
