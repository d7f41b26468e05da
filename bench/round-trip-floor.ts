// Benchmarks only: the least any exact metering across processes can cost a request. Each request sends Redis one
// argument and waits for one value back, the requests of a turn of the event loop going as one script call on a
// connection of their own, overlapped with the handler and awaited in onSend: the transport of the metering plugin
// (see src/plugins/metering.ts) with nothing metered. Its answer is the header `X-Bench-Round-Trip` (1), so a benchmark can check
// that it ran. bench/overhead.ts serves it as the `auth+round trip` variant, beside /v1.
import fp from 'fastify-plugin';
import type { FastifyRequest, onRequestHookHandler, onSendAsyncHookHandler } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The bare round trip's two hooks, added after authenticate under /bench/roundtrip/v1 (floor-routes.ts). */
    roundTrip: { onRequest: onRequestHookHandler; onSend: onSendAsyncHookHandler };
  }
}

/** One value per argument: a decision per request, and nothing else. */
const ECHO = `local out = {}
for i = 1, #ARGV do out[i] = 1 end
return out`;

export default fp(async (app) => {
  const redis = app.redis.duplicate({ enableAutoPipelining: false });
  redis.on('error', () => {}); // reported by the shared connection
  redis.defineCommand('floorTurn', { numberOfKeys: 0, lua: ECHO });
  const floor = redis as unknown as { floorTurn: (...ids: string[]) => Promise<number[]> };
  let ids: string[] = [];
  let sent: Promise<number[]> | null = null;
  const waiting = new WeakMap<FastifyRequest, Promise<number>>();

  app.decorate('roundTrip', {
    onRequest: (request, _reply, done) => {
      const at = ids.push(request.id) - 1;
      if (at === 0) {
        sent = new Promise((resolve, reject) =>
          setImmediate(() => {
            const turn = ids;
            ids = [];
            floor.floorTurn(...turn).then(resolve, reject);
          }),
        );
      }
      const answer = sent!.then((out) => out[at]!);
      answer.catch(() => {}); // awaited in onSend
      waiting.set(request, answer);
      done();
    },
    onSend: async (request, reply, payload) => {
      const answer = waiting.get(request);
      if (answer) reply.header('X-Bench-Round-Trip', await answer);
      return payload;
    },
  });
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
});
