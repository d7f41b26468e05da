// Every /v1 resource, registered once per base path (/v1 and /api/v1). Auth and metering hooks go on this scope.
import type { FastifyPluginAsync } from 'fastify';
import account from './account.ts';
import counties from './counties.ts';

const apiRoutes: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('rest'));
  app.addHook('onRequest', app.meter('rest'));
  await app.register(account);
  await app.register(counties);
};
export default apiRoutes;
