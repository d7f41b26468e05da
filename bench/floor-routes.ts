// The overhead benchmark's floors (bench/overhead.ts), served beside /v1 by the bench's own server (bench/server.ts):
// the same resources unguarded (/bench/none/v1), with auth alone (/bench/auth/v1), with auth plus metering's bare
// Redis round trip (/bench/roundtrip/v1, see round-trip-floor.ts), and a fixed body of a given size with no database
// or Redis work (/bench/fixed).
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { resources } from '../src/routes/index.ts';
import roundTripFloor from './round-trip-floor.ts';

const authOnly: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('rest'));
  await app.register(resources);
};
const authAndRoundTrip: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('rest'));
  app.addHook('onRequest', app.roundTrip.onRequest);
  app.addHook('onSend', app.roundTrip.onSend);
  await app.register(resources);
};

export default fp(async (app) => {
  await app.register(resources, { prefix: '/bench/none/v1' });
  await app.register(authOnly, { prefix: '/bench/auth/v1' });
  await app.register(roundTripFloor);
  await app.register(authAndRoundTrip, { prefix: '/bench/roundtrip/v1' });
  const bodies = new Map<number, string>();
  app.get<{ Querystring: { bytes?: string } }>('/bench/fixed', { schema: { hide: true } }, async (request, reply) => {
    const bytes = Math.min(Math.max(Number(request.query.bytes) || 1000, 2), 1_000_000);
    if (!bodies.has(bytes)) bodies.set(bytes, JSON.stringify({ data: 'x'.repeat(bytes - 12) }));
    return reply.type('application/json').send(bodies.get(bytes));
  });
});
