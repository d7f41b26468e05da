// The API process of the graceful-restart tests: serve() as src/main.ts runs it, plus one metered route,
// /slow/v1/wait?ms=N, that answers after N milliseconds with the answering process's pid, so that a shutdown has
// requests of a known length in flight and a test sees which process answered.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyPluginAsync } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { serve } from '../../src/server.ts';

const slow: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('rest'));
  app.addHook('onRequest', app.meter('rest'));
  app.addHook('onSend', app.awaitAdmission);
  app.get<{ Querystring: { ms?: string } }>('/slow/v1/wait', { schema: { hide: true } }, async (request) => {
    await sleep(Math.min(Number(request.query.ms) || 0, 30_000));
    return { data: { pid: process.pid } };
  });
};

await serve(loadConfig(), [slow]);
