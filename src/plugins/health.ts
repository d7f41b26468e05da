// Public liveness and readiness probes: /healthz answers while the process runs, /readyz checks Postgres (both the API's and the usage
// writer's connections) and Redis.
import type { FastifyInstance } from 'fastify';

export default async function health(app: FastifyInstance) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const check = async (probe: () => Promise<unknown>) => {
      try {
        await Promise.race([probe(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 1000))]);
        return 'ok';
      } catch {
        return 'unavailable';
      }
    };
    const [database, meter, redis] = await Promise.all([
      check(() => app.sql`SELECT 1`),
      check(() => app.meterSql`SELECT 1`),
      check(() => app.redis.ping()),
    ]);
    const ready = database === 'ok' && meter === 'ok' && redis === 'ok';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', database, meter, redis });
  });
}
